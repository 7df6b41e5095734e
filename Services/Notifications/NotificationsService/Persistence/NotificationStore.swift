import ColonyModels
import ColonyPlatform
import Foundation
import Logging
import PostgresNIO

/// One entry of the in-app notification list.
public struct NotificationEntry: Codable, Sendable, Equatable {
    public var id: UUID
    public var kind: String
    public var title: String
    public var body: String
    public var data: [String: JSONValue]
    public var createdAt: Date
    public var readAt: Date?
}

/// `notifications`: the in-app list, one row per alert and recipient.
struct NotificationStore: Sendable {
    let logger: Logger

    struct New: Sendable {
        var id: UUID
        var user: UUID
    }

    func insert(_ entries: [New], event: UUID, actor: UUID?, app: App, kind: NotificationKind, title: String, body: String, data: [String: JSONValue], at date: Date,
                on connection: PostgresConnection) async throws {
        guard !entries.isEmpty else { return }
        let json = String(decoding: try ColonyJSON.encoder().encode(data), as: UTF8.self)
        try await connection.query("""
            INSERT INTO notifications (id, user_id, app, kind, event_id, actor_id, title, body, data, created_at)
            SELECT n.id, n.user_id, \(app.rawValue), \(kind.rawValue), \(event), \(actor), \(title), \(body), \(json)::jsonb, \(date)
            FROM unnest(\(entries.map(\.id))::uuid[], \(entries.map(\.user))::uuid[]) AS n(id, user_id)
            ON CONFLICT (event_id, user_id) DO NOTHING
            """, logger: logger)
    }

    /// Newest first, `limit` after the cursor.
    func list(user: UUID, app: App, before cursor: KeysetCursor?, limit: Int, on connection: PostgresConnection) async throws -> [(NotificationEntry, KeysetCursor)] {
        let rows = try await connection.query("""
            SELECT id, kind, title, body, data::text, created_at, read_at, \(unescaped: KeysetCursor.microsSQL("created_at"))
            FROM notifications
            WHERE user_id = \(user) AND app = \(app.rawValue)
              AND (\(cursor == nil) OR (created_at, id) < ('epoch'::timestamptz + \(cursor?.micros ?? 0) * interval '1 microsecond', \(cursor?.id ?? UUID())))
            ORDER BY created_at DESC, id DESC LIMIT \(limit)
            """, logger: logger).collect()
        return try rows.map { row in
            var cells = RowCells(row)
            let id: UUID = try cells.next()
            let kind: String = try cells.next()
            let title: String = try cells.next()
            let body: String = try cells.next()
            let dataText: String = try cells.next()
            let createdAt: Date = try cells.next()
            let readAt: Date? = try cells.next()
            let micros: Int64 = try cells.next()
            // A plain decoder: the keys are data, not field names to convert.
            let data = (try? JSONDecoder().decode([String: JSONValue].self, from: Data(dataText.utf8))) ?? [:]
            return (NotificationEntry(id: id, kind: kind, title: title, body: body, data: data, createdAt: createdAt, readAt: readAt), KeysetCursor(micros: micros, id: id))
        }
    }

    func unreadCount(user: UUID, app: App, on connection: PostgresConnection) async throws -> Int {
        try await connection.query("SELECT count(*)::int FROM notifications WHERE user_id = \(user) AND app = \(app.rawValue) AND read_at IS NULL", logger: logger)
            .firstValue(Int.self) ?? 0
    }

    /// Marks one notification read; false when the caller has none with this id.
    func markRead(_ id: UUID, user: UUID, app: App, at date: Date, on connection: PostgresConnection) async throws -> Bool {
        let rows = try await connection.query("""
            UPDATE notifications SET read_at = coalesce(read_at, \(date)) WHERE id = \(id) AND user_id = \(user) AND app = \(app.rawValue) RETURNING 1
            """, logger: logger).collect()
        return !rows.isEmpty
    }

    func markAllRead(user: UUID, app: App, at date: Date, on connection: PostgresConnection) async throws -> Int {
        try await connection.query("""
            UPDATE notifications SET read_at = \(date) WHERE user_id = \(user) AND app = \(app.rawValue) AND read_at IS NULL RETURNING 1
            """, logger: logger).collect().count
    }

    /// The user's own list, and what they made others' lists say: those entries go, and their
    /// pushes still queued are dropped and every push's text is blanked in the delivery log.
    func eraseUser(_ user: UUID, on connection: PostgresConnection) async throws {
        try await connection.query("""
            WITH authored AS (SELECT DISTINCT event_id FROM notifications WHERE actor_id = \(user))
            UPDATE deliveries SET payload = '', status = CASE WHEN status = 'pending' THEN 'dropped' ELSE status END,
                last_reason = CASE WHEN status = 'pending' THEN 'account_deleted' ELSE last_reason END, lease_until = NULL
            WHERE event_id IN (SELECT event_id FROM authored)
            """, logger: logger)
        try await connection.query("DELETE FROM notifications WHERE user_id = \(user) OR actor_id = \(user)", logger: logger)
    }
}
