import AsyncHTTPClient
import ColonyModels
import ColonyPlatform
import ColonyStorage
import ColonyTesting
import Foundation
import NearbyService
import NIOCore
import PostgresNIO

// colony-nearby-bench: the nearby service in release mode on the local Postgres (PostGIS) and
// broker, with 1,000,000 located users spread over a city (60 neighbourhood clusters of normally
// distributed people over about 30 × 30 km, plus a uniform background):
//   1. nearby queries from one client: p50/p95/p99, beside pgbench running the same PostGIS query
//      with one client (target: p95 ≤ 10 ms);
//   2. nearby queries at 32 connections: requests/s and p50/p99, beside pgbench at 32 clients
//      (target ≥ 0.5× pgbench);
//   3. location updates/s at 32 connections (the report's whole transaction), beside pgbench running the same SQL.
// Run through scripts/bench.   colony-nearby-bench [--seconds S] [--users N] [--http-plan FILE]
// With --http-plan, it seeds the same users and writes the plan for the out-of-process run
// (scripts/bench http: the colony-nearby executable under wrk) instead of running the load itself.

let (seconds, userCount): (Int, Int) = {
    var seconds = 15
    var users = 1_000_000
    var iterator = argumentsWithoutHTTPPlan().makeIterator()
    while let argument = iterator.next() {
        switch (argument, iterator.next().flatMap(Int.init)) {
        case ("--seconds", let value?) where value > 0: seconds = value
        case ("--users", let value?) where value >= 10_000: users = value
        default:
            FileHandle.standardError.write(Data("usage: colony-nearby-bench [--seconds S] [--users N (>= 10000)]\n".utf8))
            exit(2)
        }
    }
    return (seconds, users)
}()

let environment = try TestEnvironment.current()
let connections = 32
/// The users who query and move: every 100th seeded user, so they sit in the same spread.
let actorCount = 2000
func actor(_ index: Int) -> Int { index * (userCount / actorCount) + 1 }
func userID(_ n: Int) -> UUID { UUID(uuidString: "00000000-0000-4000-8000-\(String(format: "%012d", n))")! }
let userSQL = "('00000000-0000-4000-8000-' || lpad(:n::int::text, 12, '0'))::uuid"
let centre = (latitude: 40.73, longitude: -73.95)

/// 1M profiles that share, and their points: 80% in 60 clusters (σ ≈ 900 m), 20% uniform over
/// the ±15 km square. The GiST index is built after the load, as a bulk import would.
func seed(_ database: Database) async throws {
    try await database.query("""
        INSERT INTO profiles (id, name, bio, school, birthday, share_location)
        SELECT ('00000000-0000-4000-8000-' || lpad(n::text, 12, '0'))::uuid, 'User ' || n, 'Bio of user ' || n, 'School ' || (n % 40),
               date '1990-01-01' + (n % 7000)::int, true
        FROM generate_series(1, \(userCount)) n
        """)
    try await database.query("DROP INDEX locations_position")
    try await database.query("DROP INDEX locations_shown")
    try await database.query("""
        WITH clusters AS (
            SELECT c, \(centre.latitude) + (random() - 0.5) * 0.27 AS lat, \(centre.longitude) + (random() - 0.5) * 0.35 AS lon
            FROM generate_series(0, 59) c
        ), people AS (
            SELECT n, sqrt(-2 * ln(1 - random())) AS r, 2 * pi() * random() AS theta, random() AS u, random() AS v
            FROM generate_series(1, \(userCount)) n
        )
        INSERT INTO locations (user_id, position, shown, accuracy_m, updated_at)
        SELECT id, point, point, 10, now() FROM (
            SELECT ('00000000-0000-4000-8000-' || lpad(p.n::text, 12, '0'))::uuid AS id,
                   ST_SetSRID(ST_MakePoint(
                       CASE WHEN p.n % 5 = 0 THEN \(centre.longitude) + (p.u - 0.5) * 0.35 ELSE k.lon + p.r * sin(p.theta) * 0.0107 END,
                       CASE WHEN p.n % 5 = 0 THEN \(centre.latitude) + (p.v - 0.5) * 0.27 ELSE k.lat + p.r * cos(p.theta) * 0.0081 END
                   ), 4326)::geography AS point
            FROM people p JOIN clusters k ON k.c = p.n % 60
        ) AS located
        """)
    try await database.query("CREATE INDEX locations_position ON locations USING gist (position)")
    try await database.query("CREATE INDEX locations_shown ON locations USING gist (shown)")
    try await database.query("ANALYZE profiles")
    try await database.query("ANALYZE locations")
}

