import AsyncHTTPClient
import ColonyKafka
import ColonyModels
import ColonyPlatform
import ColonyStorage
import ColonyTesting
import Foundation
import NotificationsService

// colony-notifications-bench: the notifications service in release mode on the local Postgres and
// broker, pushing over HTTP/2 to a local APNs stand-in (in this process; it verifies every JWT),
// with 100,000 registered device tokens:
//   1. throughput: `message_sent` events to groups of 1,000 members each, published at once;
//      pushes/s sustained (between 10% and 90% of the pushes arriving), target >= 1,000/s;
//   2. latency: single-recipient events at a steady rate; from the domain event (its
//      `occurred_at`, set as it is published) to the APNs request at the stand-in, p50/p99.
// Run through scripts/bench.
//   colony-notifications-bench [--tokens N] [--pushes N] [--rate PER_SECOND] [--seconds S] [--concurrency C]

let options: [String: Int] = {
    var options = ["--tokens": 100_000, "--pushes": 50_000, "--rate": 200, "--seconds": 10, "--concurrency": 64]
    var iterator = CommandLine.arguments.dropFirst().makeIterator()
    while let argument = iterator.next() {
        guard options[argument] != nil, let value = iterator.next().flatMap(Int.init), value > 0 else {
            FileHandle.standardError.write(Data("usage: colony-notifications-bench [--tokens N] [--pushes N] [--rate PER_SECOND] [--seconds S] [--concurrency C]\n".utf8))
            exit(2)
        }
        options[argument] = value
    }
    return options
}()
let tokenCount = options["--tokens"]!
let groupSize = 1000
let throughputPushes = min(options["--pushes"]!, tokenCount) / groupSize * groupSize
let latencyRate = options["--rate"]!
let latencySeconds = options["--seconds"]!
let concurrency = options["--concurrency"]!
let environment = try TestEnvironment.current()

func userID(_ n: Int) -> UUID { UUID(uuidString: "00000000-0000-4000-9000-\(String(format: "%012d", n))")! }
func groupID(_ n: Int) -> UUID { UUID(uuidString: "00000000-0000-4000-a000-\(String(format: "%012d", n))")! }
/// Groups 1…(tokens / 1000) hold users 1000(g-1)+1 … 1000g; latency group 1,000,000+n holds user n
/// and the sender, user 0 (who has no device and is never pushed to anyway: the actor).
let latencyGroupBase = 1_000_000
let sender = userID(0)

func seed(_ database: Database, latencyGroups: Int) async throws {
    try await database.query("""
        INSERT INTO devices (id, app, user_id, kind, token, environment, created_at, updated_at)
        SELECT gen_random_uuid(), 'unify', ('00000000-0000-4000-9000-' || lpad(n::text, 12, '0'))::uuid, 'device',
               md5(n::text) || md5((n + 1)::text), 'production', now(), now()
        FROM generate_series(1, \(tokenCount)) n
        """)
    try await database.query("""
        INSERT INTO memberships (scope, scope_id, user_id)
        SELECT 'group', ('00000000-0000-4000-a000-' || lpad(((n - 1) / \(groupSize) + 1)::text, 12, '0'))::uuid,
               ('00000000-0000-4000-9000-' || lpad(n::text, 12, '0'))::uuid
        FROM generate_series(1, \(tokenCount)) n
        UNION ALL
        SELECT 'group', ('00000000-0000-4000-a000-' || lpad((\(latencyGroupBase) + n)::text, 12, '0'))::uuid, u
        FROM generate_series(1, \(latencyGroups)) n,
             LATERAL (VALUES (('00000000-0000-4000-9000-' || lpad(n::text, 12, '0'))::uuid), ('\(unescaped: sender.uuidString.lowercased())'::uuid)) AS m(u)
        """)
    try await database.query("INSERT INTO names (kind, id, name) SELECT 'group', scope_id, 'Bench group' FROM memberships GROUP BY scope_id")
    try await database.query("ANALYZE devices, memberships, names")
}

func messageEvent(group: UUID, text: String) throws -> (key: [UInt8], value: [UInt8]) {
    let envelope = EventEnvelope(app: .unify, aggregateId: group.uuidString.lowercased(), actor: sender, payload: MessageSent(
        message: MessageRow(id: .timeOrdered(), groupId: group, content: text, sentBy: sender, sentAt: Date(), isEdited: false,
                            messageType: .text, voiceDuration: nil, voiceUrl: nil),
        senderDisplayName: "Bench sender"))
    return (Array(envelope.aggregateId.utf8), try envelope.encoded())
}

func waitForCount(_ apns: APNsStandIn, _ count: Int, timeout: Duration) async throws {
    do {
        try await waitUntil(timeout: timeout) { apns.receivedCount >= count }
    } catch {
        throw TestSetupError("only \(apns.receivedCount) of \(count) pushes arrived within \(timeout)")
    }
}

