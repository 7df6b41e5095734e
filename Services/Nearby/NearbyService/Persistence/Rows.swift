import ColonyModels
import ColonyPlatform
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
        var cells = RowCells(row)
        try self.init(cells: &cells)
    }

    /// The profile's columns (`columns`), cell by cell from where `cells` stands (a nearby row
    /// reads its position after them).
    init(cells: inout RowCells) throws {
        id = try cells.next(); name = try cells.next(); bio = try cells.next(); school = try cells.next(); birthday = try cells.next()
        let links: String = try cells.next()
        photoVersion = try cells.next(); darkMode = try cells.next(); satelliteMap = try cells.next(); shareLocation = try cells.next()
        createdAt = try cells.next(); updatedAt = try cells.next()
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
