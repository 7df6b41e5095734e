import ColonyModels
import ColonyPlatform
import Foundation
import Logging
import PostgresNIO

/// `deliveries`: one push to one token. Pending rows are the send queue; the rest are the
/// delivery log support reads.
struct DeliveryStore: Sendable {
    let logger: Logger

    /// A recipient with their preferences for the app.
    struct Recipient: Sendable {
        var user: UUID
        var preferences: NotificationsRules.Preferences
    }

    /// `excludingSuspended`: accounts suspended now are left out (else only their pushes are, by `deviceTokens`).
    func recipients(_ recipients: Recipients, app: App, excludingSuspended: Bool = false, on connection: PostgresConnection) async throws -> [Recipient] {
        let rows: PostgresRowSequence
        switch recipients {
        case .members(let scope, let id):
            rows = try await connection.query("""
                SELECT m.user_id, coalesce(p.disabled_kinds, '{}'), p.quiet_start, p.quiet_end, p.timezone
                FROM memberships m LEFT JOIN preferences p ON p.user_id = m.user_id AND p.app = \(app.rawValue)
                WHERE m.scope = \(scope.rawValue) AND m.scope_id = \(id)
                  AND (NOT \(excludingSuspended) OR NOT EXISTS (SELECT 1 FROM suspended_accounts s WHERE s.user_id = m.user_id AND s.until > now()))
                """, logger: logger)
        case .users(let users):
            rows = try await connection.query("""
                SELECT u.user_id, coalesce(p.disabled_kinds, '{}'), p.quiet_start, p.quiet_end, p.timezone
                FROM (SELECT DISTINCT unnest(\(users)::uuid[]) AS user_id) u LEFT JOIN preferences p ON p.user_id = u.user_id AND p.app = \(app.rawValue)
                WHERE NOT \(excludingSuspended) OR NOT EXISTS (SELECT 1 FROM suspended_accounts s WHERE s.user_id = u.user_id AND s.until > now())
                """, logger: logger)
        }
        var result: [Recipient] = []
        for try await row in rows {
            var cells = RowCells(row)
            let user: UUID = try cells.next()
            let preferences = PreferenceStore.preferences((try cells.next(), try cells.next(), try cells.next(), try cells.next()))
            result.append(Recipient(user: user, preferences: preferences))
        }
        return result
    }

    /// A device `d` whose owner is not suspended now.
    static let notSuspended = "NOT EXISTS (SELECT 1 FROM suspended_accounts s WHERE s.user_id = d.user_id AND s.until > now())"

    /// `user_suspended`: nothing more is queued for the account until `until`, and what was
    /// queued is dropped. A redelivery changes nothing.
    func suspend(_ user: UUID, app: App, until: Date, on connection: PostgresConnection) async throws {
        try await connection.query("""
            INSERT INTO suspended_accounts (user_id, app, until) VALUES (\(user), \(app.rawValue), \(until))
            ON CONFLICT (user_id) DO UPDATE SET until = EXCLUDED.until
            """, logger: logger)
        try await connection.query("""
            UPDATE deliveries SET status = 'dropped', last_reason = 'suspended', lease_until = NULL
            WHERE status = 'pending' AND user_id = \(user)
            """, logger: logger)
    }

    /// `user_reinstated` (and `user_deleted`): pushes are queued for the account again.
    func reinstate(_ user: UUID, on connection: PostgresConnection) async throws {
        try await connection.query("DELETE FROM suspended_accounts WHERE user_id = \(user)", logger: logger)
    }

    /// The app-install tokens of `users` (a suspended account's are left out).
    func deviceTokens(app: App, users: [UUID], on connection: PostgresConnection) async throws -> [(device: UUID, user: UUID, token: String)] {
        guard !users.isEmpty else { return [] }
        var tokens: [(UUID, UUID, String)] = []
        let rows = try await connection.query("""
            SELECT id, user_id, token FROM devices d WHERE app = \(app.rawValue) AND kind = 'device' AND user_id = ANY(\(users)::uuid[])
              AND \(unescaped: Self.notSuspended)
            """, logger: logger)
        for try await row in rows { tokens.append(try row.read { c in (try c.next(), try c.next(), try c.next()) }) }
        return tokens
    }

