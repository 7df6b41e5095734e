import ColonyModels
import ColonyPlatform
import ColonyStorage
import Foundation
import Logging
import NIOCore
import PostgresNIO

/// Builders (every user's profile) and their karma: kept from auth's events, edited by their
/// owner, erased with everything the account did.
struct Builders: Sendable {
    let outbox: Outbox
    let media: ProjectsMedia
    let logger: Logger
    var store: BuilderStore { BuilderStore(logger: logger) }

    // MARK: views

    func row(_ builder: StoredBuilder) -> BuilderRow {
        BuilderRow(id: builder.id, userId: builder.userId, name: builder.name, bio: builder.bio, avatarUrl: media.avatarURL(builder.id, version: builder.avatarVersion),
                   websiteUrl: builder.websiteUrl, twitterHandle: builder.twitterHandle, isCreator: builder.isCreator, createdAt: builder.createdAt, updatedAt: builder.updatedAt)
    }

    func card(_ owner: StoredOwner) -> BuilderCard {
        BuilderCard(id: owner.builderId.lowercased, userId: owner.userId.lowercased, name: owner.name, avatarUrl: media.avatarURL(owner.builderId, version: owner.avatarVersion))
    }

    func card(_ builder: StoredBuilder) -> BuilderCard {
        card(StoredOwner(builderId: builder.id, userId: builder.userId, name: builder.name, avatarVersion: builder.avatarVersion))
    }


    // MARK: profile

    /// The caller's builder, created (with karma) if the registration event is late; 401 once
    /// the account is gone.
    func require(_ userID: UUID, email: String? = nil, on connection: PostgresConnection) async throws -> StoredBuilder {
        guard let builder = try await store.ensure(userID, email: email, on: connection) else { throw ProjectsErrors.accountDeleted }
        return builder
    }

    func me(_ userID: UUID, email: String?, on connection: PostgresConnection) async throws -> Builder {
        Builder(row(try await require(userID, email: email, on: connection)))
    }

    func get(_ builderID: UUID, on connection: PostgresConnection) async throws -> Builder {
        guard let builder = try await store.find(id: builderID, on: connection) else { throw ProjectsErrors.builderNotFound }
        return Builder(row(builder))
    }

    func get(userID: UUID, on connection: PostgresConnection) async throws -> Builder {
        guard let builder = try await store.find(userID: userID, on: connection) else { throw ProjectsErrors.builderNotFound }
        return Builder(row(builder))
    }

    /// A profile edit: absent fields stay; null (or "") clears bio, website and Twitter handle.
    struct ProfileEdit: Sendable {
        var name: String?
        var bio: String??
        var websiteUrl: String??
        var twitterHandle: String??
        var isCreator: Bool?
    }

    func edit(_ userID: UUID, _ edit: ProfileEdit, on connection: PostgresConnection) async throws -> Builder {
        var errors = ValidationErrors()
        var changes = BuilderStore.Changes()
        if let name = edit.name { changes.name = ProjectsRules.name(name, errors: &errors) }
        if let bio = edit.bio { changes.bio = .some(ProjectsRules.text(bio, field: "bio", max: ProjectsRules.maxBio, errors: &errors)) }
        if let website = edit.websiteUrl { changes.websiteUrl = .some(ProjectsRules.websiteURL(website, errors: &errors)) }
        if let handle = edit.twitterHandle { changes.twitterHandle = .some(ProjectsRules.twitterHandle(handle, errors: &errors)) }
        changes.isCreator = edit.isCreator
        try errors.throwIfAny()
        let builder = try await require(userID, on: connection)
        guard !changes.isEmpty else { return Builder(row(builder)) }
        return try await apply(userID, changes, on: connection)
    }

    /// Stores the picture under a new key, deleting the old one (its URL stops working).
    func setAvatar(_ userID: UUID, image: ByteBuffer, contentType: String?, on connection: PostgresConnection) async throws -> Builder {
        let builder = try await require(userID, on: connection)
        let version = try await media.storage.uploadPicture(image, contentType: contentType, to: media.avatars, owner: builder.id, replacing: builder.avatarVersion)
        return try await apply(userID, .init(avatarVersion: .some(version)), on: connection)
    }

    func removeAvatar(_ userID: UUID, on connection: PostgresConnection) async throws -> Builder {
        let builder = try await require(userID, on: connection)
        try await media.storage.removePicture(media.avatars, owner: builder.id, version: builder.avatarVersion)
        return try await apply(userID, .init(avatarVersion: .some(nil)), on: connection)
    }

    /// What a builder's name becomes when a moderator resets the profile (`BuilderStore.defaultName`
    /// of no email: the name a builder without one gets).
    static let neutralName = BuilderStore.defaultName(email: nil)

