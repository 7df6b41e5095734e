import AsyncHTTPClient
import ColonyModels
import ColonyPlatform
import ColonyStorage
import ColonyTesting
import Foundation
import NIOCore
import PostgresNIO
import ProjectsService

// colony-projects-bench: the projects service in release mode on the local Postgres and broker,
// with 200 published projects of 20 creators and 100,000 posts among them (spread over the past
// 30 days), 64 readers who each follow all 200 projects and liked about 1% of the posts:
//   1. feed reads/s and p50/p99 at 32 connections (20 posts with project, builder and
//      `liked_by_me`: half the newest page, half a cursor at a random depth), beside pgbench
//      running the feed's SQL (`FeedPage`) at 32 clients;
//   2. follow requests/s and p50/p99 at 32 connections (3,200 other users each following projects
//      they did not follow yet: the follow, its counter, the support action and karma, the outbox
//      event, in one transaction), beside pgbench running the same statements as one transaction.
// Run through scripts/bench.   colony-projects-bench [--seconds S] [--posts N] [--http-plan FILE]
// With --http-plan, it seeds the same data and writes the plan for the out-of-process run
// (scripts/bench http: the colony-projects executable under wrk) instead of running the load itself.

let (seconds, postCount): (Int, Int) = {
    var seconds = 20
    var posts = 100_000
    var iterator = argumentsWithoutHTTPPlan().makeIterator()
    while let argument = iterator.next() {
        switch (argument, iterator.next().flatMap(Int.init)) {
        case ("--seconds", let value?) where value > 0: seconds = value
        case ("--posts", let value?) where value >= 1000: posts = value
        default:
            FileHandle.standardError.write(Data("usage: colony-projects-bench [--seconds S] [--posts N (>= 1000)]\n".utf8))
            exit(2)
        }
    }
    return (seconds, posts)
}()

let environment = try TestEnvironment.current()
let connections = 32
let projectCount = 200
let creatorCount = 20
let readerCount = 64
let pageLimit = ProjectsStatements.feedPageSize
/// Users who follow during the follow phase: 100 per connection, each following the 200 projects
/// in turn, so every request is a new follow.
let followersPerConnection = 100
let followerCount = connections * followersPerConnection
let firstFollower = 1001
/// The service's Postgres pool: half the HTTP connections (`BENCH_POOL` to change). Postgres is
/// CPU-bound at either size; with 32 backends runnable beside the service's few threads on two
/// cores, every hop of a request through the service (HTTP, handler, Postgres reply, response)
/// waits behind them and the tail grows (feed p99 about 2.5× higher at 32 than at 16), while
/// requests queued for a pooled connection wait cheaply.
let poolSize = Int(ProcessInfo.processInfo.environment["BENCH_POOL"] ?? "") ?? connections / 2

/// Deterministic ids, so pgbench can name a user, builder, project or post from a number.
func userID(_ n: Int) -> UUID { UUID(uuidString: "00000000-0000-4000-9000-\(String(format: "%012d", n))")! }
func projectID(_ n: Int) -> UUID { UUID(uuidString: "00000000-0000-4000-a000-\(String(format: "%012d", n))")! }
func postID(_ n: Int) -> UUID { UUID(uuidString: "00000000-0000-4000-c000-\(String(format: "%012d", n))")! }
func idSQL(_ prefix: String, _ number: String) -> String { "('00000000-0000-4000-\(prefix)-' || lpad((\(number))::int::text, 12, '0'))::uuid" }

/// Post n was written `start + n · step` microseconds after 1970, so its cursor follows from n.
let (historyStart, historyStep): (Int64, Int64) = {
    let span: Int64 = 30 * 86_400 * 1_000_000
    let now = Int64(Date().timeIntervalSince1970) * 1_000_000
    return (now - span - 3_600_000_000, span / Int64(postCount))
}()
func cursor(_ n: Int) -> String { "\(historyStart + Int64(n) * historyStep)_\(postID(n).uuidString.lowercased())" }

