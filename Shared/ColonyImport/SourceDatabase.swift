import ColonyModels
import ColonyPlatform
import Foundation
import Logging
import NIOPosix
import NIOSSL
import PostgresNIO

/// The Supabase project's Postgres (its connection string, or a restored `pg_dump`), read in one
/// read-only REPEATABLE READ transaction: every table comes from the same snapshot, so a project
/// that still takes writes during the import is read as it was at one moment.
public final class SourceDatabase: Sendable {
    let connection: PostgresConnection
    let logger: Logger

    /// Where the source is, as a libpq URL: `postgres://user:password@host:port/database?sslmode=…`
    /// (`disable`, `prefer` (default), `require`, `verify-full`; `sslrootcert=FILE` for a CA the
    /// system does not know, such as Supabase's).
    public struct Location: Sendable, Equatable {
        public var host: String
        public var port: Int
        public var user: String
        public var password: String?
        public var database: String
        public var sslMode: String
        public var rootCertificate: String?

        public init(url text: String) throws {
            guard let url = URLComponents(string: text), ["postgres", "postgresql"].contains(url.scheme ?? ""), let host = url.host, !host.isEmpty else {
                throw ImportFailure("--source must be a postgres:// URL (postgres://user:password@host:5432/postgres)")
            }
            self.host = host
            port = url.port ?? 5432
            user = url.user ?? "postgres"
            password = url.password
            let path = url.path.hasPrefix("/") ? String(url.path.dropFirst()) : url.path
            database = path.isEmpty ? "postgres" : path
            let query = Dictionary((url.queryItems ?? []).map { ($0.name, $0.value ?? "") }, uniquingKeysWith: { $1 })
            sslMode = query["sslmode"] ?? "prefer"
            guard ["disable", "allow", "prefer", "require", "verify-ca", "verify-full"].contains(sslMode) else {
                throw ImportFailure("sslmode \(sslMode) is not one of disable, prefer, require, verify-ca, verify-full")
            }
            rootCertificate = query["sslrootcert"]
        }

        /// The URL without its password, for the report.
        public var redacted: String { "postgres://\(user)@\(host):\(port)/\(database)?sslmode=\(sslMode)" }

        func tls() throws -> PostgresConnection.Configuration.TLS {
            var configuration = TLSConfiguration.makeClientConfiguration()
            switch sslMode {
            case "disable":
                return .disable
            case "verify-ca", "verify-full":
                if sslMode == "verify-ca" { configuration.certificateVerification = .noHostnameVerification }
                if let rootCertificate { configuration.trustRoots = .file(rootCertificate) }
                return .require(try NIOSSLContext(configuration: configuration))
            default:
                // libpq's prefer and require: encrypted, the certificate not checked.
                configuration.certificateVerification = .none
                let context = try NIOSSLContext(configuration: configuration)
                return sslMode == "require" ? .require(context) : .prefer(context)
            }
        }
    }

    private init(connection: PostgresConnection, logger: Logger) {
        self.connection = connection
        self.logger = logger
    }

    /// Connects and opens the snapshot transaction.
    public static func open(_ location: Location, logger: Logger) async throws -> SourceDatabase {
        let configuration = PostgresConnection.Configuration(host: location.host, port: location.port, username: location.user,
                                                             password: location.password, database: location.database, tls: try location.tls())
        let connection = try await PostgresConnection.connect(on: MultiThreadedEventLoopGroup.singleton.any(), configuration: configuration,
                                                              id: 1, logger: logger)
        try await connection.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", logger: logger)
        return SourceDatabase(connection: connection, logger: logger)
    }

    public func close() async {
        _ = try? await connection.query("ROLLBACK", logger: logger)
        try? await connection.close()
    }

    /// Whether `schema.table` exists (a project may lack an optional table, such as storage's).
    public func hasTable(_ schema: String, _ table: String) async throws -> Bool {
        try await connection.query("SELECT to_regclass(\(quoteIdentifier(schema) + "." + quoteIdentifier(table))) IS NOT NULL", logger: logger)
            .firstValue(Bool.self) ?? false
    }

    /// Every row of `schema.table` as JSON (`to_jsonb`), in `orderBy` order, fetched through a
    /// cursor a page at a time. A missing table has no rows.
    public func rows(_ schema: String, _ table: String, orderBy: String, where filter: String? = nil, pageSize: Int = 500) -> SourceRows {
        SourceRows(source: self, schema: schema, table: table, orderBy: orderBy, filter: filter, pageSize: pageSize)
    }

    /// All rows at once, for small tables a step needs to look across (users, members).
    public func allRows(_ schema: String, _ table: String, orderBy: String, where filter: String? = nil) async throws -> [SourceRow] {
        var all: [SourceRow] = []
        for try await page in rows(schema, table, orderBy: orderBy, where: filter) { all += page }
        return all
    }

    func fetch(cursor: String, count: Int, table: String) async throws -> [SourceRow] {
        var page: [SourceRow] = []
        for try await row in try await connection.query(PostgresQuery(unsafeSQL: "FETCH \(count) FROM \(quoteIdentifier(cursor))"), logger: logger) {
            let text = try row.value(String.self)
            let values = try ColonyJSON.decoder().decode([String: JSONValue].self, from: Data(text.utf8))
            page.append(SourceRow(table: table, values: values))
        }
        return page
    }

    func declare(cursor: String, schema: String, table: String, orderBy: String, filter: String?) async throws {
        let condition = filter.map { " WHERE \($0)" } ?? ""
        try await connection.query(PostgresQuery(unsafeSQL: """
            DECLARE \(quoteIdentifier(cursor)) NO SCROLL CURSOR FOR
            SELECT to_jsonb(t)::text FROM \(quoteIdentifier(schema)).\(quoteIdentifier(table)) t\(condition) ORDER BY \(orderBy)
            """), logger: logger)
    }

    func closeCursor(_ cursor: String) async {
        _ = try? await connection.query(PostgresQuery(unsafeSQL: "CLOSE \(quoteIdentifier(cursor))"), logger: logger)
    }
}

/// Pages of a source table's rows (an async sequence of arrays).
public struct SourceRows: AsyncSequence, Sendable {
    public typealias Element = [SourceRow]
    let source: SourceDatabase
    let schema: String
    let table: String
    let orderBy: String
    let filter: String?
    let pageSize: Int

    public struct AsyncIterator: AsyncIteratorProtocol {
        let rows: SourceRows
        var cursor: String?
        var exhausted = false

        public mutating func next() async throws -> [SourceRow]? {
            guard !exhausted else { return nil }
            if cursor == nil {
                guard try await rows.source.hasTable(rows.schema, rows.table) else { exhausted = true; return nil }
                let name = "import_\(rows.schema)_\(rows.table)_\(UInt32.random(in: 0...UInt32.max))"
                try await rows.source.declare(cursor: name, schema: rows.schema, table: rows.table, orderBy: rows.orderBy, filter: rows.filter)
                cursor = name
            }
            let page = try await rows.source.fetch(cursor: cursor!, count: rows.pageSize, table: "\(rows.schema).\(rows.table)")
            if page.count < rows.pageSize {
                exhausted = true
                await rows.source.closeCursor(cursor!)
            }
            return page.isEmpty ? nil : page
        }
    }

    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(rows: self) }
}

/// A problem that stops the whole import (bad arguments, an unmigrated service, no source).
public struct ImportFailure: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
