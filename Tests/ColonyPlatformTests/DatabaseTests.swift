import ColonyTesting
@testable import ColonyPlatform
import Foundation
import PostgresNIO
import Synchronization
import Testing

@Suite("Postgres: migrations, schema ownership, transactions, scheduler")
struct DatabaseTests {
    let migrations = [
        Migration(version: 1, name: "widgets", sql: "CREATE TABLE widgets (id uuid PRIMARY KEY, name text NOT NULL);"),
        Migration(version: 2, name: "widgets_color", sql: "ALTER TABLE widgets ADD COLUMN color text;"),
    ]

    @Test("migrations apply in order, once, and re-running (even concurrently) applies nothing")
    func migrationsAreIdempotent() async throws {
        try await withTestDatabase { database in
            let runner = MigrationRunner(database: database)
            #expect(try await runner.migrate(migrations) == [1, 2])
            #expect(try await runner.migrate(migrations) == [])
            let more = migrations + [Migration(version: 3, name: "widgets_size", sql: "ALTER TABLE widgets ADD COLUMN size int;")]
            let applied = try await withThrowingTaskGroup(of: [Int].self) { group in
                for _ in 0..<4 { group.addTask { try await runner.migrate(more) } }
                return try await group.reduce(into: []) { $0 += $1 }
            }
            #expect(applied == [3])
            let recorded = try await database.query("SELECT component, version FROM schema_migrations ORDER BY component, version").collect()
                .map { try $0.decode((String, Int).self) }
            #expect(recorded.filter { $0.0 == "service" }.map(\.1) == [1, 2, 3])
            #expect(recorded.filter { $0.0 == "platform" }.map(\.1) == PlatformMigrations.all.map(\.version))
        }
    }

    @Test("a failing migration leaves nothing behind")
    func failingMigrationRollsBack() async throws {
        try await withTestDatabase { database in
            let broken = migrations + [Migration(version: 3, name: "broken", sql: "CREATE TABLE half (id int); SELECT no_such_function();")]
            await #expect(throws: (any Error).self) { try await MigrationRunner(database: database).migrate(broken) }
            let tables = try await database.query("SELECT count(*) FROM information_schema.tables WHERE table_schema = \(database.schema) AND table_name IN ('widgets', 'half')").collect()
            #expect(try tables.first?.decode(Int.self) == 0)
        }
    }

    @Test("a service's role cannot read or write another service's schema")
    func schemaIsolation() async throws {
        try await withTestDatabase(migrations: migrations) { owner in
            try await owner.query("INSERT INTO widgets (id, name) VALUES (\(UUID()), 'secret')")
            try await withTestDatabase { intruder in
                let ownerSchema = quoteIdentifier(owner.schema)
                for sql in [
                    "SELECT * FROM \(ownerSchema).widgets",
                    "INSERT INTO \(ownerSchema).widgets (id, name) VALUES (gen_random_uuid(), 'x')",
                    "CREATE TABLE \(ownerSchema).planted (id int)",
                    "CREATE TABLE public.planted (id int)",
                    "SELECT * FROM \(ownerSchema).outbox",
                ] {
                    do {
                        try await intruder.query(PostgresQuery(unsafeSQL: sql))
                        Issue.record("allowed: \(sql)")
                    } catch let error as PSQLError {
                        #expect(error.serverInfo?[.sqlState] == "42501", "\(sql) should be denied, got \(String(reflecting: error))")
                    }
                }
                // And it still works in its own schema.
                try await intruder.query("CREATE TABLE mine (id int)")
            }
        }
    }

    @Test("a transaction commits on return and rolls back on throw, rethrowing the handler's error")
    func transactions() async throws {
        struct Refused: Error {}
        try await withTestDatabase(migrations: migrations) { database in
            try await database.transaction { connection in
                _ = try await connection.query("INSERT INTO widgets (id, name) VALUES (\(UUID()), 'kept')", logger: database.logger)
            }
            await #expect(throws: Refused.self) {
                try await database.transaction { connection in
                    try await connection.query("INSERT INTO widgets (id, name) VALUES (\(UUID()), 'dropped')", logger: database.logger)
                    throw Refused()
                }
            }
            let names = try await database.query("SELECT name FROM widgets").collect().map { try $0.decode(String.self) }
            #expect(names == ["kept"])
        }
    }

    @Test("a scheduled job runs on one replica at a time")
    func schedulerRunsOnce() async throws {
        try await withTestDatabase { database in
            let runs = Atomic<Int>(0)
            let job = ScheduledJob(name: "sweep", interval: .seconds(3600)) { _, _ in
                runs.add(1, ordering: .relaxed)
                try await Task.sleep(for: .milliseconds(300))
            }
            // Three "replicas" try the same job at once.
            let replicas = (0..<3).map { _ in JobScheduler(database: database, jobs: [job], logger: TestEnvironment.logger) }
            let ran = await withTaskGroup(of: Bool.self) { group in
                for replica in replicas { group.addTask { await replica.runOnce(job) } }
                return await group.reduce(into: 0) { $0 += $1 ? 1 : 0 }
            }
            #expect(ran == 1)
            #expect(runs.load(ordering: .relaxed) == 1)
            // The lock was released: the next run goes ahead.
            #expect(await replicas[1].runOnce(job))
            let recorded = try await database.query("SELECT job, last_error FROM job_runs").collect().map { try $0.decode((String, String?).self) }
            #expect(recorded.count == 1 && recorded[0].0 == "sweep" && recorded[0].1 == nil)
        }
    }
}