    /// The Live Activity tokens registered for an event post by members of its circle (someone
    /// who left or was removed gets nothing more, even before their token is dropped), and the circle.
    func activityTokens(post: UUID, on connection: PostgresConnection) async throws -> (circle: UUID?, tokens: [(device: UUID, user: UUID, token: String)]) {
        guard let circle = try await connection.query("SELECT circle_id FROM event_posts WHERE post_id = \(post)", logger: logger)
            .firstValue(UUID.self) else { return (nil, []) }
        var tokens: [(UUID, UUID, String)] = []
        let rows = try await connection.query("""
            SELECT d.id, d.user_id, d.token FROM devices d
            WHERE d.kind = 'live_activity' AND d.post_id = \(post)
              AND EXISTS (SELECT 1 FROM memberships m WHERE m.scope = 'circle' AND m.scope_id = \(circle) AND m.user_id = d.user_id)
              AND \(unescaped: Self.notSuspended)
            """, logger: logger)
        for try await row in rows { tokens.append(try row.read { c in (try c.next(), try c.next(), try c.next()) }) }
        return (circle, tokens)
    }

    /// One push to queue.
    struct Queued: Sendable {
        var device: UUID
        var user: UUID
        var token: String
        var payload: String
        var notBefore: Date
        var held: Bool
    }

    /// Queues pushes for one event; a token the event already reached is skipped. `scope` is the
    /// group, circle or hive the push is about: the recipient must still be in it when it is sent.
    /// Returns the ids of the pushes queued.
    @discardableResult
    func enqueue(_ pushes: [Queued], event: UUID, app: App, kind: NotificationKind, pushType: PushType, collapseID: String?, expiresAt: Date, now: Date,
                 scope: (MembershipScope, UUID)? = nil, on connection: PostgresConnection) async throws -> [UUID] {
        try await enqueue(pushes, event: event, app: app, kind: kind.rawValue, pushType: pushType, collapseID: collapseID, expiresAt: expiresAt, now: now,
                          scope: scope, on: connection)
    }

    /// `enqueue` for a push that is no domain kind a user can switch off (the console's `test_push`).
    @discardableResult
    func enqueue(_ pushes: [Queued], event: UUID, app: App, kind: String, pushType: PushType, collapseID: String?, expiresAt: Date, now: Date,
                 scope: (MembershipScope, UUID)? = nil, on connection: PostgresConnection) async throws -> [UUID] {
        guard !pushes.isEmpty else { return [] }
        let ids = pushes.map { _ in UUID.timeOrdered(at: now) }
        return try await connection.query("""
            INSERT INTO deliveries (id, event_id, device_id, user_id, app, kind, push_type, collapse_id, expires_at, payload, token_suffix,
                                    not_before, held_until, created_at, scope, scope_id, trace_parent)
            SELECT q.id, \(event), q.device, q.user_id, \(app.rawValue), \(kind), \(pushType.rawValue), \(collapseID), \(expiresAt),
                   q.payload, right(q.token, 8), q.not_before, CASE WHEN q.held THEN q.not_before END, \(now), \(scope?.0.rawValue), \(scope?.1),
                   \(TraceParent.current?.description)
            FROM unnest(\(ids)::uuid[], \(pushes.map(\.device))::uuid[], \(pushes.map(\.user))::uuid[], \(pushes.map(\.token))::text[],
                        \(pushes.map(\.payload))::text[], \(pushes.map(\.notBefore))::timestamptz[], \(pushes.map(\.held))::bool[])
                 AS q(id, device, user_id, token, payload, not_before, held)
            ON CONFLICT (event_id, device_id) DO NOTHING
            RETURNING id
            """, logger: logger).values(UUID.self)
    }

    /// A leased push, with its token as it is now.
    struct Claimed: Sendable {
        var id: UUID
        var deviceID: UUID
        var user: UUID
        var app: App
        var kind: String
        var pushType: PushType
        var collapseID: String?
        var expiresAt: Date
        var payload: String
        var attempts: Int
        var token: String
        var environment: APNsEnvironment
        var tokenUser: UUID
        /// The trace of the event it was queued for.
        var traceParent: TraceParent?
    }

