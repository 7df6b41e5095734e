import ColonyModels
import ColonyPlatform
import Foundation
import Logging
import PostgresNIO

/// `preferences`: per user and app, the kinds switched off and the quiet hours.
struct PreferenceStore: Sendable {
    let logger: Logger

    func get(user: UUID, app: App, on connection: PostgresConnection) async throws -> NotificationsRules.Preferences {
        let rows = try await connection.query("""
            SELECT disabled_kinds, quiet_start, quiet_end, timezone FROM preferences WHERE user_id = \(user) AND app = \(app.rawValue)
            """, logger: logger).collect()
        guard let row = rows.first else { return NotificationsRules.Preferences(disabledKinds: [], quietHours: nil) }
        return try row.read { c in Self.preferences((try c.next(), try c.next(), try c.next(), try c.next())) }
    }

    static func preferences(_ columns: ([String], Int?, Int?, String?)) -> NotificationsRules.Preferences {
        let (kinds, start, end, zone) = columns
        let quiet = start.flatMap { start in end.flatMap { end in zone.map { QuietHours(start: start, end: end, timeZone: $0) } } }
        return NotificationsRules.Preferences(disabledKinds: Set(kinds.compactMap(NotificationKind.init(rawValue:)).filter(\.canBeSwitchedOff)), quietHours: quiet)
    }

    func save(_ preferences: NotificationsRules.Preferences, user: UUID, app: App, on connection: PostgresConnection) async throws {
        let kinds = preferences.disabledKinds.map(\.rawValue).sorted()
        try await connection.query("""
            INSERT INTO preferences (user_id, app, disabled_kinds, quiet_start, quiet_end, timezone, updated_at)
            VALUES (\(user), \(app.rawValue), \(kinds), \(preferences.quietHours?.start), \(preferences.quietHours?.end), \(preferences.quietHours?.timeZone), now())
            ON CONFLICT (user_id, app) DO UPDATE SET disabled_kinds = EXCLUDED.disabled_kinds, quiet_start = EXCLUDED.quiet_start,
                quiet_end = EXCLUDED.quiet_end, timezone = EXCLUDED.timezone, updated_at = now()
            """, logger: logger)
    }

    func eraseUser(_ user: UUID, on connection: PostgresConnection) async throws {
        try await connection.query("DELETE FROM preferences WHERE user_id = \(user)", logger: logger)
    }
}
