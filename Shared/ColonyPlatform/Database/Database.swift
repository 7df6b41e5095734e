import Foundation
import Logging
import PostgresNIO
import NIOPosix
import NIOSSL
import ServiceLifecycle
import Synchronization

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
        // (PostgresNIO's connect timeout covers the TCP connect, TLS, startup and login: a link that
        // accepts and then says nothing fails the attempt too.)
        clientConfiguration.options.connectTimeout = configuration.timeouts.connect
        // Unqualified table names resolve to the service's own schema; the session timeouts below.
        clientConfiguration.options.additionalStartupParameters = [("search_path", "\(configuration.schema),public")]
            + configuration.timeouts.sessionParameters(pooled: true)
        self.client = PostgresClient(configuration: clientConfiguration, backgroundLogger: logger)
        self.configuration = configuration
        self.logger = logger
    }

    public func run() async throws {
        await client.run()
    }

    /// Runs `body` in a transaction: committed when it returns, rolled back when it throws. The
    /// body's own error is rethrown as it is, so handlers can map it to a status.
    public func transaction<Result: Sendable>(_ body: (PostgresConnection) async throws -> Result) async throws -> Result {
        try await poolUsage.measure { leased in
            try await client.withConnection { connection in
                leased()
                return try await guarded(connection) {
                    try await connection.statementUnlessClosed("BEGIN", logger: logger)
                    let value: Result
                    do {
                        value = try await body(connection)
                    } catch {
                        // A closed session rolled back on its own; asking would wait forever (below).
                        try? await connection.statementUnlessClosed("ROLLBACK", logger: logger)
                        throw error
                    }
                    try await connection.statementUnlessClosed("COMMIT", logger: logger)
                    return value
                }
            }
        }
    }

    /// Lends a pooled connection for several statements outside a transaction (reads).
    public func withConnection<Result: Sendable>(_ body: (PostgresConnection) async throws -> Result) async throws -> Result {
        try await poolUsage.measure { leased in
            try await client.withConnection { connection in
                leased()
                return try await guarded(connection) { try await body(connection) }
            }
        }
    }

    /// Runs `body` on a leased connection watched by a `LeaseWatch`: when the lease is cancelled (a
    /// request past its deadline, a shutdown) or outlasts `timeouts.lease`, the connection is
    /// probed, and closed if the probe goes unanswered (`timeouts.probe`): a statement waiting on a
    /// peer that went silent then fails at once instead of waiting for TCP to give up (15 minutes
    /// and more), and the pool replaces the connection. Postgres rolls back what the closed session
    /// had not committed.
    func guarded<Result>(_ connection: PostgresConnection, isolation: isolated (any Actor)? = #isolation, _ body: () async throws -> Result) async throws -> Result {
        guard let probe = configuration.timeouts.probe else { return try await body() }
        let watch = LeaseWatch(connection: connection, lease: configuration.timeouts.lease, probe: probe, logger: logger)
        defer { watch.stop() }
        do {
            return try await withTaskCancellationHandler {
                try await body()
            } onCancel: {
                watch.probe()
            }
        } catch {
            guard watch.closedConnection else { throw error }
            logger.warning("closed a database connection that did not answer its probe", metadata: ["error": "\(error)"])
            throw APIError(.serviceUnavailable, code: "database_unavailable", message: "the database did not answer in time; try again")
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
        connectionConfiguration.options.connectTimeout = TimeAmount(configuration.timeouts.connect)
        // No statement timeout here: a leader's lock and LISTEN wait as long as they must.
        connectionConfiguration.options.additionalStartupParameters = [("search_path", "\(configuration.schema),public")]
            + configuration.timeouts.sessionParameters(pooled: false)
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

    /// True when a `SELECT 1` answers within the timeout (for `/ready`). The probe's lease is
    /// cancelled at the timeout (its connection closed), so a silent database fails the check in
    /// time rather than holding it.
    public func isReachable(timeout: Duration = .seconds(2)) async -> Bool {
        await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                do {
                    return try await withConnection { connection in
                        let rows = try await connection.query("SELECT 1", logger: logger)
                        for try await _ in rows {}
                        return true
                    }
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

/// How long a service waits on Postgres, and how soon Postgres lets go of a session whose service
/// went silent. `DatabaseConfiguration.load` reads them (docs/configuration.md); a configuration made
/// in code gets the same defaults.
public struct DatabaseTimeouts: Sendable, Equatable {
    /// Opening a connection: TCP, TLS, startup and login (`COLONY_PG_CONNECT_TIMEOUT_SECONDS`).
    public var connect: Duration = .seconds(5)
    /// Postgres cancels a pooled session's statement running longer (`statement_timeout`,
    /// `COLONY_PG_STATEMENT_TIMEOUT_SECONDS`); nil: none. Dedicated connections (locks, LISTEN) and
    /// migrations have none.
    public var statement: Duration? = .seconds(10)
    /// Postgres ends a session left idle inside a transaction this long
    /// (`idle_in_transaction_session_timeout`, `COLONY_PG_IDLE_IN_TRANSACTION_TIMEOUT_SECONDS`), so the
    /// row locks of a service cut off mid-transaction do not hold up its other replicas; nil: never.
    public var idleInTransaction: Duration? = .seconds(30)
    /// A pooled connection leased longer is probed (`COLONY_PG_LEASE_TIMEOUT_SECONDS`), and probed
    /// again each period while it is held; nil: only a cancelled lease is probed.
    public var lease: Duration? = .seconds(30)
    /// How long a leased connection's probe may go unanswered before the connection is taken for
    /// dead and closed. Not a setting: the statement timeout bounds what a healthy session's probe
    /// waits behind. Nil: never probed nor closed (migrations: the runner ends its step itself).
    public var probe: Duration? = .seconds(5)

    public init() {}

    /// No statement, idle-in-transaction or lease timeout (migrations: a long one must finish).
    public static var unbounded: DatabaseTimeouts {
        var timeouts = DatabaseTimeouts()
        timeouts.statement = nil
        timeouts.idleInTransaction = nil
        timeouts.lease = nil
        timeouts.probe = nil
        return timeouts
    }

    public static func load(environment: EnvironmentReader) throws(ConfigurationError) -> DatabaseTimeouts {
        func optional(_ seconds: Int) -> Duration? { seconds == 0 ? nil : .seconds(seconds) }
        var timeouts = DatabaseTimeouts()
        timeouts.connect = .seconds(try environment.int("COLONY_PG_CONNECT_TIMEOUT_SECONDS", default: 5, range: 1...300))
        timeouts.statement = optional(try environment.int("COLONY_PG_STATEMENT_TIMEOUT_SECONDS", default: 10, range: 0...86_400))
        timeouts.idleInTransaction = optional(try environment.int("COLONY_PG_IDLE_IN_TRANSACTION_TIMEOUT_SECONDS", default: 30, range: 0...86_400))
        timeouts.lease = optional(try environment.int("COLONY_PG_LEASE_TIMEOUT_SECONDS", default: 30, range: 0...86_400))
        return timeouts
    }

    /// Settings sent in each session's startup message.
    ///
    /// TCP keepalive is Postgres' end of the connection: the server probes a session idle 10 s every
    /// 5 s and drops it after 3 unanswered probes, and gives up on unacknowledged data after 20 s
    /// (`tcp_user_timeout`), so a service replica that vanished (a partition, a dead node) frees its
    /// sessions, locks and connection slots in about 25 s. (PostgresNIO does not expose its socket,
    /// so the service's end cannot set SO_KEEPALIVE; the lease's probe is its side of it.)
    func sessionParameters(pooled: Bool) -> [(String, String)] {
        func milliseconds(_ duration: Duration) -> String {
            String(duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000)
        }
        var parameters: [(String, String)] = [
            ("tcp_keepalives_idle", "10"), ("tcp_keepalives_interval", "5"), ("tcp_keepalives_count", "3"),
            ("tcp_user_timeout", "20000"),
        ]
        if pooled, let statement { parameters.append(("statement_timeout", milliseconds(statement))) }
        if pooled, let idleInTransaction { parameters.append(("idle_in_transaction_session_timeout", milliseconds(idleInTransaction))) }
        return parameters
    }
}