    /// Leases up to `limit` due pushes (skipping rows another sender holds). A lease that runs
    /// out (a sender died mid-send) makes the row due again: pushes go out at least once.
    func claim(now: Date, limit: Int, lease: Duration, on connection: PostgresConnection) async throws -> [Claimed] {
        let leaseUntil = now.addingTimeInterval(Double(lease.components.seconds))
        // Membership is checked at send time too: whoever left the group, circle or hive a push
        // is about since it was queued gets nothing.
        try await connection.query("""
            UPDATE deliveries d SET status = 'dropped', last_reason = 'not_a_member', lease_until = NULL
            WHERE d.status = 'pending' AND d.scope IS NOT NULL AND d.not_before <= \(now)
              AND NOT EXISTS (SELECT 1 FROM memberships m WHERE m.scope = d.scope AND m.scope_id = d.scope_id AND m.user_id = d.user_id)
            """, logger: logger)
        let rows = try await connection.query("""
            WITH due AS (
                SELECT id FROM deliveries d
                WHERE status = 'pending' AND not_before <= \(now) AND (lease_until IS NULL OR lease_until < \(now))
                  AND (d.scope IS NULL OR EXISTS (SELECT 1 FROM memberships m WHERE m.scope = d.scope AND m.scope_id = d.scope_id AND m.user_id = d.user_id))
                ORDER BY not_before LIMIT \(limit) FOR UPDATE SKIP LOCKED
            )
            UPDATE deliveries d SET lease_until = \(leaseUntil), attempts = d.attempts + 1
            FROM due, devices t
            WHERE d.id = due.id AND t.id = d.device_id
            RETURNING d.id, d.device_id, d.user_id, d.app, d.kind, d.push_type, d.collapse_id, d.expires_at, d.payload, d.attempts,
                      t.token, t.environment, t.user_id, d.trace_parent
            """, logger: logger)
        var claimed: [Claimed] = []
        for try await row in rows {
            claimed.append(try row.read { c in
                Claimed(id: try c.next(), deviceID: try c.next(), user: try c.next(), app: App(rawValue: try c.next(String.self)) ?? .mycirclee, kind: try c.next(),
                        pushType: PushType(rawValue: try c.next(String.self)) ?? .alert, collapseID: try c.next(), expiresAt: try c.next(), payload: try c.next(),
                        attempts: try c.next(), token: try c.next(), environment: APNsEnvironment(rawValue: try c.next(String.self)) ?? .production,
                        tokenUser: try c.next(), traceParent: try c.next(String?.self).flatMap(TraceParent.init(header:)))
            })
        }
        return claimed
    }

    /// What became of a leased push.
    struct Outcome: Sendable {
        enum Status: String, Sendable { case pending, sent, failed, dropped, skipped }
        var id: UUID
        var status: Status
        /// APNs' HTTP status (0: no answer).
        var httpStatus: Int
        var reason: String
        /// For `pending`: when to try again.
        var retryAt: Date
    }

    func record(_ outcomes: [Outcome], now: Date, on connection: PostgresConnection) async throws {
        guard !outcomes.isEmpty else { return }
        try await connection.query("""
            UPDATE deliveries d SET status = r.status, last_status = nullif(r.http, 0), last_reason = nullif(r.reason, ''),
                sent_at = CASE WHEN r.status = 'sent' THEN \(now) ELSE d.sent_at END,
                not_before = CASE WHEN r.status = 'pending' THEN r.retry_at ELSE d.not_before END, lease_until = NULL
            FROM unnest(\(outcomes.map(\.id))::uuid[], \(outcomes.map(\.status.rawValue))::text[], \(outcomes.map(\.httpStatus))::int8[],
                        \(outcomes.map(\.reason))::text[], \(outcomes.map(\.retryAt))::timestamptz[]) AS r(id, status, http, reason, retry_at)
            WHERE d.id = r.id
            """, logger: logger)
    }

