import Foundation
import Logging
import PostgresNIO

/// Creates each service's schema and login role, with privileges on that schema only: the
/// role owns its schema, may connect to the database, and reaches no other service's tables.
/// Run by an operator's superuser connection (`colony-admin provision`), and by the tests.
public struct DatabaseProvisioner: Sendable {
    public let admin: PostgresClient
    public let databaseName: String
    public let logger: Logger

    public init(admin: PostgresClient, databaseName: String, logger: Logger) {
        self.admin = admin
        self.databaseName = databaseName
        self.logger = logger
    }

    public static func roleName(for service: String) -> String {
        "colony_\(service)"
    }

    /// Creates (or updates the password of) `role` and creates `schema` owned by it. Re-run safe.
    public func provision(schema: String, role: String, password: String, extensions: [String] = []) async throws {
        let database = quoteIdentifier(databaseName)
        let roleIdentifier = quoteIdentifier(role)
        let schemaIdentifier = quoteIdentifier(schema)
        var script = """
            DO $provision$
            BEGIN
                IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = \(quoteLiteral(role))) THEN
                    CREATE ROLE \(roleIdentifier) LOGIN PASSWORD \(quoteLiteral(password)) NOSUPERUSER NOCREATEDB NOCREATEROLE NOINHERIT;
                ELSE
                    ALTER ROLE \(roleIdentifier) LOGIN PASSWORD \(quoteLiteral(password)) NOSUPERUSER NOCREATEDB NOCREATEROLE NOINHERIT;
                END IF;
            END
            $provision$;
            REVOKE ALL ON DATABASE \(database) FROM PUBLIC;
            REVOKE CREATE ON SCHEMA public FROM PUBLIC;
            GRANT CONNECT ON DATABASE \(database) TO \(roleIdentifier);
            CREATE SCHEMA IF NOT EXISTS \(schemaIdentifier) AUTHORIZATION \(roleIdentifier);
            ALTER SCHEMA \(schemaIdentifier) OWNER TO \(roleIdentifier);
            REVOKE ALL ON SCHEMA \(schemaIdentifier) FROM PUBLIC;
            ALTER ROLE \(roleIdentifier) IN DATABASE \(database) SET search_path = \(schemaIdentifier), public;
            """
        // Extensions (PostGIS) live in `public`, created by the superuser; roles only use them.
        for name in extensions {
            script += "\nCREATE EXTENSION IF NOT EXISTS \(quoteIdentifier(name)) SCHEMA public;"
        }
        try await serialized { connection in
            try await connection.execute(script: script, logger: logger)
        }
        logger.info("provisioned schema", metadata: ["schema": "\(schema)", "role": "\(role)"])
    }

    /// Drops a schema with everything in it and its role (test teardown, decommissioning).
    public func drop(schema: String, role: String) async throws {
        try await serialized { connection in
            try await connection.execute(script: """
                SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = \(quoteLiteral(role));
                DROP SCHEMA IF EXISTS \(quoteIdentifier(schema)) CASCADE;
                DO $drop$
                BEGIN
                    IF EXISTS (SELECT FROM pg_roles WHERE rolname = \(quoteLiteral(role))) THEN
                        EXECUTE 'REVOKE ALL ON DATABASE \(quoteIdentifier(databaseName).replacingOccurrences(of: "'", with: "''")) FROM \(roleIdentifierEscaped(role))';
                        EXECUTE 'DROP ROLE \(roleIdentifierEscaped(role))';
                    END IF;
                END
                $drop$;
                """, logger: logger)
        }
    }

    /// Runs DDL on roles and database privileges one session at a time: concurrent GRANT/REVOKE
    /// on the same database fail with "tuple concurrently updated".
    private func serialized(_ body: (PostgresConnection) async throws -> Void) async throws {
        try await admin.withConnection { connection in
            try await connection.query("SELECT pg_advisory_lock(hashtext('colony.provision'))", logger: logger)
            do {
                try await body(connection)
            } catch {
                _ = try? await connection.query("SELECT pg_advisory_unlock(hashtext('colony.provision'))", logger: logger)
                throw error
            }
            try await connection.query("SELECT pg_advisory_unlock(hashtext('colony.provision'))", logger: logger)
        }
    }

    /// Waits until `configuration` can log in, for at most `timeout`: a server that is not up yet
    /// (refused, unreachable, still starting) is tried again every `retryInterval`; a refused
    /// login (SQLSTATE 28P01 wrong password, 28000 no such role or not allowed by pg_hba) fails at
    /// once, since waiting cannot fix it. `credentials` and `timeoutSetting` name the settings to
    /// fix, for the message. Provision runs this first because a pool would retry a bad login forever.
    public static func waitForLogin(
        _ configuration: PostgresConnection.Configuration, credentials: String, timeout: Duration, timeoutSetting: String,
        retryInterval: Duration = .seconds(2), logger: Logger
    ) async throws(DatabaseLoginError) {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: timeout)
        let server = "\(configuration.host ?? "postgres"):\(configuration.port ?? 5432)"
        var attempts = 0
        var lastProblem = "no attempt made"
        while true {
            attempts += 1
            var attempt = configuration
            // One attempt never outlasts the bound (a silently dropped SYN waits for the connect timeout).
            let remaining = clock.now.duration(to: deadline)
            let remainingMilliseconds = max(Int64(remaining.components.seconds * 1000 + remaining.components.attoseconds / 1_000_000_000_000_000), 100)
            attempt.options.connectTimeout = .milliseconds(min(remainingMilliseconds, 10_000))
            do {
                let connection = try await PostgresConnection.connect(configuration: attempt, id: attempts, logger: logger)
                try? await connection.close()
                return
            } catch let error as PSQLError where ["28P01", "28000"].contains(error.serverInfo?[.sqlState] ?? "") {
                let user = configuration.username
                throw DatabaseLoginError(description: """
                    Postgres at \(server) refused the login of \(user) (SQLSTATE \(error.serverInfo?[.sqlState] ?? "?"): \
                    \(error.serverInfo?[.message] ?? "authentication failed")). Check \(credentials). Postgres keeps the \
                    superuser password it was first created with: a password changed in the settings after that does not \
                    change it (set it back, or ALTER ROLE \(user) PASSWORD in the database).
                    """)
            } catch let error as PSQLError {
                lastProblem = error.serverInfo?[.message] ?? error.underlying.map { "\($0)" } ?? "\(error.code)"
            } catch {
                lastProblem = "\(error)"
            }
            if Task.isCancelled || clock.now.advanced(by: retryInterval) >= deadline {
                throw DatabaseLoginError(description: """
                    Postgres at \(server) could not be reached within \(timeout) (\(attempts) attempts; last: \(lastProblem)). \
                    Check COLONY_PG_HOST and COLONY_PG_PORT, or allow longer with \(timeoutSetting).
                    """)
            }
            logger.info("waiting for Postgres", metadata: ["server": "\(server)", "problem": "\(lastProblem)"])
            try? await Task.sleep(for: retryInterval)
        }
    }

    private func roleIdentifierEscaped(_ role: String) -> String {
        quoteIdentifier(role).replacingOccurrences(of: "'", with: "''")
    }
}

/// The database refused the login, or could not be reached in time: the message names what to check.
public struct DatabaseLoginError: Error, CustomStringConvertible, Sendable {
    public var description: String
    public init(description: String) { self.description = description }
}
