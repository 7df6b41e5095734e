import ColonyModels
import ColonyPlatform
import Foundation
import Logging
import PostgresNIO

/// What Unify's users may report (`POST /chat/v1/reports`, `ReportDesk`), with the rules chat's own
/// reads apply and its owners' deletes:
/// - `message`: a text or voice message in a group the caller is in now (the history page's rule);
///   removed as its sender would delete it: the row, `message_deleted` (by the sender), the voice file.
/// - `group`: a group the caller is in; removed as its owner would delete it: messages, voice files,
///   calendar events (each `calendar_event_deleted`) and picture, then `group_deleted`.
/// - `profile`: a user (`object_id` their id) the caller can see in the app (`GET /users/{id}`'s
///   rule: a co-member, or someone who wrote in one of the caller's groups); removed: the name reset
///   to "Unify user" and the avatar removed, as the user could do it.
struct ChatReportables: ReportableContent {
    let users: Users
    let groups: Groups
    let messages: Messages

    init(outbox: Outbox, media: ChatMedia, settings: ChatSettings, logger: Logger) {
        users = Users(outbox: outbox, media: media, logger: logger)
        groups = Groups(outbox: outbox, media: media, logger: logger)
        messages = Messages(outbox: outbox, media: media, maxVoiceSeconds: settings.maxVoiceSeconds, logger: logger)
    }

    static let message = "message", group = "group", profile = "profile"

    var objectTypes: [String] { [Self.message, Self.group, Self.profile] }

    func visible(_ objectType: String, _ id: UUID, to viewer: UUID, on connection: PostgresConnection) async throws -> ReportedObject? {
        switch objectType {
        case Self.message:
            try await messages.store.visible(id, to: viewer, on: connection).map(reported)
        case Self.group:
            try await groups.store.membership(id, userID: viewer, on: connection).map { reported($0.group) }
        case Self.profile:
            try await users.store.visible(id, to: viewer, on: connection).map(reported)
        default:
            nil
        }
    }

    func current(_ objectType: String, _ id: UUID, on connection: PostgresConnection) async throws -> ReportedObject? {
        switch objectType {
        case Self.message: try await messages.store.find(id, on: connection).map(reported)
        case Self.group: try await groups.store.find(id, on: connection).map(reported)
        case Self.profile: try await users.store.find(id, on: connection).map(reported)
        default: nil
        }
    }

    func remove(_ objectType: String, _ id: UUID, on connection: PostgresConnection) async throws -> Bool {
        switch objectType {
        case Self.message:
            guard let message = try await messages.store.find(id, on: connection) else { return false }
            return try await messages.remove(message, by: message.sentBy, on: connection)
        case Self.group:
            // The row's lock, as the owner's delete takes it; the owner read under it.
            guard let group = try await groups.store.find(id, lock: true, on: connection) else { return false }
            try await groups.deleteGroup(id, actor: group.ownerId, on: connection)
            return true
        case Self.profile:
            return try await users.resetProfile(id, on: connection)
        default:
            return false
        }
    }

    // MARK: what a moderator reads

    func reported(_ message: StoredMessage) -> ReportedObject {
        ReportedObject(ownerId: message.sentBy, content: Self.describe(message))
    }

    func reported(_ group: StoredGroup) -> ReportedObject {
        let picture = groups.media.groupPictureURL(group.id, version: group.pictureVersion)
        return ReportedObject(ownerId: group.ownerId, content: group.name + (picture.map { "\npicture: \($0)" } ?? ""))
    }

    func reported(_ user: StoredUser) -> ReportedObject {
        let avatar = users.media.avatarURL(user.id, version: user.avatarVersion)
        return ReportedObject(ownerId: user.id, content: user.displayName + (avatar.map { "\navatar: \($0)" } ?? ""))
    }

    /// A text message is its text; a voice message its kind and length, and its caption if any.
    static func describe(_ message: StoredMessage) -> String {
        switch message.messageType {
        case .text:
            return message.content
        case .voice:
            let seconds = Int((message.voiceDuration ?? 0).rounded())
            return "voice message, \(seconds) s" + (message.content.isEmpty ? "" : ": \(message.content)")
        }
    }
}
