import ColonyModels
import ColonyPlatform
import ColonyStorage
import Crypto
import Foundation
import Hummingbird
import Logging

/// The notifications service's own settings, from the environment.
public struct NotificationsSettings: Sendable {
    /// nil: APNs is not configured; pushes are recorded as skipped (local development).
    public var apns: APNsSettings?
    /// APNs requests in flight at once (multiplexed on HTTP/2).
    public var concurrency: Int
    /// Tries per push before it counts as failed (429, 5xx, no answer).
    public var maxAttempts: Int
    /// How long the delivery log and the in-app list keep entries, for an app the apps file
    /// gives no days of its own.
    public var retention: Duration
    /// Per app, from the apps file: `notification_retention_days` (the in-app list) and
    /// `push_log_retention_days` (the delivery log), each else `retention`.
    public var appRetention: [App: AppRetention] = [:]
    /// How often the sweep (retention, dropped tokens' queued pushes) runs: hourly; tests move
    /// their clock by days and want it at once.
    public var sweepInterval: Duration = .seconds(3600)
    /// How often the Live Activity countdown runs.
    public var jobInterval: Duration
    /// A Live Activity ends this long after its event began.
    public var liveActivityEndAfter: Duration
    /// How long the sender sleeps without a wake-up (held and retried pushes fall due by the clock).
    public var pollInterval: Duration
    public var clock: NotificationClock
    /// Tokens one user may have registered per app: installs, and Live Activities. Registering
    /// more drops the least recently registered.
    public var maxDevicesPerUser: Int
    public var maxLiveActivitiesPerUser: Int
    /// Circles' root URL, asked about Live Activities the projection cannot vouch for yet (`EventPostOwner`).
    public var circlesURL: String? = nil

    public init(apns: APNsSettings? = nil, concurrency: Int = 64, maxAttempts: Int = 8, retention: Duration = .seconds(30 * 86_400),
                jobInterval: Duration = .seconds(60), liveActivityEndAfter: Duration = .seconds(3600), pollInterval: Duration = .seconds(1),
                clock: NotificationClock = .system, maxDevicesPerUser: Int = 10, maxLiveActivitiesPerUser: Int = 20) {
        self.apns = apns
        self.concurrency = concurrency
        self.maxAttempts = maxAttempts
        self.retention = retention
        self.jobInterval = jobInterval
        self.liveActivityEndAfter = liveActivityEndAfter
        self.pollInterval = pollInterval
        self.clock = clock
        self.maxDevicesPerUser = maxDevicesPerUser
        self.maxLiveActivitiesPerUser = maxLiveActivitiesPerUser
    }

    /// How long `app`'s in-app list and push delivery log keep an entry.
    public struct AppRetention: Sendable, Equatable {
        public var notifications: Duration
        public var pushLog: Duration

        public init(notifications: Duration, pushLog: Duration) {
            self.notifications = notifications
            self.pushLog = pushLog
        }
    }

    public func retention(of app: App) -> AppRetention {
        appRetention[app] ?? AppRetention(notifications: retention, pushLog: retention)
    }

    /// Pushes leased per round: enough to keep every request slot busy.
    public var batchSize: Int { max(256, concurrency * 4) }

