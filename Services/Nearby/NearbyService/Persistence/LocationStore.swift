import ColonyModels
import Foundation
import Logging
import PostgresNIO

/// `locations`: one PostGIS point per sharing user, and the radius query.
struct LocationStore: Sendable {
    let logger: Logger

    /// Upserts the user's point if they share their location; nil when they do not.
    func report(_ userID: UUID, latitude: Double, longitude: Double, accuracy: Double?, on connection: PostgresConnection) async throws -> Date? {
        try await connection.query("""
            INSERT INTO locations (user_id, position, accuracy_m, updated_at)
            SELECT id, ST_SetSRID(ST_MakePoint(\(longitude), \(latitude)), 4326)::geography, \(accuracy), now()
            FROM profiles WHERE id = \(userID) AND share_location
            ON CONFLICT (user_id) DO UPDATE SET position = EXCLUDED.position, accuracy_m = EXCLUDED.accuracy_m, updated_at = EXCLUDED.updated_at
            RETURNING updated_at
            """, logger: logger).collect().first.map { try $0.decode(Date.self) }
    }

    /// Removes the user's point; whether there was one.
    func remove(_ userID: UUID, on connection: PostgresConnection) async throws -> Bool {
        try await !connection.query("DELETE FROM locations WHERE user_id = \(userID) RETURNING user_id", logger: logger).collect().isEmpty
    }

    /// Deletes points older than `ttlSeconds`, at most `limit`; returns whose they were.
    func expire(ttlSeconds: Int, limit: Int, on connection: PostgresConnection) async throws -> [UUID] {
        try await connection.query("""
            DELETE FROM locations WHERE user_id IN (
                SELECT user_id FROM locations WHERE updated_at < now() - make_interval(secs => \(Double(ttlSeconds)))
                ORDER BY updated_at LIMIT \(limit) FOR UPDATE SKIP LOCKED)
            RETURNING user_id
            """, logger: logger).collect().map { try $0.decode(UUID.self) }
    }

    /// Sharing users with a fresh point within `radiusMeters` of mine, nearest first; never me,
    /// never anyone in a block with me either way. Empty when I have no fresh point or do not
    /// share (the seed's rule: who does not share sees nobody). Distances on the spheroid.
    func nearby(_ userID: UUID, radiusMeters: Double, ttlSeconds: Int, limit: Int, only other: UUID? = nil, on connection: PostgresConnection) async throws -> [NearbyRow] {
        let ttl = Double(ttlSeconds)
        let rows = try await connection.query("""
            WITH me AS (
                SELECT l.position FROM locations l JOIN profiles p ON p.id = l.user_id
                WHERE l.user_id = \(userID) AND p.share_location AND l.updated_at > now() - make_interval(secs => \(ttl))
            )
            SELECT \(unescaped: StoredProfile.columns.split(separator: ", ").map { "p.\($0)" }.joined(separator: ", ")),
                   ST_Y(l.position::geometry), ST_X(l.position::geometry), ST_Distance(l.position, me.position)
            FROM me
            JOIN locations l ON ST_DWithin(l.position, me.position, \(radiusMeters))
            JOIN profiles p ON p.id = l.user_id
            WHERE l.user_id <> \(userID) AND p.share_location AND l.updated_at > now() - make_interval(secs => \(ttl))
              AND (\(other)::uuid IS NULL OR l.user_id = \(other))
              AND NOT EXISTS (SELECT 1 FROM blocks b WHERE (b.blocker_id = \(userID) AND b.blocked_id = l.user_id)
                                                       OR (b.blocker_id = l.user_id AND b.blocked_id = \(userID)))
            ORDER BY ST_Distance(l.position, me.position), l.user_id
            LIMIT \(limit)
            """, logger: logger).collect()
        return try rows.map { row in
            let columns = try row.decode((UUID, String, String?, String?, LocalDate?, String, Int64?, Bool, Bool, Bool, Date, Date, Double, Double, Double).self)
            return NearbyRow(profile: try StoredProfile(row: row), latitude: columns.12, longitude: columns.13, meters: columns.14)
        }
    }
}
