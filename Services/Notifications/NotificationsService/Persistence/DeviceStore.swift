import ColonyModels
import ColonyPlatform
import Foundation
import Logging
import PostgresNIO

/// A registered token as the API shows it (the token itself is the caller's own).
struct DeviceRow: Codable, Sendable, Equatable {
    var id: UUID
    var app: App
    var kind: String
    var token: String
    var environment: APNsEnvironment
    var platform: String
    var appVersion: String?
    var locale: String?
    var activityId: String?
    var postId: UUID?
    var createdAt: Date
    var updatedAt: Date

    static let columns = "id, app, kind, token, environment, platform, app_version, locale, activity_id, post_id, created_at, updated_at"

    init(row: PostgresRow) throws {
        var cells = RowCells(row)
        id = try cells.next()
        app = App(rawValue: try cells.next(String.self)) ?? .mycirclee
        kind = try cells.next()
        token = try cells.next()
        environment = APNsEnvironment(rawValue: try cells.next(String.self)) ?? .production
        platform = try cells.next()
        appVersion = try cells.next()
        locale = try cells.next()
        activityId = try cells.next()
        postId = try cells.next()
        createdAt = try cells.next()
        updatedAt = try cells.next()
    }
}

/// `devices`: app installs' tokens and Live Activity tokens. A token belongs to the newest user
/// who registered it; whatever was still queued for its previous user is dropped.
struct DeviceStore: Sendable {
    let logger: Logger

    func register(_ device: NotificationsRules.Device, app: App, user: UUID, now: Date, on connection: PostgresConnection) async throws -> DeviceRow {
        try await dropQueuedForOthers(app: app, token: device.token, user: user, on: connection)
        let rows = try await connection.query("""
            INSERT INTO devices (id, app, user_id, kind, token, environment, platform, app_version, locale, created_at, updated_at)
            VALUES (\(UUID()), \(app.rawValue), \(user), 'device', \(device.token), \(device.environment.rawValue), \(device.platform),
                    \(device.appVersion), \(device.locale), \(now), \(now))
            ON CONFLICT (app, token) DO UPDATE SET
                user_id = EXCLUDED.user_id, kind = 'device', environment = EXCLUDED.environment, platform = EXCLUDED.platform,
                app_version = EXCLUDED.app_version, locale = EXCLUDED.locale, activity_id = NULL, post_id = NULL, updated_at = EXCLUDED.updated_at
            RETURNING \(unescaped: DeviceRow.columns)
            """, logger: logger).collect()
        return try DeviceRow(row: rows[0])
    }

    /// A Live Activity's push token; ActivityKit may hand the app a new one for the same activity.
    func registerActivity(_ activityID: String, post: UUID, token: String, environment: APNsEnvironment, app: App, user: UUID, now: Date, on connection: PostgresConnection) async throws -> DeviceRow {
        try await dropQueuedForOthers(app: app, token: token, user: user, on: connection)
        try await connection.query("""
            DELETE FROM devices WHERE app = \(app.rawValue) AND user_id = \(user) AND activity_id = \(activityID) AND token <> \(token)
            """, logger: logger)
        let rows = try await connection.query("""
            INSERT INTO devices (id, app, user_id, kind, token, environment, activity_id, post_id, created_at, updated_at)
            VALUES (\(UUID()), \(app.rawValue), \(user), 'live_activity', \(token), \(environment.rawValue), \(activityID), \(post), \(now), \(now))
            ON CONFLICT (app, token) DO UPDATE SET
                user_id = EXCLUDED.user_id, kind = 'live_activity', environment = EXCLUDED.environment,
                activity_id = EXCLUDED.activity_id, post_id = EXCLUDED.post_id, updated_at = EXCLUDED.updated_at
            RETURNING \(unescaped: DeviceRow.columns)
            """, logger: logger).collect()
        return try DeviceRow(row: rows[0])
    }

    func list(app: App, user: UUID, on connection: PostgresConnection) async throws -> [DeviceRow] {
        try await connection.query("""
            SELECT \(unescaped: DeviceRow.columns) FROM devices WHERE app = \(app.rawValue) AND user_id = \(user) ORDER BY created_at, id
            """, logger: logger).collect().map(DeviceRow.init(row:))
    }

    /// The user's tokens in the app for the console (`PushAdmin`), newest first, each with the
    /// newest push queued to it for this user (a token that changed hands keeps its earlier
    /// owner's pushes out of it). Through `devices_user`, and `deliveries_user` per device.
    func consoleList(app: App, user: UUID, on connection: PostgresConnection) async throws -> [PushAdmin.Device] {
        try await connection.query("""
            SELECT d.id, d.kind, d.platform, d.environment, d.app_version, d.locale, right(d.token, 8), d.created_at, d.updated_at,
                   newest.created_at, newest.status
            FROM devices d
            LEFT JOIN LATERAL (
                SELECT q.created_at, q.status FROM deliveries q
                WHERE q.user_id = d.user_id AND q.device_id = d.id
                ORDER BY q.created_at DESC, q.id DESC LIMIT 1
            ) newest ON true
            WHERE d.app = \(app.rawValue) AND d.user_id = \(user)
            ORDER BY d.created_at DESC, d.id DESC
            """, logger: logger).read { c in
            PushAdmin.Device(id: try c.next(), kind: try c.next(), platform: try c.next(), environment: try c.next(), appVersion: try c.next(),
                             locale: try c.next(), tokenSuffix: try c.next(), createdAt: try c.next(), updatedAt: try c.next(),
                             lastPushAt: try c.next(), lastPushStatus: try c.next())
        }
    }

