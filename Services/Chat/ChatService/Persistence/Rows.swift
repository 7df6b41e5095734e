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
        var cells = RowCells(row)
        id = try cells.next(UUID.self); displayName = try cells.next(String.self); email = try cells.next(String?.self)
        avatarVersion = try cells.next(Int64?.self); createdAt = try cells.next(Date.self); updatedAt = try cells.next(Date.self)
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
        var cells = RowCells(row)
        try self.init(&cells)
    }

    /// The group's columns (`columns`), read in order from where `cells` stands.
    init(_ cells: inout RowCells) throws {
        id = try cells.next(UUID.self); name = try cells.next(String.self); ownerId = try cells.next(UUID.self)
        pictureVersion = try cells.next(Int64?.self); createdAt = try cells.next(Date.self); updatedAt = try cells.next(Date.self)
    }
}

extension GroupMemberRow {
    static let columns = "group_id, user_id, role::text, joined_at, last_read_at"

    init(row: PostgresRow) throws {
        var cells = RowCells(row)
        try self.init(&cells)
    }

    /// The member's columns (`columns`), read in order from where `cells` stands.
    init(_ cells: inout RowCells) throws {
        try self.init(
            groupId: cells.next(UUID.self), userId: cells.next(UUID.self), role: GroupRole(rawValue: cells.next(String.self)) ?? .user,
            joinedAt: cells.next(Date.self), lastReadAt: cells.next(Date.self))
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
        var cells = RowCells(row)
        try self.init(&cells)
    }

    /// The event's columns (`columns`), read in order from where `cells` stands.
    init(_ cells: inout RowCells) throws {
        try self.init(
            id: cells.next(UUID.self), title: cells.next(String.self), details: cells.next(String?.self), startsAt: cells.next(Date.self),
            endsAt: cells.next(Date.self), groupId: cells.next(UUID?.self), createdBy: cells.next(UUID.self), createdAt: cells.next(Date.self),
            updatedAt: cells.next(Date.self))
    }
}
