import AsyncHTTPClient
import ColonyModels
import ColonyPlatform
import ColonyStorage
import ColonyTesting
import Foundation
import HabitsService
import NIOCore
import PostgresNIO

// colony-habits-bench: the habits service in release mode on the local Postgres and broker.
//   1. log-habit requests/s and p50/p99 at 32 connections, beside pgbench running the same SQL
//      transaction (the statements the service sends for one log) on the same database;
//   2. the hourly advancement job over 10,000 hives.
// Run through scripts/bench.   colony-habits-bench [--seconds S] [--hives N] [--http-plan FILE]
// With --http-plan, it seeds the same habits and writes the plan for the out-of-process run
// (scripts/bench http: the colony-habits executable under wrk) instead of running the load itself.

let (seconds, hiveCount): (Int, Int) = {
    var seconds = 20
    var hives = 10_000
    var iterator = argumentsWithoutHTTPPlan().makeIterator()
    while let argument = iterator.next() {
        switch (argument, iterator.next().flatMap(Int.init)) {
        case ("--seconds", let value?): seconds = value
        case ("--hives", let value?): hives = value
        default:
            FileHandle.standardError.write(Data("usage: colony-habits-bench [--seconds S] [--hives N]\n".utf8))
            exit(2)
        }
    }
    return (seconds, hives)
}()

let environment = try TestEnvironment.current()
let connections = 32
let habitsPerSide = 1280

/// Deterministic ids, so pgbench can name a habit and its owner from a number.
func habitID(_ n: Int) -> UUID { UUID(uuidString: "00000000-0000-4000-8000-\(String(format: "%012d", n))")! }
func userID(_ n: Int) -> UUID { UUID(uuidString: "00000000-0000-4000-9000-\(String(format: "%012d", n))")! }

/// Habits 1…2·habitsPerSide, one owner per 40 habits, owners in UTC.
func seedHabits(_ database: Database) async throws {
    let total = 2 * habitsPerSide
    let owners = (total + 39) / 40
    try await database.query("""
        INSERT INTO profiles (id, display_name, timezone, day_start_hour)
        SELECT ('00000000-0000-4000-9000-' || lpad(n::text, 12, '0'))::uuid, 'Bench ' || n, 'UTC', 0 FROM generate_series(1, \(owners)) n
        """)
    try await database.query("""
        INSERT INTO habits (id, user_id, name)
        SELECT ('00000000-0000-4000-8000-' || lpad(n::text, 12, '0'))::uuid, ('00000000-0000-4000-9000-' || lpad(((n - 1) / 40 + 1)::text, 12, '0'))::uuid, 'Habit ' || n
        FROM generate_series(1, \(total)) n
        """)
}

