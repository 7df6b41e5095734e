import ColonyModels
import ColonyPlatform
import Foundation
import Logging
import PostgresNIO

/// `locations`: one PostGIS point per sharing user, and the radius query.
struct LocationStore: Sendable {
    let logger: Logger

    /// Upserts the user's point (and what others see of it) if they share their location; nil
    /// when they do not.
    func report(_ userID: UUID, latitude: Double, longitude: Double, accuracy: Double?, shown: ApproximatePosition, on connection: PostgresConnection) async throws -> Date? {
        for try await updatedAt in try await connection.execute(ReportLocation(userID: userID, latitude: latitude, longitude: longitude, accuracy: accuracy, shown: shown),
                                                                logger: logger) {
            return updatedAt
        }
        return nil
    }

    /// How far (meters) and how long ago (seconds) the user's fresh point is from a new report,
    /// locking it; nil without a fresh point.
    func lastMove(_ userID: UUID, to latitude: Double, _ longitude: Double, ttlSeconds: Int, on connection: PostgresConnection) async throws -> (meters: Double, seconds: Double)? {
        for try await move in try await connection.execute(LastMove(userID: userID, latitude: latitude, longitude: longitude, ttlSeconds: Double(ttlSeconds)), logger: logger) {
            return move
        }
        return nil
    }

    /// Who sees the user now: sharing users with a fresh point within `radiusMeters` of what
    /// they are shown of the user (whether or not the user still shares), blocks excluded either
    /// way. The realtime service tells only them about the user's moves and card.
    func watchers(of userID: UUID, radiusMeters: Double, ttlSeconds: Int, on connection: PostgresConnection) async throws -> [UUID] {
        var found: [UUID] = []
        for try await row in try await connection.execute(InRange<LocationSQL.Watchers>(userID: userID, radiusMeters: radiusMeters, ttlSeconds: Double(ttlSeconds)),
                                                          logger: logger) { found.append(row.userId) }
        return found
    }

