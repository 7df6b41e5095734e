import ColonyModels
import ColonyPlatform
import Foundation
import Hummingbird

/// The Overview: per app the operator works on, sign-ups per day, daily and monthly active users,
/// content created per day and pushes sent and failed (charts drawn on the server, `SVGChart`),
/// from each service's counts (`StatsAdminRoutes`); and the platform at a glance (readiness,
/// broker, outbox, lag, dead letters) from what the Pipeline page gathers. A service that does
/// not answer is named on the page; the page itself always answers.
struct OverviewRoutes {
    let web: ConsoleWeb
    let pipeline: PipelineRoutes
    /// Every service asked for its counts.
    let services: [PipelineClient]
    static let days = 30
    /// How long the page waits for one service (its counts, its pipeline state). A service whose
    /// port refuses connections is otherwise waited on for `ConsoleHTTP`'s whole 30 s: the
    /// HTTP client keeps trying to connect until the request's deadline.
    static let patience = Duration.seconds(10)

    /// The services whose counts the page shows: those the console knows (`COLONY_CONSOLE_SERVICE_URLS`),
    /// and auth at `COLONY_CONSOLE_AUTH_URL` when they leave it out (sign-ups and active users are its).
    static func statsClients(_ pipelines: [PipelineClient], settings: ConsoleSettings, key: InternalKey?) -> [PipelineClient] {
        guard !pipelines.contains(where: { $0.service == .auth }) else { return pipelines }
        return [PipelineClient(service: .auth, baseURL: settings.authURL, key: key)] + pipelines
    }

    func add(to group: RouterGroup<ColonyRequestContext>) {
        group.get("overview", use: web.page(overview))
    }

    /// One service's counts, or why there are none.
    struct Counts: Sendable {
        var service: ColonyService
        var stats: StatsAdminRoutes.Stats?
        var problem: String?
    }

    /// Every service's counts, asked at once; `app` when the page shows one app only (the others'
    /// statements are then not run).
    func counts(for actor: SignedInOperator, app: App?) async -> [Counts] {
        await withTaskGroup(of: Counts.self) { group in
            for client in services {
                group.addTask {
                    let answer = await Self.within(Self.patience) {
                        do {
                            return Counts(service: client.service, stats: try await client.stats(days: Self.days, app: app, operatorEmail: actor.email))
                        } catch {
                            return Counts(service: client.service, stats: nil, problem: "\(error)")
                        }
                    }
                    return answer ?? Counts(service: client.service, stats: nil, problem: "no answer within \(Self.patience)")
                }
            }
            var all: [Counts] = []
            for await counts in group { all.append(counts) }
            let order = ColonyService.allCases
            return all.sorted { (order.firstIndex(of: $0.service) ?? 0) < (order.firstIndex(of: $1.service) ?? 0) }
        }
    }

    @Sendable func overview(_ request: Request, context: ColonyRequestContext) async throws -> Response {
        let actor = try await web.signedIn(request, context)
        guard actor.rights.allows(.viewOverview) else { throw ConsoleRefusal(.forbidden, "Your role does not show the overview.") }
        var apps = actor.rights.visibleApps
        var chosen: App?
        if let name = request.uri.queryParameters.get("app"), !name.isEmpty {
            guard let app = App(rawValue: name) else { throw ConsoleRefusal(.notFound, "There is no such app.") }
            guard actor.rights.covers(app) else { throw ConsoleRefusal(.forbidden, "Your rights do not cover \(app.rawValue).") }
            apps = [app]
            chosen = app
        }
        let showPlatform = actor.rights.allows(.viewPipeline)
        async let platform = platformStates(for: actor, show: showPlatform)
        let answers = await counts(for: actor, app: apps.count == 1 ? apps.first : nil)
        let window = StatsAdminRoutes.Window(days: Self.days, now: Date())

        var values = web.layout(actor, title: "Overview", section: "overview")
        values["days"] = Self.days
        values["from"] = window.first.description
        values["to"] = window.last.description
        values["show_app_links"] = actor.rights.visibleApps.count > 1
        values["all_selected"] = chosen == nil
        values["app_links"] = actor.rights.visibleApps.map { app -> [String: Any] in
            ["app": app.rawValue, "title": Self.title(of: app), "selected": chosen == app]
        }
        values["problems"] = answers.compactMap { answer -> [String: Any]? in
            answer.problem.map { ["service": answer.service.rawValue, "problem": $0] }
        }
        values["apps"] = apps.map { app in Self.section(for: app, answers: answers) }
        values["show_platform"] = showPlatform
        values["services"] = await platform.map(Self.platformRow)
        return web.pages.render("overview", values)
    }

