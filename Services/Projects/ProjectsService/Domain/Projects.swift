import ColonyModels
import ColonyPlatform
import ColonyStorage
import Foundation
import Logging
import NIOCore
import PostgresNIO

/// Projects: creation with a slug, edits by their owner (mood, publishing, cover), deletion,
/// discovery (new, trending, search), follows with their counter and karma, supporters.
struct Projects: Sendable {
    let outbox: Outbox
    let media: ProjectsMedia
    let logger: Logger
    var store: ProjectStore { ProjectStore(logger: logger) }
    var builders: Builders { Builders(outbox: outbox, media: media, logger: logger) }

    static let maxSlugAttempts = 5

    // MARK: views

    func row(_ project: StoredProject) -> ProjectRow {
        ProjectRow(id: project.id, builderId: project.builderId, title: project.title, tagline: project.tagline, description: project.description,
                   coverImageUrl: media.coverURL(project.id, version: project.coverVersion), publicSlug: project.publicSlug, mood: project.mood,
                   followerCount: project.followerCount, isPublished: project.isPublished, createdAt: project.createdAt, updatedAt: project.updatedAt)
    }

    func view(_ project: StoredProject, viewer: UUID) -> Project {
        Project(id: project.id.lowercased, builderId: project.builderId.lowercased, title: project.title, tagline: project.tagline, description: project.description,
                coverImageUrl: media.coverURL(project.id, version: project.coverVersion), publicSlug: project.publicSlug, mood: project.mood.map(Components.Schemas.Mood.init),
                followerCount: project.followerCount, isPublished: project.isPublished, createdAt: project.createdAt, updatedAt: project.updatedAt,
                builder: builders.card(project.owner), isFollowing: project.isFollowing, isOwner: project.owner.userId == viewer)
    }

    /// The project if `userID` may do `action` on it (`ProjectPolicy`): 404 when they cannot
    /// see it (someone else's draft, or a builder's they blocked), 403 when they see it but may
    /// not do that.
    func access(_ projectID: UUID, userID: UUID, _ action: ProjectPolicy.Action, on connection: PostgresConnection) async throws -> StoredProject {
        guard let project = try await store.find(projectID, viewer: userID, on: connection) else { throw ProjectsErrors.projectNotFound }
        try ProjectPolicy.require(isOwner: project.owner.userId == userID, isPublished: project.isPublished, action)
        return project
    }

    // MARK: reading

    func get(_ projectID: UUID, userID: UUID, on connection: PostgresConnection) async throws -> Project {
        view(try await access(projectID, userID: userID, .view, on: connection), viewer: userID)
    }

    func get(slug: String, userID: UUID, on connection: PostgresConnection) async throws -> Project {
        guard let project = try await store.find(slug: slug.lowercased(), viewer: userID, on: connection) else { throw ProjectsErrors.projectNotFound }
        try ProjectPolicy.require(isOwner: project.owner.userId == userID, isPublished: project.isPublished, .view)
        return view(project, viewer: userID)
    }

    /// Whether a slug is taken, by any project (published or not): `checkSlugExists`.
    func slugExists(_ slug: String, on connection: PostgresConnection) async throws -> SlugCheck {
        let slug = try Slug.chosen(slug)
        return SlugCheck(slug: slug, exists: try await store.slugExists(slug, on: connection))
    }

    /// Published projects, newest (`new`) or most followed (`trending`) first, optionally only
    /// those whose title or tagline contains `query` (case-insensitive).
    func list(sort: ProjectStore.Sort, query: String?, cursor: String?, limit: Int, userID: UUID, on connection: PostgresConnection) async throws -> ProjectPage {
        let pattern = try query.map { ProjectsRules.likePattern(try ProjectsRules.search($0)) }
        let after = try Self.cursor(cursor)
        let found = try await store.list(sort: sort, pattern: pattern, after: after, limit: limit, viewer: userID, on: connection)
        let page = Array(found.prefix(limit))
        let next = found.count > limit ? page.last.map { project in
            Cursor(value: sort == .new ? Cursor.micros(project.createdAt) : Int64(project.followerCount), id: project.id).text
        } : nil
        return ProjectPage(projects: page.map { view($0, viewer: userID) }, nextCursor: next)
    }

    /// A builder's projects: the published ones, and all of them for the builder themselves.
    func byBuilder(_ builderID: UUID, userID: UUID, limit: Int, on connection: PostgresConnection) async throws -> [Project] {
        guard try await builders.store.find(id: builderID, on: connection) != nil else { throw ProjectsErrors.builderNotFound }
        return try await store.byBuilder(builderID, viewer: userID, limit: limit, on: connection).map { view($0, viewer: userID) }
    }

    func mine(userID: UUID, limit: Int, on connection: PostgresConnection) async throws -> [Project] {
        let me = try await builders.require(userID, on: connection)
        return try await store.byBuilder(me.id, viewer: userID, limit: limit, on: connection).map { view($0, viewer: userID) }
    }

