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

    /// Inserts a message if `senderID` is a member of the group, in one prepared statement; nil
    /// when not.
    func insert(id: UUID, groupID: UUID, senderID: UUID, content: String, type: MessageType, voiceDuration: Double?, voicePath: String?,
                on connection: PostgresConnection) async throws -> StoredMessage? {
        let statement = InsertMessage(id: id, groupID: groupID, senderID: senderID, content: content, type: type, voiceDuration: voiceDuration, voicePath: voicePath)
        for try await message in try await connection.execute(statement, logger: logger) { return message }
        return nil
    }

    func find(_ id: UUID, groupID: UUID, on connection: PostgresConnection) async throws -> StoredMessage? {
        try await connection.query("""
            SELECT \(unescaped: StoredMessage.columns) FROM messages m JOIN users u ON u.id = m.sent_by
            WHERE m.id = \(id) AND m.group_id = \(groupID)
            """, logger: logger).collect().first.map(StoredMessage.init(row:))
    }

    /// A message by its id alone (a moderator's view), nil once gone.
    func find(_ id: UUID, on connection: PostgresConnection) async throws -> StoredMessage? {
        try await connection.query("""
            SELECT \(unescaped: StoredMessage.columns) FROM messages m JOIN users u ON u.id = m.sent_by WHERE m.id = \(id)
            """, logger: logger).collect().first.map(StoredMessage.init(row:))
    }

    /// A message if `viewer` is a member of its group now (the rule of the history page), else nil.
    func visible(_ id: UUID, to viewer: UUID, on connection: PostgresConnection) async throws -> StoredMessage? {
        try await connection.query("""
            SELECT \(unescaped: StoredMessage.columns) FROM messages m JOIN users u ON u.id = m.sent_by
            JOIN group_members gm ON gm.group_id = m.group_id AND gm.user_id = \(viewer)
            WHERE m.id = \(id)
            """, logger: logger).collect().first.map(StoredMessage.init(row:))
    }

    /// Whether `reader` may fetch a voice message's file (`{group_id}/{message_id}`): a member of
    /// the group now who has not blocked its sender. A key that names no message: membership alone.
    func voiceReadable(group groupID: UUID, message messageID: UUID?, by reader: UUID, on connection: PostgresConnection) async throws -> Bool {
        try await connection.query("""
            SELECT 1 FROM group_members gm WHERE gm.group_id = \(groupID) AND gm.user_id = \(reader)
            AND NOT EXISTS (
                SELECT 1 FROM messages m JOIN user_blocks b ON b.blocked_id = m.sent_by AND b.blocker_id = \(reader)
                WHERE m.id = \(messageID) AND m.group_id = \(groupID)
            )
            """, logger: logger).collect().isEmpty == false
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
    /// direction, each message with its cursor; nil when `userID` is not a member of the group
    /// (checked by the page's own statement, `MemberPage`).
    func page(groupID: UUID, userID: UUID, direction: Direction, limit: Int, on connection: PostgresConnection) async throws
        -> (messages: [(StoredMessage, Cursor)], more: Bool)? {
        let found: [(StoredMessage, Cursor)]?
        switch direction {
        case .latest:
            found = try await MemberPage.rows(HistoryPageStatement<HistorySQL.Latest>(scope: groupID, reader: userID, cursor: nil, limit: limit), newestFirst: true,
                                             on: connection, logger: logger)
        case .before(let cursor):
            found = try await MemberPage.rows(HistoryPageStatement<HistorySQL.Before>(scope: groupID, reader: userID, cursor: cursor, limit: limit), newestFirst: true,
                                             on: connection, logger: logger)
        case .after(let cursor):
            found = try await MemberPage.rows(HistoryPageStatement<HistorySQL.After>(scope: groupID, reader: userID, cursor: cursor, limit: limit), newestFirst: false,
                                             on: connection, logger: logger)
        }
        guard var rows = found else { return nil }
        let more = rows.count > limit
        if more { rows.removeLast(rows.count - limit) }
        if case .after = direction {} else { rows.reverse() }
        return (rows, more)
    }

    func edit(_ id: UUID, content: String, on connection: PostgresConnection) async throws -> StoredMessage? {
        try await connection.query("""
            WITH m AS (UPDATE messages SET content = \(content), is_edited = true WHERE id = \(id) RETURNING *)
            SELECT \(unescaped: StoredMessage.columns) FROM m JOIN users u ON u.id = m.sent_by
            """, logger: logger).collect().first.map(StoredMessage.init(row:))
    }

    /// Deletes the message; false when it was gone already.
    func delete(_ id: UUID, on connection: PostgresConnection) async throws -> Bool {
        try await connection.query("DELETE FROM messages WHERE id = \(id) RETURNING id", logger: logger).collect().count > 0
    }

    /// The voice files of everything a user sent (their account is being erased).
    func voicePaths(sentBy userID: UUID, on connection: PostgresConnection) async throws -> [String] {
        try await connection.query("SELECT voice_path FROM messages WHERE sent_by = \(userID) AND voice_path IS NOT NULL", logger: logger)
            .values(String.self)
    }
}

