import ColonyModels
import ColonyPlatform
import Foundation
import Logging
import PostgresNIO

/// `events`: personal (no group) and group calendar events.
struct CalendarEventStore: Sendable {
    let logger: Logger

    func insert(_ event: CalendarEventRow, on connection: PostgresConnection) async throws -> CalendarEventRow {
        let row = try await connection.query("""
            INSERT INTO events (id, title, details, starts_at, ends_at, group_id, created_by)
            VALUES (\(event.id), \(event.title), \(event.details), \(event.startsAt), \(event.endsAt), \(event.groupId), \(event.createdBy))
            RETURNING \(unescaped: CalendarEventRow.columns)
            """, logger: logger).collect().first
        return try CalendarEventRow(row: row!)
    }

    /// The event if `userID` may see it: their personal event, or one of a group they are in
    /// (`hidingBlocked`: not created by someone they blocked). With the caller's role in that
    /// group (nil for personal events).
    func visible(_ id: UUID, to userID: UUID, lock: Bool = false, hidingBlocked: Bool = false, on connection: PostgresConnection) async throws -> (CalendarEventRow, GroupRole?)? {
        let rows = try await connection.query("""
            SELECT \(unescaped: CalendarEventRow.columns("e")), m.role::text
            FROM events e LEFT JOIN group_members m ON m.group_id = e.group_id AND m.user_id = \(userID)
            WHERE e.id = \(id) AND ((e.group_id IS NULL AND e.created_by = \(userID)) OR m.user_id IS NOT NULL)
            AND NOT (\(hidingBlocked) AND EXISTS (SELECT 1 FROM user_blocks b WHERE b.blocker_id = \(userID) AND b.blocked_id = e.created_by))
            \(unescaped: lock ? "FOR UPDATE OF e" : "")
            """, logger: logger).collect()
        guard let row = rows.first else { return nil }
        let (event, role) = try row.read { c in try (CalendarEventRow(&c), c.next(String?.self)) }
        return (event, role.flatMap(GroupRole.init(rawValue:)))
    }

    /// Events overlapping [from, to) that the user may see: personal ones and their groups'
    /// (or one group's when `groupID` is given), by start time; `hidingBlocked`: not the group
    /// events of those the user blocked (what they read; a group's deletion takes them all).
    func list(userID: UUID, groupID: UUID?, from: Date, to: Date, limit: Int, hidingBlocked: Bool = false, on connection: PostgresConnection) async throws -> [CalendarEventRow] {
        let query: PostgresQuery
        if let groupID {
            query = """
                SELECT \(unescaped: CalendarEventRow.columns) FROM events e
                WHERE group_id = \(groupID) AND starts_at < \(to) AND ends_at >= \(from)
                AND NOT (\(hidingBlocked) AND EXISTS (SELECT 1 FROM user_blocks b WHERE b.blocker_id = \(userID) AND b.blocked_id = e.created_by))
                ORDER BY starts_at, id LIMIT \(limit)
                """
        } else {
            query = """
                SELECT \(unescaped: CalendarEventRow.columns) FROM (
                    SELECT * FROM events WHERE group_id IS NULL AND created_by = \(userID) AND starts_at < \(to) AND ends_at >= \(from)
                    UNION ALL
                    SELECT e.* FROM events e JOIN group_members m ON m.group_id = e.group_id AND m.user_id = \(userID)
                    WHERE e.starts_at < \(to) AND e.ends_at >= \(from) AND NOT (\(hidingBlocked) AND EXISTS (SELECT 1 FROM user_blocks b WHERE b.blocker_id = \(userID) AND b.blocked_id = e.created_by))
                ) visible
                ORDER BY starts_at, id LIMIT \(limit)
                """
        }
        return try await connection.query(query, logger: logger).collect().map(CalendarEventRow.init(row:))
    }

    func update(_ event: CalendarEventRow, on connection: PostgresConnection) async throws -> CalendarEventRow {
        let row = try await connection.query("""
            UPDATE events SET title = \(event.title), details = \(event.details), starts_at = \(event.startsAt), ends_at = \(event.endsAt), updated_at = now()
            WHERE id = \(event.id)
            RETURNING \(unescaped: CalendarEventRow.columns)
            """, logger: logger).collect().first
        return try CalendarEventRow(row: row!)
    }

    func delete(_ id: UUID, on connection: PostgresConnection) async throws {
        try await connection.query("DELETE FROM events WHERE id = \(id)", logger: logger)
    }

    /// The user's personal events (erased with the account; group events they made go too).
    func created(by userID: UUID, on connection: PostgresConnection) async throws -> [CalendarEventRow] {
        try await connection.query("SELECT \(unescaped: CalendarEventRow.columns) FROM events WHERE created_by = \(userID) ORDER BY id", logger: logger)
            .collect().map(CalendarEventRow.init(row:))
    }
}