func benchmark() async throws {
    let latencyGroups = latencyRate * latencySeconds
    print("colony-notifications-bench: \(tokenCount) device tokens, throughput \(throughputPushes) pushes (groups of \(groupSize)), "
          + "latency \(latencyRate) events/s for \(latencySeconds) s, \(concurrency) APNs requests in flight")
    let apns = try APNsStandIn(bundleIDs: ["com.example.unify"])
    try await apns.run { apns in
        try await withTestSchema(poolSize: 16) { databaseConfiguration in
            let port = try freePort()
            let prefix = TestKafka.topicPrefix()
            let tokens = TestTokens()
            let configuration = ServiceConfiguration(
                service: .notifications, app: nil, httpHost: "127.0.0.1", httpPort: port, logLevel: .error,
                database: databaseConfiguration, kafkaBrokers: environment.kafkaBrokers, topicPrefix: prefix, tokens: tokens.verifierConfiguration(audience: nil)
            )
            try await ServiceHost.migrate(NotificationsService.migrations, configuration: configuration, logger: TestEnvironment.logger)
            let database = Database(configuration: databaseConfiguration, logger: TestEnvironment.logger)
            try await withRunning(database) {
                let seedStart = monotonicNanoseconds()
                try await seed(database, latencyGroups: latencyGroups)
                print("seeded \(tokenCount) tokens and their memberships in \(format(Double(monotonicNanoseconds() - seedStart) / 1e9, 1)) s")
            }
            let settings = NotificationsSettings(
                apns: APNsSettings(teamID: apns.teamID, keyID: apns.keyID, privateKey: apns.providerKey, topics: [.unify: "com.example.unify"],
                                   productionURL: apns.url, sandboxURL: apns.url, additionalTrustRootsPEM: apns.caPEM),
                concurrency: concurrency
            )
            let topic = EventTopics.topic(for: .chat, prefix: prefix)
            try await KafkaAdmin(configuration: KafkaConfiguration(bootstrapServers: environment.kafkaBrokers)).createTopics([topic])
            let producer = try KafkaProducer(configuration: TestKafka.producer(brokers: environment.kafkaBrokers), logger: TestEnvironment.logger)
            try await withThrowingTaskGroup(of: Void.self) { tasks in
                // Where export parts would go: the bench requests none.
                let exports = FileSystemStorageBackend(root: FileManager.default.temporaryDirectory.appendingPathComponent(uniqueName("colony-bench-exports")).path)
                tasks.addTask { try await ServiceHost.run(try NotificationsService.definition(settings: settings, exports: exports), configuration: configuration) }
                defer { tasks.cancelAll() }
                while (try? await HTTPClient.shared.execute(HTTPClientRequest(url: "http://127.0.0.1:\(port)/ready"), timeout: .seconds(2)))?.status != .ok {
                    try await Task.sleep(for: .milliseconds(200))
                }
                // Warm-up: one event, so the consumer has joined and the HTTP/2 connection is open.
                let warm = try messageEvent(group: groupID(latencyGroupBase + 1), text: "warm-up")
                try await producer.send(KafkaOutgoingMessage(topic: topic, key: warm.key, value: warm.value))
                try await waitForCount(apns, 1, timeout: .seconds(60))

                // 1. Throughput.
                let before = apns.receivedCount
                let events = throughputPushes / groupSize
                let published = Date()
                let messages = try (1...events).map { g in
                    let event = try messageEvent(group: groupID(g), text: "Throughput \(g)")
                    return KafkaOutgoingMessage(topic: topic, key: event.key, value: event.value)
                }
                for case .failure(let error) in await producer.send(messages) { throw error }
                try await waitForCount(apns, before + throughputPushes, timeout: .seconds(max(120, throughputPushes / 200)))
                let pushes = Array(apns.received[before...]).sorted { $0.receivedAt < $1.receivedAt }
                let times = pushes.map { $0.receivedAt.timeIntervalSince(published) }
                let low = times[times.count / 10], high = times[times.count * 9 / 10]
                let sustained = Double(times.count * 8 / 10) / max(high - low, 1e-6)
                let accepted = pushes.filter { $0.status == 200 && $0.problems.isEmpty && $0.overHTTP2 }.count
                let distinctTokens = Set(pushes.map(\.token)).count
                let connections = Set(pushes.map(\.connection)).count
                print("")
                print("throughput: \(events) message_sent events × \(groupSize) members = \(pushes.count) pushes, \(distinctTokens) distinct tokens, "
                      + "\(accepted) accepted by the stand-in (JWT, headers, HTTP/2 checked), multiplexed on \(connections) HTTP/2 connection(s)")
                print("  first push after \(format(times.first! * 1000, 0)) ms, last after \(format(times.last! * 1000, 0)) ms; "
                      + "overall \(format(Double(pushes.count) / times.last!, 0)) pushes/s; sustained (10%–90%) \(format(sustained, 0)) pushes/s "
                      + "(target ≥ 1,000/s: \(sustained >= 1000 ? "met" : "NOT met"))")

                // 2. Latency: one push per event at a steady rate.
                let latencyBefore = apns.receivedCount
                var sentAt: [String: Date] = [:]
                let start = ContinuousClock.now
                for n in 1...latencyGroups {
                    let due = start + .milliseconds(Int64(n - 1) * 1000 / Int64(latencyRate))
                    if ContinuousClock.now < due { try await Task.sleep(until: due) }
                    let event = try messageEvent(group: groupID(latencyGroupBase + n), text: "Latency \(n)")
                    sentAt["Latency \(n)"] = Date()
                    try await producer.send(KafkaOutgoingMessage(topic: topic, key: event.key, value: event.value))
                }
                try await waitForCount(apns, latencyBefore + latencyGroups, timeout: .seconds(120))
                let latencies = apns.received[latencyBefore...].compactMap { push -> Double? in
                    guard let body = push.alertBody, let text = body.split(separator: ":", maxSplits: 1).last.map({ $0.trimmingCharacters(in: .whitespaces) }),
                          let sent = sentAt[text] else { return nil }
                    return push.receivedAt.timeIntervalSince(sent) * 1000
                }.sorted()
                print("latency: \(latencies.count) of \(latencyGroups) events at \(latencyRate)/s, one push each; domain event published → APNs request at the stand-in: "
                      + "p50 \(format(percentile(latencies, 0.5), 1)) ms, p99 \(format(percentile(latencies, 0.99), 1)) ms, max \(format(latencies.last ?? 0, 1)) ms")
            }
            await producer.close()
        }
    }
}

try await benchmark()