/// The service's nearby query for user :n (the radius, TTL and limit as the service sends them).
let queryScript = """
    \\set i random(0, \(actorCount - 1))
    \\set n :i * \(userCount / actorCount) + 1
    WITH me AS (SELECT l.position FROM locations l JOIN profiles p ON p.id = l.user_id WHERE l.user_id = \(userSQL) AND p.share_location AND l.updated_at > now() - make_interval(secs => 86400)) SELECT p.id, p.name, p.bio, p.school, p.birthday, p.social_links::text, p.photo_version, p.dark_mode, p.satellite_map, p.share_location, p.created_at, p.updated_at, ST_Y(l.position::geometry), ST_X(l.position::geometry), ST_Distance(l.position, me.position) FROM me JOIN locations l ON ST_DWithin(l.position, me.position, 152.4) JOIN profiles p ON p.id = l.user_id WHERE l.user_id <> \(userSQL) AND p.share_location AND l.updated_at > now() - make_interval(secs => 86400) AND (NULL::uuid IS NULL OR l.user_id = NULL::uuid) AND NOT EXISTS (SELECT 1 FROM user_blocks b WHERE (b.blocker_id = \(userSQL) AND b.blocked_id = l.user_id) OR (b.blocker_id = l.user_id AND b.blocked_id = \(userSQL))) ORDER BY ST_Distance(l.position, me.position), l.user_id LIMIT 100;
    """

/// A location report as the service runs it (`Nearby.report`, one transaction): the profile, the
/// quota hit, the last move (locked), who sees the user and whom the user sees, the upsert, both
/// again, and the `location_updated` event into the outbox with its notification: the service's
/// own SQL text (`LocationSQL`, `QuotaHit`) with pgbench's variables for its parameters.
func updateScript(schema: String) -> String {
    let payload = String(repeating: "7b", count: 300)
    let latitude = "\(centre.latitude) + :a * 0.00001", longitude = "\(centre.longitude)"
    let radius = "\(Double(NearbySettings().radiusFeet) * 0.3048)", ttl = "86400"
    let inRange = [userSQL, radius, ttl]
    return """
        \\set i random(0, \(actorCount - 1))
        \\set n :i * \(userCount / actorCount) + 1
        \\set a random(0, 999)
        BEGIN;
        \(pgbenchCommand(LocationSQL.profile, [userSQL]))
        \(pgbenchCommand(QuotaHit.sql, ["'report|' || \(userSQL)::text || '|60'", "60", "1", "1000000"]))
        \(pgbenchCommand(LocationSQL.lastMove, [userSQL, longitude, latitude, ttl]))
        \(pgbenchCommand(LocationSQL.Watchers.sql, inRange))
        \(pgbenchCommand(LocationSQL.Visible.sql, inRange))
        \(pgbenchCommand(LocationSQL.report, [userSQL, longitude, latitude, "5", "\(centre.longitude + 0.0002)", "\(centre.latitude) + :a * 0.00001 + 0.0002"]))
        \(pgbenchCommand(LocationSQL.Watchers.sql, inRange))
        \(pgbenchCommand(LocationSQL.Visible.sql, inRange))
        WITH inserted AS (INSERT INTO outbox (event_id, topic, event_key, event_type, payload) VALUES (gen_random_uuid(), 'colony.nearby', 'key', 'location_updated', '\\x\(payload)'::bytea) RETURNING 1) SELECT pg_notify('\(schema)_outbox', '') FROM inserted;
        COMMIT;
        """
}

func line(_ label: String, _ result: LoadResult, unit: String = "req/s", p95: Double? = nil) -> String {
    "  \(label.padding(toLength: 44, withPad: " ", startingAt: 0)) \(format(result.rate, 0)) \(unit)  p50 \(format(result.p50, 2)) ms" +
        (p95.map { "  p95 \(format($0, 2)) ms" } ?? "") + "  p99 \(format(result.p99, 2)) ms" + (result.errors > 0 ? "  errors \(result.errors)" : "")
}

