import AsyncHTTPClient
import ColonyModels
import ColonyTesting
import Foundation
import Hummingbird
import NIOHTTP1
import PostgresNIO
import Testing

@testable import ColonyPlatform

/// The console's stats route every service gets from `ServiceHost`: what a service declares it
/// counts (`ConsoleStat`), per app and UTC day, zeros filled in, and who may ask.
@Suite("Stats admin route for the console")
struct StatsAdminRoutesTests {
    static let operatorEmail = "ops@colony.test"
    let consoleKey = InternalKey(PipelineAdminRoutesTests.randomKey())

    var console: [(String, String)] { ConsoleCaller.headers(key: consoleKey, operatorEmail: Self.operatorEmail, app: nil) }

    /// A tiny service with `things` (per app, with a creation time and an owner): things per day
    /// for two apps, and the distinct owners over the window for one.
    func thingsDefinition() -> ServiceDefinition {
        func daily(_ app: App) -> ConsoleStat {
            ConsoleStat(name: "things", app: app, sql: """
                SELECT (created_at AT TIME ZONE 'UTC')::date, count(*) FROM things
                WHERE app = '\(app.rawValue)' AND created_at >= $1 AND created_at < $2 GROUP BY 1
                """)
        }
        return ServiceDefinition(
            migrations: [Migration(version: 1, name: "things", sql: """
                CREATE TABLE things (app text NOT NULL, owner int NOT NULL, created_at timestamptz NOT NULL);
                CREATE INDEX things_app_created ON things (app, created_at);
                """)],
            consoleStats: [
                daily(.habithive),
                daily(.unify),
                ConsoleStat(name: "owners", app: .habithive, kind: .window,
                            sql: "SELECT count(DISTINCT owner) FROM things WHERE app = 'habithive' AND created_at >= $1 AND created_at < $2"),
            ],
            addRoutes: { _, _ in }
        )
    }

    func stats(_ service: RunningService, _ query: String = "", headers: [(String, String)]? = nil) async throws -> RunningService.Reply {
        try await service.request(.GET, "\(service.base)\(StatsAdminRoutes.statsPath)\(query)", as: nil, headers: headers ?? console)
    }

    @Test("rows on three days of a week give a point for each of its days, oldest first, zeros between; other apps and older rows are left out; a window count is distinct")
    func seriesWithZeros() async throws {
        try await withRunningService(.habits, app: .habithive, apiPrefix: "/habits/v1", configure: { $0.consoleKey = consoleKey },
                                     definition: { _ in thingsDefinition() }) { service in
            let today = LocalDate.utcDay(of: Date())
            func at(_ daysAgo: Int, hour: Int) -> Date {
                Date(timeIntervalSince1970: TimeInterval(today.adding(days: -daysAgo).dayNumber) * 86_400 + TimeInterval(hour * 3600))
            }
            // habithive: 2 six days ago (one at 23:00 UTC, still that day), 1 three days ago, 3 today
            // (just after midnight UTC); 1 eight days ago, outside a week. unify: 4 two days ago.
            let rows: [(App, Int, Date)] = [
                (.habithive, 1, at(6, hour: 1)), (.habithive, 2, at(6, hour: 23)), (.habithive, 1, at(3, hour: 12)),
                (.habithive, 1, at(0, hour: 0)), (.habithive, 2, at(0, hour: 0)), (.habithive, 3, at(0, hour: 0)),
                (.habithive, 9, at(8, hour: 12)),
            ] + (0..<4).map { _ in (App.unify, 5, at(2, hour: 6)) }
            try await service.withDatabase { database in
                for (app, owner, created) in rows {
                    try await database.query("INSERT INTO things (app, owner, created_at) VALUES (\(app.rawValue), \(owner), \(created))")
                }
            }

            let reply = try await stats(service, "?days=7")
            #expect(reply.status == 200, "\(reply.body)")
            let answer = try ColonyJSON.decoder().decode(StatsAdminRoutes.Stats.self, from: Data(buffer: reply.bytes))
            #expect(answer.service == "habits" && answer.days == 7)
            #expect(answer.from == today.adding(days: -6) && answer.to == today)
            #expect(answer.series.map(\.app) == [.habithive, .unify] && answer.series.allSatisfy { $0.name == "things" })
            let habithive = try #require(answer.series.first)
            #expect(habithive.points.map(\.day) == (0...6).map { today.adding(days: $0 - 6) }, "a point a day, oldest first")
            #expect(habithive.points.map(\.count) == [2, 0, 0, 1, 0, 0, 3])
            #expect(answer.series.last?.points.map(\.count) == [0, 0, 0, 0, 4, 0, 0])
            #expect(answer.totals == [StatsAdminRoutes.Total(name: "owners", app: .habithive, count: 3)], "distinct owners over the week, not a sum of days")
            // The JSON as documented: days as YYYY-MM-DD, counts as numbers.
            let point = reply.body["series"]?.arrayValue?.first?["points"]?.arrayValue?.last
            #expect(point == .object(["day": .string(today.description), "count": .number(3)]), "\(reply.body)")

            // Thirty days by default; the row eight days ago is now in.
            let month = try ColonyJSON.decoder().decode(StatsAdminRoutes.Stats.self, from: Data(buffer: try await stats(service).bytes))
            #expect(month.days == 30 && month.series.first?.points.count == 30)
            #expect(month.series.first?.points.reduce(0) { $0 + $1.count } == 7)
            #expect(month.totals.first?.count == 4)

            // The console names one app: only its counts.
            let one = try await stats(service, "?days=1", headers: ConsoleCaller.headers(key: consoleKey, operatorEmail: Self.operatorEmail, app: .unify))
            let unify = try ColonyJSON.decoder().decode(StatsAdminRoutes.Stats.self, from: Data(buffer: one.bytes))
            #expect(unify.series.map(\.app) == [.unify] && unify.totals.isEmpty && unify.series.first?.points.map(\.count) == [0])
        }
    }

