import ColonyModels
import ColonyPlatform
import ColonyStorage
import Foundation
import Logging
import NIOCore
import PostgresNIO

/// Unify's `user` profiles: kept from auth's events, edited by their owner, erased with everything
/// the account wrote.
struct Users: Sendable {
    let outbox: Outbox
    let media: ChatMedia
    let logger: Logger
    var store: UserStore { UserStore(logger: logger) }

    func view(_ user: StoredUser) -> Schemas.User {
        Schemas.User(id: user.id.lowercased, displayName: user.displayName, email: user.email, avatarUrl: media.avatarURL(user.id, version: user.avatarVersion),
                 createdAt: user.createdAt, updatedAt: user.updatedAt)
    }

    /// The caller's row, created if the registration event is late; 401 once the account is gone.
    func require(_ userID: UUID, email: String? = nil, on connection: PostgresConnection) async throws -> StoredUser {
        guard let user = try await store.ensure(userID, email: email, on: connection) else { throw ChatErrors.accountDeleted }
        return user
    }

    func get(_ userID: UUID, on connection: PostgresConnection) async throws -> Schemas.User {
        view(try await require(userID, on: connection))
    }

    /// Another user's public profile (`GET /users/{id}`, the app's user cache): anyone I share a
    /// group with, or who wrote in one of my groups before leaving it; 404 for anyone else.
    func profile(_ userID: UUID, viewer: UUID, on connection: PostgresConnection) async throws -> Schemas.PublicUser {
        _ = try await require(viewer, on: connection)
        guard let user = try await store.visible(userID, to: viewer, on: connection) else { throw ChatErrors.userNotFound }
        return Schemas.PublicUser(id: user.id.lowercased, displayName: user.displayName, avatarUrl: media.avatarURL(user.id, version: user.avatarVersion))
    }

    func rename(_ userID: UUID, displayName: String, on connection: PostgresConnection) async throws -> Schemas.User {
        let name = try ChatRules.displayName(displayName)
        _ = try await require(userID, on: connection)
        guard let user = try await store.update(userID, displayName: name, avatarVersion: nil, on: connection) else { throw ChatErrors.accountDeleted }
        return view(user)
    }

    /// Stores the picture under a new key, deleting the old one (its URL stops working).
    func setAvatar(_ userID: UUID, image: ByteBuffer, contentType: String?, on connection: PostgresConnection) async throws -> Schemas.User {
        let current = try await require(userID, on: connection)
        let version = try await media.storage.uploadPicture(image, contentType: contentType, to: media.profilePictures, owner: userID, replacing: current.avatarVersion)
        guard let user = try await store.update(userID, displayName: nil, avatarVersion: .some(version), on: connection) else { throw ChatErrors.accountDeleted }
        return view(user)
    }

    func removeAvatar(_ userID: UUID, on connection: PostgresConnection) async throws -> Schemas.User {
        let current = try await require(userID, on: connection)
        try await media.storage.removePicture(media.profilePictures, owner: userID, version: current.avatarVersion)
        guard let user = try await store.update(userID, displayName: nil, avatarVersion: .some(nil), on: connection) else { throw ChatErrors.accountDeleted }
        return view(user)
    }

    /// A moderator's removal of a reported profile, as the user could do it themselves (`PATCH /me`,
    /// `DELETE /me/avatar`): the name back to the neutral default ("Unify user"), the avatar removed.
    /// Chat publishes no event for a profile change (apps read names with the rows and `GET /users/{id}`).
    /// false when the account is gone.
    func resetProfile(_ userID: UUID, on connection: PostgresConnection) async throws -> Bool {
        guard let current = try await store.find(userID, lock: true, on: connection) else { return false }
        guard try await store.update(userID, displayName: UserStore.defaultName(email: nil), avatarVersion: .some(nil), on: connection) != nil else { return false }
        try await media.storage.removePicture(media.profilePictures, owner: userID, version: current.avatarVersion)
        return true
    }

    // MARK: auth's events

    /// The name a new user takes from sign-up metadata.
    static func displayName(from metadata: [String: JSONValue]) -> String? {
        SignUpMetadata.displayName(metadata, maxLength: ChatRules.maxDisplayName)
    }

    func registered(_ userID: UUID, email: String?, metadata: [String: JSONValue], on connection: PostgresConnection) async throws {
        try await store.upsertFromAuth(userID, displayName: Self.displayName(from: metadata), email: email, on: connection)
    }

    /// Erases the account: groups it owns pass to their longest-standing admin (or member) or,
    /// when it was alone, are deleted; it leaves the others; its messages (with voice files),
    /// events and pictures go. Runs inside the inbox transaction, so a redelivery is a no-op.
    func erase(_ userID: UUID, groups: Groups, on connection: PostgresConnection) async throws {
        guard let user = try await store.find(userID, on: connection) else {
            try await store.erase(userID, on: connection)
            return
        }
        // Those who shared a group with it drop it and its messages: one event (its history may be long).
        let sharedWith = try await store.sharingGroups(with: userID, on: connection)
        let groupStore = GroupStore(logger: logger)
        for groupID in try await groupStore.owned(by: userID, on: connection) {
            if let successor = try await groupStore.successor(groupID, excluding: userID, on: connection) {
                try await groups.transfer(groupID, from: userID, to: successor, on: connection)
                try await groups.removeMembership(groupID, userID: userID, reason: .accountDeleted, actor: userID, on: connection)
            } else {
                try await groups.deleteGroup(groupID, actor: userID, on: connection)
            }
        }
        for groupID in try await groupStore.joined(by: userID, on: connection) {
            try await groups.removeMembership(groupID, userID: userID, reason: .accountDeleted, actor: userID, on: connection)
        }
        let events = CalendarEvents(outbox: outbox, logger: logger)
        for event in try await events.store.created(by: userID, on: connection) {
            try await events.publishDeleted(event, actor: userID, on: connection)
        }
        let voicePaths = try await MessageStore(logger: logger).voicePaths(sentBy: userID, on: connection)
        try await store.erase(userID, on: connection)
        if !sharedWith.isEmpty {
            try await outbox.publish(EventEnvelope(app: .unify, aggregateId: userID.uuidString.lowercased(), actor: userID,
                                                   payload: UserErased(userId: userID, displayName: user.displayName, sharedWith: sharedWith)), on: connection, logger: logger)
        }
        for path in voicePaths { try await media.storage.remove(media.voiceMessages, key: path) }
        try await media.storage.removePicture(media.profilePictures, owner: userID, version: user.avatarVersion)
    }
}
