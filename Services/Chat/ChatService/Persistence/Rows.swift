import ColonyModels
import ColonyPlatform
import Foundation
import PostgresNIO

// Column lists and decoders for the service's SELECTs and RETURNINGs. Storage keys and versions
// stay here; the domain turns them into URLs.

/// `users` as stored.
struct StoredUser: Sendable {
    var id: UUID
    var displayName: String
    var email: String?
    var avatarVersion: Int64?
    var createdAt: Date
    var updatedAt: Date

    static let columns = "id, display_name, email, avatar_version, created_at, updated_at"

    init(row: PostgresRow) throws {
        (id, displayName, email, avatarVersion, createdAt, updatedAt) = try row.decode((UUID, String, String?, Int64?, Date, Date).self)
    }
}

/// `groups` as stored.
struct StoredGroup: Sendable {
    var id: UUID
    var name: String
    var ownerId: UUID
    var pictureVersion: Int64?
    var createdAt: Date
    var updatedAt: Date

    static let columns = "id, name, owner_id, picture_version, created_at, updated_at"
    static func columns(_ alias: String) -> String {
        columns.split(separator: ", ").map { "\(alias).\($0)" }.joined(separator: ", ")
    }

    init(row: PostgresRow) throws {
        (id, name, ownerId, pictureVersion, createdAt, updatedAt) = try row.decode((UUID, String, UUID, Int64?, Date, Date).self)
    }
}

extension GroupMemberRow {
    static let columns = "group_id, user_id, role::text, joined_at, last_read_at"

    init(row: PostgresRow) throws {
        let (groupId, userId, role, joinedAt, lastReadAt) = try row.decode((UUID, UUID, String, Date, Date).self)
        self.init(groupId: groupId, userId: userId, role: GroupRole(rawValue: role) ?? .user, joinedAt: joinedAt, lastReadAt: lastReadAt)
    }
}

/// `messages` as stored, with the sender's name (the seed's `user!sent_by` join).
struct StoredMessage: Sendable {
    var id: UUID
    var groupId: UUID
    var content: String
    var sentBy: UUID
    var sentAt: Date
    var isEdited: Bool
    var messageType: MessageType
    var voiceDuration: Double?
    var voicePath: String?
    var senderName: String

    static let columns = "m.id, m.group_id, m.content, m.sent_by, m.sent_at, m.is_edited, m.message_type::text, m.voice_duration, m.voice_path, u.display_name"
}

extension StoredMessage {
    init(row: PostgresRow) throws {
        var cells = RowCells(row)
        try self.init(&cells)
    }

    /// The message's columns (`columns`), read in order from where `cells` stands.
    init(_ cells: inout some ColumnReader) throws {
        id = try cells.uuid(); groupId = try cells.uuid(); content = try cells.text(); sentBy = try cells.uuid(); sentAt = try cells.date()
        isEdited = try cells.bool(); messageType = MessageType(rawValue: try cells.text()) ?? .text
        voiceDuration = try cells.optionalDouble(); voicePath = try cells.optionalText(); senderName = try cells.text()
    }
}

extension CalendarEventRow {
    static let columns = "id, title, details, starts_at, ends_at, group_id, created_by, created_at, updated_at"
    static func columns(_ alias: String) -> String {
        columns.split(separator: ", ").map { "\(alias).\($0)" }.joined(separator: ", ")
    }

    init(row: PostgresRow) throws {
        let (id, title, details, startsAt, endsAt, groupId, createdBy, createdAt, updatedAt) =
            try row.decode((UUID, String, String?, Date, Date, UUID?, UUID, Date, Date).self)
        self.init(id: id, title: title, details: details, startsAt: startsAt, endsAt: endsAt, groupId: groupId, createdBy: createdBy, createdAt: createdAt, updatedAt: updatedAt)
    }
}
