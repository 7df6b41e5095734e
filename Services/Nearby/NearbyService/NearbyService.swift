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

    public init(radiusFeet: Int = 500, maxRadiusFeet: Int = 5280, locationTTLSeconds: Int = 600, jobInterval: Duration = .seconds(60), maxPhotoBytes: Int = 5 << 20) {
        self.radiusFeet = radiusFeet
        self.maxRadiusFeet = maxRadiusFeet
        self.locationTTLSeconds = locationTTLSeconds
        self.jobInterval = jobInterval
        self.maxPhotoBytes = maxPhotoBytes
    }

    /// `COLONY_NEARBY_RADIUS_FEET` (500), `COLONY_NEARBY_MAX_RADIUS_FEET` (5280),
    /// `COLONY_NEARBY_LOCATION_TTL_SECONDS` (600), `COLONY_NEARBY_JOB_INTERVAL_SECONDS` (60),
    /// `COLONY_NEARBY_MAX_PHOTO_BYTES` (5 MiB).
    public static func load(environment: EnvironmentReader) throws(ConfigurationError) -> NearbySettings {
        let maxRadius = try environment.int("COLONY_NEARBY_MAX_RADIUS_FEET", default: 5280, range: 1...52_800)
        return NearbySettings(
            radiusFeet: try environment.int("COLONY_NEARBY_RADIUS_FEET", default: 500, range: 1...maxRadius),
            maxRadiusFeet: maxRadius,
            locationTTLSeconds: try environment.int("COLONY_NEARBY_LOCATION_TTL_SECONDS", default: 600, range: 10...86_400),
            jobInterval: .seconds(try environment.int("COLONY_NEARBY_JOB_INTERVAL_SECONDS", default: 60, range: 1...3600)),
            maxPhotoBytes: try environment.int("COLONY_NEARBY_MAX_PHOTO_BYTES", default: 5 << 20, range: 1024...(64 << 20))
        )
    }

    /// Twice the photo limit, so a photo somewhat over it gets the bucket's clear 422.
    public var maxBodyBytes: Int { 2 * maxPhotoBytes }

    /// Profile photos, as `{user_id}`.
    var photos: StorageBucket { .images("profile-photos", maxBytes: maxPhotoBytes) }
}

/// The nearby service: SocialSpot's profiles, location sharing and people within 500 feet.
public enum NearbyService {
    public static var migrations: [Migration] { NearbyMigrations.all }
    /// The Postgres extensions its schema needs (created by `colony-admin provision`).
    public static let extensions = ["postgis"]

    public static func definition(settings: NearbySettings, storage: Storage, catalog: RouteCatalog = RouteCatalog()) -> ServiceDefinition {
        let photos = settings.photos
        @Sendable func nearby(_ context: ServiceContext, _ logger: Logger? = nil) -> Nearby {
            Nearby(outbox: context.outbox, storage: storage, photos: photos, settings: settings, logger: logger ?? context.logger)
        }
        return ServiceDefinition(
            migrations: NearbyMigrations.all,
            consumes: EventCatalogue.subscriptions(of: .nearby),
            handleEvent: { event, connection, context in
                try await AuthEventHandler(nearby: nearby(context)).handle(event, on: connection)
            },
            jobs: { context in [
                ScheduledJob(name: "nearby.expire_locations", interval: settings.jobInterval) { database, logger in
                    _ = try await nearby(context, logger).expireLocations(database: database)
                },
            ] },
            addRoutes: { router, context in
                storage.addRoutes(to: router, buckets: [photos])
                NearbyRoutes(support: RouteSupport(database: context.database), nearby: nearby(context), uploadLimit: settings.maxBodyBytes)
                    .add(to: router, tokenMiddleware: context.tokenMiddleware, catalog: catalog)
            }
        )
    }

    public static var openAPIDocument: OpenAPIDocument { OpenAPIDocument(bytes: PackageResources.openapi_json) }
}
