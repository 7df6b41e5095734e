import ColonyModels
import ColonyPlatform
import ColonyStorage
import Foundation
import Hummingbird
import Logging

/// The circles service's own settings, from the environment.
public struct CirclesSettings: Sendable {
    public var maxPhotoBytes: Int
    /// How long a post photo's signed URL stays valid.
    public var photoURLLifetime: Duration
    /// How often expired posts are deleted.
    public var expiryInterval: Duration

    public init(maxPhotoBytes: Int = 5 << 20, photoURLLifetime: Duration = .seconds(3600), expiryInterval: Duration = .seconds(60)) {
        self.maxPhotoBytes = maxPhotoBytes
        self.photoURLLifetime = photoURLLifetime
        self.expiryInterval = expiryInterval
    }

    /// `COLONY_CIRCLES_MAX_PHOTO_BYTES` (5 MiB), `COLONY_CIRCLES_PHOTO_URL_SECONDS` (3600),
    /// `COLONY_CIRCLES_EXPIRY_INTERVAL_SECONDS` (60).
    public static func load(environment: EnvironmentReader) throws(ConfigurationError) -> CirclesSettings {
        CirclesSettings(
            maxPhotoBytes: try environment.int("COLONY_CIRCLES_MAX_PHOTO_BYTES", default: 5 << 20, range: 1024...(64 << 20)),
            photoURLLifetime: .seconds(try environment.int("COLONY_CIRCLES_PHOTO_URL_SECONDS", default: 3600, range: 60...604_800)),
            expiryInterval: .seconds(try environment.int("COLONY_CIRCLES_EXPIRY_INTERVAL_SECONDS", default: 60, range: 1...3600))
        )
    }

    /// Twice the photo limit, so a photo somewhat over it gets the bucket's clear 422.
    public var maxBodyBytes: Int { 2 * maxPhotoBytes }
}

/// The circles service: MyCirclee's circles, ephemeral posts, DMs and presence.
public enum CirclesService {
    public static var migrations: [Migration] { CirclesMigrations.all }

    public static func definition(settings: CirclesSettings, storage: Storage, catalog: RouteCatalog = RouteCatalog()) -> ServiceDefinition {
        let media = PostMedia(settings: settings, storage: storage)
        return ServiceDefinition(
            migrations: CirclesMigrations.all,
            consumes: EventCatalogue.subscriptions(of: .circles),
            handleEvent: { event, connection, context in
                try await AuthEventHandler(circles: Circles(outbox: context.outbox, media: media, logger: context.logger)).handle(event, on: connection)
            },
            jobs: { context in [
                ScheduledJob(name: "circles.expire_posts", interval: settings.expiryInterval) { database, logger in
                    _ = try await Posts(outbox: context.outbox, media: media, logger: logger).expire(database: database)
                },
            ] },
            addRoutes: { router, context in
                storage.addRoutes(to: router, buckets: [media.photos])
                CirclesRoutes(
                    support: RouteSupport(database: context.database),
                    profiles: Profiles(logger: context.logger),
                    circles: Circles(outbox: context.outbox, media: media, logger: context.logger),
                    posts: Posts(outbox: context.outbox, media: media, logger: context.logger),
                    messages: DirectMessages(outbox: context.outbox, media: media, logger: context.logger),
                    presence: Presence(outbox: context.outbox, media: media, logger: context.logger),
                    uploadLimit: settings.maxBodyBytes
                ).add(to: router, tokenMiddleware: context.tokenMiddleware, catalog: catalog)
            }
        )
    }

    public static var openAPIDocument: OpenAPIDocument { OpenAPIDocument(bytes: PackageResources.openapi_json) }
}
