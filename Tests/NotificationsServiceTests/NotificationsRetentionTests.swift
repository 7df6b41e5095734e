import ColonyModels
import ColonyPlatform
import ColonyTesting
import Foundation
import PostgresNIO
import Testing
@testable import NotificationsService

/// Retention of the in-app list and the push delivery log per app (issue 40.2): the apps file's
/// `notification_retention_days` and `push_log_retention_days`, else
/// `COLONY_NOTIFICATIONS_RETENTION_DAYS`, enforced by the service's own job on the clock the test
/// moves.
@Suite("Notifications: retention per app")
struct NotificationsRetentionTests {
    /// `{"unify": {"notification_retention_days": 7, "push_log_retention_days": 3}}`, parsed as the service parses it.
    static func unifyShorter() throws -> [App: NotificationsSettings.AppRetention] {
        let file = try AppsFile.parse(Data(#"{"unify": {"notification_retention_days": 7, "push_log_retention_days": 3}, "habithive": {"require_aal2": true}}"#.utf8))
        return try NotificationsSettings.appRetention(file, default: .seconds(30 * 86_400))
    }

    @Test("the apps file's days are read per app, the rest default; days out of range or not whole are refused")
    func settings() throws {
        let apps = try Self.unifyShorter()
        #expect(apps == [.unify: .init(notifications: .seconds(7 * 86_400), pushLog: .seconds(3 * 86_400))])
        let settings = NotificationsSettings(retention: .seconds(30 * 86_400))
        #expect(settings.retention(of: .mycirclee) == .init(notifications: .seconds(30 * 86_400), pushLog: .seconds(30 * 86_400)))
        for bad in [#"{"unify": {"push_log_retention_days": 0}}"#, #"{"unify": {"push_log_retention_days": 3651}}"#,
                    #"{"unify": {"notification_retention_days": 1.5}}"#, #"{"unify": {"notification_retention_days": "7"}}"#,
                    #"{"unify": {"push_log_retention_day": 3}}"#] {
            #expect(throws: ConfigurationError.self, "\(bad)") {
                try NotificationsSettings.appRetention(AppsFile.parse(Data(bad.utf8)), default: .seconds(86_400))
            }
        }
        // Through the environment, as the service starts.
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("apps-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: path) }
        try Data(#"{"unify": {"push_log_retention_days": 3}}"#.utf8).write(to: path)
        let loaded = try NotificationsSettings.load(environment: EnvironmentReader(["COLONY_APPS_FILE": path.path, "COLONY_NOTIFICATIONS_RETENTION_DAYS": "20"]))
        #expect(loaded.retention(of: .unify) == .init(notifications: .seconds(20 * 86_400), pushLog: .seconds(3 * 86_400)))
        #expect(loaded.retention(of: .habithive) == .init(notifications: .seconds(20 * 86_400), pushLog: .seconds(20 * 86_400)))
    }

    /// One in-app entry and one finished push for `user` of `app`, made `daysAgo` days before `now`.
    func seed(_ connection: PostgresConnection, user: UUID, app: App, daysAgo: Double, now: Date) async throws {
        let at = now.addingTimeInterval(-daysAgo * 86_400)
        try await connection.query("""
            INSERT INTO notifications (id, user_id, app, kind, event_id, title, body, created_at)
            VALUES (\(UUID()), \(user), \(app.rawValue), 'message_sent', \(UUID()), 'Anna', 'Hallo', \(at))
            """, logger: TestEnvironment.logger)
        try await connection.query("""
            INSERT INTO deliveries (id, event_id, user_id, app, kind, push_type, expires_at, payload, token_suffix, status, not_before, created_at, sent_at)
            VALUES (\(UUID()), \(UUID()), \(user), \(app.rawValue), 'message_sent', 'alert', \(at), '{}', 'abcd', 'sent', \(at), \(at), \(at))
            """, logger: TestEnvironment.logger)
    }

    /// `user`'s (in-app entries, delivery log rows).
    func held(_ connection: PostgresConnection, user: UUID) async throws -> [Int] {
        [try await connection.query("SELECT count(*)::int FROM notifications WHERE user_id = \(user)", logger: TestEnvironment.logger).firstValue(Int.self) ?? -1,
         try await connection.query("SELECT count(*)::int FROM deliveries WHERE user_id = \(user)", logger: TestEnvironment.logger).firstValue(Int.self) ?? -1]
    }

    @Test("must show: on the job's clock, Unify's push log goes after 3 days and its list after 7, MyCirclee's both after 30")
    func sweptPerApp() async throws {
        let appRetention = try Self.unifyShorter()
        try await withRunningNotifications(appRetention: appRetention, sweepInterval: .seconds(1)) { n in
            let unify = UUID(), mycirclee = UUID()
            let now = n.clock.clock.now()
            try await n.service.withDatabase { database in
                try await database.withConnection { connection in
                    // One day old: every app keeps it for now.
                    try await seed(connection, user: unify, app: .unify, daysAgo: 1, now: now)
                    try await seed(connection, user: mycirclee, app: .mycirclee, daysAgo: 1, now: now)
                }
            }
            func expect(_ user: UUID, _ counts: [Int], _ when: String) async throws {
                try await n.service.withDatabase { database in
                    do {
                        // The sweep runs every second here; a busy machine gets 60 s.
                        try await waitUntil(timeout: .seconds(60)) { try await database.withConnection { try await held($0, user: user) } == counts }
                    } catch {
                        let got = try await database.withConnection { try await held($0, user: user) }
                        Issue.record("\(when): expected \(counts) (list, push log) rows, got \(got)")
                    }
                }
            }
            try await expect(unify, [1, 1], "a day later")
            n.clock.advance(by: 2.5 * 86_400)  // 3.5 days old: past Unify's push log
            try await expect(unify, [1, 0], "3.5 days")
            try await expect(mycirclee, [1, 1], "3.5 days")
            n.clock.advance(by: 4 * 86_400)  // 7.5 days: past Unify's list
            try await expect(unify, [0, 0], "7.5 days")
            try await expect(mycirclee, [1, 1], "7.5 days")
            n.clock.advance(by: 23 * 86_400)  // 30.5 days: past the deployment's 30
            try await expect(mycirclee, [0, 0], "30.5 days")
        }
    }
}