/// Readers 1…64, creators 101…120, followers 1001…4200, each with a builder and karma; 200
/// projects (project p by creator (p − 1) mod 20); 100,000 posts, post n in project (n − 1) mod
/// 200 + 1, in time order; every reader follows every project; reader r liked the posts n with
/// n mod 97 = r mod 97.
func seed(_ database: Database) async throws {
    let userNumbers = "SELECT generate_series(1, \(readerCount)) UNION ALL SELECT generate_series(101, \(100 + creatorCount)) UNION ALL SELECT generate_series(\(firstFollower), \(firstFollower + followerCount - 1))"
    try await database.query("""
        INSERT INTO builders (id, user_id, name, is_creator)
        SELECT \(unescaped: idSQL("b000", "n")), \(unescaped: idSQL("9000", "n")), 'Bench builder ' || n, n BETWEEN 101 AND \(100 + creatorCount)
        FROM (\(unescaped: userNumbers)) AS u(n)
        """)
    try await database.query("INSERT INTO karma (id, user_id) SELECT gen_random_uuid(), user_id FROM builders")
    try await database.query("""
        INSERT INTO projects (id, builder_id, title, tagline, public_slug, mood, created_at)
        SELECT \(unescaped: idSQL("a000", "p")), \(unescaped: idSQL("b000", "(p - 1) % \(creatorCount) + 101")), 'Bench project ' || p, 'Building thing ' || p,
               'bench-project-' || p, 'green', now() - interval '60 days' + p * interval '1 minute'
        FROM generate_series(1, \(projectCount)) p
        """)
    try await database.query("""
        INSERT INTO posts (id, project_id, content, created_at, updated_at)
        SELECT \(unescaped: idSQL("c000", "n")), \(unescaped: idSQL("a000", "(n - 1) % \(projectCount) + 1")),
               'Update ' || n || ': ' || repeat('shipped a thing, ', (1 + n % 6)::int),
               'epoch'::timestamptz + (\(historyStart) + n::int8 * \(historyStep)) * interval '1 microsecond',
               'epoch'::timestamptz + (\(historyStart) + n::int8 * \(historyStep)) * interval '1 microsecond'
        FROM generate_series(1, \(postCount)) n
        """)
    try await database.query("""
        INSERT INTO follows (id, user_id, project_id, created_at)
        SELECT gen_random_uuid(), \(unescaped: idSQL("9000", "r")), \(unescaped: idSQL("a000", "p")), now() - interval '1 day'
        FROM generate_series(1, \(readerCount)) r, generate_series(1, \(projectCount)) p
        """)
    try await database.query("""
        INSERT INTO likes (id, user_id, post_id)
        SELECT gen_random_uuid(), \(unescaped: idSQL("9000", "r")), \(unescaped: idSQL("c000", "n"))
        FROM generate_series(1, \(readerCount)) r, generate_series(1, \(postCount)) n WHERE n % 97 = r % 97
        """)
    try await database.query("UPDATE projects p SET follower_count = (SELECT count(*) FROM follows f WHERE f.project_id = p.id)")
    try await database.query("UPDATE posts p SET like_count = l.count FROM (SELECT post_id, count(*) AS count FROM likes GROUP BY post_id) l WHERE l.post_id = p.id")
    try await database.query("VACUUM (ANALYZE) builders, karma, projects, posts, follows, likes")
}

/// The follow phase's users back to following nothing, with no karma (between runs).
func resetFollowers(_ database: Database) async throws {
    for statement in resetFollowersSQL() { try await database.query("\(unescaped: statement)") }
}

func resetFollowersSQL() -> [String] {
    let range = "user_id BETWEEN '\(userID(firstFollower))' AND '\(userID(firstFollower + followerCount - 1))'"
    return [
        "DELETE FROM follows WHERE \(range)",
        "DELETE FROM karma_awards WHERE \(range)",
        "DELETE FROM support_actions WHERE \(range)",
        "UPDATE karma SET total_points = 0, level = 1 WHERE \(range)",
        "UPDATE projects p SET follower_count = (SELECT count(*) FROM follows f WHERE f.project_id = p.id)",
        "VACUUM (ANALYZE) follows, karma_awards, support_actions, karma, projects",
    ]
}

func count(_ database: Database, _ sql: String) async throws -> Int {
    try await database.query("\(unescaped: sql)").collect().first?.decode(Int.self) ?? -1
}

/// A prepared statement's SQL with its `$n` parameters replaced by pgbench expressions, on one line.
func inline(_ sql: String, _ values: [Int: String]) -> String {
    var text = sql
    for (index, value) in values.sorted(by: { $0.key > $1.key }) { text = text.replacingOccurrences(of: "$\(index)", with: value) }
    return text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: " ")
}