    /// A moderator's reset of the profile, as the builder could do it themselves: the name becomes
    /// `neutralName` (kept as if chosen, so a later sign-up event does not bring the old one back),
    /// bio, website and Twitter handle are cleared and the avatar is deleted; `builder_updated`
    /// tells the others. false when there is no such builder.
    func resetProfile(_ userID: UUID, on connection: PostgresConnection) async throws -> Bool {
        guard let builder = try await store.find(userID: userID, on: connection) else { return false }
        try await media.storage.removePicture(media.avatars, owner: builder.id, version: builder.avatarVersion)
        _ = try await apply(userID, .init(name: Self.neutralName, bio: .some(nil), websiteUrl: .some(nil), twitterHandle: .some(nil), avatarVersion: .some(nil)),
                            on: connection)
        return true
    }

    /// Saves profile changes and publishes `builder_updated`.
    func apply(_ userID: UUID, _ changes: BuilderStore.Changes, on connection: PostgresConnection) async throws -> Builder {
        guard let builder = try await store.update(userID, changes, on: connection) else { throw ProjectsErrors.accountDeleted }
        let updated = row(builder)
        try await outbox.publish(BuilderUpdated(builder: updated), key: userID, actor: userID, on: connection, logger: logger)
        return Builder(updated)
    }

    // MARK: karma

    func karma(_ userID: UUID, on connection: PostgresConnection) async throws -> Karma {
        _ = try await require(userID, on: connection)
        guard let karma = try await store.karma(userID, on: connection) else { throw ProjectsErrors.accountDeleted }
        return try Karma(karma)
    }

    func stats(_ userID: UUID, on connection: PostgresConnection) async throws -> SupportStats {
        _ = try await require(userID, on: connection)
        return try await store.stats(userID, on: connection)
    }

    func actions(_ userID: UUID, limit: Int, on connection: PostgresConnection) async throws -> [SupportAction] {
        _ = try await require(userID, on: connection)
        return try await store.actions(userID, limit: limit, on: connection).map { action, project in try SupportAction(action, project: project) }
    }

    /// Publishes `karma_level_up` when `earned` points moved `karma` into a higher level.
    func karmaChanged(_ karma: KarmaRow, earned: Int, on connection: PostgresConnection) async throws {
        let before = KarmaLevel.of(points: karma.totalPoints - earned)
        guard karma.level > before.level else { return }
        let level = KarmaLevel.numbered(karma.level)
        try await outbox.publish(KarmaLevelUp(karma: karma, previousLevel: before.level, label: level.label, emoji: level.emoji),
                                 key: karma.userId, actor: karma.userId, on: connection, logger: logger)
    }

    // MARK: auth's events

    func registered(_ userID: UUID, email: String?, metadata: [String: JSONValue], on connection: PostgresConnection) async throws {
        try await store.upsertFromAuth(userID, name: SignUpMetadata.displayName(metadata, maxLength: ProjectsRules.maxName), email: email, on: connection)
    }

    /// Erases the account: their projects go (followers are told), their follows and likes end
    /// (counters go down), their support actions, karma and avatar go; the support messages they
    /// sent stay, anonymous. Runs inside the inbox transaction, so a redelivery is a no-op.
    func erase(_ userID: UUID, projects: Projects, on connection: PostgresConnection) async throws {
        guard let builder = try await store.find(userID: userID, on: connection) else {
            try await store.erase(userID, on: connection)
            return
        }
        for projectID in try await projects.store.owned(by: builder.id, on: connection) {
            if let project = try await projects.store.find(projectID, viewer: userID, on: connection) {
                try await projects.deleteProject(project, actor: userID, on: connection)
            }
        }
        for (follow, count) in try await store.removeFollows(userID, on: connection) {
            try await outbox.publish(ProjectUnfollowed(follow: follow, followerCount: count, reason: .accountDeleted),
                                     key: follow.projectId, actor: userID, on: connection, logger: logger)
        }
        try await store.removeLikes(userID, on: connection)
        try await store.erase(userID, on: connection)
        try await media.storage.removePicture(media.avatars, owner: builder.id, version: builder.avatarVersion)
    }
}

extension Outbox {
    /// Publishes an ibelieveinyou event keyed by `key` (a project or user id); `withheldFrom`:
    /// those it would be shown to who blocked its author (`EventEnvelope.withheldFrom`).
    func publish<Payload: EventPayload>(_ payload: Payload, key: UUID, actor: UUID?, withheldFrom: [UUID] = [], on connection: PostgresConnection,
                                        logger: Logger) async throws {
        try await publish(EventEnvelope(app: .ibelieveinyou, aggregateId: key.uuidString.lowercased(), actor: actor, withheldFrom: withheldFrom, payload: payload),
                          on: connection, logger: logger)
    }
}