/// The service's statements for one log, as pgbench runs them: the habit with its owner's
/// clock, the upsert, the feed line, the outbox row with its notification (one statement), and
/// the streak check's first window (the last eight days' values: `HabitRules.streak`).
let habitSQL = "('00000000-0000-4000-8000-' || lpad(:n::int::text, 12, '0'))::uuid"
let ownerSQL = "('00000000-0000-4000-9000-' || lpad(((:n::int - 1) / 40 + 1)::text, 12, '0'))::uuid"
func pgbenchScript(schema: String) -> String {
    let payload = String(repeating: "7b", count: 700)  // an encoded event is about 700 bytes
    return """
        \\set n random(\(habitsPerSide + 1), \(2 * habitsPerSide))
        \\set d random(0, 40000)
        BEGIN;
        SELECT h.id, h.user_id, h.name, h.emoji, h.color_hex, h.type::text, h.target_per_day, h.schedule_daily, h.schedule_weekmask, h.reminder_times, h.is_active, h.created_at, h.updated_at, p.timezone, p.day_start_hour FROM habits h JOIN profiles p ON p.id = h.user_id WHERE h.id = ('00000000-0000-4000-8000-' || lpad(:n::int::text, 12, '0'))::uuid AND h.user_id = ('00000000-0000-4000-9000-' || lpad(((:n::int - 1) / 40 + 1)::text, 12, '0'))::uuid;
        WITH previous AS (SELECT value FROM habit_logs WHERE habit_id = ('00000000-0000-4000-8000-' || lpad(:n::int::text, 12, '0'))::uuid AND log_date = '1990-01-01'::date + :d::int) INSERT INTO habit_logs AS l (habit_id, user_id, log_date, value, source) VALUES (('00000000-0000-4000-8000-' || lpad(:n::int::text, 12, '0'))::uuid, ('00000000-0000-4000-9000-' || lpad(((:n::int - 1) / 40 + 1)::text, 12, '0'))::uuid, '1990-01-01'::date + :d::int, 1, 'manual') ON CONFLICT (habit_id, log_date) DO UPDATE SET value = EXCLUDED.value, source = EXCLUDED.source, created_at = now() WHERE l.value <> EXCLUDED.value RETURNING id, habit_id, user_id, log_date, value, source, created_at, (SELECT value FROM previous);
        INSERT INTO activity_events (id, actor_id, hive_id, habit_id, type, data, dedupe_key, created_at) SELECT id, nullif(actor, '00000000-0000-0000-0000-000000000000'), nullif(hive, '00000000-0000-0000-0000-000000000000'), nullif(habit, '00000000-0000-0000-0000-000000000000'), type::activity_type, data::jsonb, nullif(dedupe, ''), at FROM unnest(ARRAY[gen_random_uuid()], ARRAY[('00000000-0000-4000-9000-' || lpad(((:n::int - 1) / 40 + 1)::text, 12, '0'))::uuid], ARRAY['00000000-0000-0000-0000-000000000000'::uuid], ARRAY[('00000000-0000-4000-8000-' || lpad(:n::int::text, 12, '0'))::uuid], ARRAY['habit_completed'], ARRAY['{"log_date":"2026-01-01"}'], ARRAY['habit_completed:' || :n::int || ':' || :d::int], ARRAY[now()]) AS e(id, actor, hive, habit, type, data, dedupe, at) ON CONFLICT (dedupe_key) DO NOTHING RETURNING id;
        WITH inserted AS (INSERT INTO outbox (event_id, topic, event_key, event_type, payload) VALUES (gen_random_uuid(), 'colony.habits', 'key', 'habit_logged', '\\x\(payload)'::bytea) RETURNING 1) SELECT pg_notify('\(schema)_outbox', '') FROM inserted;
        \(pgbenchCommand(RecentValuesSQL.sql, [habitSQL, ownerSQL, "'1990-01-01'::date + :d::int - 7", "'1990-01-01'::date + :d::int"]))
        COMMIT;
        """
}

/// Connection c's i-th log: c owns habits c+1, c+1+32, … (no two connections write the same
/// row), each logged on the past 365 days in turn.
func logRequest(_ connection: Int, _ i: Int, tokens: [Int: String], today: LocalDate) -> PlannedRequest {
    let owned = (habitsPerSide - (connection + 1)) / connections + 1
    let n = connection + 1 + ((i / 365) % owned) * connections
    let day = today.adding(days: -(i % 365))
    return PlannedRequest(method: "POST", path: "/habits/v1/habits/\(habitID(n).uuidString.lowercased())/logs", token: tokens[(n - 1) / 40 + 1]!,
                          body: "{\"date\":\"\(day)\",\"value\":1}")
}

/// 32 connections logging distinct (habit, day) pairs for the duration.
func runServiceLoad(base: String, tokens: [Int: String], today: LocalDate) async throws -> LoadResult {
    try await runHTTPLoad(connections: connections, seconds: seconds, makeRequest: { connection, i in
        let planned = logRequest(connection, i, tokens: tokens, today: today)
        var request = HTTPClientRequest(url: base + planned.path)
        request.method = .POST
        request.headers.add(name: "Authorization", value: "Bearer \(planned.token!)")
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(string: planned.body!))
        return request
    }, expect: .ok)
}

