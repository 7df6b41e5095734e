import ColonyModels
import ColonyPlatform
import ColonyStorage
import Foundation
import Hummingbird
import Logging

/// The nearby service's own settings, from the environment.
public struct NearbySettings: Sendable {
    /// The discovery radius (the seed's 500 feet).
    public var radiusFeet: Int
    /// The largest radius a client may ask for.
    public var maxRadiusFeet: Int
    /// How long a reported position counts; older ones are deleted by the job.
    public var locationTTLSeconds: Int
    public var jobInterval: Duration
    public var maxPhotoBytes: Int
    /// What others see of a position: the point moved by a secret offset of this many feet (in a
    /// direction of its own, the same for every viewer while the user stays in the area), then
    /// snapped to a grid of `gridFeet`. Distances and who is in range come from that point only,
    /// so no number of queries pins anyone down closer than the offset. 0 and 0 (tests only)
    /// show exact positions.
    public var offsetFeet: ClosedRange<Double>
    public var gridFeet: Double
    /// Position reports per user (`30/60`), nearby queries per viewer (`60/60`), lookups of one
    /// person's card per viewer and person (`30/3600`).
    public var reportQuota: Quota
    public var queryQuota: Quota
    public var targetQuota: Quota
    /// Faster than this between two fresh reports (beyond a jitter allowance) is refused as
    /// a spoofed jump.
    public var maxSpeedMetersPerSecond: Double

    public init(radiusFeet: Int = 500, maxRadiusFeet: Int = 5280, locationTTLSeconds: Int = 600, jobInterval: Duration = .seconds(60), maxPhotoBytes: Int = 5 << 20,
                offsetFeet: ClosedRange<Double> = 100...150, gridFeet: Double = 50,
                reportQuota: Quota = Quota(30, perSeconds: 60), queryQuota: Quota = Quota(60, perSeconds: 60), targetQuota: Quota = Quota(30, perSeconds: 3600),
                maxSpeedMetersPerSecond: Double = 90) {
        self.radiusFeet = radiusFeet
        self.maxRadiusFeet = maxRadiusFeet
        self.locationTTLSeconds = locationTTLSeconds
        self.jobInterval = jobInterval
        self.maxPhotoBytes = maxPhotoBytes
        self.offsetFeet = offsetFeet
        self.gridFeet = gridFeet
        self.reportQuota = reportQuota
        self.queryQuota = queryQuota
        self.targetQuota = targetQuota
        self.maxSpeedMetersPerSecond = maxSpeedMetersPerSecond
    }

    /// `COLONY_NEARBY_RADIUS_FEET` (500), `COLONY_NEARBY_MAX_RADIUS_FEET` (5280),
    /// `COLONY_NEARBY_LOCATION_TTL_SECONDS` (600), `COLONY_NEARBY_JOB_INTERVAL_SECONDS` (60),
    /// `COLONY_NEARBY_MAX_PHOTO_BYTES` (5 MiB), `COLONY_NEARBY_OFFSET_MIN_FEET` (100) and
    /// `_OFFSET_MAX_FEET` (150), `COLONY_NEARBY_GRID_FEET` (50; the offset must be at least the grid),
    /// `COLONY_NEARBY_REPORT_RATE` (`30/60`), `COLONY_NEARBY_QUERY_RATE` (`60/60`),
    /// `COLONY_NEARBY_TARGET_QUERY_RATE` (`30/3600`), `COLONY_NEARBY_MAX_SPEED_MPS` (90).
    public static func load(environment: EnvironmentReader) throws(ConfigurationError) -> NearbySettings {
        let maxRadius = try environment.int("COLONY_NEARBY_MAX_RADIUS_FEET", default: 5280, range: 1...52_800)
        let grid = try environment.int("COLONY_NEARBY_GRID_FEET", default: 50, range: 10...1000)
        let minimum = try environment.int("COLONY_NEARBY_OFFSET_MIN_FEET", default: 100, range: grid...5000)
        let maximum = try environment.int("COLONY_NEARBY_OFFSET_MAX_FEET", default: max(150, minimum), range: minimum...5000)
        return NearbySettings(
            radiusFeet: try environment.int("COLONY_NEARBY_RADIUS_FEET", default: 500, range: 1...maxRadius),
            maxRadiusFeet: maxRadius,
            locationTTLSeconds: try environment.int("COLONY_NEARBY_LOCATION_TTL_SECONDS", default: 600, range: 10...86_400),
            jobInterval: .seconds(try environment.int("COLONY_NEARBY_JOB_INTERVAL_SECONDS", default: 60, range: 1...3600)),
            maxPhotoBytes: try environment.int("COLONY_NEARBY_MAX_PHOTO_BYTES", default: 5 << 20, range: 1024...(64 << 20)),
            offsetFeet: Double(minimum)...Double(maximum),
            gridFeet: Double(grid),
            reportQuota: try environment.quota("COLONY_NEARBY_REPORT_RATE", default: Quota(30, perSeconds: 60)),
            queryQuota: try environment.quota("COLONY_NEARBY_QUERY_RATE", default: Quota(60, perSeconds: 60)),
            targetQuota: try environment.quota("COLONY_NEARBY_TARGET_QUERY_RATE", default: Quota(30, perSeconds: 3600)),
            maxSpeedMetersPerSecond: Double(try environment.int("COLONY_NEARBY_MAX_SPEED_MPS", default: 90, range: 1...1000))
        )
    }