    /// The projects the caller follows (and can see), latest follow first.
    func following(userID: UUID, cursor: String?, limit: Int, on connection: PostgresConnection) async throws -> ProjectPage {
        let found = try await store.followed(by: userID, after: try Self.cursor(cursor), limit: limit, on: connection)
        let page = Array(found.prefix(limit))
        return ProjectPage(projects: page.map { view($0.0, viewer: userID) }, nextCursor: found.count > limit ? page.last?.1.text : nil)
    }

    /// Builders following the project, latest first (`getProjectSupporters`), but those the
    /// caller blocked.
    func supporters(_ projectID: UUID, userID: UUID, limit: Int, on connection: PostgresConnection) async throws -> [BuilderCard] {
        _ = try await access(projectID, userID: userID, .view, on: connection)
        return try await builders.store.supporters(projectID, viewer: userID, limit: limit, on: connection).map(builders.card)
    }

    static func cursor(_ text: String?) throws -> Cursor {
        guard let text else { return .start }
        guard let cursor = Cursor(text) else { throw ProjectsErrors.validation("cursor must be a next_cursor from an earlier page") }
        return cursor
    }

    // MARK: creating and changing

    struct Input: Sendable {
        var title: String
        var tagline: String?
        var description: String?
        var publicSlug: String?
        var mood: ProjectMood?
        var isPublished: Bool?
    }

    /// Creates the project with a slug made from the title (a random suffix when it is taken),
    /// or the `public_slug` asked for (409 when taken). The builder becomes a creator.
    func create(_ input: Input, userID: UUID, on connection: PostgresConnection) async throws -> Project {
        var errors = ValidationErrors()
        let title = ProjectsRules.title(input.title, errors: &errors)
        let draft = ProjectStore.Draft(
            title: title,
            tagline: ProjectsRules.text(input.tagline, field: "tagline", max: ProjectsRules.maxTagline, errors: &errors),
            description: ProjectsRules.text(input.description, field: "description", max: ProjectsRules.maxDescription, errors: &errors),
            mood: input.mood, isPublished: input.isPublished ?? true)
        try errors.throwIfAny()
        let chosen = try input.publicSlug.map(Slug.chosen)
        let builder = try await builders.require(userID, on: connection)
        let id = UUID.timeOrdered()
        var project: StoredProject?
        if let chosen {
            project = try await store.insert(id: id, builderID: builder.id, draft: draft, slug: chosen, on: connection)
            guard project != nil else { throw ProjectsErrors.slugTaken }
        } else {
            let base = Slug.base(from: title)
            var slug = base
            for _ in 0..<Self.maxSlugAttempts {
                project = try await store.insert(id: id, builderID: builder.id, draft: draft, slug: slug, on: connection)
                if project != nil { break }
                slug = Slug.withSuffix(base)
            }
        }
        guard let project else { throw ProjectsErrors.slugTaken }
        if !builder.isCreator { _ = try await builders.apply(userID, .init(isCreator: true), on: connection) }
        try await outbox.publish(ProjectCreated(project: row(project), ownerId: userID), key: project.id, actor: userID, on: connection, logger: logger)
        return view(project, viewer: userID)
    }

    /// An edit by the owner: absent fields stay; null (or "") clears tagline, description, mood.
    struct Patch: Sendable {
        var title: String?
        var tagline: String??
        var description: String??
        var publicSlug: String?
        var mood: ProjectMood??
        var isPublished: Bool?
    }

    func update(_ projectID: UUID, _ patch: Patch, userID: UUID, on connection: PostgresConnection) async throws -> Project {
        var errors = ValidationErrors()
        var changes = ProjectStore.Changes()
        if let title = patch.title { changes.title = ProjectsRules.title(title, errors: &errors) }
        if let tagline = patch.tagline { changes.tagline = .some(ProjectsRules.text(tagline, field: "tagline", max: ProjectsRules.maxTagline, errors: &errors)) }
        if let description = patch.description {
            changes.description = .some(ProjectsRules.text(description, field: "description", max: ProjectsRules.maxDescription, errors: &errors))
        }
        try errors.throwIfAny()
        changes.publicSlug = try patch.publicSlug.map(Slug.chosen)
        changes.mood = patch.mood
        changes.isPublished = patch.isPublished
        let project = try await access(projectID, userID: userID, .manage, on: connection)
        if let slug = changes.publicSlug, slug != project.publicSlug, try await store.slugExists(slug, excluding: projectID, on: connection) {
            throw ProjectsErrors.slugTaken
        }
        return try await apply(projectID, changes, userID: userID, on: connection)
    }

