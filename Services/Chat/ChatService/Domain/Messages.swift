import ColonyModels
import ColonyPlatform
import ColonyStorage
import Foundation
import Logging
import NIOCore
import PostgresNIO

/// Messages: text and voice, history pages, edits and deletes.
struct Messages: Sendable {
    let outbox: Outbox
    let media: ChatMedia
    let maxVoiceSeconds: Double
    let logger: Logger
    var store: MessageStore { MessageStore(logger: logger) }
    var groups: Groups { Groups(outbox: outbox, media: media, logger: logger) }

    func row(_ message: StoredMessage) -> MessageRow {
        MessageRow(id: message.id, groupId: message.groupId, content: message.content, sentBy: message.sentBy, sentAt: message.sentAt,
                   isEdited: message.isEdited, messageType: message.messageType, voiceDuration: message.voiceDuration, voiceUrl: media.voiceURL(message.voicePath))
    }

    /// `groupID` is the group's id as text, made once for a whole page.
    func view(_ message: StoredMessage, cursor: MessageStore.Cursor? = nil, groupID: String? = nil) -> Schemas.Message {
        let sender = message.sentBy.lowercased
        return Schemas.Message(id: message.id.lowercased, groupId: groupID ?? message.groupId.lowercased, content: message.content, sentBy: sender,
                               sentAt: message.sentAt, isEdited: message.isEdited, messageType: .init(message.messageType), voiceDuration: message.voiceDuration,
                               voiceUrl: media.voiceURL(message.voicePath), user: .init(id: sender, displayName: message.senderName), cursor: cursor?.text)
    }

    /// Sends a text message. Membership is checked in the insert itself (one statement).
    func sendText(_ groupID: UUID, content: String, userID: UUID, on connection: PostgresConnection) async throws -> Schemas.Message {
        let content = try ChatRules.messageContent(content)
        guard let message = try await store.insert(id: .timeOrdered(), groupID: groupID, senderID: userID, content: content, type: .text,
                                                   voiceDuration: nil, voicePath: nil, on: connection) else { throw ChatErrors.groupNotFound }
        try await publishSent(message, on: connection)
        return view(message)
    }

    /// Stores the audio as `{group_id}/{message_id}` and writes the message; if the row cannot
    /// be written the file is removed again, so nothing is left half-done.
    func sendVoice(_ groupID: UUID, audio: ByteBuffer, contentType: String?, duration: Double?, content: String?, userID: UUID,
                   on connection: PostgresConnection) async throws -> Schemas.Message {
        let duration = try ChatRules.voiceDuration(duration, max: maxVoiceSeconds)
        let caption = content ?? ""
        guard TextRules.length(caption) <= ChatRules.maxMessageLength else { throw ChatErrors.validation("content must be at most \(ChatRules.maxMessageLength) characters") }
        _ = try await groups.membership(groupID, userID: userID, on: connection)
        let id = UUID.timeOrdered()
        let key = ChatMedia.voiceKey(groupID: groupID, messageID: id)
        _ = try await media.storage.upload(audio, contentType: contentType, to: media.voiceMessages, key: key)
        do {
            guard let message = try await store.insert(id: id, groupID: groupID, senderID: userID, content: caption, type: .voice,
                                                       voiceDuration: duration, voicePath: key, on: connection) else { throw ChatErrors.groupNotFound }
            try await publishSent(message, on: connection)
            return view(message)
        } catch {
            try? await media.storage.remove(media.voiceMessages, key: key)
            throw error
        }
    }

    enum PageRequest: Sendable {
        case latest
        case before(String)
        case after(String)
    }

    /// A page of a group's history for one of its members (the membership is checked by the
    /// page's own statement), without the messages of those they blocked.
    func history(_ groupID: UUID, page request: PageRequest, limit: Int, userID: UUID, on connection: PostgresConnection) async throws -> Schemas.HistoryPage {
        let direction: MessageStore.Direction
        switch request {
        case .latest: direction = .latest
        case .before(let text):
            guard let cursor = MessageStore.Cursor(text) else { throw ChatErrors.validation("before must be a cursor from an earlier page") }
            direction = .before(cursor)
        case .after(let text):
            guard let cursor = MessageStore.Cursor(text) else { throw ChatErrors.validation("after must be a cursor from an earlier page") }
            direction = .after(cursor)
        }
        guard let page = try await store.page(groupID: groupID, userID: userID, direction: direction, limit: limit, on: connection) else {
            throw ChatErrors.groupNotFound
        }
        let (messages, more) = page
        let group = groupID.lowercased
        let views = messages.map { view($0.0, cursor: $0.1, groupID: group) }
        let hasOlder: Bool
        switch direction {
        case .after: hasOlder = true
        case .latest, .before: hasOlder = more
        }
        return Schemas.HistoryPage(messages: views, hasMore: more,
                           olderCursor: hasOlder ? views.first?.cursor : nil,
                           newerCursor: views.last?.cursor ?? { if case .before(let cursor) = direction { cursor.text } else { nil } }())
    }

    /// Edits my own text message.
    func edit(_ groupID: UUID, messageID: UUID, content: String, userID: UUID, on connection: PostgresConnection) async throws -> Schemas.Message {
        let content = try ChatRules.messageContent(content)
        let membership = try await groups.membership(groupID, userID: userID, on: connection)
        guard let message = try await store.find(messageID, groupID: groupID, on: connection) else { throw ChatErrors.messageNotFound }
        try GroupPolicy.require(membership.member.role, .editMessage(own: message.sentBy == userID))
        guard message.messageType == .text else { throw ChatErrors.voiceNotEditable }
        guard let edited = try await store.edit(messageID, content: content, on: connection) else { throw ChatErrors.messageNotFound }
        try await groups.publish(MessageEdited(message: row(edited), previous: row(message)), group: groupID, actor: userID,
                                 withheldFrom: try await groups.store.blockers(of: edited.sentBy, amongMembersOf: groupID, on: connection), on: connection)
        return view(edited)
    }

    /// Deletes a message: my own, or anyone's as admin or owner. A voice file goes with it.
    func delete(_ groupID: UUID, messageID: UUID, userID: UUID, on connection: PostgresConnection) async throws {
        let membership = try await groups.membership(groupID, userID: userID, on: connection)
        guard let message = try await store.find(messageID, groupID: groupID, on: connection) else { throw ChatErrors.messageNotFound }
        try GroupPolicy.require(membership.member.role, .deleteMessage(own: message.sentBy == userID))
        try await remove(message, by: userID, on: connection)
    }

    /// The step of every delete (a member's, a moderator's as its sender): the row, `message_deleted`
    /// and the voice file. false when the message was gone already (nothing is published then).
    @discardableResult
    func remove(_ message: StoredMessage, by actor: UUID, on connection: PostgresConnection) async throws -> Bool {
        guard try await store.delete(message.id, on: connection) else { return false }
        try await groups.publish(MessageDeleted(message: row(message), deletedBy: actor), group: message.groupId, actor: actor, on: connection)
        if let path = message.voicePath { try await media.storage.remove(media.voiceMessages, key: path) }
        return true
    }

    /// Members who blocked the sender do not get it by realtime or push (`withheldFrom`).
    func publishSent(_ message: StoredMessage, on connection: PostgresConnection) async throws {
        let blockers = try await groups.store.blockers(of: message.sentBy, amongMembersOf: message.groupId, on: connection)
        try await groups.publish(MessageSent(message: row(message), senderDisplayName: message.senderName), group: message.groupId, actor: message.sentBy,
                                 withheldFrom: blockers, on: connection)
    }
}
