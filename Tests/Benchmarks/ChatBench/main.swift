import AsyncHTTPClient
import ChatService
import ColonyModels
import ColonyPlatform
import ColonyStorage
import ColonyTesting
import Foundation
import NIOCore
import PostgresNIO

// colony-chat-bench: the chat service in release mode on the local Postgres and broker, in a group
// of 64 members with 100,000 messages of history (nine smaller groups around it):
//   1. send-message requests/s and p50/p99 at 32 connections, beside pgbench running the same SQL
//      transaction (the membership-checked insert, the outbox row with its notification);
//   2. history page reads/s (50 messages, half the newest page, half a `before` cursor at a random
//      depth), beside pgbench running the same statement (the membership joined with the page).
// Run through scripts/bench.   colony-chat-bench [--seconds S] [--messages N] [--http-plan FILE]
// With --http-plan, it seeds the same data and writes the plan for the out-of-process run
// (scripts/bench http: the colony-chat executable under wrk) instead of running the load itself.

let (seconds, messageCount): (Int, Int) = {
    var seconds = 20
    var messages = 100_000
    var iterator = argumentsWithoutHTTPPlan().makeIterator()
    while let argument = iterator.next() {
        switch (argument, iterator.next().flatMap(Int.init)) {
        case ("--seconds", let value?) where value > 0: seconds = value
        case ("--messages", let value?) where value >= 1000: messages = value
        default:
            FileHandle.standardError.write(Data("usage: colony-chat-bench [--seconds S] [--messages N (>= 1000)]\n".utf8))
            exit(2)
        }
    }
    return (seconds, messages)
}()

let environment = try TestEnvironment.current()
let connections = 32
let memberCount = 64
let otherGroups = 9
let otherGroupMembers = 8
let otherGroupMessages = 2_000
let pageLimit = Int(ProcessInfo.processInfo.environment["BENCH_CHAT_PAGE"] ?? "") ?? 50  // BENCH_CHAT_PAGE=1: what a page costs besides its rows (scripts/bench profile)

/// Deterministic ids, so pgbench can name a member, the group and a message from a number.
func userID(_ n: Int) -> UUID { UUID(uuidString: "00000000-0000-4000-9000-\(String(format: "%012d", n))")! }
func groupID(_ n: Int) -> UUID { UUID(uuidString: "00000000-0000-4000-a000-\(String(format: "%012d", n))")! }
func messageID(_ n: Int) -> UUID { UUID(uuidString: "00000000-0000-4000-c000-\(String(format: "%012d", n))")! }
let group = groupID(1).uuidString.lowercased()
let userSQL = "('00000000-0000-4000-9000-' || lpad(:u::int::text, 12, '0'))::uuid"

/// The seeded history over the past 30 days: message n of the big group was sent `start + n · step`
/// microseconds after 1970, so its cursor (`<micros>_<id>`) follows from n.
let (historyStart, historyStep): (Int64, Int64) = {
    let span: Int64 = 30 * 86_400 * 1_000_000
    let now = Int64(Date().timeIntervalSince1970) * 1_000_000
    return (now - span - 3_600_000_000, span / Int64(messageCount))
}()
func cursor(_ n: Int) -> String { "\(historyStart + Int64(n) * historyStep)_\(messageID(n).uuidString.lowercased())" }
let historyEndSQL = "'epoch'::timestamptz + \(historyStart + Int64(messageCount) * historyStep) * interval '1 microsecond'"

