import ColonyModels
import Foundation
import Logging
import PostgresNIO

/// `locations`: one PostGIS point per sharing user, and the radius query.
struct LocationStore: Sendable {
    let logger: Logger

    /// Upserts the user's point (and what others see of it) if they share their location; nil
    /// when they do not.
    func report(_ userID: UUID, latitude: Double, longitude: Double, accuracy: Double?, shown: ApproximatePosition, on connection: PostgresConnection) async throws -> Date? {
        try await connection.query("""
            INSERT INTO locations (user_id, position, shown, accuracy_m, updated_at)
            SELECT id, ST_SetSRID(ST_MakePoint(\(longitude), \(latitude)), 4326)::geography,
                   ST_SetSRID(ST_MakePoint(\(shown.longitude), \(shown.latitude)), 4326)::geography, \(accuracy), now()
            FROM profiles WHERE id = \(userID) AND share_location
            ON CONFLICT (user_id) DO UPDATE SET position = EXCLUDED.position, shown = EXCLUDED.shown, accuracy_m = EXCLUDED.accuracy_m,
                                                updated_at = EXCLUDED.updated_at
            RETURNING updated_at
            """, logger: logger).collect().first.map { try $0.decode(Date.self) }
    }

    /// How far (meters) and how long ago (seconds) the user's fresh point is from a new report,
    /// locking it; nil without a fresh point.
    func lastMove(_ userID: UUID, to latitude: Double, _ longitude: Double, ttlSeconds: Int, on connection: PostgresConnection) async throws -> (meters: Double, seconds: Double)? {
        try await connection.query("""
            SELECT ST_Distance(position, ST_SetSRID(ST_MakePoint(\(longitude), \(latitude)), 4326)::geography),
                   extract(epoch FROM now() - updated_at)::float8
            FROM locations WHERE user_id = \(userID) AND updated_at > now() - make_interval(secs => \(Double(ttlSeconds)))
            FOR UPDATE
            """, logger: logger).collect().first.map { try $0.decode((Double, Double).self) }
    }

    /// Who sees the user now: sharing users with a fresh point within `radiusMeters` of what
    /// they are shown of the user (whether or not the user still shares), blocks excluded either
    /// way. The realtime service tells only them about the user's moves and card.
    func watchers(of userID: UUID, radiusMeters: Double, ttlSeconds: Int, on connection: PostgresConnection) async throws -> [UUID] {
        try await others(of: userID, .watchers, radiusMeters: radiusMeters, ttlSeconds: ttlSeconds, on: connection).map(\.userId)
    }

    /// Whom the user sees now (the `nearby` rule at the default radius): their rows as the user
    /// is shown them. Empty when the user has no point.
    func visible(to userID: UUID, radiusMeters: Double, ttlSeconds: Int, on connection: PostgresConnection) async throws -> [LocationRow] {
        try await others(of: userID, .visible, radiusMeters: radiusMeters, ttlSeconds: ttlSeconds, on: connection)
    }

    /// The two directions of "in range": from their position to the user's shown point (they
    /// see the user), or from the user's position to their shown point (the user sees them).
    enum Direction {
        case watchers, visible

        var condition: String {
            switch self {
            case .watchers: "ST_DWithin(l.position, me.shown, $2)"
            case .visible: "ST_DWithin(l.shown, me.position, $2)"
            }
        }
    }

    /// Sharing users with a fresh point in range of the user in `direction`, blocks excluded
    /// either way, as the user is shown them.
    func others(of userID: UUID, _ direction: Direction, radiusMeters: Double, ttlSeconds: Int, on connection: PostgresConnection) async throws -> [LocationRow] {
        var bindings = PostgresBindings(capacity: 3)
        bindings.append(userID)
        bindings.append(radiusMeters)
        bindings.append(Double(ttlSeconds))
        let query = PostgresQuery(unsafeSQL: """
            SELECT l.user_id, ST_Y(l.shown::geometry), ST_X(l.shown::geometry), l.updated_at FROM locations me
            JOIN locations l ON \(direction.condition)
            JOIN profiles p ON p.id = l.user_id
            WHERE me.user_id = $1 AND l.user_id <> $1 AND p.share_location
              AND l.updated_at > now() - make_interval(secs => $3)
              AND NOT EXISTS (SELECT 1 FROM blocks b WHERE (b.blocker_id = $1 AND b.blocked_id = l.user_id)
                                                       OR (b.blocker_id = l.user_id AND b.blocked_id = $1))
            ORDER BY l.user_id LIMIT 5000
            """, binds: bindings)
        return try await connection.query(query, logger: logger).collect().map { row in
            let (id, latitude, longitude, at) = try row.decode((UUID, Double, Double, Date).self)
            return LocationRow(userId: id, latitude: latitude, longitude: longitude, updatedAt: at)
        }
    }