/// The statements of a history page, one per paging direction (`MemberPage`). Public so the
/// benchmark runs exactly this SQL under pgbench.
/// A message's insert with the sender's membership check: `$1` the id, `$2` the group, `$3` the
/// content, `$4` the sender, `$5` the type, `$6` the voice duration, `$7` the voice path. Public
/// so the benchmark runs exactly this SQL under pgbench.
public enum MessageSQL {
    public static let insert = """
        WITH sender AS (
            SELECT u.display_name FROM group_members gm JOIN users u ON u.id = gm.user_id
            WHERE gm.group_id = $2 AND gm.user_id = $4
        ), m AS (
            INSERT INTO messages (id, group_id, content, sent_by, message_type, voice_duration, voice_path)
            SELECT $1, $2, $3, $4, $5::message_type, $6::float8, $7::text FROM sender
            RETURNING *
        )
        SELECT m.id, m.group_id, m.content, m.sent_by, m.sent_at, m.is_edited, m.message_type::text, m.voice_duration, m.voice_path, u.display_name
        FROM m, sender u
        """
}

struct InsertMessage: PostgresPreparedStatement {
    static var sql: String { MessageSQL.insert }
    // Declared, not taken from the first call's values: a null there would leave a type unknown.
    static let bindingDataTypes: [PostgresDataType] = [.uuid, .uuid, .text, .uuid, .text, .float8, .text]
    typealias Row = StoredMessage

    var id: UUID
    var groupID: UUID
    var senderID: UUID
    var content: String
    var type: MessageType
    var voiceDuration: Double?
    var voicePath: String?

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 7)
        bindings.append(id)
        bindings.append(groupID)
        bindings.append(content)
        bindings.append(senderID)
        bindings.append(type.rawValue)
        bindings.append(voiceDuration)
        bindings.append(voicePath)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> StoredMessage { try StoredMessage(row: row) }
}

public enum HistorySQL {
    /// The largest page a request may ask for.
    public static let maxPage = 200

    /// True when the reader (`$2`) blocked the message's sender: the page leaves it out.
    static let hiddenSender = BlockList.hiddenByBlock(viewer: "$2", author: "m.sent_by")

    static func sql(_ direction: MemberPage.Direction) -> String {
        MemberPage.sql(direction: direction, membership: "group_members gm", member: "gm.group_id = $1 AND gm.user_id = $2",
                       select: "\(StoredMessage.columns), \(MessageStore.cursorColumn) AS cursor_micros", columns: 11,
                       from: "messages m JOIN users u ON u.id = m.sent_by", filter: "m.group_id = $1 AND NOT \(hiddenSender)",
                       time: "m.sent_at", id: "m.id", sort: ("sent_at", "id"), maxPage: maxPage)
    }

    public enum Latest: StatementSQL { public static let sql = HistorySQL.sql(.latest) }
    public enum Before: StatementSQL { public static let sql = HistorySQL.sql(.before) }
    public enum After: StatementSQL { public static let sql = HistorySQL.sql(.after) }
}

/// A history page as a prepared statement (`MemberPageStatement`), one per paging direction.
typealias HistoryPageStatement<Shape: StatementSQL> = MemberPageStatement<Shape, HistoryRow>

/// A history page's row: the message and its cursor.
enum HistoryRow: MemberPageRow {
    static func decode(_ columns: inout PageRow) throws -> (StoredMessage, KeysetCursor) {
        let message = try StoredMessage(&columns)
        return (message, KeysetCursor(micros: try columns.int64(), id: message.id))
    }

    static func cursor(of element: (StoredMessage, KeysetCursor)) -> KeysetCursor { element.1 }
}