/// Users 1…64 all in group 1 (user 1 owns it); groups 2…10 of eight of them each with 2,000
/// messages; group 1's messages interleaved with theirs in time, inserted in time order.
func seed(_ database: Database) async throws {
    try await database.query("""
        INSERT INTO users (id, display_name, email)
        SELECT ('00000000-0000-4000-9000-' || lpad(n::text, 12, '0'))::uuid, 'Bench User ' || n, 'bench' || n || '@example.com' FROM generate_series(1, \(memberCount)) n
        """)
    try await database.query("""
        INSERT INTO groups (id, name, owner_id)
        SELECT ('00000000-0000-4000-a000-' || lpad(g::text, 12, '0'))::uuid, 'Bench group ' || g,
               ('00000000-0000-4000-9000-' || lpad((CASE WHEN g = 1 THEN 1 ELSE (g - 2) * \(otherGroupMembers) % \(memberCount) + 1 END)::text, 12, '0'))::uuid
        FROM generate_series(1, \(1 + otherGroups)) g
        """)
    try await database.query("""
        INSERT INTO group_members (group_id, user_id, role)
        SELECT ('00000000-0000-4000-a000-000000000001')::uuid, ('00000000-0000-4000-9000-' || lpad(n::text, 12, '0'))::uuid,
               (CASE WHEN n = 1 THEN 'owner' ELSE 'user' END)::group_role
        FROM generate_series(1, \(memberCount)) n
        UNION ALL
        SELECT ('00000000-0000-4000-a000-' || lpad(g::text, 12, '0'))::uuid, ('00000000-0000-4000-9000-' || lpad(((g - 2) * \(otherGroupMembers) % \(memberCount) + k)::text, 12, '0'))::uuid,
               (CASE WHEN k = 1 THEN 'owner' ELSE 'user' END)::group_role
        FROM generate_series(2, \(1 + otherGroups)) g, generate_series(1, \(otherGroupMembers)) k
        """)
    let otherStep = historyStep * Int64(messageCount) / Int64(otherGroupMessages)
    try await database.query("""
        INSERT INTO messages (id, group_id, content, sent_by, sent_at)
        SELECT id, group_id, content, sent_by, sent_at FROM (
            SELECT ('00000000-0000-4000-c000-' || lpad(n::text, 12, '0'))::uuid AS id, ('00000000-0000-4000-a000-000000000001')::uuid AS group_id,
                   'Message ' || n || ': ' || repeat('lorem ipsum ', (1 + n % 8)::int) AS content,
                   ('00000000-0000-4000-9000-' || lpad(((n - 1) % \(memberCount) + 1)::text, 12, '0'))::uuid AS sent_by,
                   'epoch'::timestamptz + (\(historyStart) + n::int8 * \(historyStep)) * interval '1 microsecond' AS sent_at
            FROM generate_series(1, \(messageCount)) n
            UNION ALL
            SELECT gen_random_uuid(), ('00000000-0000-4000-a000-' || lpad(g::text, 12, '0'))::uuid, 'Other ' || n || ': ' || repeat('dolor sit ', (1 + n % 8)::int),
                   ('00000000-0000-4000-9000-' || lpad(((g - 2) * \(otherGroupMembers) % \(memberCount) + n % \(otherGroupMembers) + 1)::text, 12, '0'))::uuid,
                   'epoch'::timestamptz + (\(historyStart) + n::int8 * \(otherStep) + g * 1000) * interval '1 microsecond'
            FROM generate_series(2, \(1 + otherGroups)) g, generate_series(1, \(otherGroupMessages)) n
        ) AS history ORDER BY sent_at
        """)
    try await database.query("ANALYZE users, groups, group_members, messages")
}

/// Group 1 back to its seeded history (the writes of the send phase removed), vacuumed and analysed.
func trimHistory(_ database: Database) async throws {
    try await database.query("DELETE FROM messages WHERE group_id = '\(unescaped: group)'::uuid AND sent_at > \(unescaped: historyEndSQL)")
    try await database.query("VACUUM (ANALYZE) messages")
}

func groupSize(_ database: Database) async throws -> Int {
    try await database.query("SELECT count(*)::int8 FROM messages WHERE group_id = '\(unescaped: group)'::uuid").collect().first?.decode(Int.self) ?? 0
}

let content = "lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod"

/// What the service writes for one text message: the insert joined with the membership check
/// (`MessageStore.insert`), the members who blocked the sender (the event's `withheld_from`,
/// `GroupStore.blockers`), then the `message_sent` event into the outbox with its notification
/// (`Outbox.publish`, one statement), in one transaction. The payload is a real encoded event.
func sendScript(schema: String, topic: String, payload: [UInt8]) -> String {
    let hex = payload.map { String(format: "%02x", $0) }.joined()
    return """
        \\set u random(1, \(memberCount))
        BEGIN;
        \(pgbenchCommand(MessageSQL.insert, ["gen_random_uuid()", "'\(group)'::uuid", "'Bench ' || :u::int || ' \(content)'", userSQL, "'text'", "NULL", "NULL"]))
        SELECT blocker_id FROM user_blocks WHERE blocked_id = \(userSQL) AND blocker_id IN (SELECT user_id FROM group_members WHERE group_id = '\(group)'::uuid) ORDER BY blocker_id;
        WITH inserted AS (INSERT INTO outbox (event_id, topic, event_key, event_type, payload) VALUES (gen_random_uuid(), '\(topic)', '\(group)', '\(EventType.messageSent.rawValue)', '\\x\(hex)'::bytea) RETURNING 1) SELECT pg_notify('\(schema)_outbox', '') FROM inserted;
        COMMIT;
        """
}

