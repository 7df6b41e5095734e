import ColonyModels
import ColonyPlatform
import Foundation
import Logging
import PostgresNIO

/// `messages`: sending, history pages, edits and deletes.
struct MessageStore: Sendable {
    let logger: Logger

    typealias Cursor = KeysetCursor

    static let cursorColumn = KeysetCursor.microsSQL("m.sent_at")

    /// Inserts a message if `senderID` is a member of the group, in one statement; nil when not.
    func insert(id: UUID, groupID: UUID, senderID: UUID, content: String, type: MessageType, voiceDuration: Double?, voicePath: String?,
                on connection: PostgresConnection) async throws -> StoredMessage? {
        try await connection.query("""
            WITH sender AS (
                SELECT u.display_name FROM group_members gm JOIN users u ON u.id = gm.user_id
                WHERE gm.group_id = \(groupID) AND gm.user_id = \(senderID)
            ), m AS (
                INSERT INTO messages (id, group_id, content, sent_by, message_type, voice_duration, voice_path)
                SELECT \(id), \(groupID), \(content), \(senderID), \(type.rawValue)::message_type, \(voiceDuration), \(voicePath) FROM sender
                RETURNING *
            )
            SELECT m.id, m.group_id, m.content, m.sent_by, m.sent_at, m.is_edited, m.message_type::text, m.voice_duration, m.voice_path, u.display_name
            FROM m, sender u
            """, logger: logger).collect().first.map(StoredMessage.init(row:))
    }

    func find(_ id: UUID, groupID: UUID, on connection: PostgresConnection) async throws -> StoredMessage? {
        try await connection.query("""
            SELECT \(unescaped: StoredMessage.columns) FROM messages m JOIN users u ON u.id = m.sent_by
            WHERE m.id = \(id) AND m.group_id = \(groupID)
            """, logger: logger).collect().first.map(StoredMessage.init(row:))
    }

    enum Direction: Sendable {
        /// The newest page.
        case latest
        /// Older than the cursor.
        case before(Cursor)
        /// Newer than the cursor.
        case after(Cursor)
    }

    /// One page of history in `sent_at` order, plus whether more lies beyond it in the paging
    /// direction. Each message comes with its cursor.
    func page(groupID: UUID, direction: Direction, limit: Int, on connection: PostgresConnection) async throws -> (messages: [(StoredMessage, Cursor)], more: Bool) {
        let query: PostgresQuery
        let select = "SELECT \(StoredMessage.columns), \(Self.cursorColumn) FROM messages m JOIN users u ON u.id = m.sent_by"
        switch direction {
        case .latest:
            query = "\(unescaped: select) WHERE m.group_id = \(groupID) ORDER BY m.sent_at DESC, m.id DESC LIMIT \(limit + 1)"
        case .before(let cursor):
            query = """
                \(unescaped: select) WHERE m.group_id = \(groupID)
                AND (m.sent_at, m.id) < ('epoch'::timestamptz + \(cursor.micros) * interval '1 microsecond', \(cursor.id))
                ORDER BY m.sent_at DESC, m.id DESC LIMIT \(limit + 1)
                """
        case .after(let cursor):
            query = """
                \(unescaped: select) WHERE m.group_id = \(groupID)
                AND (m.sent_at, m.id) > ('epoch'::timestamptz + \(cursor.micros) * interval '1 microsecond', \(cursor.id))
                ORDER BY m.sent_at, m.id LIMIT \(limit + 1)
                """
        }
        var rows: [(StoredMessage, Cursor)] = []
        for try await row in try await connection.query(query, logger: logger) {
            // One decode of the row (the message's columns, then the cursor's micros).
            let (id, groupId, content, sentBy, sentAt, isEdited, type, voiceDuration, voicePath, senderName, micros) =
                try row.decode((UUID, UUID, String, UUID, Date, Bool, String, Double?, String?, String, Int64).self)
            let message = StoredMessage(id: id, groupId: groupId, content: content, sentBy: sentBy, sentAt: sentAt, isEdited: isEdited,
                                        messageType: MessageType(rawValue: type) ?? .text, voiceDuration: voiceDuration, voicePath: voicePath,
                                        senderName: senderName)
            rows.append((message, Cursor(micros: micros, id: id)))
        }
        let more = rows.count > limit
        rows = Array(rows.prefix(limit))
        if case .after = direction {} else { rows.reverse() }
        return (rows, more)
    }

    func edit(_ id: UUID, content: String, on connection: PostgresConnection) async throws -> StoredMessage? {
        try await connection.query("""
            WITH m AS (UPDATE messages SET content = \(content), is_edited = true WHERE id = \(id) RETURNING *)
            SELECT \(unescaped: StoredMessage.columns) FROM m JOIN users u ON u.id = m.sent_by
            """, logger: logger).collect().first.map(StoredMessage.init(row:))
    }

    func delete(_ id: UUID, on connection: PostgresConnection) async throws {
        try await connection.query("DELETE FROM messages WHERE id = \(id)", logger: logger)
    }

    /// The voice files of everything a user sent (their account is being erased).
    func voicePaths(sentBy userID: UUID, on connection: PostgresConnection) async throws -> [String] {
        try await connection.query("SELECT voice_path FROM messages WHERE sent_by = \(userID) AND voice_path IS NOT NULL", logger: logger)
            .collect().map { try $0.decode(String.self) }
    }
}
