import Foundation
import Logging
import PostgresNIO
import NIOPosix
import NIOSSL
import ServiceLifecycle

/// A service's Postgres: a pooled `PostgresClient` logged in as the service's role with the
/// service's schema first on the search path. Run it as a lifecycle service.
public struct Database: Service, Sendable {
    public let client: PostgresClient
    public let configuration: DatabaseConfiguration
    public let logger: Logger
    /// Requests holding or waiting for a pooled connection (for `/metrics`).
    public let poolUsage = DatabasePoolUsage()

    public var schema: String { configuration.schema }

    public init(configuration: DatabaseConfiguration, logger: Logger) {
        var clientConfiguration = PostgresClient.Configuration(
            host: configuration.host,
            port: configuration.port,
            username: configuration.user,
            password: configuration.password,
            database: configuration.database,
            tls: configuration.postgresClientTLS(logger: logger)
        )
        clientConfiguration.options.maximumConnections = configuration.poolSize
        clientConfiguration.options.minimumConnections = 0
        clientConfiguration.options.connectTimeout = .seconds(5)
        // Unqualified table names resolve to the service's own schema.
        clientConfiguration.options.additionalStartupParameters = [("search_path", "\(configuration.schema),public")]
        self.client = PostgresClient(configuration: clientConfiguration, backgroundLogger: logger)
        self.configuration = configuration
        self.logger = logger
    }

    public func run() async throws {
        await client.run()
    }

    /// Runs `body` in a transaction: committed when it returns, rolled back when it throws. The
    /// body's own error is rethrown as it is (not wrapped), so handlers can map it to a status.
    public func transaction<Result: Sendable>(_ body: (PostgresConnection) async throws -> Result) async throws -> Result {
        do {
            return try await poolUsage.measure { leased in
                try await client.withTransaction(logger: logger) { connection in
                    leased()
                    return try await body(connection)
                }
            }
        } catch let error as PostgresTransactionError {
            throw error.closureError ?? error
        }
    }

    /// Lends a pooled connection for several statements outside a transaction (reads).
    public func withConnection<Result: Sendable>(_ body: (PostgresConnection) async throws -> Result) async throws -> Result {
        try await poolUsage.measure { leased in
            try await client.withConnection { connection in
                leased()
                return try await body(connection)
            }
        }
    }

    /// Runs one statement outside an explicit transaction.
    @discardableResult
    public func query(_ query: PostgresQuery) async throws -> PostgresRowSequence {
        // The pool leases and returns the connection itself: counted as in use for the call.
        try await poolUsage.measure { leased in
            leased()
            return try await client.query(query, logger: logger)
        }
    }

    /// Opens a connection of its own, outside the pool, for the body's duration: for session
    /// state that must end with the session (a leader's advisory lock, LISTEN).
    public func withDedicatedConnection<Value: Sendable>(_ body: (PostgresConnection) async throws -> Value) async throws -> Value {
        var connectionConfiguration = PostgresConnection.Configuration(
            host: configuration.host,
            port: configuration.port,
            username: configuration.user,
            password: configuration.password,
            database: configuration.database,
            tls: try configuration.postgresConnectionTLS()
        )
        connectionConfiguration.options.additionalStartupParameters = [("search_path", "\(configuration.schema),public")]
        let connection = try await PostgresConnection.connect(
            on: MultiThreadedEventLoopGroup.singleton.any(),
            configuration: connectionConfiguration,
            id: Int.random(in: 1...Int.max),
            logger: logger
        ).get()
        do {
            let value = try await body(connection)
            try? await connection.close()
            return value
        } catch {
            try? await connection.close()
            throw error
        }
    }

    /// True when a `SELECT 1` answers within the timeout (for `/ready`).
    public func isReachable(timeout: Duration = .seconds(2)) async -> Bool {
        await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                do {
                    let rows = try await client.query("SELECT 1", logger: logger)
                    for try await _ in rows {}
                    return true
                } catch {
                    return false
                }
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
    }
}

extension DatabaseConfiguration {
    /// The pool's TLS setting. The CA file was checked when the configuration was read; should it
    /// be unreadable now, connections fail (no certificate is trusted) rather than go in the clear.
    func postgresClientTLS(logger: Logger) -> PostgresClient.Configuration.TLS {
        do {
            return try tls.tlsConfiguration().map { .require($0) } ?? .disable
        } catch {
            logger.critical("the database's TLS settings cannot be used", metadata: ["error": "\(error)"])
            var refuseAll = TLSConfiguration.makeClientConfiguration()
            refuseAll.trustRoots = .certificates([])
            return .require(refuseAll)
        }
    }