/// The out-of-process run's plan: logs as the in-process run sends them, interleaved over the
/// connections as wrk sends them.
func httpPlan(configuration: ServiceConfiguration, tokens: TestTokens, userTokens: [Int: String]) -> HTTPBenchPlan {
    let today = UserClock.utc.localDay(at: Date())
    let logs = (0..<(connections * 730)).map { i in logRequest(i % connections, i / connections, tokens: userTokens, today: today) }
    // Storage: where its export parts would go (colony-habits requires it; the bench writes none).
    var environment = HTTPBenchPlan.serviceEnvironment(database: configuration.database, environment: environment, tokens: tokens, topicPrefix: configuration.topicPrefix,
                                                       storage: true)
    environment["COLONY_HABITS_PHONE_PEPPER"] = "bench-phone-pepper-0123456789abcdef"
    return HTTPBenchPlan(executable: "colony-habits", environment: environment, schema: configuration.database.schema, scenarios: [
        PlannedScenario(name: "habits: log a habit", kind: "write", requests: logs, expectStatus: 200, connections: connections,
                        pgbenchScript: pgbenchScript(schema: configuration.database.schema)),
    ])
}

/// 10,000 hives of three members in three time zones, two days open; returns the job's time.
func advancementJob(_ database: Database, outbox: Outbox) async throws -> (seconds: Double, report: HiveJobs.ClosingReport) {
    let today = UserClock.utc.localDay(at: Date())
    try await database.query("""
        INSERT INTO profiles (id, display_name, timezone, day_start_hour)
        SELECT ('00000000-0000-4000-a000-' || lpad(n::text, 12, '0'))::uuid, 'Member ' || n,
               (ARRAY['UTC', 'America/New_York', 'Asia/Tokyo'])[n % 3 + 1], 4
        FROM generate_series(1, \(3 * hiveCount)) n
        """)
    try await database.query("""
        INSERT INTO hives (id, name, owner_id, current_length, last_advanced_on, last_closed_on)
        SELECT ('00000000-0000-4000-b000-' || lpad(n::text, 12, '0'))::uuid, 'Hive ' || n,
               ('00000000-0000-4000-a000-' || lpad((3 * n - 2)::text, 12, '0'))::uuid, 5, \(today.adding(days: -4)), \(today.adding(days: -4))
        FROM generate_series(1, \(hiveCount)) n
        """)
    try await database.query("""
        INSERT INTO hive_members (hive_id, user_id, role)
        SELECT ('00000000-0000-4000-b000-' || lpad(n::text, 12, '0'))::uuid, ('00000000-0000-4000-a000-' || lpad((3 * n - 2 + k)::text, 12, '0'))::uuid,
               CASE WHEN k = 0 THEN 'owner' ELSE 'member' END
        FROM generate_series(1, \(hiveCount)) n, generate_series(0, 2) k
        """)
    // Half the hives had everyone done three days ago; the other half miss one member.
    try await database.query("""
        INSERT INTO hive_member_days (hive_id, user_id, day_date, value)
        SELECT m.hive_id, m.user_id, \(today.adding(days: -3)), 1 FROM hive_members m
        WHERE m.hive_id::text >= '00000000-0000-4000-b000-' AND (m.role = 'owner' OR right(m.hive_id::text, 1) IN ('0', '2', '4', '6', '8'))
        """)
    let jobs = HiveJobs(database: database, outbox: outbox, logger: TestEnvironment.logger)
    let started = monotonicNanoseconds()
    let report = try await jobs.closeDueDays()
    return (Double(monotonicNanoseconds() - started) / 1e9, report)
}