    /// The Pipeline page's states without their dead letters' list (the counts are enough here),
    /// each service's within `patience`: one that does not answer in time is shown as such.
    func platformStates(for actor: SignedInOperator, show: Bool) async -> [PipelineRoutes.ServiceState] {
        guard show else { return [] }
        return await withTaskGroup(of: PipelineRoutes.ServiceState.self) { group in
            for client in pipeline.services {
                group.addTask {
                    let one = PipelineRoutes(web: pipeline.web, services: [client])
                    let state = await Self.within(Self.patience) { await one.states(for: actor, listDeadLetters: false).first }
                    return state.flatMap { $0 } ?? PipelineRoutes.ServiceState(service: client.service, ready: false, pipeline: nil, deadLetters: [],
                                                                               problem: "no answer within \(Self.patience)")
                }
            }
            var states: [PipelineRoutes.ServiceState] = []
            for await state in group { states.append(state) }
            let order = ColonyService.allCases
            return states.sorted { (order.firstIndex(of: $0.service) ?? 0) < (order.firstIndex(of: $1.service) ?? 0) }
        }
    }

    /// `body`'s value, or nil when it has not finished within `limit` (it is then cancelled: the
    /// HTTP client gives up the request).
    static func within<Value: Sendable>(_ limit: Duration, _ body: @escaping @Sendable () async -> Value) async -> Value? {
        await withTaskGroup(of: Value?.self) { group in
            group.addTask { await body() }
            group.addTask {
                try? await Task.sleep(for: limit)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }

    /// One app's numbers and charts, from whatever services answered.
    static func section(for app: App, answers: [Counts]) -> [String: Any] {
        var series: [(service: ColonyService, series: StatsAdminRoutes.Series)] = []
        var totals: [String: Int64] = [:]
        for answer in answers {
            guard let stats = answer.stats else { continue }
            series += stats.series.filter { $0.app == app }.map { (answer.service, $0) }
            for total in stats.totals where total.app == app { totals[total.name] = total.count }
        }
        func named(_ name: String) -> StatsAdminRoutes.Series? { series.first { $0.series.name == name }?.series }
        func sum(_ name: String) -> String { named(name).map { "\($0.points.reduce(Int64(0)) { $0 &+ $1.count })" } ?? "unavailable" }
        let authAnswered = answers.contains { $0.service == .auth && $0.stats != nil }
        let ordered = series.enumerated().sorted { (rank($0.element.series.name), $0.offset) < (rank($1.element.series.name), $1.offset) }.map(\.element.series)
        return [
            "app": app.rawValue,
            "title": title(of: app),
            "signups": sum("signups"),
            "dau": named("active_users").flatMap { $0.points.last.map { "\($0.count)" } } ?? "unavailable",
            "mau": totals["active_users"].map { "\($0)" } ?? (authAnswered ? "0" : "unavailable"),
            "pushes_sent": sum("pushes_sent"),
            "pushes_failed": sum("pushes_failed"),
            "charts": ordered.map { chart($0, app: app) },
        ]
    }

    static func chart(_ series: StatsAdminRoutes.Series, app: App) -> [String: Any] {
        let name = seriesTitle(series.name)
        let chart = SVGChart(title: "\(name) per day, \(title(of: app)), the last \(series.points.count) days", points: series.points.map {
            SVGChart.Point(label: $0.day.description, count: $0.count)
        })
        return [
            "app": app.rawValue, "name": series.name, "title": "\(name) per day",
            "total": series.points.reduce(Int64(0)) { $0 &+ $1.count }, "max": chart.maximum, "svg": chart.svg,
        ]
    }

    /// Sign-ups and active users first, the app's content next, pushes last.
    static func rank(_ name: String) -> Int {
        switch name {
        case "signups": 0
        case "active_users": 1
        case _ where name.hasPrefix("pushes_"): 3
        default: 2
        }
    }

    static func seriesTitle(_ name: String) -> String {
        switch name {
        case "signups": "Sign-ups"
        case "active_users": "Active users"
        case "logs": "Habit logs"
        case "pushes_sent": "Pushes sent"
        case "pushes_failed": "Pushes failed"
        default:
            name.replacingOccurrences(of: "_", with: " ").prefix(1).uppercased() + name.replacingOccurrences(of: "_", with: " ").dropFirst()
        }
    }

    static func title(of app: App) -> String {
        switch app {
        case .mycirclee: "MyCirclee"
        case .unify: "Unify"
        case .habithive: "HabitHive"
        case .socialspot: "SocialSpot"
        case .ibelieveinyou: "I Believe In You"
        }
    }

    /// A service's row in the platform table: the Pipeline page's state, summed up.
    static func platformRow(_ state: PipelineRoutes.ServiceState) -> [String: Any] {
        var row: [String: Any] = ["service": state.service.rawValue, "ready": state.ready, "problem": state.problem ?? ""]
        if let pipeline = state.pipeline {
            row["answered"] = true
            row["broker_ok"] = pipeline.broker == "ok"
            row["outbox_pending"] = pipeline.outbox.pending
            row["lag_total"] = pipeline.consumers.reduce(Int64(0)) { $0 &+ $1.lag }
            row["dead_letters"] = pipeline.deadLetters.publish + pipeline.deadLetters.consume
        }
        return row
    }
}

extension PipelineClient {
    /// The service's counts (`StatsAdminRoutes`), for `app` only when one is named.
    func stats(days: Int, app: App?, operatorEmail: String) async throws -> StatsAdminRoutes.Stats {
        try await http.call(.GET, "\(StatsAdminRoutes.statsPath)?days=\(days)", app: app, operatorEmail: operatorEmail, as: StatsAdminRoutes.Stats.self)
    }
}