/// What the service runs for one feed page (`PostStore.feed`, outside a transaction): the one
/// feed statement, half for the newest page, half after a random post.
func feedScript() -> String {
    let user = idSQL("9000", ":u")
    let newest = inline(ProjectsStatements.feedPage, [1: user, 2: "\(ProjectsStatements.firstPage.micros)::int8", 3: "'\(ProjectsStatements.firstPage.id.uuidString.lowercased())'::uuid"])
    let deeper = inline(ProjectsStatements.feedPage, [1: user, 2: ":c::int8", 3: idSQL("c000", ":k")])
    return """
        \\set u random(1, \(readerCount))
        \\set r random(0, 1)
        \\set k random(\(pageLimit + 1), \(postCount))
        \\set c \(historyStart) + :k * \(historyStep)
        \\if :r = 0
        \(newest);
        \\else
        \(deeper);
        \\endif
        """
}

/// What the service writes for one follow (`Projects.follow`): the builder (`EnsureBuilder`), the
/// project (`ProjectByID`), the follow with counter, award, action and karma (`FollowProject`),
/// the `project_followed` event into the outbox with its notification, in one transaction. The
/// payload is a real encoded event.
func followScript(schema: String, topic: String, payload: [UInt8]) -> String {
    let user = idSQL("9000", ":u"), project = idSQL("a000", ":p")
    let hex = payload.map { String(format: "%02x", $0) }.joined()
    return """
        \\set u random(\(firstFollower), \(firstFollower + followerCount - 1))
        \\set p random(1, \(projectCount))
        BEGIN;
        \(inline(ProjectsStatements.ensureBuilder, [1: user, 2: "gen_random_uuid()", 3: "gen_random_uuid()", 4: "'Supporter'"]));
        \(inline(ProjectsStatements.projectByID, [1: project, 2: user]));
        \(inline(ProjectsStatements.follow, [1: user, 2: project, 3: "gen_random_uuid()", 4: "gen_random_uuid()", 5: "5"]));
        WITH inserted AS (INSERT INTO outbox (event_id, topic, event_key, event_type, payload) VALUES (gen_random_uuid(), '\(topic)', '\(projectID(1).uuidString.lowercased())', '\(EventType.projectFollowed.rawValue)', '\\x\(hex)'::bytea) RETURNING 1) SELECT pg_notify('\(schema)_outbox', '') FROM inserted;
        COMMIT;
        """
}

/// The reader a connection's `iteration`th feed request comes from: all 64 in turn.
func reader(_ connection: Int, _ iteration: Int) -> Int { (connection + connections * (iteration % 2)) % readerCount + 1 }

/// Even requests read the newest page, odd ones a page after a random post.
func feedRequest(base: String, tokens: [Int: String], connection: Int, iteration: Int) -> HTTPClientRequest {
    let query = iteration % 2 == 0 ? "limit=\(pageLimit)" : "limit=\(pageLimit)&cursor=\(cursor(Int.random(in: (pageLimit + 1)...postCount)))"
    var request = HTTPClientRequest(url: "\(base)/projects/v1/feed?\(query)")
    request.headers.add(name: "Authorization", value: "Bearer \(tokens[reader(connection, iteration)]!)")
    return request
}

/// Connection c's follower i (of 100) follows its projects in turn, starting at a different one per
/// connection (so, like pgbench's random picks, the connections do not all queue on one project's
/// row at once): never the same pair twice within a run.
func followRequest(base: String, tokens: [Int: String], connection: Int, iteration: Int) -> HTTPClientRequest {
    let follower = firstFollower + connection * followersPerConnection + (iteration / projectCount) % followersPerConnection
    let project = (iteration + connection * (projectCount / connections)) % projectCount + 1
    var request = HTTPClientRequest(url: "\(base)/projects/v1/projects/\(projectID(project))/follow")
    request.method = .POST
    request.headers.add(name: "Authorization", value: "Bearer \(tokens[follower]!)")
    return request
}