    /// Housekeeping: drops pending pushes whose device is gone; deletes each app's delivery log
    /// and notification history past its retention (`retention(app)`). Returns how many of each went.
    @discardableResult
    func sweep(now: Date, retention: (App) -> NotificationsSettings.AppRetention, on connection: PostgresConnection) async throws -> (deliveries: Int, notifications: Int) {
        try await connection.query("""
            UPDATE deliveries SET status = 'dropped', last_reason = 'token_removed', lease_until = NULL
            WHERE status = 'pending' AND device_id IS NULL
            """, logger: logger)
        try await connection.query("DELETE FROM suspended_accounts WHERE until <= \(now)", logger: logger)
        // One statement per table for every app: each row against its own app's cutoff
        // (`deliveries_app_created`; the list's rows by `notifications_created`).
        let apps = App.allCases.map(\.rawValue)
        let pushLogCutoffs = App.allCases.map { now.addingTimeInterval(-Double(retention($0).pushLog.components.seconds)) }
        let listCutoffs = App.allCases.map { now.addingTimeInterval(-Double(retention($0).notifications.components.seconds)) }
        let deliveries = try await connection.query("""
            WITH gone AS (
                DELETE FROM deliveries d USING unnest(\(apps)::text[], \(pushLogCutoffs)::timestamptz[]) AS r(app, cutoff)
                WHERE d.app = r.app AND d.created_at < r.cutoff AND d.status <> 'pending' RETURNING 1)
            SELECT count(*)::int FROM gone
            """, logger: logger).firstValue(Int.self) ?? 0
        let notifications = try await connection.query("""
            WITH gone AS (
                DELETE FROM notifications n USING unnest(\(apps)::text[], \(listCutoffs)::timestamptz[]) AS r(app, cutoff)
                WHERE n.app = r.app AND n.created_at < r.cutoff RETURNING 1)
            SELECT count(*)::int FROM gone
            """, logger: logger).firstValue(Int.self) ?? 0
        return (deliveries, notifications)
    }

    /// The delivery log, newest first: one user's (through `deliveries_user`: the user's own route,
    /// support's command, the console's user page) or an app's (the console's Push page:
    /// `deliveries_app_status_created` for one status; for all, `deliveries_app_created`, or
    /// `deliveries_created` for an app with most of the rows), of one app or all, one status or all.
    func log(app: App?, user: UUID?, status: String? = nil, limit: Int, on connection: PostgresConnection) async throws -> [PushAdmin.Delivery] {
        try await connection.query("""
            SELECT id, user_id, device_id, event_id, app, kind, push_type, status, attempts, last_status, last_reason, token_suffix,
                   held_until, created_at, sent_at
            FROM deliveries
            WHERE (\(app?.rawValue)::text IS NULL OR app = \(app?.rawValue)) AND (\(user)::uuid IS NULL OR user_id = \(user))
              AND (\(status)::text IS NULL OR status = \(status))
            ORDER BY created_at DESC, id DESC LIMIT \(limit)
            """, logger: logger).read { c in
            PushAdmin.Delivery(id: try c.next(), userId: try c.next(), deviceId: try c.next(), eventId: try c.next(), app: try c.next(), kind: try c.next(),
                               pushType: try c.next(), status: try c.next(), attempts: try c.next(), lastStatus: try c.next(), lastReason: try c.next(),
                               tokenSuffix: try c.next(), heldUntil: try c.next(), createdAt: try c.next(), sentAt: try c.next())
        }
    }

    func eraseUser(_ user: UUID, on connection: PostgresConnection) async throws {
        try await connection.query("DELETE FROM deliveries WHERE user_id = \(user)", logger: logger)
        try await reinstate(user, on: connection)
    }

    /// Someone left (or was removed from) a group, circle or hive, or it was deleted: what was
    /// queued for them about it is dropped (everyone's, when `user` is nil).
    func dropQueued(scope: MembershipScope, _ id: UUID, user: UUID?, on connection: PostgresConnection) async throws {
        try await connection.query("""
            UPDATE deliveries SET status = 'dropped', last_reason = 'not_a_member', lease_until = NULL
            WHERE status = 'pending' AND scope = \(scope.rawValue) AND scope_id = \(id) AND (\(user)::uuid IS NULL OR user_id = \(user))
            """, logger: logger)
    }
}
