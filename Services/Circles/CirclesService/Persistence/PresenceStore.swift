import ColonyModels
import ColonyPlatform
import Foundation
import Logging
import PostgresNIO

/// `presence_states`: one status per user and circle.
struct PresenceStore: Sendable {
    let logger: Logger

    static func row(_ row: PostgresRow) throws -> PresenceRow {
        try row.read { c in
            try PresenceRow(userId: c.next(UUID.self), circleId: c.next(UUID.self), status: PresenceStatus(rawValue: c.next(String.self)) ?? .free,
                            updatedAt: c.next(Date.self))
        }
    }

    /// The user's status in the circle, locked for a change.
    func current(_ userID: UUID, circleID: UUID, on connection: PostgresConnection) async throws -> PresenceRow? {
        try await connection.query("""
            SELECT user_id, circle_id, status::text, updated_at FROM presence_states WHERE user_id = \(userID) AND circle_id = \(circleID) FOR UPDATE
            """, logger: logger).collect().first.map(Self.row)
    }

    /// Everyone's statuses in the circle, members or not (what goes when it is deleted).
    func all(inCircle circleID: UUID, on connection: PostgresConnection) async throws -> [PresenceRow] {
        try await connection.query("SELECT user_id, circle_id, status::text, updated_at FROM presence_states WHERE circle_id = \(circleID) ORDER BY user_id", logger: logger)
            .collect().map(Self.row)
    }

    func set(_ userID: UUID, circleID: UUID, status: PresenceStatus, on connection: PostgresConnection) async throws -> PresenceRow {
        try await connection.query("""
            INSERT INTO presence_states (user_id, circle_id, status, updated_at) VALUES (\(userID), \(circleID), \(status.rawValue)::presence_status, now())
            ON CONFLICT (user_id, circle_id) DO UPDATE SET status = EXCLUDED.status, updated_at = EXCLUDED.updated_at
            RETURNING user_id, circle_id, status::text, updated_at
            """, logger: logger).collect().map(Self.row)[0]
    }

    /// The members' statuses in the circle, but those of users `viewer` blocked.
    func circle(_ circleID: UUID, viewer: UUID, on connection: PostgresConnection) async throws -> [PresenceRow] {
        try await connection.query("""
            SELECT s.user_id, s.circle_id, s.status::text, s.updated_at FROM presence_states s
            JOIN circle_members m ON m.circle_id = s.circle_id AND m.user_id = s.user_id
            WHERE s.circle_id = \(circleID)
              AND NOT EXISTS (SELECT 1 FROM user_blocks b WHERE b.blocker_id = \(viewer) AND b.blocked_id = s.user_id)
            ORDER BY s.updated_at DESC, s.user_id
            """, logger: logger).collect().map(Self.row)
    }
}
