import ColonyModels
import ColonyPlatform
import Foundation
import Logging
import PostgresNIO

/// What MyCirclee's users may report (`ReportDesk` does the rest), seen by the same rules the
/// app's own reads use and removed by the owners' own deletes:
/// - `post`: a live post in a circle the caller is in; removed as its author deletes it
///   (`post_deleted`, its marks and photo along). An expired post is gone for moderators too.
/// - `dm`: a message of one of the caller's threads (both parties still in the circle); removed
///   from the thread (`dm_deleted` to the two parties).
/// - `profile`: a member of a circle the caller is in (`object_id` their user id); removed:
///   the name, handle, bio, full name and location they wrote are reset.
struct CirclesReportables: ReportableContent {
    let posts: Posts
    let messages: DirectMessages
    let profiles: Profiles

    init(outbox: Outbox, media: PostMedia, logger: Logger) {
        posts = Posts(outbox: outbox, media: media, logger: logger)
        messages = DirectMessages(outbox: outbox, media: media, logger: logger)
        profiles = Profiles(logger: logger)
    }

    static let post = "post", dm = "dm", profile = "profile"

    var objectTypes: [String] { [Self.post, Self.dm, Self.profile] }

    func visible(_ objectType: String, _ id: UUID, to viewer: UUID, on connection: PostgresConnection) async throws -> ReportedObject? {
        switch objectType {
        case Self.post:
            guard let post = try await posts.store.visible(id, to: viewer, on: connection) else { return nil }
            return try await reported(post, on: connection)
        case Self.dm:
            return try await messages.store.message(id, visibleTo: viewer, on: connection).map { Self.reported($0.1) }
        case Self.profile:
            return try await profiles.store.visible(id, to: viewer, on: connection).map { Self.reported($0, id) }
        default:
            return nil
        }
    }

    func current(_ objectType: String, _ id: UUID, on connection: PostgresConnection) async throws -> ReportedObject? {
        switch objectType {
        case Self.post:
            guard let post = try await posts.store.live(id, on: connection) else { return nil }
            return try await reported(post, on: connection)
        case Self.dm:
            return try await messages.store.message(id, on: connection).map { Self.reported($0.1) }
        case Self.profile:
            return try await profiles.store.find(id, on: connection).map { Self.reported($0, id) }
        default:
            return nil
        }
    }

    func remove(_ objectType: String, _ id: UUID, on connection: PostgresConnection) async throws -> Bool {
        switch objectType {
        case Self.post: try await posts.remove(id, on: connection)
        case Self.dm: try await messages.remove(id, on: connection)
        case Self.profile: try await profiles.reset(id, on: connection)
        default: false
        }
    }

    /// A post as a moderator reads it: its type and text, its details, a poll's options, and
    /// whether it has a photo.
    func reported(_ post: PostStore.Stored, on connection: PostgresConnection) async throws -> ReportedObject {
        let row = post.row
        var lines = ["\(row.type.rawValue): \(row.body)"]
        if let mood = row.mood { lines.append("mood: \(mood)") }
        if let category = row.category { lines.append("category: \(category)") }
        if let location = row.location { lines.append("location: \(location)") }
        if row.type == .poll {
            lines.append("options: " + (try await posts.store.pollOptionLabels(row.id, on: connection)).joined(separator: " | "))
        }
        if post.photoVersion != nil { lines.append("with a photo") }
        return ReportedObject(ownerId: row.authorId, content: lines.joined(separator: "\n"))
    }

    static func reported(_ message: DMMessageRow) -> ReportedObject {
        ReportedObject(ownerId: message.senderId, content: message.body)
    }

    /// A profile as other members see it (the private fields are not shown).
    static func reported(_ profile: MyProfile, _ userID: UUID) -> ReportedObject {
        var lines = ["name: \(profile.displayName)", "handle: @\(profile.handle)"]
        if let bio = profile.bio { lines.append("bio: \(bio)") }
        if let fullName = profile.fullName { lines.append("full name: \(fullName)") }
        if let location = profile.location { lines.append("location: \(location)") }
        return ReportedObject(ownerId: userID, content: lines.joined(separator: "\n"))
    }
}
