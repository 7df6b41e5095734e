import ColonyModels
import Foundation

/// My own profile, with everything (birthday and settings included).
struct MyProfile: Codable, Sendable {
    var id: UUID
    var name: String
    var bio: String?
    var school: String?
    var birthday: LocalDate?
    var age: Int?
    var socialLinks: SocialLinks
    var photoUrl: String?
    var darkMode: Bool
    var satelliteMap: Bool
    var shareLocation: Bool
    var createdAt: Date
    var updatedAt: Date
}

/// A card in the nearby list: the public profile, the rounded distance, and a position rounded
/// to about 50 feet for the map.
struct NearbyUser: Codable, Sendable {
    var userId: UUID
    var name: String
    var age: Int?
    var school: String?
    var bio: String?
    var socialLinks: SocialLinks
    var photoUrl: String?
    var distanceFeet: Int
    var distanceMiles: Double
    var distanceText: String
    var position: ApproximatePosition
}

struct NearbyList: Codable, Sendable {
    /// Whether I am sharing with a fresh position; when not, the list is empty (the seed's rule).
    var sharing: Bool
    var radiusFeet: Int
    var users: [NearbyUser]
}

struct LocationReport: Codable, Sendable {
    var updatedAt: Date
    var position: ApproximatePosition
}
