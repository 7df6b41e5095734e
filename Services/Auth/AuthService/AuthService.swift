import ColonyModels
import ColonyPlatform
import ColonyStorage
import Foundation
import Hummingbird
import Logging

/// The auth service: Supabase-Auth-compatible sign-in for the five apps' user pools.
public enum AuthService {
    public static var migrations: [Migration] { AuthMigrations.all }

    /// What auth counts for the console's Overview, per app: accounts created (`signups`, anonymous
    /// and invited ones included), and active users. Active means a sign-in of any kind (a `login`
    /// entry: password, code, link, OAuth, anonymous) or a token refresh (`token_refreshed`) in the
    /// app's audit log, by user id: distinct per day, and distinct over the whole window (with
    /// `days=30`, the monthly active users). The log is what keeps that history (a session keeps
    /// only its last refresh, and goes at sign-out): an app whose `audit_retention_days` is under
    /// the window has less. Served by `users_app_created` and `audit_log_entries_app_created`.
    public static var consoleStats: [ConsoleStat] {
        App.allCases.flatMap { app -> [ConsoleStat] in
            let active = "audit_log_entries WHERE app = '\(app.rawValue)' AND payload->>'action' IN ('login', 'token_refreshed') AND created_at >= $1 AND created_at < $2"
            return [
                ConsoleStat(name: "signups", app: app, sql: "SELECT (created_at AT TIME ZONE 'UTC')::date, count(*) FROM users WHERE app = '\(app.rawValue)' AND created_at >= $1 AND created_at < $2 GROUP BY 1"),
                ConsoleStat(name: "active_users", app: app, sql: "SELECT (created_at AT TIME ZONE 'UTC')::date, count(DISTINCT payload->>'actor_id') FROM \(active) GROUP BY 1"),
                ConsoleStat(name: "active_users", app: app, kind: .window, sql: "SELECT count(DISTINCT payload->>'actor_id') FROM \(active)"),
            ]
        }
    }

    /// Everything the service is made of. `sender` overrides the configured mail/SMS sender.
    public static func definition(settings: AuthSettings, sender: (any MessageSender)? = nil, exports: Storage? = nil) -> ServiceDefinition {
        let hasher = PasswordHasher(cost: settings.bcryptCost, threads: settings.hashingThreads)
        // A request queued on this replica wakes its dispatcher at once.
        let addressRequestQueued = WakeSignal()
        @Sendable func accounts(_ context: ServiceContext, keyRing: KeyRing) -> Accounts {
            Accounts(
                settings: settings, database: context.database, outbox: context.outbox, keyRing: keyRing, hasher: hasher,
                sender: sender ?? makeSender(settings.sender, apps: settings.apps, logger: context.logger),
                apple: AppleIdentityVerifier(keysURL: settings.appleKeysURL), logger: context.logger, addressRequestQueued: addressRequestQueued,
                exports: exports
            )
        }
        @Sendable func keyRing(_ context: ServiceContext) -> KeyRing {
            KeyRing(database: context.database, issuer: settings.issuer, retiredKeyRetentionSeconds: settings.retiredKeyRetentionSeconds, logger: context.logger)
        }
        return ServiceDefinition(
            migrations: AuthMigrations.all,
            jobs: { context in [
                ScheduledJob(name: "auth.expire_codes_and_limits", interval: .seconds(600)) { database, logger in
                    try await database.transaction { connection in
                        try await OneTimeTokenStore(logger: logger).deleteExpired(on: connection)
                    }
                    try await RateLimiter(database: database, logger: logger).deleteOldWindows()
                },
                ScheduledJob(name: "auth.delete_unconverted_anonymous_users", interval: .seconds(3600)) { database, logger in
                    try await AnonymousUserCleanup.run(settings: settings, database: database, outbox: context.outbox, logger: logger)
                },
                // Data exports: assembled once every service's part is written, deleted after their week.
                ScheduledJob(name: "auth.assemble_exports", interval: .seconds(5)) { _, _ in
                    try await accounts(context, keyRing: keyRing(context)).assembleExports()
                },
                ScheduledJob(name: "auth.sweep_exports", interval: .seconds(600)) { _, _ in
                    try await accounts(context, keyRing: keyRing(context)).sweepExports()
                },
                ScheduledJob(name: "auth.expire_audit_log", interval: .seconds(3600)) { database, logger in
                    // Per app: its `audit_retention_days`, else COLONY_AUTH_AUDIT_RETENTION_DAYS (0 keeps).
                    for app in App.allCases {
                        let days = settings.app(app).auditRetentionDays ?? settings.auditRetentionDays
                        guard days > 0 else { continue }
                        let deleted = try await database.transaction { connection in
                            try await AuditLogStore(logger: logger).deleteOlder(thanDays: days, app: app, on: connection)
                        }
                        Retention.deleted(deleted, kind: "audit_log")
                    }
                },
                // Import runs are the record of imports, as the services' import ledgers: each app's kept
                // as long as its ledger (import_ledger_retention_days, else COLONY_IMPORT_LEDGER_RETENTION_DAYS;
                // 0 keeps them). Their summaries name source rows by id.
                ScheduledJob(name: "auth.expire_import_runs", interval: .seconds(3600)) { database, logger in
                    var deleted = 0
                    for app in App.allCases {
                        let retention = context.configuration.pipeline.importLedgerRetention(of: app)
                        guard retention > .zero else { continue }
                        let cutoff = Date().addingTimeInterval(-Double(retention.components.seconds))
                        deleted += try await database.withConnection { connection in
                            try await connection.query("""
                                DELETE FROM import_runs WHERE app = \(app.rawValue) AND started_at < \(cutoff) AND status <> 'running' RETURNING 1
                                """, logger: logger).collect().count
                        }
                    }
                    Retention.deleted(deleted, kind: "import_runs")
                },
                // Unconfirmed sign-ups and (where an app asks) unused accounts, per app.
                ScheduledJob(name: "auth.retention", interval: .seconds(3600)) { _, _ in
                    try await accounts(context, keyRing: keyRing(context)).applyRetention()
                },
            ] },
            services: { context in [
                hasher,
                AddressRequestDispatcher(accounts: accounts(context, keyRing: keyRing(context)), signal: addressRequestQueued, logger: context.logger),
            ] },
            consoleStats: consoleStats,
            addRoutes: { router, context in
                let keyRing = keyRing(context)
                AuthRoutes(accounts: accounts(context, keyRing: keyRing), keyRing: keyRing, settings: settings, consoleKey: context.configuration.consoleKey).add(to: router)
                // The archives' signed links (`/storage/v1/object/sign/exports/…`); nothing else of the bucket is served.
                exports?.addRoutes(to: router, buckets: [UserExport.bucket], tokenMiddleware: context.tokenMiddleware)
                InternalUserRoutes.add(to: router, context: context, settings: settings)
            }
        )
    }
}