    /// `COLONY_APNS_TEAM_ID`, `COLONY_APNS_KEY_ID`, `COLONY_APNS_PRIVATE_KEY_FILE` (the .p8; all three
    /// or none), `COLONY_APNS_TOPIC_<APP>` (each app's bundle id), `COLONY_APNS_PRODUCTION_URL`,
    /// `COLONY_APNS_SANDBOX_URL`, `COLONY_APNS_CA_FILE` (extra trusted CA, PEM),
    /// `COLONY_NOTIFICATIONS_CONCURRENCY` (64), `COLONY_NOTIFICATIONS_MAX_ATTEMPTS` (8),
    /// `COLONY_NOTIFICATIONS_RETENTION_DAYS` (30; per app, the apps file's `notification_retention_days`
    /// and `push_log_retention_days`), `COLONY_NOTIFICATIONS_JOB_INTERVAL_SECONDS` (60),
    /// `COLONY_NOTIFICATIONS_MAX_DEVICES_PER_USER` (10), `COLONY_NOTIFICATIONS_MAX_LIVE_ACTIVITIES_PER_USER` (20).
    public static func load(environment: EnvironmentReader) throws(ConfigurationError) -> NotificationsSettings {
        var settings = NotificationsSettings(
            apns: try loadAPNs(environment: environment),
            concurrency: try environment.int("COLONY_NOTIFICATIONS_CONCURRENCY", default: 64, range: 1...1000),
            maxAttempts: try environment.int("COLONY_NOTIFICATIONS_MAX_ATTEMPTS", default: 8, range: 1...50),
            retention: .seconds(86_400 * (try environment.int("COLONY_NOTIFICATIONS_RETENTION_DAYS", default: 30, range: 1...3650))),
            jobInterval: .seconds(try environment.int("COLONY_NOTIFICATIONS_JOB_INTERVAL_SECONDS", default: 60, range: 1...3600)),
            maxDevicesPerUser: try environment.int("COLONY_NOTIFICATIONS_MAX_DEVICES_PER_USER", default: 10, range: 1...1000),
            maxLiveActivitiesPerUser: try environment.int("COLONY_NOTIFICATIONS_MAX_LIVE_ACTIVITIES_PER_USER", default: 20, range: 1...1000)
        )
        settings.circlesURL = try environment.url("COLONY_CIRCLES_URL")?.absoluteString  // unset: circles is not asked
        do {
            settings.appRetention = try appRetention(AppsFile.load(environment: environment), default: settings.retention)
        } catch {
            try environment.problem(error)
        }
        return settings
    }

    /// The apps file's `notification_retention_days` and `push_log_retention_days` (1 to 3650),
    /// for the apps that give either.
    public static func appRetention(_ file: AppsFile, default retention: Duration) throws(ConfigurationError) -> [App: AppRetention] {
        var apps: [App: AppRetention] = [:]
        for app in App.allCases {
            let notifications = try file.days("notification_retention_days", of: app, range: 1...3650)
            let pushLog = try file.days("push_log_retention_days", of: app, range: 1...3650)
            if notifications == nil && pushLog == nil { continue }
            apps[app] = AppRetention(notifications: notifications.map { .seconds(86_400 * $0) } ?? retention,
                                     pushLog: pushLog.map { .seconds(86_400 * $0) } ?? retention)
        }
        return apps
    }

    static func loadAPNs(environment: EnvironmentReader) throws(ConfigurationError) -> APNsSettings? {
        let team = environment.optionalString("COLONY_APNS_TEAM_ID")
        let keyID = environment.optionalString("COLONY_APNS_KEY_ID")
        let keyFile = environment.optionalString("COLONY_APNS_PRIVATE_KEY_FILE")
        if team == nil && keyID == nil && keyFile == nil { return nil }
        guard let team, let keyID, let keyFile else {
            let missing = [("COLONY_APNS_TEAM_ID", team), ("COLONY_APNS_KEY_ID", keyID), ("COLONY_APNS_PRIVATE_KEY_FILE", keyFile)].first { $0.1 == nil }!.0
            throw ConfigurationError(variable: missing, problem: "is required with the other COLONY_APNS_* settings")
        }
        let key: P256.Signing.PrivateKey
        do {
            key = try P256.Signing.PrivateKey(pemRepresentation: try String(contentsOfFile: keyFile, encoding: .utf8))
        } catch {
            throw ConfigurationError(variable: "COLONY_APNS_PRIVATE_KEY_FILE", problem: "must name a readable .p8 (PEM, P-256) key file: \(error)")
        }
        var topics: [App: String] = [:]
        for app in App.allCases {
            if let topic = environment.optionalString("COLONY_APNS_TOPIC_\(app.rawValue.uppercased())") { topics[app] = topic }
        }
        var trust: String?
        if let caFile = environment.optionalString("COLONY_APNS_CA_FILE") {
            guard let pem = try? String(contentsOfFile: caFile, encoding: .utf8) else {
                throw ConfigurationError(variable: "COLONY_APNS_CA_FILE", problem: "must name a readable PEM file")
            }
            trust = pem
        }
        return APNsSettings(
            teamID: team, keyID: keyID, privateKey: key, topics: topics,
            productionURL: try environment.url("COLONY_APNS_PRODUCTION_URL")?.absoluteString ?? "https://api.push.apple.com",
            sandboxURL: try environment.url("COLONY_APNS_SANDBOX_URL")?.absoluteString ?? "https://api.sandbox.push.apple.com",
            additionalTrustRootsPEM: trust
        )
    }
}

