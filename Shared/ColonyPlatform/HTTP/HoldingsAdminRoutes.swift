import ColonyModels
import Foundation
import Hummingbird
import Logging
import PostgresNIO

/// One kind of row a service holds of a user, counted for the console's user page
/// (`ServiceDefinition.consoleHoldings`): `sql` selects the rows with `$1` the user's id, and is
/// counted as `SELECT count(*) FROM (sql)`. The services declare them from their export plans
/// (`ExportPlan.consoleHoldings`): what is counted is what a subject access request would hand over.
public struct ConsoleHolding: Sendable, Equatable {
    public var name: String
    public var sql: String

    public init(name: String, sql: String) {
        self.name = name
        self.sql = sql
    }
}

/// `GET /internal/v1/console/users/{user_id}/holdings` on every service (`ServiceHost` adds it
/// beside the pipeline and stats routes): how many rows of each kind the service holds of a user,
/// for the console's user page. Only the console's credential (`ConsoleCaller`); never routed by
/// the gateway or the Ingress (see `PipelineAdminRoutes`). Documented by `pipeline-admin.openapi.json`.
public enum HoldingsAdminRoutes {
    public static func holdingsPath(_ user: UUID) -> String { "\(PipelineAdminRoutes.prefix)/users/\(user.lowercased)/holdings" }

    /// The answer: one count per kind the service declares, in its order (none for a service that holds nothing of people).
    public struct Holdings: Codable, Sendable, Equatable {
        public var service: String
        /// `user_id` in JSON (`ColonyJSON` writes and reads keys in snake case).
        public var userId: UUID
        public var holdings: [Holding]
    }

    public struct Holding: Codable, Sendable, Equatable {
        public var name: String
        public var count: Int64
    }

    static func add(to router: Router<ColonyRequestContext>, service: ColonyService, key: InternalKey?, database: Database, holdings: [ConsoleHolding]) {
        router.get(RouterPath("\(PipelineAdminRoutes.prefix)/users/{user_id}/holdings")) { request, context -> Response in
            _ = try ConsoleCaller.required(request, key: key)
            let user = try ConsoleCaller.pathID(context, "user_id", of: "user")
            let counts = try await PipelineAdminRoutes.reading {
                try await StatsAdminRoutes.counting {
                    try await database.transaction { connection in
                        try await count(holdings, of: user, on: connection, logger: context.logger)
                    }
                }
            }
            return try RouteSupport.json(Holdings(service: service.rawValue, userId: user, holdings: counts), status: .ok)
        }
    }

    /// One read-only transaction with the stats' time limit: a user with very many rows cannot
    /// hold the service's connection, and no statement can write.
    static func count(_ holdings: [ConsoleHolding], of user: UUID, on connection: PostgresConnection, logger: Logger) async throws -> [Holding] {
        guard !holdings.isEmpty else { return [] }
        try await connection.query("SET TRANSACTION READ ONLY", logger: logger)
        try await connection.query(PostgresQuery(unsafeSQL: "SET LOCAL statement_timeout = '\(StatsAdminRoutes.statementTimeout)'"), logger: logger)
        // One statement for all of them: a round trip per kind would cost more than the counts.
        let selects = holdings.enumerated().map { index, holding in "(SELECT count(*) FROM (\(holding.sql)) AS h\(index))" }
        var binds = PostgresBindings()
        binds.append(user)
        var counts: [Int64] = []
        for try await row in try await connection.query(PostgresQuery(unsafeSQL: "SELECT ARRAY[\(selects.joined(separator: ", "))]::bigint[]", binds: binds), logger: logger) {
            var cells = RowCells(row)
            counts = try cells.next([Int64].self)
        }
        return zip(holdings, counts).map { Holding(name: $0.name, count: $1) }
    }
}
