import ColonyModels
import Foundation
import Hummingbird
import Logging
import PostgresNIO

/// One thing a service counts for the Colony Console's Overview page, as plain SQL over its own
/// tables (`ServiceDefinition.consoleStats`). The statement gets `$1`, the start of the window's
/// first day, and `$2`, the end of its last day (today), both midnight UTC (timestamptz), and
/// should read only rows in `[$1, $2)` through an index on its time column.
///
/// - `.daily`: rows of (day `date`, count), one per day that has any, the day in UTC:
///   `SELECT (created_at AT TIME ZONE 'UTC')::date, count(*) FROM posts WHERE created_at >= $1
///   AND created_at < $2 GROUP BY 1`. The platform fills the days it leaves out with zeros.
/// - `.window`: one row, one count over the whole window: what a sum of days would overcount
///   (distinct users over 30 days).
///
/// The app is written into the statement by the service (an `App`'s name, never input).
public struct ConsoleStat: Sendable, Equatable {
    public enum Kind: String, Sendable, Equatable {
        case daily
        case window
    }

    public var name: String
    public var app: App
    public var kind: Kind
    public var sql: String

    public init(name: String, app: App, kind: Kind = .daily, sql: String) {
        self.name = name
        self.app = app
        self.kind = kind
        self.sql = sql
    }
}

/// `GET /internal/v1/console/stats?days=30` on every service (`ServiceHost` adds it beside the
/// pipeline routes): what the service counts for the console's Overview (`ConsoleStat`), per app
/// and day. Only the console's credential (`ConsoleCaller`); never routed by the gateway or the
/// Ingress (see `PipelineAdminRoutes`). Documented by `pipeline-admin.openapi.json`.
public enum StatsAdminRoutes {
    public static let statsPath = "\(PipelineAdminRoutes.prefix)/stats"
    public static let defaultDays = 30
    public static let dayRange = 1...90
    /// A count that takes longer is cut off (503 `stats_timeout`) rather than holding a connection.
    static let statementTimeout = "20s"

    /// The answer.
    public struct Stats: Codable, Sendable, Equatable {
        public var service: String
        public var days: Int
        /// The window's first and last day (today), UTC.
        public var from: LocalDate
        public var to: LocalDate
        /// One per daily stat: a point per day of the window, oldest first, zeros included.
        public var series: [Series]
        /// One per window stat: its count over the whole window.
        public var totals: [Total]
    }

    public struct Series: Codable, Sendable, Equatable {
        public var name: String
        public var app: App
        public var points: [Point]
    }

    public struct Point: Codable, Sendable, Equatable {
        public var day: LocalDate
        public var count: Int64
    }

    public struct Total: Codable, Sendable, Equatable {
        public var name: String
        public var app: App
        public var count: Int64
    }

    /// The days asked for, ending today (UTC): the bounds the statements get.
    public struct Window: Sendable, Equatable {
        public var first: LocalDate
        public var last: LocalDate

        public init(days: Int, now: Date) {
            last = LocalDate.utcDay(of: now)
            first = last.adding(days: -(max(1, days) - 1))
        }

        public var days: [LocalDate] { (0...last.days(since: first)).map { first.adding(days: $0) } }
        /// Midnight UTC starting the first day, and ending the last.
        public var start: Date { Date(timeIntervalSince1970: TimeInterval(first.dayNumber) * 86_400) }
        public var end: Date { Date(timeIntervalSince1970: TimeInterval(last.dayNumber + 1) * 86_400) }

        /// A point for every day of the window, oldest first: the counts found, else 0; days
        /// outside the window are ignored.
        public func fill(_ counts: [LocalDate: Int64]) -> [Point] {
            days.map { Point(day: $0, count: counts[$0] ?? 0) }
        }
    }

    static func add(to router: Router<ColonyRequestContext>, service: ColonyService, key: InternalKey?, database: Database, stats: [ConsoleStat],
                    now: @escaping @Sendable () -> Date = { Date() }) {
        router.get(RouterPath(statsPath)) { request, context -> Response in
            let caller = try ConsoleCaller.required(request, key: key)
            let days = try PipelineAdminRoutes.query(request, "days", code: "invalid_days", "days must be a whole number from \(dayRange.lowerBound) to \(dayRange.upperBound)") { text in
                // Digits only: `Int` would take "+5".
                guard !text.isEmpty, text.utf8.count <= 2, text.utf8.allSatisfy({ (48...57).contains($0) }), let days = Int(text), dayRange.contains(days) else { return nil }
                return days
            } ?? defaultDays
            // The console names the app when it shows one: the other apps' statements are not run.
            let chosen = caller.app.map { app in stats.filter { $0.app == app } } ?? stats
            let window = Window(days: days, now: now())
            let (series, totals) = try await PipelineAdminRoutes.reading {
                try await counting {
                    try await database.transaction { connection in
                        try await count(chosen, window: window, on: connection, logger: context.logger)
                    }
                }
            }
            let answer = Stats(service: service.rawValue, days: days, from: window.first, to: window.last, series: series, totals: totals)
            return try RouteSupport.json(answer, status: .ok)
        }
    }

    /// Runs the statements in one read-only transaction with a time limit: a slow count cannot
    /// hold the service's connection, and no statement can write.
    static func count(_ stats: [ConsoleStat], window: Window, on connection: PostgresConnection, logger: Logger) async throws -> ([Series], [Total]) {
        try await connection.query("SET TRANSACTION READ ONLY", logger: logger)
        try await connection.query(PostgresQuery(unsafeSQL: "SET LOCAL statement_timeout = '\(statementTimeout)'"), logger: logger)
        var series: [Series] = [], totals: [Total] = []
        for stat in stats {
            var binds = PostgresBindings()
            binds.append(window.start)
            binds.append(window.end)
            switch stat.kind {
            case .daily:
                // The casts take whatever the statement returns (date or timestamp, int or bigint).
                let query = PostgresQuery(unsafeSQL: "SELECT s.day::date, s.n::bigint FROM (\(stat.sql)) AS s(day, n)", binds: binds)
                var counts: [LocalDate: Int64] = [:]
                for try await row in try await connection.query(query, logger: logger) {
                    var cells = RowCells(row)
                    let day: LocalDate? = try cells.next(), count: Int64? = try cells.next()
                    if let day, let count { counts[day, default: 0] += count }
                }
                series.append(Series(name: stat.name, app: stat.app, points: window.fill(counts)))
            case .window:
                let query = PostgresQuery(unsafeSQL: "SELECT s.n::bigint FROM (\(stat.sql)) AS s(n)", binds: binds)
                var total: Int64 = 0
                for try await row in try await connection.query(query, logger: logger) {
                    var cells = RowCells(row)
                    total += try cells.next(Int64?.self) ?? 0
                }
                totals.append(Total(name: stat.name, app: stat.app, count: total))
            }
        }
        return (series, totals)
    }

    /// A count cut off by the time limit is the console's 503 (it shows the service's numbers
    /// as unavailable), not a 500.
    static func counting<Value: Sendable>(_ body: () async throws -> Value) async throws -> Value {
        do {
            return try await body()
        } catch let error as PSQLError where error.serverInfo?[.sqlState] == "57014" {
            throw APIError(.serviceUnavailable, code: "stats_timeout", message: "the counts took too long; try again shortly")
        }
    }
}