/// What the service reads for one history page (`Messages.history`, outside a transaction): the
/// page's own statement (`HistorySQL`: the membership row with 51 messages as column arrays; pgbench reads
/// them as text, the service in binary), half the newest page,
/// half `before` a random message: the service's SQL text with pgbench's variables for `$1`…`$5`.
func readScript() -> String {
    let values = ["'\(group)'::uuid", userSQL, ":c", "('00000000-0000-4000-c000-' || lpad(:k::int::text, 12, '0'))", "\(pageLimit + 1)"]
    return """
        \\set u random(1, \(memberCount))
        \\set r random(0, 1)
        \\set k random(\(pageLimit + 1), \(messageCount))
        \\set c \(historyStart) + :k * \(historyStep)
        \\if :r = 0
        \(pgbenchCommand(HistorySQL.Latest.sql, values))
        \\else
        \(pgbenchCommand(HistorySQL.Before.sql, values))
        \\endif
        """
}

/// The member a connection's `iteration`th request comes from: all 64 in turn over two rounds.
func member(_ connection: Int, _ iteration: Int) -> Int { (connection + connections * (iteration % 2)) % memberCount + 1 }

func sendRequest(base: String, tokens: [Int: String], connection: Int, iteration: Int) -> HTTPClientRequest {
    var request = HTTPClientRequest(url: "\(base)/chat/v1/groups/\(group)/messages")
    request.method = .POST
    request.headers.add(name: "Authorization", value: "Bearer \(tokens[member(connection, iteration)]!)")
    request.headers.add(name: "Content-Type", value: "application/json")
    request.body = .bytes(ByteBuffer(string: "{\"content\":\"Bench \(connection)-\(iteration) \(content)\"}"))
    return request
}

