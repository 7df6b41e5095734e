import ColonyModels
import Foundation

// What the API answers with: the seed's rows, with storage keys turned into URLs and the joins
// the app makes (the sender's name on a message, my role and unread count on a group).

/// `user`, as its owner sees it.
struct UserView: Codable, Sendable {
    var id: UUID
    var displayName: String
    var email: String?
    var avatarUrl: String?
    var createdAt: Date
    var updatedAt: Date
}

/// `user` as others see it (never the email).
struct PublicUserView: Codable, Sendable {
    var id: UUID
    var displayName: String
    var avatarUrl: String?
}

/// `group`, as one of its members sees it.
struct GroupView: Codable, Sendable {
    var id: UUID
    var name: String
    var ownerId: UUID
    var pictureUrl: String?
    var createdAt: Date
    var updatedAt: Date
    var role: GroupRole
    var lastReadAt: Date
    var unreadCount: Int?
    var lastMessageAt: Date?
}

/// `group_members` with the member's public profile.
struct MemberView: Codable, Sendable {
    var groupId: UUID
    var userId: UUID
    var role: GroupRole
    var joinedAt: Date
    var lastReadAt: Date
    var displayName: String
    var avatarUrl: String?
}

/// `message` with `user: {id, display_name}` (the seed's `user!sent_by` join) and its cursor.
struct MessageView: Codable, Sendable {
    struct Sender: Codable, Sendable {
        var id: UUID
        var displayName: String
    }

    var id: UUID
    var groupId: UUID
    var content: String
    var sentBy: UUID
    var sentAt: Date
    var isEdited: Bool
    var messageType: MessageType
    var voiceDuration: Double?
    var voiceUrl: String?
    var user: Sender
    var cursor: String?
}

struct HistoryPage: Codable, Sendable {
    var messages: [MessageView]
    /// More messages lie beyond this page in the direction it was read.
    var hasMore: Bool
    /// Pass as `before` for the page older than this one.
    var olderCursor: String?
    /// Pass as `after` for messages newer than this page.
    var newerCursor: String?
}

struct UnreadCount: Codable, Sendable {
    var groupId: UUID
    var unreadCount: Int
}

struct AddMembersResult: Codable, Sendable {
    var added: [MemberView]
}

// A history page is the app's busiest read: written straight into bytes (see ColonyJSONWritable),
// byte for byte what ColonyJSON's encoder writes for it (ChatJSONTests holds the two equal).
extension HistoryPage: ColonyJSONWritable {
    var jsonCapacity: Int { 128 + messages.count * 512 }

    func writeJSON(to json: inout JSONBytesWriter) throws {
        json.raw("{")
        json.key("has_more"); json.bool(hasMore)
        json.key("messages"); try json.array(messages) { try $1.writeJSON(to: &$0) }
        json.member("newer_cursor", newerCursor) { $0.string($1) }
        json.member("older_cursor", olderCursor) { $0.string($1) }
        json.raw("}")
    }
}

extension MessageView: ColonyJSONWritable {
    func writeJSON(to json: inout JSONBytesWriter) throws {
        json.raw("{")
        json.key("content"); json.string(content)
        json.member("cursor", cursor) { $0.string($1) }
        json.key("group_id"); json.uuid(groupId)
        json.key("id"); json.uuid(id)
        json.key("is_edited"); json.bool(isEdited)
        json.key("message_type"); json.string(messageType.rawValue)
        json.key("sent_at"); json.date(sentAt)
        json.key("sent_by"); json.uuid(sentBy)
        json.key("user"); json.raw("{")
        json.key("display_name"); json.string(user.displayName)
        json.key("id"); json.uuid(user.id)
        json.raw("}")
        try json.member("voice_duration", voiceDuration) { try $0.double($1) }
        json.member("voice_url", voiceUrl) { $0.string($1) }
        json.raw("}")
    }
}
