import ColonyModels
import ColonyPlatform
import Foundation
import Logging
import PostgresNIO

/// DMs between two members of the same circle. Each recipient's `dm_privacy` (`DMPolicy`) is
/// checked when a thread is opened and on every send; a thread whose parties no longer share
/// the circle is gone for both. A recipient who blocked the sender refuses threads, messages and
/// reactions (403 `blocked`); the blocker's thread list leaves the thread out, and its pages the
/// blocked party's messages and reactions.
struct DirectMessages: Sendable {
    let outbox: Outbox
    let media: PostMedia
    let logger: Logger
    var store: DMStore { DMStore(logger: logger) }
    var circles: Circles { Circles(outbox: outbox, media: media, logger: logger) }
    var blocks: BlockList { BlockList(logger: logger) }

    func thread(_ id: UUID, userID: UUID, lock: Bool = false, on connection: PostgresConnection) async throws -> DMStore.Thread {
        guard let thread = try await store.thread(id, for: userID, lock: lock, on: connection) else { throw CirclesErrors.threadNotFound }
        return thread
    }

    /// Whether `sender` may write to `recipient` under the recipient's privacy level.
    func requireAllowed(sender: UUID, recipient: UUID, on connection: PostgresConnection) async throws {
        let profiles = ProfileStore(logger: logger)
        guard let from = try await profiles.find(sender, on: connection), let to = try await profiles.find(recipient, on: connection) else { throw CirclesErrors.notAMember }
        guard DMPolicy.allows(sender: from.privacy, recipient: to.privacy) else { throw CirclesErrors.dmNotAllowed }
    }

    func threadView(_ thread: DMStore.Thread, last: DMMessageRow?, unread: Int, userID: UUID, on connection: PostgresConnection) async throws -> ThreadView {
        guard let other = try await ProfileStore(logger: logger).find(thread.other(than: userID), on: connection) else { throw CirclesErrors.threadNotFound }
        return ThreadView(id: thread.id.lowercased, circleId: thread.circleId.lowercased, otherUser: other.publicProfile, lastMessage: last.map(Components.Schemas.Message.init),
                          lastMessageAt: thread.lastMessageAt,
                          unreadCount: unread, notify: thread.notify(userID))
    }

    /// Opens (or returns) my thread with another member of the circle.
    func open(circleID: UUID, with other: UUID, userID: UUID, on connection: PostgresConnection) async throws -> ThreadView {
        _ = try await circles.membership(circleID, userID: userID, on: connection)
        guard other != userID else { throw CirclesErrors.validation("you cannot message yourself") }
        guard try await circles.store.isMember(circleID, userID: other, on: connection) else { throw CirclesErrors.notAMember }
        try await blocks.refuse(userID, reaching: other, on: connection)
        try await requireAllowed(sender: userID, recipient: other, on: connection)
        let thread = try await store.open(circleID: circleID, userID, other, on: connection)
        return try await threadView(thread, last: nil, unread: 0, userID: userID, on: connection)
    }

    func threads(userID: UUID, on connection: PostgresConnection) async throws -> [ThreadView] {
        var views: [ThreadView] = []
        for (thread, last, unread) in try await store.threads(for: userID, on: connection) {
            views.append(try await threadView(thread, last: last, unread: unread, userID: userID, on: connection))
        }
        return views
    }

    func send(_ threadID: UUID, body: String, replyTo: UUID?, userID: UUID, on connection: PostgresConnection) async throws -> DMMessageRow {
        let body = try CirclesRules.dmBody(body)
        let thread = try await thread(threadID, userID: userID, lock: true, on: connection)
        let recipient = thread.other(than: userID)
        try await blocks.refuse(userID, reaching: recipient, on: connection)
        try await requireAllowed(sender: userID, recipient: recipient, on: connection)
        let message = try await store.send(thread, senderID: userID, body: body, replyTo: replyTo, on: connection)
        try await circles.publish(DMSent(circleId: thread.circleId, message: message, participantIds: thread.participants, recipientId: recipient,
                                         notifyRecipient: thread.notify(recipient)), circle: thread.circleId, actor: userID, on: connection)
        return message
    }

    func messages(_ threadID: UUID, before: String?, limit: Int, userID: UUID, on connection: PostgresConnection) async throws -> DMPage {
        let cursor = try before.map { text in
            guard let cursor = KeysetCursor(text) else { throw CirclesErrors.validation("before must be a cursor from an earlier page") }
            return cursor
        }
        _ = try await thread(threadID, userID: userID, on: connection)
        let rows = try await store.page(threadID, viewer: userID, before: cursor, limit: limit + 1, on: connection)
        let page = rows.prefix(limit)
        return DMPage(messages: page.map(\.0), nextCursor: rows.count > limit ? page.last?.1.text : nil)
    }