    /// The token of the user's app install `id` in the app, nil when it is none (another user's,
    /// another app's, a Live Activity's, or gone). Locked until the transaction ends, so it cannot
    /// be removed before a push to it is queued.
    func installToken(_ id: UUID, app: App, user: UUID, on connection: PostgresConnection) async throws -> String? {
        try await connection.query("""
            SELECT token FROM devices WHERE id = \(id) AND app = \(app.rawValue) AND user_id = \(user) AND kind = 'device' FOR KEY SHARE
            """, logger: logger).firstValue(String.self)
    }

    /// Unregisters the caller's token; false when the caller has no such token.
    func remove(token: String, app: App, user: UUID, on connection: PostgresConnection) async throws -> Bool {
        try await remove(where: "app = \(app.rawValue) AND user_id = \(user) AND token = \(token) AND kind = 'device'", on: connection)
    }

    func removeActivity(_ activityID: String, app: App, user: UUID, on connection: PostgresConnection) async throws -> Bool {
        try await remove(where: "app = \(app.rawValue) AND user_id = \(user) AND activity_id = \(activityID)", on: connection)
    }

    /// APNs said the token is dead (410 Unregistered, 400 BadDeviceToken). A token registered
    /// again after APNs saw it die is live again and stays.
    func removeDead(_ deviceID: UUID, invalidSince: Date?, on connection: PostgresConnection) async throws {
        if let invalidSince {
            try await remove(where: "id = \(deviceID) AND updated_at <= \(invalidSince)", on: connection)
        } else {
            try await remove(where: "id = \(deviceID)", on: connection)
        }
    }

    /// Live Activity tokens of events that are over (ended and pushed), with nothing queued.
    func removeFinishedActivities(on connection: PostgresConnection) async throws {
        try await connection.query("""
            DELETE FROM devices d WHERE d.kind = 'live_activity'
              AND NOT EXISTS (SELECT 1 FROM event_posts e WHERE e.post_id = d.post_id AND NOT e.ended_pushed)
              AND NOT EXISTS (SELECT 1 FROM deliveries q WHERE q.device_id = d.id AND q.status = 'pending')
            """, logger: logger)
    }

    func eraseUser(_ user: UUID, on connection: PostgresConnection) async throws {
        try await remove(where: "user_id = \(user)", on: connection)
    }

    /// The Live Activity tokens of a circle's event posts held by `user` (everyone's, when nil):
    /// they left it, were removed, or it was deleted.
    func removeActivities(circle: UUID, user: UUID?, on connection: PostgresConnection) async throws {
        try await remove(where: """
            kind = 'live_activity' AND post_id IN (SELECT post_id FROM event_posts WHERE circle_id = \(circle)) AND (\(user)::uuid IS NULL OR user_id = \(user))
            """, on: connection)
    }

    /// Keeps the user's `keep` most recently registered tokens of a kind in an app; older ones go
    /// (with what was queued for them): a cap on what one account can register.
    func keepNewest(_ keep: Int, kind: String, app: App, user: UUID, on connection: PostgresConnection) async throws {
        try await remove(where: """
            id IN (SELECT id FROM devices WHERE app = \(app.rawValue) AND user_id = \(user) AND kind = \(kind)
                   ORDER BY updated_at DESC, id DESC OFFSET \(keep))
            """, on: connection)
    }

    /// Deletes devices and drops what was queued for them, in one statement; whether any went.
    @discardableResult
    private func remove(where condition: PostgresQuery, on connection: PostgresConnection) async throws -> Bool {
        var query = PostgresQuery(unsafeSQL: "WITH gone AS (DELETE FROM devices WHERE ")
        query.sql += condition.sql
        query.binds = condition.binds
        query.sql += """
             RETURNING id), dropped AS (
                UPDATE deliveries SET status = 'dropped', last_reason = 'token_removed', lease_until = NULL
                WHERE status = 'pending' AND device_id IN (SELECT id FROM gone)
            )
            SELECT count(*)::int FROM gone
            """
        let count = try await connection.query(query, logger: logger).firstValue(Int.self) ?? 0
        return count > 0
    }

    /// A token changing hands: what was queued for its previous user must not reach the new one.
    private func dropQueuedForOthers(app: App, token: String, user: UUID, on connection: PostgresConnection) async throws {
        try await connection.query("""
            UPDATE deliveries SET status = 'dropped', last_reason = 'token_moved', lease_until = NULL
            WHERE status = 'pending' AND device_id IN (SELECT id FROM devices WHERE app = \(app.rawValue) AND token = \(token) AND user_id <> \(user))
            """, logger: logger)
    }
}
