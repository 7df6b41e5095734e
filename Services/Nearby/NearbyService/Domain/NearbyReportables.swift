import ColonyModels
import ColonyPlatform
import Foundation
import PostgresNIO

/// What SocialSpot's users may report (`POST /nearby/v1/reports`, `ReportDesk` does the rest):
///
/// - `profile`: a person whose card the caller sees now, by the very rule of
///   `GET /nearby/v1/users/{user_id}` (`Nearby.visibleCard`): both share a fresh position within
///   the default radius, and neither has blocked the other. Someone seen a minute ago who has
///   walked out of range, stopped sharing or blocked the caller can no longer be reported (404,
///   as for nobody); anyone may "see" their own card (so reporting oneself is `own_content`).
///   Removed: bio, photo and social links cleared, as the user could do themselves, with the same
///   `profile_updated` their own edit publishes (clients in range redraw the card). Name, school
///   and birthday stay (the name is required and the document names only those three).
///
/// The check costs the reporter none of their lookup quota: a report is no query of positions.
struct NearbyReportables: ReportableContent {
    let nearby: Nearby

    static let profile = "profile"

    var objectTypes: [String] { [Self.profile] }

    func visible(_ objectType: String, _ id: UUID, to viewer: UUID, on connection: PostgresConnection) async throws -> ReportedObject? {
        guard objectType == Self.profile else { return nil }
        if id == viewer { return try await current(objectType, id, on: connection) }
        return try await nearby.visibleCard(id, viewer: viewer, on: connection).map { object($0.profile) }
    }

    func current(_ objectType: String, _ id: UUID, on connection: PostgresConnection) async throws -> ReportedObject? {
        guard objectType == Self.profile else { return nil }
        return try await nearby.profiles.find(id, on: connection).map(object)
    }

    func remove(_ objectType: String, _ id: UUID, on connection: PostgresConnection) async throws -> Bool {
        guard objectType == Self.profile else { return false }
        return try await nearby.clearCard(id, on: connection)
    }

    /// The card as a moderator reads it: what others see of the person.
    func object(_ profile: StoredProfile) -> ReportedObject {
        var lines = ["name: \(profile.name)"]
        if let bio = profile.bio { lines.append("bio: \(bio)") }
        if let school = profile.school { lines.append("school: \(school)") }
        let links = profile.socialLinks
        let named: [(String, String?)] = [("instagram", links.instagram), ("snapchat", links.snapchat), ("tiktok", links.tiktok), ("linkedin", links.linkedin),
                                          ("youtube", links.youtube), ("x", links.x), ("other", links.other)]
        for case let (network, link?) in named { lines.append("\(network): \(link)") }
        if let photo = nearby.photoURL(profile) { lines.append("photo: \(photo)") }
        return ReportedObject(ownerId: profile.id, content: lines.joined(separator: "\n"))
    }
}