    /// A single connection's TLS setting.
    func postgresConnectionTLS() throws -> PostgresConnection.Configuration.TLS {
        try tls.tlsConfiguration().map { .require(try NIOSSLContext(configuration: $0)) } ?? .disable
    }
}

/// Finds the handler's own error inside PostgresNIO's transaction wrapper.
enum TransactionErrorUnwrapper {
    static func underlying(_ error: any Error) -> (any Error)? {
        (error as? PostgresTransactionError)?.closureError
    }
}

extension PostgresConnection {
    /// Runs SQL that may hold several statements (migrations, provisioning), one statement at a
    /// time: PostgresNIO speaks the extended protocol, which takes one statement per query.
    public func execute(script: String, logger: Logger) async throws {
        for statement in SQLScript.statements(in: script) {
            try await query(PostgresQuery(unsafeSQL: statement), logger: logger)
        }
    }
}

/// Splits a SQL script into statements at top-level semicolons, leaving semicolons inside
/// quotes, quoted identifiers, dollar-quoted bodies (`DO $$ … $$`) and comments alone.
public enum SQLScript {
    public static func statements(in script: String) -> [String] {
        let characters = Array(script.unicodeScalars)
        var statements: [String] = []
        var current = String.UnicodeScalarView()
        var index = 0
        func flush() {
            let text = String(current).trimmingCharacters(in: .whitespacesAndNewlines)
            if !text.isEmpty { statements.append(text) }
            current = String.UnicodeScalarView()
        }
        func starts(with token: [Unicode.Scalar], at position: Int) -> Bool {
            position + token.count <= characters.count && Array(characters[position..<position + token.count]) == token
        }
        while index < characters.count {
            let character = characters[index]
            switch character {
            case "'", "\"":
                // Quoted literal or identifier; a doubled quote is an escaped quote.
                current.append(character)
                index += 1
                while index < characters.count {
                    current.append(characters[index])
                    if characters[index] == character {
                        if index + 1 < characters.count && characters[index + 1] == character {
                            current.append(characters[index + 1])
                            index += 2
                            continue
                        }
                        index += 1
                        break
                    }
                    index += 1
                }
            case "-" where starts(with: ["-", "-"], at: index):
                while index < characters.count && characters[index] != "\n" { index += 1 }
            case "/" where starts(with: ["/", "*"], at: index):
                index += 2
                while index < characters.count && !starts(with: ["*", "/"], at: index) { index += 1 }
                index += 2
            case "$":
                // A dollar-quote tag: $$ or $name$.
                var end = index + 1
                while end < characters.count && (characters[end].properties.isAlphabetic || characters[end] == "_" || ("0"..."9").contains(characters[end])) { end += 1 }
                if end < characters.count && characters[end] == "$" {
                    let tag = Array(characters[index...end])
                    current.append(contentsOf: tag)
                    index = end + 1
                    while index < characters.count && !starts(with: tag, at: index) {
                        current.append(characters[index])
                        index += 1
                    }
                    if index < characters.count {
                        current.append(contentsOf: tag)
                        index += tag.count
                    }
                } else {
                    current.append(character)
                    index += 1
                }
            case ";":
                flush()
                index += 1
            default:
                current.append(character)
                index += 1
            }
        }
        flush()
        return statements
    }
}

/// Quotes an identifier (schema, role, table) for SQL built at run time.
public func quoteIdentifier(_ name: String) -> String {
    "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
}

/// Quotes a string literal for SQL built at run time (DDL cannot take bind parameters).
public func quoteLiteral(_ value: String) -> String {
    "'" + value.replacingOccurrences(of: "'", with: "''") + "'"
}

extension PostgresClient {
    /// Runs `body` while the client's pool runs, then stops the pool and waits for it to stop.
    ///
    /// The pool runs in a task of its own, not a child task: a child started under a cancelled
    /// caller is cancelled at once, its pool never serves, and a request the body made (or the
    /// cancellation of that request) waited for it forever. A service cancelled while it was
    /// migrating hung so. The body's requests still see the caller's cancellation and throw.
    public func whileRunning<Result: Sendable>(_ body: () async throws -> Result) async throws -> Result {
        // The body waits for the pool's task to start, so its first request does not find the
        // pool not yet running (PostgresNIO warns of that).
        let (started, didStart) = AsyncStream<Void>.makeStream()
        let pool = Task {
            didStart.finish()
            await self.run()
        }
        for await _ in started {}
        do {
            let result = try await body()
            pool.cancel()
            await pool.value
            return result
        } catch {
            pool.cancel()
            await pool.value
            throw error
        }
    }
}

extension Database {
    /// Runs `body` while the pool runs (outside a service group: commands, migrations, tests).
    public func whileRunning<Result: Sendable>(_ body: () async throws -> Result) async throws -> Result {
        try await client.whileRunning(body)
    }
}