    /// Stores the cover under a new key, deleting the old one (owner only): an unpublished
    /// project's cover cannot be found from its id.
    func setCover(_ projectID: UUID, image: ByteBuffer, contentType: String?, userID: UUID, on connection: PostgresConnection) async throws -> Project {
        let project = try await access(projectID, userID: userID, .manage, on: connection)
        let version = try await media.storage.uploadPicture(image, contentType: contentType, to: media.covers, owner: projectID, replacing: project.coverVersion)
        return try await apply(projectID, .init(coverVersion: .some(version)), userID: userID, on: connection)
    }

    func removeCover(_ projectID: UUID, userID: UUID, on connection: PostgresConnection) async throws -> Project {
        let project = try await access(projectID, userID: userID, .manage, on: connection)
        try await media.storage.removePicture(media.covers, owner: projectID, version: project.coverVersion)
        return try await apply(projectID, .init(coverVersion: .some(nil)), userID: userID, on: connection)
    }

    func apply(_ projectID: UUID, _ changes: ProjectStore.Changes, userID: UUID, on connection: PostgresConnection) async throws -> Project {
        guard let project = try await store.update(projectID, changes, viewer: userID, on: connection) else { throw ProjectsErrors.projectNotFound }
        try await outbox.publish(ProjectUpdated(project: row(project), ownerId: project.owner.userId), key: projectID, actor: userID, on: connection, logger: logger)
        return view(project, viewer: userID)
    }

    /// Deletes the project (owner only) with everything in it; its followers are told.
    func delete(_ projectID: UUID, userID: UUID, on connection: PostgresConnection) async throws {
        try await deleteProject(try await access(projectID, userID: userID, .manage, on: connection), actor: userID, on: connection)
    }

    func deleteProject(_ project: StoredProject, actor: UUID, on connection: PostgresConnection) async throws {
        let (followers, keys) = try await store.delete(project.id, on: connection)
        try await outbox.publish(ProjectDeleted(project: row(project), ownerId: project.owner.userId, followerIds: followers),
                                 key: project.id, actor: actor, on: connection, logger: logger)
        for key in keys { try await media.storage.remove(media.postImages, key: key) }
        try await media.storage.removePicture(media.covers, owner: project.id, version: project.coverVersion)
    }

    // MARK: follows

    /// Follows the project (idempotent): the counter goes up once, and the first follow of
    /// someone else's project ever earns 5 karma with a support action.
    func follow(_ projectID: UUID, userID: UUID, on connection: PostgresConnection) async throws -> FollowState {
        _ = try await builders.require(userID, on: connection)
        let project = try await access(projectID, userID: userID, .follow, on: connection)
        let points = ProjectPolicy.karmaPoints(for: .follow, isOwner: project.owner.userId == userID)
        guard let followed = try await store.follow(projectID, userID: userID, points: points, on: connection) else {
            return FollowState(projectId: projectID.lowercased, following: true, followerCount: project.followerCount, karmaEarned: 0, karma: nil)
        }
        let announce = try await store.announceFollow(projectID, userID: userID, on: connection)
        // The owner is the one this follow is shown to (a push, when announced): withheld when
        // they blocked the follower. Unannounced, it reaches nobody and needs no look-up.
        let withheld = announce ? try await BlockList(logger: logger).blockers(of: userID, among: [project.owner.userId], on: connection) : []
        try await outbox.publish(ProjectFollowed(follow: followed.follow, followerCount: followed.followerCount, ownerId: project.owner.userId, notifyOwner: announce),
                                 key: projectID, actor: userID, withheldFrom: withheld, on: connection, logger: logger)
        if let karma = followed.karma { try await builders.karmaChanged(karma, earned: points, on: connection) }
        return FollowState(projectId: projectID.lowercased, following: true, followerCount: followed.followerCount, karmaEarned: followed.karma == nil ? 0 : points,
                           karma: try followed.karma.map(Karma.init))
    }

    /// Unfollows (idempotent): the counter goes down; karma stays as it is. A follower may
    /// unfollow a project that was unpublished since, or whose builder they blocked since (it
    /// stays out of sight otherwise).
    func unfollow(_ projectID: UUID, userID: UUID, on connection: PostgresConnection) async throws -> FollowState {
        // None when the caller blocked its builder: then only their follow makes it theirs to end.
        let project = try await store.find(projectID, viewer: userID, on: connection)
        if let project, !project.isFollowing { try ProjectPolicy.require(isOwner: project.owner.userId == userID, isPublished: project.isPublished, .follow) }
        guard let (follow, count) = try await store.unfollow(projectID, userID: userID, on: connection) else {
            guard let project else { throw ProjectsErrors.projectNotFound }
            return FollowState(projectId: projectID.lowercased, following: false, followerCount: project.followerCount, karmaEarned: 0, karma: nil)
        }
        try await outbox.publish(ProjectUnfollowed(follow: follow, followerCount: count, reason: .unfollowed), key: projectID, actor: userID, on: connection, logger: logger)
        return FollowState(projectId: projectID.lowercased, following: false, followerCount: count, karmaEarned: 0, karma: nil)
    }
}
