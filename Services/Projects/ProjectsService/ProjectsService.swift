import ColonyModels
import ColonyPlatform
import ColonyStorage
import Foundation
import Hummingbird
import Logging

/// The projects service's own settings, from the environment.
public struct ProjectsSettings: Sendable {
    /// Avatars, covers and post pictures.
    public var maxImageBytes: Int
    /// At most this many support messages per sender within `supportWindowSeconds`.
    public var supportMessageLimit: Int
    public var supportWindowSeconds: Int
    /// How long an uploaded post picture waits for a post before the job deletes it.
    public var uploadTTLSeconds: Int
    public var jobInterval: Duration

    public init(maxImageBytes: Int = 5 << 20, supportMessageLimit: Int = 10, supportWindowSeconds: Int = 3600, uploadTTLSeconds: Int = 86_400,
                jobInterval: Duration = .seconds(3600)) {
        self.maxImageBytes = maxImageBytes
        self.supportMessageLimit = supportMessageLimit
        self.supportWindowSeconds = supportWindowSeconds
        self.uploadTTLSeconds = uploadTTLSeconds
        self.jobInterval = jobInterval
    }

    /// `COLONY_PROJECTS_MAX_IMAGE_BYTES` (5 MiB), `COLONY_PROJECTS_SUPPORT_LIMIT` (10) per
    /// `COLONY_PROJECTS_SUPPORT_WINDOW_SECONDS` (3600), `COLONY_PROJECTS_UPLOAD_TTL_SECONDS`
    /// (86400), `COLONY_PROJECTS_JOB_INTERVAL_SECONDS` (3600).
    public static func load(environment: EnvironmentReader) throws(ConfigurationError) -> ProjectsSettings {
        ProjectsSettings(
            maxImageBytes: try environment.int("COLONY_PROJECTS_MAX_IMAGE_BYTES", default: 5 << 20, range: 1024...(64 << 20)),
            supportMessageLimit: try environment.int("COLONY_PROJECTS_SUPPORT_LIMIT", default: 10, range: 1...10_000),
            supportWindowSeconds: try environment.int("COLONY_PROJECTS_SUPPORT_WINDOW_SECONDS", default: 3600, range: 1...604_800),
            uploadTTLSeconds: try environment.int("COLONY_PROJECTS_UPLOAD_TTL_SECONDS", default: 86_400, range: 60...2_592_000),
            jobInterval: .seconds(try environment.int("COLONY_PROJECTS_JOB_INTERVAL_SECONDS", default: 3600, range: 1...86_400))
        )
    }

    /// Twice the picture limit, so a picture somewhat over it gets the bucket's clear 422.
    public var maxUploadBytes: Int { 2 * maxImageBytes }
}

/// The projects service: I Believe In You's builders, projects, posts, milestones, follows,
/// likes, support messages and karma.
public enum ProjectsService {
    public static var migrations: [Migration] { ProjectsMigrations.all }

    /// What projects counts for the console's Overview: projects (drafts included) and their
    /// update posts created per day (`projects_created`, `posts_created`).
    public static let consoleStats = [
        ConsoleStat(name: "projects", app: .ibelieveinyou, sql: "SELECT (created_at AT TIME ZONE 'UTC')::date, count(*) FROM projects WHERE created_at >= $1 AND created_at < $2 GROUP BY 1"),
        ConsoleStat(name: "posts", app: .ibelieveinyou, sql: "SELECT (created_at AT TIME ZONE 'UTC')::date, count(*) FROM posts WHERE created_at >= $1 AND created_at < $2 GROUP BY 1"),
    ]
    public static func definition(settings: ProjectsSettings, storage: Storage) -> ServiceDefinition {
        let media = ProjectsMedia(storage: storage, maxImageBytes: settings.maxImageBytes)
        @Sendable func posts(_ context: ServiceContext, _ logger: Logger? = nil) -> Posts {
            Posts(outbox: context.outbox, media: media, uploadTTLSeconds: settings.uploadTTLSeconds, logger: logger ?? context.logger)
        }
        @Sendable func messages(_ context: ServiceContext) -> SupportMessages {
            SupportMessages(outbox: context.outbox, media: media, limit: settings.supportMessageLimit, windowSeconds: settings.supportWindowSeconds,
                            logger: context.logger)
        }
        @Sendable func reportables(_ context: ServiceContext) -> ProjectsReportables {
            ProjectsReportables(projects: Projects(outbox: context.outbox, media: media, logger: context.logger), posts: posts(context),
                                messages: messages(context), logger: context.logger)
        }
        var definition = ServiceDefinition(
            migrations: ProjectsMigrations.all,
            consumes: EventCatalogue.subscriptions(of: .projects),
            handleEvent: { event, connection, context in
                let projects = Projects(outbox: context.outbox, media: media, logger: context.logger)
                try await AuthEventHandler(builders: projects.builders, projects: projects).handle(event, on: connection)
                try await UserExportWriter(backend: storage.backend, logger: context.logger).handle(event, plan: ProjectsExport.plan(media: media), app: .ibelieveinyou, on: connection)
            },
            jobs: { context in [
                ScheduledJob(name: "projects.expire_uploads", interval: settings.jobInterval) { database, logger in
                    _ = try await posts(context, logger).expireUploads(database: database)
                },
            ] },
            consoleStats: consoleStats,
            consoleHoldings: ProjectsExport.plan(media: media).consoleHoldings,
            addRoutes: { router, context in
                storage.addRoutes(to: router, buckets: media.buckets, tokenMiddleware: context.tokenMiddleware)
                try ProjectsAPI(
                    database: context.database,
                    builders: Builders(outbox: context.outbox, media: media, logger: context.logger),
                    projects: Projects(outbox: context.outbox, media: media, logger: context.logger),
                    posts: posts(context),
                    milestones: Milestones(outbox: context.outbox, media: media, logger: context.logger),
                    messages: messages(context),
                    reportDesk: try context.requiredReports()
                ).register(on: router, context: context, uploadLimit: settings.maxUploadBytes)
            }
        )
        // Reports of projects, posts, support messages and builders: `POST /reports` and the console's moderation routes.
        definition.reports = { context in reportables(context) }
        return definition
    }

    public static var openAPIDocument: OpenAPIDocument { OpenAPIDocument(bytes: PackageResources.openapi_json) }
}

/// The SQL of the service's hot paths as it runs them (prepared, `$n` parameters), for the
/// benchmark's pgbench baseline: the feed page, and a follow's three statements.
public enum ProjectsStatements {
    /// A feed page of the default size: `$1` user, `$2` cursor time in microseconds since 1970,
    /// `$3` cursor post id.
    public static var feedPage: String { FeedPage.sql }
    public static var feedPageSize: Int { FeedPage.pageSize }
    /// The cursor values of the first page.
    public static var firstPage: (micros: Int64, id: UUID) { (Cursor.start.value, Cursor.start.id) }
    /// `$1` user, `$2` new builder id, `$3` new karma id, `$4` default name.
    public static var ensureBuilder: String { EnsureBuilder.sql }
    /// `$1` project, `$2` viewer.
    public static var projectByID: String { ProjectByID.sql }
    /// `$1` user, `$2` project, `$3` follow id, `$4` support action id, `$5` karma points.
    public static var follow: String { FollowProject.sql }
}
