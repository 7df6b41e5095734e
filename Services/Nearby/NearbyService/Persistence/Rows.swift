import ColonyModels
import Foundation
import PostgresNIO

/// `profiles` as stored (the owner's full view comes from it; others get `PublicProfile`).
struct StoredProfile: Sendable {
    var id: UUID
    var name: String
    var bio: String?
    var school: String?
    var birthday: LocalDate?
    var socialLinks: SocialLinks
    var photoVersion: Int64?
    var darkMode: Bool
    var satelliteMap: Bool
    var shareLocation: Bool
    var createdAt: Date
    var updatedAt: Date

    static let columns = "id, name, bio, school, birthday, social_links::text, photo_version, dark_mode, satellite_map, share_location, created_at, updated_at"

    init(row: PostgresRow) throws {
        let links: String
        (id, name, bio, school, birthday, links, photoVersion, darkMode, satelliteMap, shareLocation, createdAt, updatedAt) =
            try row.decode((UUID, String, String?, String?, LocalDate?, String, Int64?, Bool, Bool, Bool, Date, Date).self)
        socialLinks = (try? ColonyJSON.decoder().decode(SocialLinks.self, from: Data(links.utf8))) ?? SocialLinks()
    }
}

/// Someone in range: their stored profile, the position they are shown at and its distance
/// in meters.
struct NearbyRow: Sendable {
    var profile: StoredProfile
    var latitude: Double
    var longitude: Double
    var meters: Double
}
