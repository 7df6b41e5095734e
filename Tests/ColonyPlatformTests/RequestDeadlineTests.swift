import ColonyPlatform
import ColonyTesting
import Foundation
import Hummingbird
import HummingbirdTesting
import PostgresNIO
import Testing

/// What a service does when Postgres stops answering: the request deadline answers 503 and ends
/// the statement's wait (its connection probed, then closed), and a lease held past its timeout whose
/// probe goes unanswered is given up.
/// `pg_sleep(600)` stands for a database that went silent; no statement timeout is set, so only
/// these can end the wait (the test would hang otherwise, never pass slowly).
@Suite("Request deadline and database timeouts")
struct RequestDeadlineTests {
    func database(lease: Duration?) throws -> Database {
        let environment = try TestEnvironment.current()
        var configuration = DatabaseConfiguration(host: environment.postgresHost, port: environment.postgresPort, database: environment.postgresDatabase,
                                                  user: environment.adminUser, password: environment.adminPassword, schema: "public", poolSize: 1)
        configuration.timeouts.statement = nil
        configuration.timeouts.lease = lease
        return Database(configuration: configuration, logger: TestEnvironment.logger)
    }

    @Test("a request its database holds past the deadline is answered 503 deadline_exceeded, and the pool's one connection is replaced")
    func deadline() async throws {
        let database = try database(lease: nil)
        try await withRunning(database) {
            let router = ColonyRouter.make(metrics: HTTPMetrics(), maxBodyBytes: 1024, requestDeadline: .seconds(1), readiness: ReadinessChecks())
            router.get("silent") { _, _ -> String in
                try await database.withConnection { connection in
                    try await connection.query("SELECT pg_sleep(600)", logger: TestEnvironment.logger)
                }
                return "late"
            }
            router.get("answer") { _, _ -> String in
                try await database.withConnection { connection in
                    try await connection.query("SELECT 1", logger: TestEnvironment.logger)
                }
                return "ok"
            }
            try await Application(router: router).test(.router) { client in
                let held = try await client.execute(uri: "/silent", method: .get)
                #expect(held.status == .serviceUnavailable)
                let error = try JSONDecoder().decode([String: String].self, from: Data(buffer: held.body))
                #expect(error["code"] == "deadline_exceeded")
                // The pool has one connection: a later request gets a new one. (On a busy machine the
                // new connection's login can itself outlast the 1 s deadline: ask again until 30 s.)
                var next = try await client.execute(uri: "/answer", method: .get)
                let deadline = ContinuousClock.now + .seconds(30)
                while next.status != .ok && ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(200))
                    next = try await client.execute(uri: "/answer", method: .get)
                }
                #expect(next.status == .ok)
            }
        }
    }

    @Test("a lease held past the lease timeout whose probe goes unanswered is closed: 503 database_unavailable, and the pool goes on")
    func leaseTimeout() async throws {
        let database = try database(lease: .seconds(1))
        try await withRunning(database) {
            await #expect {
                try await database.transaction { connection in
                    try await connection.query("SELECT pg_sleep(600)", logger: TestEnvironment.logger)
                }
            } throws: { error in
                (error as? APIError)?.code == "database_unavailable"
            }
            let one = try await database.query("SELECT 1").collect().first?.decode(Int.self)
            #expect(one == 1)
        }
    }

    /// PostgresNIO never answers a statement written to a closed connection: a watch that closed a
    /// healthy session between two statements would hang its holder (CI hung on exactly this).
    @Test("a lease held long, or cancelled, between two statements is probed and kept: the next statement and the commit run")
    func idleLeaseKept() async throws {
        let database = try database(lease: .milliseconds(300))
        try await withRunning(database) {
            let held = try await database.transaction { connection in
                try await connection.query("CREATE TEMP TABLE lease_kept (n int) ON COMMIT DROP", logger: TestEnvironment.logger)
                try await Task.sleep(for: .seconds(2))  // several lease periods, each probed and answered
                try await connection.query("INSERT INTO lease_kept VALUES (1)", logger: TestEnvironment.logger)
                return try await connection.query("SELECT count(*)::int FROM lease_kept", logger: TestEnvironment.logger).collect().first?.decode(Int.self)
            }
            #expect(held == 1)
            let task = Task {
                try await database.withConnection { connection in
                    try await connection.query("SELECT 1", logger: TestEnvironment.logger)
                    // Cancelled here, between statements: a real sleep, not a cancellable one.
                    await withCheckedContinuation { continuation in
                        connection.eventLoop.scheduleTask(in: .seconds(1)) { continuation.resume() }
                    }
                    return try await connection.query("SELECT 2", logger: TestEnvironment.logger).collect().first?.decode(Int.self)
                }
            }
            try await Task.sleep(for: .milliseconds(300))
            task.cancel()
            // It ends (PostgresNIO's row sequence may answer a cancelled task's read with
            // CancellationError), and the connection it held serves the next lease.
            switch await task.result {
            case .success(let two): #expect(two == 2)
            case .failure(let error): #expect(error is CancellationError, "\(error)")
            }
            #expect(try await database.query("SELECT 3").collect().first?.decode(Int.self) == 3)
        }
    }

    @Test("the timeouts' settings: defaults, zero for none")
    func settings() throws {
        let defaults = try DatabaseTimeouts.load(environment: EnvironmentReader([:]))
        #expect(defaults == DatabaseTimeouts())
        #expect(defaults.connect == .seconds(5) && defaults.statement == .seconds(10) && defaults.lease == .seconds(30))
        let none = try DatabaseTimeouts.load(environment: EnvironmentReader([
            "COLONY_PG_STATEMENT_TIMEOUT_SECONDS": "0", "COLONY_PG_IDLE_IN_TRANSACTION_TIMEOUT_SECONDS": "0", "COLONY_PG_LEASE_TIMEOUT_SECONDS": "0",
        ]))
        #expect(none.statement == nil && none.idleInTransaction == nil && none.lease == nil)
    }
}