    /// Whom the user sees now (the `nearby` rule at the default radius): their rows as the user
    /// is shown them. Empty when the user has no point.
    func visible(to userID: UUID, radiusMeters: Double, ttlSeconds: Int, on connection: PostgresConnection) async throws -> [LocationRow] {
        var found: [LocationRow] = []
        for try await row in try await connection.execute(InRange<LocationSQL.Visible>(userID: userID, radiusMeters: radiusMeters, ttlSeconds: Double(ttlSeconds)),
                                                          logger: logger) { found.append(row) }
        return found
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
            """, logger: logger).values(UUID.self)
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
          AND NOT EXISTS (SELECT 1 FROM user_blocks b WHERE (b.blocker_id = $1 AND b.blocked_id = l.user_id)
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
        var cells = RowCells(row)
        return NearbyRow(profile: try StoredProfile(cells: &cells), latitude: try cells.next(), longitude: try cells.next(), meters: try cells.next())
    }
}

/// The statements of a location report, prepared once per connection (planning these PostGIS
/// statements costs about as much as running them). Public so the benchmark runs exactly this
/// SQL under pgbench.
public enum LocationSQL {
    /// The reporter's profile (`ProfileStore.find`, every request's first statement): `$1` the user.
    public static let profile = "SELECT \(StoredProfile.columns) FROM profiles WHERE id = $1"

    /// `$1` the user, `$2`/`$3` the longitude and latitude, `$4` the accuracy, `$5`/`$6` the shown
    /// longitude and latitude.
    public static let report = """
        INSERT INTO locations (user_id, position, shown, accuracy_m, updated_at)
        SELECT id, ST_SetSRID(ST_MakePoint($2::float8, $3::float8), 4326)::geography,
               ST_SetSRID(ST_MakePoint($5::float8, $6::float8), 4326)::geography, $4::float8, now()
        FROM profiles WHERE id = $1 AND share_location
        ON CONFLICT (user_id) DO UPDATE SET position = EXCLUDED.position, shown = EXCLUDED.shown, accuracy_m = EXCLUDED.accuracy_m,
                                            updated_at = EXCLUDED.updated_at
        RETURNING updated_at
        """

    /// `$1` the user, `$2`/`$3` the new longitude and latitude, `$4` the TTL in seconds.
    public static let lastMove = """
        SELECT ST_Distance(position, ST_SetSRID(ST_MakePoint($2::float8, $3::float8), 4326)::geography),
               extract(epoch FROM now() - updated_at)::float8
        FROM locations WHERE user_id = $1 AND updated_at > now() - make_interval(secs => $4::float8)
        FOR UPDATE
        """

    /// Sharing users with a fresh point in range of the user in one direction, blocks excluded
    /// either way, as the user is shown them: `$1` the user, `$2` the radius in meters, `$3` the
    /// TTL in seconds.
    static func inRange(_ condition: String) -> String {
        """
        SELECT l.user_id, ST_Y(l.shown::geometry), ST_X(l.shown::geometry), l.updated_at FROM locations me
        JOIN locations l ON \(condition)
        JOIN profiles p ON p.id = l.user_id
        WHERE me.user_id = $1 AND l.user_id <> $1 AND p.share_location
          AND l.updated_at > now() - make_interval(secs => $3::float8)
          AND NOT EXISTS (SELECT 1 FROM user_blocks b WHERE (b.blocker_id = $1 AND b.blocked_id = l.user_id)
                                                        OR (b.blocker_id = l.user_id AND b.blocked_id = $1))
        ORDER BY l.user_id LIMIT 5000
        """
    }

    /// They see the user: from their position to the user's shown point.
    public enum Watchers: StatementSQL { public static let sql = LocationSQL.inRange("ST_DWithin(l.position, me.shown, $2::float8)") }
    /// The user sees them: from the user's position to their shown point.
    public enum Visible: StatementSQL { public static let sql = LocationSQL.inRange("ST_DWithin(l.shown, me.position, $2::float8)") }
}

struct ReportLocation: PostgresPreparedStatement {
    static var sql: String { LocationSQL.report }
    // Declared, not taken from the first call's values: a null there would leave a type unknown.
    static let bindingDataTypes: [PostgresDataType] = [.uuid, .float8, .float8, .float8, .float8, .float8]
    typealias Row = Date

    var userID: UUID
    var latitude: Double
    var longitude: Double
    var accuracy: Double?
    var shown: ApproximatePosition

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 6)
        bindings.append(userID)
        bindings.append(longitude)
        bindings.append(latitude)
        bindings.append(accuracy)
        bindings.append(shown.longitude)
        bindings.append(shown.latitude)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Date {
        var cells = RowCells(row)
        return try cells.next()
    }
}

struct LastMove: PostgresPreparedStatement {
    static var sql: String { LocationSQL.lastMove }
    typealias Row = (meters: Double, seconds: Double)

    var userID: UUID
    var latitude: Double
    var longitude: Double
    var ttlSeconds: Double

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 4)
        bindings.append(userID)
        bindings.append(longitude)
        bindings.append(latitude)
        bindings.append(ttlSeconds)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row {
        var cells = RowCells(row)
        return (try cells.next(), try cells.next())
    }
}

/// Those in range of a user in one direction (`LocationSQL.Watchers` or `.Visible`).
struct InRange<Direction: StatementSQL>: PostgresPreparedStatement {
    static var sql: String { Direction.sql }
    typealias Row = LocationRow

    var userID: UUID
    var radiusMeters: Double
    var ttlSeconds: Double

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 3)
        bindings.append(userID)
        bindings.append(radiusMeters)
        bindings.append(ttlSeconds)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> LocationRow {
        var cells = RowCells(row)
        return LocationRow(userId: try cells.next(), latitude: try cells.next(), longitude: try cells.next(), updatedAt: try cells.next())
    }
}