    /// Twice the photo limit, so a photo somewhat over it gets the bucket's clear 422.
    public var maxUploadBytes: Int { 2 * maxPhotoBytes }

    /// Profile photos, as `{user_id}`.
    var photos: StorageBucket { .images("profile-photos", maxBytes: maxPhotoBytes) }
}

/// The nearby service: SocialSpot's profiles, location sharing and people within 500 feet.
public enum NearbyService {
    public static var migrations: [Migration] { NearbyMigrations.all }

    /// What nearby counts for the console's Overview: profiles created per day (the seed's
    /// activity is signing up and sharing a position, and a position is kept only while it is
    /// fresh, one row per user: no history to count) (`profiles_created`).
    public static let consoleStats = [
        ConsoleStat(name: "profiles", app: .socialspot, sql: "SELECT (created_at AT TIME ZONE 'UTC')::date, count(*) FROM profiles WHERE created_at >= $1 AND created_at < $2 GROUP BY 1"),
    ]
    /// The Postgres extensions its schema needs (created by `colony-admin provision`).
    public static let extensions = ["postgis"]

    public static func definition(settings: NearbySettings, storage: Storage) -> ServiceDefinition {
        let photos = settings.photos
        // The key of everyone's secret offsets: made once per deployment, kept in the schema.
        let noise = LocationNoiseKey()
        let export = NearbyExport.plan(photos: photos)
        @Sendable func nearby(_ context: ServiceContext, _ logger: Logger? = nil) -> Nearby {
            Nearby(outbox: context.outbox, storage: storage, photos: photos, settings: settings, noise: noise, logger: logger ?? context.logger)
        }
        var definition = ServiceDefinition(
            migrations: NearbyMigrations.all,
            consumes: EventCatalogue.subscriptions(of: .nearby),
            handleEvent: { event, connection, context in
                try await AuthEventHandler(nearby: nearby(context)).handle(event, on: connection)
                try await UserExportWriter(backend: storage.backend, logger: context.logger).handle(event, plan: export, app: .socialspot, on: connection)
            },
            jobs: { context in [
                ScheduledJob(name: "nearby.expire_locations", interval: settings.jobInterval) { database, logger in
                    _ = try await nearby(context, logger).expireLocations(database: database)
                },
                ScheduledJob(name: "nearby.sweep_quotas", interval: .seconds(3600)) { database, logger in
                    try await database.withConnection { try await Quotas(logger: logger).sweep(on: $0) }
                },
            ] },
            consoleStats: consoleStats,
            consoleHoldings: export.consoleHoldings,
            addRoutes: { router, context in
                storage.addRoutes(to: router, buckets: [photos], tokenMiddleware: context.tokenMiddleware)
                let nearby = nearby(context)
                try NearbyAPI(database: context.database, nearby: nearby, reports: try context.requiredReports())
                    .register(on: router, context: context, uploadLimit: settings.maxUploadBytes)
            }
        )
        // People's cards can be reported (`NearbyReportables`); the console's moderation routes come with it.
        definition.reports = { context in NearbyReportables(nearby: nearby(context)) }
        return definition
    }

    public static var openAPIDocument: OpenAPIDocument { OpenAPIDocument(bytes: PackageResources.openapi_json) }
}