/// One request, its status and JSON body, to check the set-up before the load.
func probe(_ request: HTTPClientRequest) async throws -> (UInt, [String: Any]) {
    let response = try await HTTPClient.shared.execute(request, timeout: .seconds(10))
    let body = try await response.body.collect(upTo: 1 << 22)
    return (response.status.code, (try? JSONSerialization.jsonObject(with: Data(body.readableBytesView))) as? [String: Any] ?? [:])
}

struct Phase {
    var baseline: LoadResult
    var extended: LoadResult
    var service: LoadResult
    var serverMean: Double
    var pgbenchCPU: CPUUsage
    var serviceCPU: CPUUsage
}

/// pgbench (prepared, then extended), then the service under HTTP load, with CPU shares;
/// `reset` runs before each of the three.
func runPhase(script: String, schema: String, metricsURL: String, method: String, route: String, reset: () async throws -> Void,
              load: () async throws -> LoadResult) async throws -> Phase {
    try await reset()
    let pgbenchStart = CPUSnapshot.now()
    let baseline = try await runPgbench(script: script, schema: schema, environment: environment, connections: connections, seconds: seconds)
    let pgbenchCPU = CPUSnapshot.now().usage(since: pgbenchStart)
    try await reset()
    // The service's own statements on the hot paths are prepared; everything else goes unnamed
    // (parsed and planned every time), as pgbench does with -M extended.
    let extended = try await runPgbench(script: script, schema: schema, environment: environment, connections: connections, seconds: seconds, mode: "extended")
    try await reset()
    let serviceStart = CPUSnapshot.now()
    let service = try await load()
    let serviceCPU = CPUSnapshot.now().usage(since: serviceStart)
    let serverSide = try await serverMean(metricsURL: metricsURL, method: method, pathContains: route)
    return Phase(baseline: baseline, extended: extended, service: service, serverMean: serverSide, pgbenchCPU: pgbenchCPU, serviceCPU: serviceCPU)
}

func report(_ title: String, _ phase: Phase, unit: String) {
    let (baseline, extended, service) = (phase.baseline, phase.extended, phase.service)
    print("")
    print(title)
    print("  pgbench, same SQL             \(format(baseline.rate, 0)) tx/s   p50 \(format(baseline.p50, 2)) ms   p99 \(format(baseline.p99, 2)) ms   mean \(format(baseline.mean, 2)) ms")
    print("  pgbench -M extended (no plan reuse)  \(format(extended.rate, 0)) tx/s   p50 \(format(extended.p50, 2)) ms   p99 \(format(extended.p99, 2)) ms   mean \(format(extended.mean, 2)) ms")
    print("  projects service over HTTP    \(format(service.rate, 0)) \(unit)  p50 \(format(service.p50, 2)) ms   p99 \(format(service.p99, 2)) ms   errors \(service.errors)")
    print("  server-side mean per request (handler and database, from /metrics) \(format(phase.serverMean, 2)) ms; client-side mean \(format(service.mean, 2)) ms")
    print("  CPU during pgbench: \(phase.pgbenchCPU)")
    print("  CPU during the service run: \(phase.serviceCPU)")
    let pgbenchCost = phase.pgbenchCPU.machine / baseline.rate * 1000
    let serviceOwn = phase.serviceCPU.process / service.rate * 1000, serviceOther = max(0, phase.serviceCPU.machine - phase.serviceCPU.process) / service.rate * 1000
    print("  CPU per operation: pgbench \(format(pgbenchCost, 2)) ms (Postgres and pgbench); service \(format(serviceOwn + serviceOther, 2)) ms = \(format(serviceOwn, 2)) ms in this process (service and load generator) + \(format(serviceOther, 2)) ms elsewhere (Postgres, broker)")
    print("  service / pgbench -M extended: \(format(service.rate / extended.rate, 2))")
    let ratio = service.rate / baseline.rate
    let p99Budget = 2 * baseline.p99 + 5
    let rateMet = ratio >= 0.5, p99Met = service.p99 <= p99Budget
    print("  throughput ratio \(format(ratio, 2)) (target >= 0.5: \(rateMet ? "met" : "NOT met"));  p99 \(format(service.p99, 2)) ms vs budget 2 x pgbench p99 + 5 = \(format(p99Budget, 2)) ms (\(p99Met ? "met" : "NOT met"))")
    guard !(rateMet && p99Met) else { return }
    // With 32 connections always busy, mean latency is 32 / rate on either side: the split of the
    // client's mean tells where the requests waited.
    let database = baseline.mean, handler = max(0, phase.serverMean - baseline.mean), outside = max(0, service.mean - phase.serverMean)
    print("  where the time goes (means per request): the same SQL alone under pgbench \(format(database, 2)) ms;"
          + " inside the service beyond that (routing, token check, JSON, pool hand-off, waiting for a core) \(format(handler, 2)) ms;"
          + " outside the handler (HTTP on both ends, the load generator, event-loop queueing) \(format(outside, 2)) ms."
          + " The load generator runs in this process beside the service, on the same \(phase.serviceCPU.cores) cores as Postgres.")
}