func benchmark() async throws {
print("colony-habits-bench: \(connections) connections, \(seconds) s per phase, \(hiveCount) hives for the job")
// The service gets as many database connections as pgbench has clients: on this disk the commit's
// WAL flush dominates, and group commit batches as many transactions as are waiting.
try await withTestSchema(poolSize: connections) { databaseConfiguration in
    let port = try freePort()
    let tokens = TestTokens()
    let configuration = ServiceConfiguration(
        service: .habits, app: .habithive, httpHost: "127.0.0.1", httpPort: port, logLevel: .error,
        database: databaseConfiguration, kafkaBrokers: environment.kafkaBrokers, topicPrefix: TestKafka.topicPrefix(),
        tokens: tokens.verifierConfiguration(audience: .habithive)
    )
    try await ServiceHost.migrate(HabitsService.migrations, configuration: configuration, logger: TestEnvironment.logger)
    let database = Database(configuration: databaseConfiguration, logger: TestEnvironment.logger)
    try await withRunning(database) {
        try await seedHabits(database)
        var userTokens: [Int: String] = [:]
        for n in 1...((2 * habitsPerSide + 39) / 40) { userTokens[n] = try await tokens.token(user: userID(n), app: .habithive) }
        if let planFile = httpPlanFile() {
            try await serveHTTPPlan(httpPlan(configuration: configuration, tokens: tokens, userTokens: userTokens), to: planFile)
            return
        }
        let base = "http://127.0.0.1:\(port)"
        try await withThrowingTaskGroup(of: Void.self) { group in
            let exports = FileSystemStorageBackend(root: FileManager.default.temporaryDirectory.appendingPathComponent(uniqueName("colony-bench-exports")).path)
            group.addTask { try await ServiceHost.run(HabitsService.definition(settings: HabitsSettings(phonePepper: "bench"), exports: exports), configuration: configuration) }
            defer { group.cancelAll() }
            while (try? await HTTPClient.shared.execute(HTTPClientRequest(url: "\(base)/ready"), timeout: .seconds(2)))?.status != .ok {
                try await Task.sleep(for: .milliseconds(200))
            }
            let today = UserClock.utc.localDay(at: Date())
            let script = pgbenchScript(schema: databaseConfiguration.schema)
            let baseline = try await runPgbench(script: script, schema: databaseConfiguration.schema, environment: environment, connections: connections, seconds: seconds)
            // Profile: PostgresNIO sends each statement unnamed (parse and plan every time), as
            // pgbench does with -M extended; the gap between the two modes is that cost.
            let extended = try await runPgbench(script: script, schema: databaseConfiguration.schema, environment: environment, connections: connections, seconds: seconds, mode: "extended")
            let service = try await runServiceLoad(base: base, tokens: userTokens, today: today)
            print("")
            print("log a habit (insert log, feed line, outbox event), \(connections) connections:")
            print("  pgbench, same SQL transaction  \(format(baseline.rate, 0)) tx/s   p50 \(format(baseline.p50, 2)) ms   p99 \(format(baseline.p99, 2)) ms")
            print("  pgbench -M extended (no plan reuse, as PostgresNIO's unnamed statements)  \(format(extended.rate, 0)) tx/s   p50 \(format(extended.p50, 2)) ms   p99 \(format(extended.p99, 2)) ms")
            print("  habits service over HTTP      \(format(service.rate, 0)) req/s  p50 \(format(service.p50, 2)) ms   p99 \(format(service.p99, 2)) ms   errors \(service.errors)")
            // Where the service's time goes: its own per-route histogram (handler + database) against
            // what the load generator measured (plus HTTP and the generator's share of the CPU).
            let serverSideMean = try await serverMean(metricsURL: "\(base)/metrics", method: "POST", pathContains: "logs")
            print("  server-side mean per request (handler and database, from /metrics) \(format(serverSideMean, 2)) ms; client-side mean \(format(service.mean, 2)) ms")
            print("  service / pgbench -M extended: \(format(service.rate / extended.rate, 2))")
            let ratio = service.rate / baseline.rate
            let p99Budget = 2 * baseline.p99 + 5
            print("  throughput ratio \(format(ratio, 2)) (target >= 0.5: \(ratio >= 0.5 ? "met" : "NOT met"));  p99 \(format(service.p99, 2)) ms vs budget 2 x pgbench p99 + 5 = \(format(p99Budget, 2)) ms (\(service.p99 <= p99Budget ? "met" : "NOT met"))")

            let (jobSeconds, report) = try await advancementJob(database, outbox: Outbox(schema: databaseConfiguration.schema, topicPrefix: configuration.topicPrefix))
            print("")
            print("hourly advancement job, \(hiveCount) hives x 3 members:")
            print("  \(format(jobSeconds, 2)) s: \(report.hives) hives, \(report.closedDays) days closed, \(report.advanced) advanced, \(report.broken) broken (target < 10 s: \(jobSeconds < 10 ? "met" : "NOT met"))")
        }
    }
}
}

try await benchmark()