/// The notifications service: device tokens, preferences, the in-app list and APNs pushes for
/// every app, fanned out from the domain services' events.
public enum NotificationsService {
    public static var migrations: [Migration] { NotificationsMigrations.all }

    /// What notifications counts for the console's Overview, per app: pushes sent and failed
    /// (the delivery log's `sent` and `failed` rows; dropped and skipped ones are neither), by
    /// the day they were queued (`deliveries_created`). The log is kept the app's
    /// `push_log_retention_days`, else `COLONY_NOTIFICATIONS_RETENTION_DAYS` (30 by default).
    public static var consoleStats: [ConsoleStat] {
        App.allCases.flatMap { app in
            [("pushes_sent", "sent"), ("pushes_failed", "failed")].map { name, status in
                ConsoleStat(name: name, app: app, sql: "SELECT (created_at AT TIME ZONE 'UTC')::date, count(*) FROM deliveries WHERE app = '\(app.rawValue)' AND status = '\(status)' AND created_at >= $1 AND created_at < $2 GROUP BY 1")
            }
        }
    }

    /// The topics whose events make pushes (and the memberships they go to).
    public static let consumedServices = EventCatalogue.subscriptions(of: .notifications)

    /// `exports`: where its part of a user's data export is written (the `exports` bucket).
    public static func definition(settings: NotificationsSettings, exports: any StorageBackend) throws -> ServiceDefinition {
        let apns = try settings.apns.map { try APNsClient(settings: $0) }
        // Each handled event (and each job run) wakes the sender at once.
        let signal = WakeSignal()
        @Sendable func notifications(_ logger: Logger) -> Notifications { Notifications(settings: settings, logger: logger) }
        var definition = ServiceDefinition(
            migrations: NotificationsMigrations.all,
            consumes: consumedServices,
            handleEvent: { event, connection, context in
                try await DomainEventHandler(notifications: notifications(context.logger)).handle(event, on: connection)
                // Every app's requests: it holds each app's devices, preferences and pushes.
                try await UserExportWriter(backend: exports, logger: context.logger).handle(event, plan: NotificationsExport.plan, app: nil, on: connection)
            },
            jobs: { context in [
                ScheduledJob(name: "notifications.live_activity_countdown", interval: settings.jobInterval) { database, logger in
                    try await notifications(logger).liveActivityCountdown(database: database)
                    signal.wake()
                },
                ScheduledJob(name: "notifications.sweep", interval: settings.sweepInterval) { database, logger in
                    try await notifications(logger).sweep(database: database)
                },
            ] },
            services: { context in [
                PushDispatcher(database: context.database, apns: apns, settings: settings, signal: signal, metrics: context.metrics, logger: context.logger),
            ] },
            consoleStats: consoleStats,
            consoleHoldings: NotificationsExport.plan.consoleHoldings,
            addRoutes: { router, context in
                var routed = notifications(context.logger)
                routed.eventPosts = EventPostOwner.make(key: context.configuration.internalKey, circlesURL: settings.circlesURL)
                try NotificationsAPI(database: context.database, notifications: routed).register(on: router, context: context)
                // The console's Push page and a user's push devices (`PushAdmin`).
                ConsolePushRoutes(database: context.database, settings: settings, signal: signal, key: context.configuration.consoleKey).add(to: router)
            }
        )
        definition.afterEvent = { _ in signal.wake() }
        return definition
    }

    public static var openAPIDocument: OpenAPIDocument { OpenAPIDocument(bytes: PackageResources.openapi_json) }

    /// The console's push routes (`ConsolePushRoutes`), on the service's own port only.
    public static var pushAdminDocument: OpenAPIDocument { OpenAPIDocument(bytes: PackageResources.push_admin_openapi_json) }

    /// The delivery log of one user, for support (`colony-notifications deliveries USER_ID`).
    public static func deliveryLog(user: UUID, app: App?, limit: Int, database: Database) async throws -> [PushAdmin.Delivery] {
        try await database.withConnection { connection in
            try await DeliveryStore(logger: database.logger).log(app: app, user: user, limit: limit, on: connection)
        }
    }
}
