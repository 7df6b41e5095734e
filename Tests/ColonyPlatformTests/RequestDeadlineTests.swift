import ColonyPlatform
import ColonyTesting
import Foundation
import Hummingbird
import HummingbirdTesting
import PostgresNIO
import Testing

/// What a service does when Postgres stops answering: the request deadline answers 503 and ends
/// the statement's wait (its connection closed), and a lease held past its timeout is given up.
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

    @Test("a lease held past the lease timeout is closed: 503 database_unavailable, and the pool goes on")
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