    @Test("only the console's credential is taken; days must be a whole number from 1 to 90 (400 otherwise, never 500); a service that counts nothing answers empty lists")
    func refusals() async throws {
        try await withRunningService(.habits, app: .habithive, apiPrefix: "/habits/v1", configure: { $0.consoleKey = consoleKey },
                                     definition: { _ in thingsDefinition() }) { service in
            let user = try await service.user()
            let operatorHeader = [("X-Colony-Operator", Self.operatorEmail)]
            for (what, headers, caller) in [
                ("no credential", operatorHeader, nil),
                ("a user's token", operatorHeader, user),
                ("a wrong console key", ConsoleCaller.headers(key: InternalKey(PipelineAdminRoutesTests.randomKey()), operatorEmail: Self.operatorEmail, app: nil), nil),
            ] as [(String, [(String, String)], RunningService.User?)] {
                let reply = try await service.request(.GET, "\(service.base)\(StatsAdminRoutes.statsPath)", as: caller, headers: headers)
                #expect(reply.status == 401 && reply.code == "invalid_console_credential", "\(what): \(reply.status) \(reply.body)")
            }
            let noOperator = try await stats(service, headers: [("Authorization", consoleKey.authorization)])
            #expect(noOperator.status == 400 && noOperator.code == "operator_required")
            let unknownApp = try await stats(service, headers: console + [("X-Colony-App", "nope")])
            #expect(unknownApp.status == 400 && unknownApp.code == "unknown_app")

            for days in ["0", "91", "-1", "+5", "1.5", "abc", "", "1e1", "99999999999999999999", "%20"] {
                let reply = try await stats(service, "?days=\(days)")
                #expect(reply.status == 400 && reply.code == "invalid_days", "days=\(days): \(reply.status) \(reply.body)")
            }
            for days in [1, 90] {
                let reply = try await stats(service, "?days=\(days)")
                #expect(reply.status == 200 && reply.body["series"]?.arrayValue?.first?["points"]?.arrayValue?.count == days, "days=\(days): \(reply.status)")
            }

            // Without stats (realtime, the console): empty lists, not an error.
            try await withRunningTwin(of: service, .habits, configure: { $0.consoleKey = consoleKey },
                                      definition: { _ in ServiceDefinition(migrations: thingsDefinition().migrations, addRoutes: { _, _ in }) }) { twin in
                let reply = try await twin.request(.GET, "\(twin.base)\(StatsAdminRoutes.statsPath)", as: nil, headers: console)
                #expect(reply.status == 200 && reply.body["series"] == .array([]) && reply.body["totals"] == .array([]), "\(reply.body)")
            }
        }
    }

    @Test("the window ends today in UTC and fills the days a statement leaves out with zeros")
    func window() throws {
        // 2026-11-28 23:59:59 UTC.
        let now = Date(timeIntervalSince1970: 1_795_910_399)
        let window = StatsAdminRoutes.Window(days: 3, now: now)
        #expect(window.first.description == "2026-11-26" && window.last.description == "2026-11-28")
        #expect(window.start == Date(timeIntervalSince1970: 1_795_910_400 - 3 * 86_400) && window.end == Date(timeIntervalSince1970: 1_795_910_400))
        let points = window.fill([try #require(LocalDate("2026-11-27")): 5, try #require(LocalDate("2026-11-20")): 9])
        #expect(points.map(\.count) == [0, 5, 0] && points.map(\.day.description) == ["2026-11-26", "2026-11-27", "2026-11-28"])
        #expect(StatsAdminRoutes.Window(days: 1, now: now).days.count == 1)
    }
}
