import ColonyModels
import ColonyPlatform
import ColonyStorage
import Foundation
import Hummingbird
import Logging

/// The circles service's own settings, from the environment.
public struct CirclesSettings: Sendable {
    public var maxPhotoBytes: Int
    /// How often expired posts are deleted.
    public var expiryInterval: Duration
    /// Add requests one member may make (`20/3600`: 20 an hour).
    public var addRequestQuota: Quota

    public init(maxPhotoBytes: Int = 5 << 20, expiryInterval: Duration = .seconds(60),
                addRequestQuota: Quota = Quota(20, perSeconds: 3600)) {
        self.maxPhotoBytes = maxPhotoBytes
        self.expiryInterval = expiryInterval
        self.addRequestQuota = addRequestQuota
    }

    /// `COLONY_CIRCLES_MAX_PHOTO_BYTES` (5 MiB), `COLONY_CIRCLES_EXPIRY_INTERVAL_SECONDS` (60), `COLONY_CIRCLES_ADD_REQUEST_RATE` (`20/3600`).
    public static func load(environment: EnvironmentReader) throws(ConfigurationError) -> CirclesSettings {
        CirclesSettings(
            maxPhotoBytes: try environment.int("COLONY_CIRCLES_MAX_PHOTO_BYTES", default: 5 << 20, range: 1024...(64 << 20)),
            expiryInterval: .seconds(try environment.int("COLONY_CIRCLES_EXPIRY_INTERVAL_SECONDS", default: 60, range: 1...3600)),
            addRequestQuota: try environment.quota("COLONY_CIRCLES_ADD_REQUEST_RATE", default: Quota(20, perSeconds: 3600))
        )
    }

    /// Twice the photo limit, so a photo somewhat over it gets the bucket's clear 422.
    public var maxUploadBytes: Int { 2 * maxPhotoBytes }
}

/// The circles service: MyCirclee's circles, ephemeral posts, DMs and presence.
public enum CirclesService {
    public static var migrations: [Migration] { CirclesMigrations.all }

    /// What circles counts for the console's Overview: posts created per day (`posts_created`).
    /// Posts expire after 24 hours and are deleted: only those still there are counted.
    public static let consoleStats = [
        ConsoleStat(name: "posts", app: .mycirclee, sql: "SELECT (created_at AT TIME ZONE 'UTC')::date, count(*) FROM posts WHERE created_at >= $1 AND created_at < $2 GROUP BY 1"),
    ]

    public static func definition(settings: CirclesSettings, storage: Storage) -> ServiceDefinition {
        let media = PostMedia(settings: settings, storage: storage)
        let export = CirclesExport.plan(photos: media.photos)
        var definition = ServiceDefinition(
            migrations: CirclesMigrations.all,
            consumes: EventCatalogue.subscriptions(of: .circles),
            handleEvent: { event, connection, context in
                try await AuthEventHandler(circles: Circles(outbox: context.outbox, media: media, addRequestQuota: settings.addRequestQuota, logger: context.logger)).handle(event, on: connection)
                try await UserExportWriter(backend: storage.backend, logger: context.logger).handle(event, plan: export, app: .mycirclee, on: connection)
            },
            jobs: { context in [
                ScheduledJob(name: "circles.expire_posts", interval: settings.expiryInterval) { database, logger in
                    _ = try await Posts(outbox: context.outbox, media: media, logger: logger).expire(database: database)
                },
                ScheduledJob(name: "circles.sweep_quotas", interval: .seconds(3600)) { database, logger in
                    try await database.withConnection { try await Quotas(logger: logger).sweep(on: $0) }
                },
            ] },
            consoleStats: consoleStats,
            consoleHoldings: export.consoleHoldings,
            addRoutes: { router, context in
                // Post photos (`{circle_id}/{post_id}`) are for the circle's members.
                let members = StorageAccess.firstSegment { user, circle in
                    try await context.database.withConnection { connection in
                        try await CircleStore(logger: context.logger).isMember(circle, userID: user, on: connection)
                    }
                }
                storage.addRoutes(to: router, buckets: [media.photos], tokenMiddleware: context.tokenMiddleware, access: [media.photos.name: members])
                try CirclesAPI(
                    database: context.database,
                    profiles: Profiles(logger: context.logger),
                    circles: Circles(outbox: context.outbox, media: media, addRequestQuota: settings.addRequestQuota, logger: context.logger),
                    posts: Posts(outbox: context.outbox, media: media, logger: context.logger),
                    messages: DirectMessages(outbox: context.outbox, media: media, logger: context.logger),
                    presence: Presence(outbox: context.outbox, media: media, logger: context.logger),
                    reports: try context.requiredReports()
                ).register(on: router, context: context, uploadLimit: settings.maxUploadBytes)
                InternalMemberRoutes.add(to: router, context: context)
                InternalEventPostRoutes.add(to: router, context: context)
            }
        )
        // Posts, DMs and profiles can be reported; the console's moderation routes come with it.
        definition.reports = { context in CirclesReportables(outbox: context.outbox, media: media, logger: context.logger) }
        return definition
    }

    public static var openAPIDocument: OpenAPIDocument { OpenAPIDocument(bytes: PackageResources.openapi_json) }
}