/// A location update as the in-process run sends it: connection c's i-th, near the centre.
func locationBody(_ connection: Int, _ iteration: Int) -> String {
    let latitude = centre.latitude + Double((connection * 31 + iteration) % 1000) * 0.00001
    return "{\"latitude\":\(latitude),\"longitude\":\(centre.longitude),\"accuracy\":5}"
}

/// The out-of-process run's plan: nearby queries from the actors in the in-process run's order,
/// then location updates. The positions stay fresh for the run (a day's TTL, as in-process) and
/// the per-user quotas are lifted: wrk's actors query far more often than a person.
func httpPlan(configuration: ServiceConfiguration, tokens: TestTokens, bearer: [String]) -> HTTPBenchPlan {
    let queries = (0..<8192).map { i in
        PlannedRequest(path: "/nearby/v1/nearby", token: bearer[(i % connections * 7919 + i / connections * 104_729) % bearer.count])
    }
    let updates = (0..<8192).map { i in
        PlannedRequest(method: "PUT", path: "/nearby/v1/location", token: bearer[i % bearer.count], body: locationBody(i % connections, i / connections))
    }
    var environment = HTTPBenchPlan.serviceEnvironment(database: configuration.database, environment: environment, tokens: tokens, topicPrefix: configuration.topicPrefix,
                                                       storage: true)
    environment["COLONY_NEARBY_LOCATION_TTL_SECONDS"] = "86400"
    environment["COLONY_NEARBY_JOB_INTERVAL_SECONDS"] = "3600"
    environment["COLONY_NEARBY_QUERY_RATE"] = "1000000/60"
    environment["COLONY_NEARBY_REPORT_RATE"] = "1000000/60"
    environment["COLONY_NEARBY_MAX_SPEED_MPS"] = "1000"
    let schema = configuration.database.schema
    return HTTPBenchPlan(executable: "colony-nearby", environment: environment, schema: schema, scenarios: [
        PlannedScenario(name: "nearby: people within 500 ft", kind: "read", requests: queries, expectStatus: 200, connections: connections, pgbenchScript: queryScript),
        PlannedScenario(name: "nearby: location update", kind: "write", requests: updates, expectStatus: 200, connections: connections,
                        pgbenchScript: updateScript(schema: schema)),
    ])
}