/// Even requests the newest page, odd ones a page before a random message of the seeded history.
func readRequest(base: String, tokens: [Int: String], connection: Int, iteration: Int) -> HTTPClientRequest {
    let query = iteration % 2 == 0 ? "limit=\(pageLimit)" : "limit=\(pageLimit)&before=\(cursor(Int.random(in: (pageLimit + 1)...messageCount)))"
    var request = HTTPClientRequest(url: "\(base)/chat/v1/groups/\(group)/messages?\(query)")
    request.headers.add(name: "Authorization", value: "Bearer \(tokens[member(connection, iteration)]!)")
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

/// pgbench (prepared, then extended), then the service under HTTP load, with CPU shares.
func runPhase(script: String, schema: String, metricsURL: String, method: String, route: String,
              load: () async throws -> LoadResult) async throws -> Phase {
    let pgbenchStart = CPUSnapshot.now()
    let baseline = try await runPgbench(script: script, schema: schema, environment: environment, connections: connections, seconds: seconds)
    let pgbenchCPU = CPUSnapshot.now().usage(since: pgbenchStart)
    // PostgresNIO sends each statement unnamed (parse and plan every time), as pgbench does with
    // -M extended; the gap between the two modes is that cost.
    let extended = try await runPgbench(script: script, schema: schema, environment: environment, connections: connections, seconds: seconds, mode: "extended")
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
    print("  pgbench -M extended (no plan reuse, as PostgresNIO's unnamed statements)  \(format(extended.rate, 0)) tx/s   p50 \(format(extended.p50, 2)) ms   p99 \(format(extended.p99, 2)) ms   mean \(format(extended.mean, 2)) ms")
    print("  chat service over HTTP        \(format(service.rate, 0)) \(unit)  p50 \(format(service.p50, 2)) ms   p99 \(format(service.p99, 2)) ms   errors \(service.errors)")
    // Where the service's time goes: its own per-route histogram (handler + database) against what
    // the load generator measured (plus HTTP and the generator's share of the CPU).
    print("  server-side mean per request (handler and database, from /metrics) \(format(phase.serverMean, 2)) ms; client-side mean \(format(service.mean, 2)) ms")
    print("  CPU during pgbench: \(phase.pgbenchCPU)")
    print("  CPU during the service run: \(phase.serviceCPU)")
    // Core-milliseconds per operation: what bounds the rate once the cores are saturated.
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
    let database = extended.mean, handler = max(0, phase.serverMean - extended.mean), outside = max(0, service.mean - phase.serverMean)
    print("  where the time goes (means per request): the same SQL alone under pgbench -M extended \(format(database, 2)) ms;"
          + " inside the service beyond that (routing, token check, JSON, pool hand-off, waiting for a core) \(format(handler, 2)) ms;"
          + " outside the handler (HTTP on both ends, the load generator, event-loop queueing) \(format(outside, 2)) ms."
          + " The load generator runs in this process beside the service, on the same \(phase.serviceCPU.cores) cores as Postgres.")
}

/// A real message_sent event and its encoding, as the outbox row's payload in pgbench.
func sentEvent() throws -> (EventEnvelope<MessageSent>, [UInt8]) {
    let event = EventEnvelope(app: .unify, aggregateId: group, actor: userID(1), payload: MessageSent(
        message: MessageRow(id: .timeOrdered(), groupId: groupID(1), content: "Bench 0-0 \(content)", sentBy: userID(1), sentAt: Date(),
                            isEdited: false, messageType: .text, voiceDuration: nil, voiceUrl: nil),
        senderDisplayName: "Bench User 1"))
    return (event, try event.encoded())
}

/// The out-of-process run's plan: history pages as `readRequest` makes them (every member in
/// turn, half the newest page, half a random cursor), then sends as `sendRequest` does.
func httpPlan(schema: String, configuration: ServiceConfiguration, tokens: TestTokens, memberTokens: [Int: String]) throws -> HTTPBenchPlan {
    let path = "/chat/v1/groups/\(group)/messages"
    let reads = (0..<8192).map { i in
        PlannedRequest(path: path + "?" + (i % 2 == 0 ? "limit=\(pageLimit)" : "limit=\(pageLimit)&before=\(cursor(Int.random(in: (pageLimit + 1)...messageCount)))"),
                       token: memberTokens[i % memberCount + 1])
    }
    let sends = (0..<4096).map { i in
        PlannedRequest(method: "POST", path: path, token: memberTokens[i % memberCount + 1], body: "{\"content\":\"Bench \(i) \(content)\"}")
    }
    let (event, payload) = try sentEvent()
    let environment = HTTPBenchPlan.serviceEnvironment(database: configuration.database, environment: environment, tokens: tokens, topicPrefix: configuration.topicPrefix,
                                                       storage: true)
    return HTTPBenchPlan(executable: "colony-chat", environment: environment, schema: schema, scenarios: [
        PlannedScenario(name: "chat: history page (50 messages)", kind: "read", requests: reads, expectStatus: 200, connections: connections, pgbenchScript: readScript()),
        PlannedScenario(name: "chat: send a message", kind: "write", requests: sends, expectStatus: 201, connections: connections,
                        pgbenchScript: sendScript(schema: schema, topic: event.topic(prefix: configuration.topicPrefix), payload: payload)),
    ])
}

func benchmark() async throws {
    print("colony-chat-bench: \(connections) connections, \(seconds) s per run, a group of \(memberCount) members and \(messageCount) messages (+ \(otherGroups) groups of \(otherGroupMessages))")
    // The service gets as many database connections as pgbench has clients.
    try await withTestSchema(poolSize: connections) { databaseConfiguration in
        let schema = databaseConfiguration.schema
        let port = try freePort()
        let tokens = TestTokens()
        let settings = ChatSettings()
        let configuration = ServiceConfiguration(
            service: .chat, app: .unify, httpHost: "127.0.0.1", httpPort: port, maxUploadBytes: settings.maxUploadBytes, logLevel: .error,
            database: databaseConfiguration, kafkaBrokers: environment.kafkaBrokers, topicPrefix: TestKafka.topicPrefix(),
            tokens: tokens.verifierConfiguration(audience: .unify)
        )
        try await ServiceHost.migrate(ChatService.migrations, configuration: configuration, logger: TestEnvironment.logger)
        let database = Database(configuration: databaseConfiguration, logger: TestEnvironment.logger)
        let storageRoot = FileManager.default.temporaryDirectory.appendingPathComponent(uniqueName("colony-chat-bench")).path
        defer { try? FileManager.default.removeItem(atPath: storageRoot) }
        try await withRunning(database) {
            let seedStart = monotonicNanoseconds()
            try await seed(database)
            print("seeded in \(format(Double(monotonicNanoseconds() - seedStart) / 1e9, 1)) s")
            var userTokens: [Int: String] = [:]
            for n in 1...memberCount { userTokens[n] = try await tokens.token(user: userID(n), app: .unify) }
            let memberTokens = userTokens
            if let planFile = httpPlanFile() {
                try await serveHTTPPlan(httpPlan(schema: schema, configuration: configuration, tokens: tokens, memberTokens: memberTokens), to: planFile)
                return
            }
            let base = "http://127.0.0.1:\(port)"
            let storage = Storage(backend: FileSystemStorageBackend(root: storageRoot), publicBaseURL: base, signingKey: Array("bench-signing-key-0123456789abcdef".utf8))
            try await withThrowingTaskGroup(of: Void.self) { tasks in
                tasks.addTask { try await ServiceHost.run(ChatService.definition(settings: settings, storage: storage), configuration: configuration) }
                defer { tasks.cancelAll() }
                while (try? await HTTPClient.shared.execute(HTTPClientRequest(url: "\(base)/ready"), timeout: .seconds(2)))?.status != .ok {
                    try await Task.sleep(for: .milliseconds(200))
                }
                // The requests work as intended: a send is 201, a cursor page has 50 messages.
                let (sent, _) = try await probe(sendRequest(base: base, tokens: memberTokens, connection: 0, iteration: 0))
                var cursorRequest = HTTPClientRequest(url: "\(base)/chat/v1/groups/\(group)/messages?limit=\(pageLimit)&before=\(cursor(messageCount / 2))")
                cursorRequest.headers.add(name: "Authorization", value: "Bearer \(memberTokens[1]!)")
                let (paged, page) = try await probe(cursorRequest)
                let pageCount = (page["messages"] as? [Any])?.count ?? 0
                guard sent == 201, paged == 200, pageCount == pageLimit else {
                    throw TestSetupError("set-up check failed: send \(sent), cursor page \(paged) with \(pageCount) messages")
                }

                let (event, payload) = try sentEvent()
                let sizeBefore = try await groupSize(database)
                let send = try await runPhase(
                    script: sendScript(schema: schema, topic: event.topic(prefix: configuration.topicPrefix), payload: payload),
                    schema: schema, metricsURL: "\(base)/metrics", method: "POST", route: "groups/{group_id}/messages\""
                ) {
                    try await runHTTPLoad(connections: connections, seconds: seconds, makeRequest: { connection, iteration in
                        sendRequest(base: base, tokens: memberTokens, connection: connection, iteration: iteration)
                    }, expect: .created)
                }
                let sizeAfter = try await groupSize(database)
                report("send a message (membership-checked insert, outbox event of \(payload.count) bytes with notification, one transaction), "
                       + "\(connections) connections, group of \(sizeBefore) messages (\(sizeAfter) after the runs):", send, unit: "req/s")

                try await trimHistory(database)
                let read = try await runPhase(
                    script: readScript(), schema: schema, metricsURL: "\(base)/metrics", method: "GET", route: "groups/{group_id}/messages\""
                ) {
                    try await runHTTPLoad(connections: connections, seconds: seconds, makeRequest: { connection, iteration in
                        readRequest(base: base, tokens: memberTokens, connection: connection, iteration: iteration)
                    }, expect: .ok)
                }
                let readSize = try await groupSize(database)
                report("read a history page (membership, \(pageLimit) messages: newest page or before a random cursor, half each), "
                       + "\(connections) connections, group of \(readSize) messages:", read, unit: "pages/s")
            }
        }
    }
}

try await benchmark()
