import ColonyModels
import ColonyPlatform
import Foundation
import Logging
import PostgresNIO

/// Support messages: anyone who sees a project (not its owner) sends encouragement, earning 10
/// karma each, within a rate limit. An anonymous message never shows who sent it — not in lists,
/// not to the owner, not in events. A builder who blocked a user receives no message from them,
/// anonymous or not (the server knows the sender), and does not see the named ones they sent.
struct SupportMessages: Sendable {
    let outbox: Outbox
    let media: ProjectsMedia
    /// At most `limit` messages per sender within `windowSeconds`.
    let limit: Int
    let windowSeconds: Int
    let logger: Logger
    var store: SupportStore { SupportStore(logger: logger) }
    var projects: Projects { Projects(outbox: outbox, media: media, logger: logger) }
    var builders: Builders { Builders(outbox: outbox, media: media, logger: logger) }

    func view(_ message: StoredSupportMessage) -> SupportMessage {
        let row = message.row
        return SupportMessage(id: row.id.lowercased, projectId: row.projectId.lowercased, senderId: row.senderId?.lowercased, message: row.message,
                              isAnonymous: row.isAnonymous, createdAt: row.createdAt, sender: row.isAnonymous ? nil : message.sender.map(builders.card))
    }

    /// The project's latest messages (`getProjectSupportMessages`), newest first, but the named
    /// ones of senders the caller blocked.
    func recent(_ projectID: UUID, limit: Int, userID: UUID, on connection: PostgresConnection) async throws -> [SupportMessage] {
        _ = try await projects.access(projectID, userID: userID, .view, on: connection)
        return try await store.recent(projectID: projectID, viewer: userID, limit: limit, on: connection).map(view)
    }

    /// Sends a message: the message, the support action and 10 karma in one transaction. The
    /// sender's karma row is locked first, so their messages are counted against the limit one
    /// at a time; over it, 429 with `Retry-After`.
    func send(_ projectID: UUID, message: String, isAnonymous: Bool, userID: UUID, on connection: PostgresConnection) async throws -> Components.Schemas.SupportSent {
        let text = try ProjectsRules.supportMessage(message)
        let sender = try await builders.require(userID, on: connection)
        let project = try await projects.access(projectID, userID: userID, .support, on: connection)
        // 403 `blocked` when the builder blocked the sender; so `support_sent` never reaches a
        // blocker and needs no `withheldFrom`.
        try await BlockList(logger: logger).refuse(userID, reaching: project.owner.userId, on: connection)
        _ = try await builders.store.karma(userID, lock: true, on: connection)
        let recent = try await store.recentlySent(senderID: sender.id, windowSeconds: windowSeconds, limit: limit, on: connection)
        guard recent.count < limit else {
            throw ProjectsErrors.supportRateLimited(retryAfterSeconds: recent.secondsUntilFree, limit: limit, windowSeconds: windowSeconds)
        }
        let sent = try await store.insert(id: .timeOrdered(), projectID: projectID, senderID: sender.id, message: text, isAnonymous: isAnonymous, on: connection)
        let points = KarmaLevel.points(for: .message)
        try await builders.store.logAction(id: .timeOrdered(), userID: userID, projectID: projectID, type: .message, points: points,
                                           metadata: ["message_id": .string(sent.id.uuidString.lowercased())], on: connection)
        guard let karma = try await builders.store.addKarma(userID, points: points, on: connection) else { throw ProjectsErrors.accountDeleted }
        // An anonymous message's event has no actor and no sender: nothing in it points back.
        try await outbox.publish(SupportSent(message: sent, senderName: sender.name, ownerId: project.owner.userId),
                                 key: projectID, actor: isAnonymous ? nil : userID, on: connection, logger: logger)
        try await builders.karmaChanged(karma, earned: points, on: connection)
        let card = isAnonymous ? nil : builders.card(sender)
        return Components.Schemas.SupportSent(
            message: SupportMessage(id: sent.id.lowercased, projectId: projectID.lowercased, senderId: sent.senderId?.lowercased, message: sent.message,
                                    isAnonymous: isAnonymous, createdAt: sent.createdAt, sender: card),
            karmaEarned: points, karma: try Karma(karma))
    }

    /// A moderator's removal: the message goes with the support action its sending logged, and
    /// the 10 karma it earned are taken back (a removed message earned nothing). Nothing is
    /// published: the app has no event for it, and `support_sent` carried no state to undo.
    /// false when it was gone already.
    func remove(_ messageID: UUID, on connection: PostgresConnection) async throws -> Bool {
        try await store.delete(messageID, on: connection)
    }
}