    /// Removes the user's point; whether there was one.
    func remove(_ userID: UUID, on connection: PostgresConnection) async throws -> Bool {
        try await !connection.query("DELETE FROM locations WHERE user_id = \(userID) RETURNING user_id", logger: logger).collect().isEmpty
    }

    /// Points older than `ttlSeconds`, at most `limit`, locked for deletion.
    func stale(ttlSeconds: Int, limit: Int, on connection: PostgresConnection) async throws -> [UUID] {
        try await connection.query("""
            SELECT user_id FROM locations WHERE updated_at < now() - make_interval(secs => \(Double(ttlSeconds)))
            ORDER BY updated_at LIMIT \(limit) FOR UPDATE SKIP LOCKED
            """, logger: logger).collect().map { try $0.decode(UUID.self) }
    }

    /// Sharing users whose shown point is within `radiusMeters` of mine, nearest first; never
    /// me, never anyone in a block with me either way. Empty when I have no fresh point or do not
    /// share (the seed's rule: who does not share sees nobody). Distances on the spheroid, from
    /// the shown points: the precise ones never leave the service, not even as a distance.
    func nearby(_ userID: UUID, radiusMeters: Double, ttlSeconds: Int, limit: Int, only other: UUID? = nil, on connection: PostgresConnection) async throws -> [NearbyRow] {
        var rows: [NearbyRow] = []
        let query = NearbyQuery(userID: userID, radiusMeters: radiusMeters, ttlSeconds: Double(ttlSeconds), limit: limit, other: other)
        for try await row in try await connection.execute(query, logger: logger) { rows.append(row) }
        return rows
    }
}

/// The nearby query, prepared once per connection: planning this PostGIS query costs more than
/// running it (colony-nearby-bench: pgbench -M extended reached about a quarter of -M prepared).
struct NearbyQuery: PostgresPreparedStatement {
    static let sql = """
        WITH me AS (
            SELECT l.position FROM locations l JOIN profiles p ON p.id = l.user_id
            WHERE l.user_id = $1 AND p.share_location AND l.updated_at > now() - make_interval(secs => $3)
        )
        SELECT \(StoredProfile.columns.split(separator: ", ").map { "p.\($0)" }.joined(separator: ", ")),
               ST_Y(l.shown::geometry), ST_X(l.shown::geometry), ST_Distance(l.shown, me.position)
        FROM me
        JOIN locations l ON ST_DWithin(l.shown, me.position, $2)
        JOIN profiles p ON p.id = l.user_id
        WHERE l.user_id <> $1 AND p.share_location AND l.updated_at > now() - make_interval(secs => $3)
          AND ($5::uuid IS NULL OR l.user_id = $5::uuid)
          AND NOT EXISTS (SELECT 1 FROM blocks b WHERE (b.blocker_id = $1 AND b.blocked_id = l.user_id)
                                                   OR (b.blocker_id = l.user_id AND b.blocked_id = $1))
        ORDER BY ST_Distance(l.shown, me.position), l.user_id
        LIMIT $4
        """

    var userID: UUID
    var radiusMeters: Double
    var ttlSeconds: Double
    var limit: Int
    var other: UUID?

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 5)
        bindings.append(userID)
        bindings.append(radiusMeters)
        bindings.append(ttlSeconds)
        bindings.append(limit)
        if let other { bindings.append(other) } else { bindings.append(UUID?.none) }
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> NearbyRow {
        let columns = try row.decode((UUID, String, String?, String?, LocalDate?, String, Int64?, Bool, Bool, Bool, Date, Date, Double, Double, Double).self)
        return NearbyRow(profile: try StoredProfile(row: row), latitude: columns.12, longitude: columns.13, meters: columns.14)
    }
}