/// A real project_followed event and its encoding, as the outbox row's payload in pgbench.
func followedEvent() throws -> (EventEnvelope<ProjectFollowed>, [UInt8]) {
    let event = EventEnvelope(app: .ibelieveinyou, aggregateId: projectID(1).uuidString.lowercased(), actor: userID(firstFollower), payload: ProjectFollowed(
        follow: FollowRow(id: .timeOrdered(), userId: userID(firstFollower), projectId: projectID(1), createdAt: Date()), followerCount: 65,
        ownerId: userID(101)))
    return (event, try event.encoded())
}

/// The out-of-process run's plan: feed pages as `feedRequest` makes them, then follows as
/// `followRequest` makes them (every one a new pair until the list wraps; the followers are reset
/// before the measured run).
func httpPlan(schema: String, configuration: ServiceConfiguration, tokens: TestTokens, allTokens: [Int: String]) throws -> HTTPBenchPlan {
    func planned(_ request: HTTPClientRequest) -> PlannedRequest {
        let path = String(request.url.dropFirst("http://plan".count))
        let token = request.headers["Authorization"].first.map { String($0.dropFirst("Bearer ".count)) }
        return PlannedRequest(method: request.method.rawValue, path: path, token: token)
    }
    let reads = (0..<8192).map { i in planned(feedRequest(base: "http://plan", tokens: allTokens, connection: i % connections, iteration: i / connections)) }
    // Interleaved over the connections as wrk sends them: 32 × 600 follows, all different pairs.
    let follows = (0..<(connections * 600)).map { i in planned(followRequest(base: "http://plan", tokens: allTokens, connection: i % connections, iteration: i / connections)) }
    let (event, payload) = try followedEvent()
    let environment = HTTPBenchPlan.serviceEnvironment(database: configuration.database, environment: environment, tokens: tokens, topicPrefix: configuration.topicPrefix,
                                                       storage: true)
    return HTTPBenchPlan(executable: "colony-projects", environment: environment, schema: schema, scenarios: [
        PlannedScenario(name: "projects: feed page (20 posts)", kind: "read", requests: reads, expectStatus: 200, connections: connections, pgbenchScript: feedScript()),
        PlannedScenario(name: "projects: follow a project", kind: "write", requests: follows, expectStatus: 200, connections: connections,
                        pgbenchScript: followScript(schema: schema, topic: event.topic(prefix: configuration.topicPrefix), payload: payload),
                        resetSQL: resetFollowersSQL()),
    ])
}