    /// Read receipts: the other party's unread messages get `read_at` now (none while I have
    /// blocked them: those stay unread until an unblock). Withheld from the other party when they
    /// blocked me.
    func markRead(_ threadID: UUID, userID: UUID, on connection: PostgresConnection) async throws -> ThreadView {
        let thread = try await thread(threadID, userID: userID, on: connection)
        let read = try await store.markRead(thread, readerID: userID, on: connection)
        if let readAt = read.first?.readAt {
            try await circles.publish(DMRead(circleId: thread.circleId, threadId: thread.id, readerId: userID, participantIds: thread.participants, readAt: readAt,
                                             messageIds: read.map(\.id), messages: read),
                                      circle: thread.circleId, actor: userID,
                                      withheldFrom: try await blocks.blockers(of: userID, among: [thread.other(than: userID)], on: connection), on: connection)
        }
        return try await threadView(thread, last: nil, unread: 0, userID: userID, on: connection)
    }

    /// Adds (`on`) or removes my reaction to a message of the thread; only a real change is
    /// published (`dm_reacted`, to the two parties). A party who blocked me refuses new
    /// reactions and does not hear a removal; a message of someone I blocked is hidden (404).
    func react(_ threadID: UUID, messageID: UUID, emoji: String, on: Bool, userID: UUID, on connection: PostgresConnection) async throws -> ReactionState {
        let emoji = try CirclesRules.emoji(emoji)
        let thread = try await thread(threadID, userID: userID, on: connection)
        guard let message = try await store.message(messageID, in: thread.id, on: connection) else { throw CirclesErrors.messageNotFound }
        if message.senderId != userID, try await blocks.hasBlocked(message.senderId, by: userID, on: connection) { throw CirclesErrors.messageNotFound }
        let other = thread.other(than: userID)
        if on { try await blocks.refuse(userID, reaching: other, on: connection) }
        let changed = on ? try await store.addReaction(messageID, userID: userID, emoji: emoji, on: connection)
                         : try await store.removeReaction(messageID, userID: userID, emoji: emoji, on: connection)
        if let changed {
            try await circles.publish(DMReacted(operation: on ? .insert : .delete, circleId: thread.circleId, threadId: thread.id, reaction: changed,
                                                participantIds: thread.participants), circle: thread.circleId, actor: userID,
                                      withheldFrom: try await blocks.blockers(of: userID, among: [other], on: connection), on: connection)
        }
        return ReactionState(messageId: messageID.lowercased, emoji: emoji, active: on)
    }

    /// A moderator removes a reported message from its thread: its reactions go with it, replies
    /// to it stay (without the reference), and the two parties hear `dm_deleted`. false when it
    /// was gone already.
    func remove(_ messageID: UUID, on connection: PostgresConnection) async throws -> Bool {
        guard let (thread, _) = try await store.message(messageID, lock: true, on: connection),
              let deleted = try await store.deleteMessage(messageID, in: thread, on: connection) else { return false }
        try await circles.publish(DMDeleted(circleId: thread.circleId, threadId: thread.id, message: deleted, participantIds: thread.participants),
                                  circle: thread.circleId, actor: nil, on: connection)
        return true
    }

    func setNotify(_ threadID: UUID, notify: Bool, userID: UUID, on connection: PostgresConnection) async throws -> ThreadView {
        let thread = try await thread(threadID, userID: userID, lock: true, on: connection)
        try await store.setNotify(thread, userID: userID, notify: notify, on: connection)
        return try await threadView(try await self.thread(threadID, userID: userID, on: connection), last: nil, unread: 0, userID: userID, on: connection)
    }
}

/// Presence: a status per user and circle, read by the circle's members.
struct Presence: Sendable {
    let outbox: Outbox
    let media: PostMedia
    let logger: Logger
    var store: PresenceStore { PresenceStore(logger: logger) }
    var circles: Circles { Circles(outbox: outbox, media: media, logger: logger) }

    /// The members' statuses, but those of users I blocked.
    func list(_ circleID: UUID, userID: UUID, on connection: PostgresConnection) async throws -> [PresenceRow] {
        _ = try await circles.membership(circleID, userID: userID, on: connection)
        return try await store.circle(circleID, viewer: userID, on: connection)
    }

    func set(_ circleID: UUID, status: PresenceStatus, userID: UUID, on connection: PostgresConnection) async throws -> PresenceRow {
        _ = try await circles.membership(circleID, userID: userID, on: connection)
        let previous = try await store.current(userID, circleID: circleID, on: connection)
        let row = try await store.set(userID, circleID: circleID, status: status, on: connection)
        try await circles.publishActivity(PresenceChanged(presence: row, operation: previous == nil ? .insert : .update, previous: previous),
                                          circle: circleID, actor: userID, on: connection)
        return row
    }
}