func benchmark() async throws {
    print("colony-nearby-bench: \(userCount) located users, \(seconds) s per phase")
    try await withTestSchema(poolSize: connections, extensions: NearbyService.extensions) { databaseConfiguration in
        let port = try freePort()
        let tokens = TestTokens()
        let configuration = ServiceConfiguration(
            service: .nearby, app: .socialspot, httpHost: "127.0.0.1", httpPort: port, logLevel: .error,
            database: databaseConfiguration, kafkaBrokers: environment.kafkaBrokers, topicPrefix: TestKafka.topicPrefix(),
            tokens: tokens.verifierConfiguration(audience: .socialspot)
        )
        try await ServiceHost.migrate(NearbyService.migrations, configuration: configuration, logger: TestEnvironment.logger)
        let database = Database(configuration: databaseConfiguration, logger: TestEnvironment.logger)
        let storageRoot = FileManager.default.temporaryDirectory.appendingPathComponent(uniqueName("nearby-bench")).path
        defer { try? FileManager.default.removeItem(atPath: storageRoot) }
        try await withRunning(database) {
            let seeding = monotonicNanoseconds()
            try await seed(database)
            print("  seeded in \(format(Double(monotonicNanoseconds() - seeding) / 1e9, 1)) s")
            var actorTokens: [String] = []
            for index in 0..<actorCount { actorTokens.append(try await tokens.token(user: userID(actor(index)), app: .socialspot)) }
            let bearer = actorTokens
            if let planFile = httpPlanFile() {
                try await serveHTTPPlan(httpPlan(configuration: configuration, tokens: tokens, bearer: bearer), to: planFile)
                return
            }
            let base = "http://127.0.0.1:\(port)"
            // Positions stay fresh for the whole run: the TTL is a day here.
            let settings = NearbySettings(locationTTLSeconds: 86_400, jobInterval: .seconds(3600))
            let storage = Storage(backend: FileSystemStorageBackend(root: storageRoot), publicBaseURL: base, signingKey: Array("bench-signing-key-0123456789abcdef".utf8))
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await ServiceHost.run(NearbyService.definition(settings: settings, storage: storage), configuration: configuration) }
                defer { group.cancelAll() }
                while (try? await HTTPClient.shared.execute(HTTPClientRequest(url: "\(base)/ready"), timeout: .seconds(2)))?.status != .ok {
                    try await Task.sleep(for: .milliseconds(200))
                }
                let sample = try await HTTPClient.shared.execute({
                    var request = HTTPClientRequest(url: "\(base)/nearby/v1/nearby")
                    request.headers.add(name: "Authorization", value: "Bearer \(bearer[0])")
                    return request
                }(), timeout: .seconds(10))
                let body = try await sample.body.collect(upTo: 1 << 22)
                let found = ((try? JSONDecoder().decode(JSONValue.self, from: Data(buffer: body)))?["users"]?.arrayValue?.count) ?? -1
                print("  a sample query finds \(found) people within 500 ft (limit 100)")

                @Sendable func nearbyRequest(_ connection: Int, _ iteration: Int) -> HTTPClientRequest {
                    var request = HTTPClientRequest(url: "\(base)/nearby/v1/nearby")
                    request.headers.add(name: "Authorization", value: "Bearer \(bearer[(connection * 7919 + iteration * 104_729) % bearer.count])")
                    return request
                }
                let schema = databaseConfiguration.schema

                // 1. One client.
                let singlePg = try await runPgbench(script: queryScript, schema: schema, environment: environment, connections: 1, seconds: seconds)
                let single = try await runHTTPLoad(connections: 1, seconds: seconds, makeRequest: nearbyRequest, expect: .ok)
                print("")
                print("nearby query, one client:")
                print(line("pgbench, same PostGIS query", singlePg, unit: "q/s", p95: singlePg.p95))
                print(line("nearby service over HTTP", single, p95: single.p95))
                print("  p95 \(format(single.p95, 2)) ms (target <= 10 ms: \(single.p95 <= 10 ? "met" : "NOT met"))")

                // 2. 32 connections.
                let manyPg = try await runPgbench(script: queryScript, schema: schema, environment: environment, connections: connections, seconds: seconds)
                let manyExtended = try await runPgbench(script: queryScript, schema: schema, environment: environment, connections: connections, seconds: seconds, mode: "extended")
                let before = CPUSnapshot.now()
                let many = try await runHTTPLoad(connections: connections, seconds: seconds, makeRequest: nearbyRequest, expect: .ok)
                let usage = CPUSnapshot.now().usage(since: before)
                let serverSide = try await serverMean(metricsURL: "\(base)/metrics", method: "GET", pathContains: "nearby")
                print("")
                print("nearby query, \(connections) connections:")
                print(line("pgbench, same PostGIS query", manyPg, unit: "q/s"))
                print(line("pgbench -M extended (PostgresNIO's way)", manyExtended, unit: "q/s"))
                print(line("nearby service over HTTP", many))
                print("  server-side mean (handler and database, /metrics, both phases) \(format(serverSide, 2)) ms; client-side mean \(format(many.mean, 2)) ms")
                print("  CPU during the service run: \(usage)")
                let ratio = many.rate / manyPg.rate
                print("  throughput ratio \(format(ratio, 2)) (target >= 0.5: \(ratio >= 0.5 ? "met" : "NOT met")); vs -M extended \(format(many.rate / manyExtended.rate, 2))")

                // 3. Location updates.
                let updatesPg = try await runPgbench(script: updateScript(schema: schema), schema: schema, environment: environment, connections: connections, seconds: seconds)
                let updates = try await runHTTPLoad(connections: connections, seconds: seconds, makeRequest: { connection, iteration in
                    var request = HTTPClientRequest(url: "\(base)/nearby/v1/location")
                    request.method = .PUT
                    request.headers.add(name: "Authorization", value: "Bearer \(bearer[(connection + iteration * connections) % bearer.count])")
                    request.headers.add(name: "Content-Type", value: "application/json")
                    request.body = .bytes(ByteBuffer(string: locationBody(connection, iteration)))
                    return request
                }, expect: .ok)
                print("")
                print("location updates, \(connections) connections:")
                print(line("pgbench, same upsert and outbox event", updatesPg, unit: "tx/s"))
                print(line("nearby service over HTTP", updates))
                print("  ratio \(format(updates.rate / updatesPg.rate, 2))")
            }
        }
    }
}

try await benchmark()