func benchmark() async throws {
    print("colony-projects-bench: \(connections) connections (service pool \(poolSize)), \(seconds) s per run, \(projectCount) projects with \(postCount) posts, "
          + "\(readerCount) readers following all of them, \(followerCount) users following during the follow runs")
    try await withTestSchema(poolSize: poolSize) { databaseConfiguration in
        let schema = databaseConfiguration.schema
        let port = try freePort()
        let tokens = TestTokens()
        let settings = ProjectsSettings()
        let configuration = ServiceConfiguration(
            service: .projects, app: .ibelieveinyou, httpHost: "127.0.0.1", httpPort: port, maxUploadBytes: settings.maxUploadBytes, logLevel: .error,
            database: databaseConfiguration, kafkaBrokers: environment.kafkaBrokers, topicPrefix: TestKafka.topicPrefix(),
            tokens: tokens.verifierConfiguration(audience: .ibelieveinyou)
        )
        try await ServiceHost.migrate(ProjectsService.migrations, configuration: configuration, logger: TestEnvironment.logger)
        let database = Database(configuration: databaseConfiguration, logger: TestEnvironment.logger)
        let storageRoot = FileManager.default.temporaryDirectory.appendingPathComponent(uniqueName("colony-projects-bench")).path
        defer { try? FileManager.default.removeItem(atPath: storageRoot) }
        try await withRunning(database) {
            let seedStart = monotonicNanoseconds()
            try await seed(database)
            print("seeded in \(format(Double(monotonicNanoseconds() - seedStart) / 1e9, 1)) s")
            var userTokens: [Int: String] = [:]
            for n in Array(1...readerCount) + Array(firstFollower..<(firstFollower + followerCount)) {
                userTokens[n] = try await tokens.token(user: userID(n), app: .ibelieveinyou)
            }
            let allTokens = userTokens
            if let planFile = httpPlanFile() {
                try await serveHTTPPlan(httpPlan(schema: schema, configuration: configuration, tokens: tokens, allTokens: allTokens), to: planFile)
                return
            }
            let base = "http://127.0.0.1:\(port)"
            let storage = Storage(backend: FileSystemStorageBackend(root: storageRoot), publicBaseURL: base, signingKey: Array("bench-signing-key-0123456789abcdef".utf8))
            try await withThrowingTaskGroup(of: Void.self) { tasks in
                tasks.addTask { try await ServiceHost.run(ProjectsService.definition(settings: settings, storage: storage), configuration: configuration) }
                defer { tasks.cancelAll() }
                while (try? await HTTPClient.shared.execute(HTTPClientRequest(url: "\(base)/ready"), timeout: .seconds(2)))?.status != .ok {
                    try await Task.sleep(for: .milliseconds(200))
                }
                // The requests work as intended: a cursor page has 20 posts, some liked; a follow is new.
                let (paged, page) = try await probe(feedRequest(base: base, tokens: allTokens, connection: 0, iteration: 1))
                let posts = page["posts"] as? [[String: Any]] ?? []
                let (newest, first) = try await probe(feedRequest(base: base, tokens: allTokens, connection: 0, iteration: 0))
                let (followed, follow) = try await probe(followRequest(base: base, tokens: allTokens, connection: 0, iteration: 0))
                guard paged == 200, posts.count == pageLimit, newest == 200, (first["posts"] as? [Any])?.count == pageLimit,
                      followed == 200, follow["karma_earned"] as? Int == 5 else {
                    throw TestSetupError("set-up check failed: feed \(paged) with \(posts.count) posts, newest \(newest), follow \(followed) \(follow)")
                }

                let feed = try await runPhase(script: feedScript(), schema: schema, metricsURL: "\(base)/metrics", method: "GET", route: "/feed\"",
                                              reset: {}) {
                    try await runHTTPLoad(connections: connections, seconds: seconds, makeRequest: { connection, iteration in
                        feedRequest(base: base, tokens: allTokens, connection: connection, iteration: iteration)
                    }, expect: .ok)
                }
                report("read the feed (\(pageLimit) posts of \(projectCount) followed projects with project, builder and liked_by_me; newest page or after a random post, half each), "
                       + "\(connections) connections, \(postCount) posts:", feed, unit: "pages/s")

                let (event, payload) = try followedEvent()
                let follows = try await runPhase(
                    script: followScript(schema: schema, topic: event.topic(prefix: configuration.topicPrefix), payload: payload),
                    schema: schema, metricsURL: "\(base)/metrics", method: "POST", route: "/follow\"", reset: { try await resetFollowers(database) }
                ) {
                    try await runHTTPLoad(connections: connections, seconds: seconds, makeRequest: { connection, iteration in
                        followRequest(base: base, tokens: allTokens, connection: connection, iteration: iteration)
                    }, expect: .ok)
                }
                let newFollows = try await count(database, "SELECT count(*)::int8 FROM follows WHERE user_id >= '\(userID(firstFollower))'")
                let counted = try await count(database, "SELECT (sum(follower_count) - \(readerCount * projectCount))::int8 FROM projects")
                let karma = try await count(database, "SELECT sum(total_points)::int8 FROM karma")
                report("follow a project (builder, project, follow + follower_count + award + support action + karma, outbox event of \(payload.count) bytes with notification, one transaction), "
                       + "\(connections) connections; after the service run \(newFollows) new follows, follower counts up by \(counted), karma \(karma) (5 each):", follows, unit: "req/s")
            }
        }
    }
}

try await benchmark()
