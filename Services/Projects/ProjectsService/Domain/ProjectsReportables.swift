import ColonyModels
import ColonyPlatform
import Foundation
import Logging
import PostgresNIO

/// What I Believe In You's users may report (`POST /projects/v1/reports`, `ReportDesk`), seen by
/// the rules the service's own reads apply, and removed by its owners' own deletes:
///
/// - `project`: one the caller can see (`ProjectPolicy` `.view`: published, or their own).
///   Removed as its builder deletes it: with everything in it, `project_deleted` to its followers.
/// - `post`: one on a project the caller can see. Removed as its author deletes it (with its
///   pictures and likes; the likers keep their karma, as when the owner deletes it).
/// - `support_message`: one the caller received (as the project's builder) or sent. An anonymous
///   one is `anonymous`: the report's answer never names the sender. Removed with the support
///   action its sending logged and the karma it earned. A message whose sender's account is gone
///   names no one to report (404).
/// - `profile`: a builder (`object_id` the user id); everyone signed in sees every builder
///   (`GET /builders/{id}`). Removed: `Builders.resetProfile` (neutral name, no bio, links or avatar).
struct ProjectsReportables: ReportableContent {
    let projects: Projects
    let posts: Posts
    let messages: SupportMessages
    let logger: Logger
    var builders: Builders { projects.builders }

    static let project = "project"
    static let post = "post"
    static let supportMessage = "support_message"
    static let profile = "profile"

    var objectTypes: [String] { [Self.project, Self.post, Self.supportMessage, Self.profile] }

    /// The viewer the stores' reads take when nobody in particular reads (a moderator, a report):
    /// it decides `is_following` / `liked_by_me`, which nothing here uses, and hides no blocked author.
    static let moderator = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))

    func visible(_ objectType: String, _ id: UUID, to viewer: UUID, on connection: PostgresConnection) async throws -> ReportedObject? {
        switch objectType {
        // Read as nobody in particular, so someone who blocked the builder can still report what
        // they saw (block, then report); the policy below is the viewer's.
        case Self.project:
            guard let project = try await projects.store.find(id, viewer: Self.moderator, on: connection),
                  ProjectPolicy.allows(isOwner: project.owner.userId == viewer, isPublished: project.isPublished, .view) else { return nil }
            return Self.object(project)
        case Self.post:
            guard let post = try await posts.store.find(id, viewer: Self.moderator, on: connection),
                  ProjectPolicy.allows(isOwner: post.owner.userId == viewer, isPublished: post.projectIsPublished, .view) else { return nil }
            return Self.object(post)
        case Self.supportMessage:
            guard let message = try await messages.store.reported(id, on: connection), let sender = message.senderUserId,
                  viewer == message.ownerUserId || viewer == sender else { return nil }
            return ReportedObject(ownerId: sender, content: message.message, anonymous: message.isAnonymous)
        case Self.profile:
            return try await builders.store.find(userID: id, on: connection).map(Self.object)
        default:
            return nil
        }
    }

    func current(_ objectType: String, _ id: UUID, on connection: PostgresConnection) async throws -> ReportedObject? {
        switch objectType {
        case Self.project:
            return try await projects.store.find(id, viewer: Self.moderator, on: connection).map(Self.object)
        case Self.post:
            return try await posts.store.find(id, viewer: Self.moderator, on: connection).map(Self.object)
        case Self.supportMessage:
            // An erased sender's message stays (anonymous) with nobody behind it.
            return try await messages.store.reported(id, on: connection).map {
                ReportedObject(ownerId: $0.senderUserId ?? Self.moderator, content: $0.message, anonymous: $0.isAnonymous)
            }
        case Self.profile:
            return try await builders.store.find(userID: id, on: connection).map(Self.object)
        default:
            return nil
        }
    }

    func remove(_ objectType: String, _ id: UUID, on connection: PostgresConnection) async throws -> Bool {
        switch objectType {
        case Self.project:
            guard let project = try await projects.store.find(id, viewer: Self.moderator, on: connection) else { return false }
            try await projects.deleteProject(project, actor: project.owner.userId, on: connection)
            return true
        case Self.post:
            guard let post = try await posts.store.find(id, viewer: Self.moderator, on: connection) else { return false }
            try await posts.deletePost(post, on: connection)
            return true
        case Self.supportMessage:
            return try await messages.remove(id, on: connection)
        case Self.profile:
            return try await builders.resetProfile(id, on: connection)
        default:
            return false
        }
    }

    // MARK: what a moderator reads

    static func object(_ project: StoredProject) -> ReportedObject {
        var lines = ["Project “\(project.title)”\(project.isPublished ? "" : " (unpublished)")"]
        if let tagline = project.tagline { lines.append(tagline) }
        if let description = project.description { lines.append(description) }
        if project.coverVersion != nil { lines.append("[cover picture]") }
        return ReportedObject(ownerId: project.owner.userId, content: lines.joined(separator: "\n"))
    }

    static func object(_ post: StoredPost) -> ReportedObject {
        var content = post.content
        if !post.images.isEmpty { content += "\n[\(post.images.count) picture\(post.images.count == 1 ? "" : "s")]" }
        return ReportedObject(ownerId: post.owner.userId, content: content)
    }

    static func object(_ builder: StoredBuilder) -> ReportedObject {
        var lines = ["Name: \(builder.name)"]
        if let bio = builder.bio { lines.append("Bio: \(bio)") }
        if let website = builder.websiteUrl { lines.append("Website: \(website)") }
        if let handle = builder.twitterHandle { lines.append("Twitter: @\(handle)") }
        if builder.avatarVersion != nil { lines.append("[avatar picture]") }
        return ReportedObject(ownerId: builder.userId, content: lines.joined(separator: "\n"))
    }
}
