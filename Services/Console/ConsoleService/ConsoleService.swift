import ColonyModels
import ColonyPlatform
import Foundation
import Hummingbird

/// The Colony Console (issue 38): the web console where app owners, support and operators run
/// the apps. Server-rendered pages under `/console/`, no script; operators are accounts of its
/// own with a password and a TOTP second factor; it reads and acts through the services' admin
/// routes (`COLONY_CONSOLE_KEY`), never their schemas; every action is in its audit log and
/// published as `operator_action`.
public enum ConsoleService {
    public static var migrations: [Migration] { ConsoleMigrations.all }

    public static func definition(settings: ConsoleSettings) -> ServiceDefinition {
        // bcrypt on threads of its own; one is plenty for a handful of operators.
        let hasher = PasswordHasher(cost: settings.bcryptCost, threads: 1)
        @Sendable func operators(_ context: ServiceContext) -> Operators {
            Operators(database: context.database, outbox: context.outbox, hasher: hasher, settings: settings, logger: context.logger)
        }
        return ServiceDefinition(
            migrations: migrations,
            jobs: { context in [
                // Ended and expired sessions are kept a day for the record, then deleted; old quota windows too.
                ScheduledJob(name: "console.sweep_sessions", interval: .seconds(3600)) { database, logger in
                    let cutoff = Date().addingTimeInterval(-TimeInterval(settings.absoluteTimeout.components.seconds) - 86_400)
                    try await database.withConnection { connection in
                        _ = try await SessionStore(logger: logger).sweep(olderThan: cutoff, on: connection)
                        try await Quotas(logger: logger).sweep(on: connection)
                    }
                },
            ] },
            services: { _ in [hasher] },
            addRoutes: { router, context in
                let operators = operators(context)
                let auth = AuthAdminClient(baseURL: settings.authURL, key: context.configuration.consoleKey)
                let pipelines = settings.serviceURLs.map { PipelineClient(service: $0.key, baseURL: $0.value, key: context.configuration.consoleKey) }
                let push = settings.serviceURLs[.notifications].map { PushClient(baseURL: $0, key: context.configuration.consoleKey) }
                let byService = Dictionary(uniqueKeysWithValues: pipelines.map { ($0.service, $0) })
                let users = UserAdministration(auth: auth, services: byService, operators: operators, logger: context.logger)
                let web = ConsoleWeb(
                    pages: try ConsolePages(),
                    operators: operators,
                    users: users,
                    push: PushSupport(push: push, operators: operators),
                    imports: ImportHistory(auth: auth),
                    moderation: Moderation(services: byService, users: users, operators: operators, logger: context.logger),
                    cookies: ConsoleCookies(secure: settings.cookieSecurity == .on, maxAge: SessionRules(idleTimeout: settings.idleTimeout, absoluteTimeout: settings.absoluteTimeout).cookieMaxAge)
                )
                let group = router.group("console")
                group.get("/", use: web.page { request, context in
                    _ = try await web.signedIn(request, context)
                    return ConsolePages.redirect("/console/overview")
                })
                group.get("static/console.css") { _, _ in web.pages.css() }
                SignInRoutes(web: web).add(to: group)
                UserRoutes(web: web).add(to: group)
                OperatorRoutes(web: web).add(to: group)
                AuditRoutes(web: web).add(to: group)
                PushRoutes(web: web).add(to: group)
                ImportRoutes(web: web).add(to: group)
                ModerationRoutes(web: web).add(to: group)
                let pipeline = PipelineRoutes(web: web, services: pipelines)
                pipeline.add(to: group)
                OverviewRoutes(web: web, pipeline: pipeline, services: OverviewRoutes.statsClients(pipelines, settings: settings, key: context.configuration.consoleKey)).add(to: group)
            }
        )
    }
}
