import AsyncHTTPClient
import ColonyKafka
import ColonyTesting
import Foundation
import Hummingbird
import NIOCore
import NIOHTTP1
import PostgresNIO
import Synchronization
import Testing

/// What the pipeline does around the happy path: a broker that is not there, an event too large
/// to send, a row the broker refuses, an event no handler can apply, and the operator's retry.
@Suite("Event pipeline under faults", .serialized)
struct PipelineFaultTests {
    let logger = TestEnvironment.logger

    func event(key: String, sequence: Int) -> EventEnvelope<TestPing> {
        EventEnvelope(app: .habithive, aggregateId: key, payload: TestPing(key: key, sequence: sequence))
    }

    func count(_ database: Database, _ sql: String) async throws -> Int {
        try await database.query(PostgresQuery(unsafeSQL: sql)).collect().first!.decode(Int.self)
    }

    /// The platform's pings service: `POST /habits/v1/pings` writes a ping row and publishes a
    /// `test_ping` (of `bytes` padding) in one transaction; it consumes its own topic into `seen`.
    func pingsDefinition() -> ServiceDefinition {
        ServiceDefinition(
            migrations: [Migration(version: 1, name: "pings", sql: """
                CREATE TABLE pings (user_id uuid NOT NULL, sequence int NOT NULL);
                CREATE TABLE seen (sequence int NOT NULL);
                """)],
            consumes: [.habits],
            handleEvent: { event, connection, _ in
                guard event.type == TestPing.eventType else { return }
                let ping = try event.decode(TestPing.self)
                try await connection.query("INSERT INTO seen (sequence) VALUES (\(ping.payload.sequence))", logger: TestEnvironment.logger)
            },
            addRoutes: { router, service in
                router.group("habits/v1").add(middleware: service.tokenMiddleware).post("pings") { request, context -> Response in
                    let user = try context.requireUser()
                    let sequence = Int(request.uri.queryParameters.get("sequence") ?? "0") ?? 0
                    let padding = Int(request.uri.queryParameters.get("padding") ?? "0") ?? 0
                    try await service.database.transaction { connection in
                        try await connection.query("INSERT INTO pings (user_id, sequence) VALUES (\(user.id), \(sequence))", logger: context.logger)
                        let event = EventEnvelope(app: .habithive, aggregateId: String(repeating: "k", count: max(1, padding)), actor: user.id,
                                                  payload: TestPing(key: "p", sequence: sequence))
                        try await service.outbox.publish(event, on: connection, logger: context.logger)
                    }
                    return Response(status: .accepted)
                }
            }
        )
    }

    func http(_ method: HTTPMethod, _ url: String, token: String? = nil) async throws -> (status: Int, body: String) {
        var request = HTTPClientRequest(url: url)
        request.method = method
        if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
        return (Int(response.status.code), String(buffer: try await response.body.collect(upTo: 4 << 20)))
    }

    @Test("with no broker at all a service starts, is ready, takes writes into its outbox and reports the broker down; a broker that appears gets everything")
    func startsWithoutBroker() async throws {
        let broker = try BrokerProcess()  // not started: nothing listens on its port
        defer { broker.stop() }
        let tokens = TestTokens()
        let port = try freePort()
        let prefix = TestKafka.topicPrefix()
        try await withTestSchema { databaseConfiguration in
            let configuration = ServiceConfiguration(
                service: .habits, app: .habithive, httpHost: "127.0.0.1", httpPort: port, logLevel: .error,
                database: databaseConfiguration, kafkaBrokers: broker.bootstrapServers, topicPrefix: prefix,
                tokens: tokens.verifierConfiguration(audience: .habithive)
            )
            let token = try await tokens.token(user: UUID(), app: .habithive)
            let check = Database(configuration: databaseConfiguration, logger: logger)
            try await withRunning(check) {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask { try await ServiceHost.run(pingsDefinition(), configuration: configuration) }
                    defer { group.cancelAll() }
                    let base = "http://127.0.0.1:\(port)"
                    try await waitUntil(timeout: .seconds(60)) { (try? await http(.GET, "\(base)/ready").status) == 200 }
                    let health = try await http(.GET, "\(base)/health")
                    #expect(health.status == 200)
                    #expect(health.body.contains(#""broker":"unavailable""#) && health.body.contains(#""database":"ok""#), "\(health.body)")
                    for sequence in 0..<20 {
                        #expect(try await http(.POST, "\(base)/habits/v1/pings?sequence=\(sequence)", token: token).status == 202)
                    }
                    #expect(try await count(check, "SELECT count(*) FROM pings") == 20)
                    #expect(try await count(check, "SELECT count(*) FROM outbox WHERE relayed_at IS NULL") == 20, "the events wait in the outbox")
                    let metrics = try await http(.GET, "\(base)/metrics").body
                    #expect(metrics.contains("colony_broker_up 0"), "\(metrics)")
                    #expect(metrics.contains("colony_outbox_pending_events 20"))
                    // The platform's own: database reachable and its pool, the process.
                    #expect(metrics.contains("colony_database_up 1") && metrics.contains("colony_db_pool_max_connections 8"))
                    #expect(metrics.contains("process_resident_memory_bytes") && metrics.contains("process_open_fds") && metrics.contains("process_cpu_seconds_total"))
                    #expect(metrics.contains(#"colony_dead_lettered_events_total{stage="consume"} 0"#), "counters start at zero")
                    #expect(try await http(.GET, "\(base)/ready").status == 200, "still ready")

                    try await broker.start()
                    // The consumer creates its topics and joins; the relay sends the backlog.
                    try await waitUntil(timeout: .seconds(120)) { try await count(check, "SELECT count(*) FROM seen") == 20 }
                    try await waitUntil(timeout: .seconds(30)) { try await count(check, "SELECT count(*) FROM outbox WHERE relayed_at IS NULL") == 0 }
                    let after = try await http(.GET, "\(base)/health").body
                    #expect(after.contains(#""broker":"ok""#), "\(after)")
                }
            }
        }
    }

    @Test("an event over the size limit is refused at publish with 413 event_too_large, and the change it came with is not written")
    func oversizedEventRefused() async throws {
        let migrations = [Migration(version: 1, name: "pings", sql: "CREATE TABLE pings (sequence int NOT NULL);")]
        try await withTestDatabase(migrations: migrations) { database in
            let outbox = Outbox(schema: database.schema, topicPrefix: TestKafka.topicPrefix(), maxEventBytes: 4096)
            let logger = self.logger
            let small = event(key: "k", sequence: 1)
            let large = event(key: String(repeating: "x", count: 8000), sequence: 2)
            try await database.transaction { connection in
                try await connection.query("INSERT INTO pings (sequence) VALUES (1)", logger: logger)
                try await outbox.publish(small, on: connection, logger: logger)
            }
            let error = await #expect(throws: APIError.self) {
                try await database.transaction { connection in
                    try await connection.query("INSERT INTO pings (sequence) VALUES (2)", logger: logger)
                    try await outbox.publish(large, on: connection, logger: logger)
                }
            }
            #expect(error?.status == .contentTooLarge && error?.code == "event_too_large")
            #expect(APIError.from(error!).status.code == 413)
            // The batch form refuses it too.
            await #expect(throws: APIError.self) {
                try await database.transaction { connection in
                    try await outbox.publish([try OutboxMessage(small), try OutboxMessage(large)], on: connection, logger: logger)
                }
            }
            #expect(try await count(database, "SELECT count(*) FROM pings") == 1)
            #expect(try await count(database, "SELECT count(*) FROM outbox WHERE relayed_at IS NULL") == 1)
        }
    }

    @Test("rows the broker refuses for good (too large, a bad topic) go to the dead letters and the rows behind them are delivered, in order")
    func poisonRowsDoNotBlockTheOutbox() async throws {
        let environment = try TestEnvironment.current()
        let prefix = TestKafka.topicPrefix()
        let topic = EventTopics.topic(for: .habits, prefix: prefix)
        try await withTestDatabase { database in
            let logger = self.logger
            let outbox = Outbox(schema: database.schema, topicPrefix: prefix)
            try await database.transaction { try await outbox.publish(event(key: "k", sequence: 0), on: $0, logger: logger) }
            // Written past the outbox's own check, as an older build or a hand-made row would be:
            // 2 MB is over librdkafka's message limit; the other topic name is not one Kafka takes.
            let tooLarge = UUID()
            let badTopic = UUID()
            try await database.query("""
                INSERT INTO outbox (event_id, topic, event_key, event_type, payload)
                VALUES (\(tooLarge), \(topic), 'k', 'test_ping', \(ByteBuffer(repeating: UInt8(ascii: "x"), count: 2_000_000))),
                       (\(badTopic), 'not a topic!', 'k', 'test_ping', \(ByteBuffer(string: "{}")))
                """)
            for sequence in 1...3 {
                try await database.transaction { try await outbox.publish(event(key: "k", sequence: sequence), on: $0, logger: logger) }
            }
            let registry = PrometheusRegistryProbe()
            let relay = try OutboxRelay(database: database, producerConfiguration: TestKafka.producer(brokers: environment.kafkaBrokers), outbox: outbox, logger: logger,
                                        idleInterval: .milliseconds(200), metrics: registry.pipeline)
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await relay.run() }
                defer { group.cancelAll() }
                let events = try await collectEvents(brokers: environment.kafkaBrokers, topic: topic, timeout: .seconds(90)) { $0.count >= 4 }
                #expect(try events.map { try $0.decode(TestPing.self).payload.sequence } == [0, 1, 2, 3])
                try await waitUntil(timeout: .seconds(30)) { try await count(database, "SELECT count(*) FROM outbox WHERE relayed_at IS NULL") == 0 }
            }
            let letters = try await database.withConnection { try await DeadLetters(schema: database.schema).list(on: $0, logger: logger) }
            #expect(Set(letters.map(\.eventID)) == [tooLarge, badTopic])
            #expect(letters.allSatisfy { $0.stage == .publish && $0.attempts == 1 })
            #expect(letters.first { $0.eventID == tooLarge }?.error.lowercased().contains("too large") == true, "\(letters)")
            #expect(letters.first { $0.eventID == badTopic }?.error.contains("not valid") == true)
            #expect(registry.text().contains(#"colony_dead_lettered_events_total{stage="publish"} 2"#), "\(registry.text())")
            // The operator drops them.
            let dropped = try await database.withConnection { try await DeadLetters(schema: database.schema).drop(ids: letters.map(\.id), on: $0, logger: logger) }
            #expect(dropped == 2)
        }
    }

    @Test("an event whose handler keeps failing becomes a dead letter after N attempts while later events are applied; unreadable events go there at once; a retry applies it once the handler is fixed")
    func handlerFailuresBecomeDeadLetters() async throws {
        let environment = try TestEnvironment.current()
        let topic = EventTopics.topic(for: .habits, prefix: TestKafka.topicPrefix())
        try await KafkaAdmin(configuration: KafkaConfiguration(bootstrapServers: environment.kafkaBrokers)).createTopics([topic], partitions: 1)
        let producer = try KafkaProducer(configuration: TestKafka.producer(brokers: environment.kafkaBrokers), logger: logger)
        defer { producer.shutdown() }
        func send(_ bytes: [UInt8]) async throws {
            try await producer.send(KafkaOutgoingMessage(topic: topic, key: Array("k".utf8), value: bytes))
        }
        // 0, 1, then 2 (its handler fails), garbage, a newer schema_version, then 3, 4.
        for sequence in 0...2 { try await send(try event(key: "k", sequence: sequence).encoded()) }
        try await send(Array("not an envelope".utf8))
        var future = event(key: "k", sequence: 99)
        future.schemaVersion = 7
        try await send(try future.encoded())
        for sequence in 3...4 { try await send(try event(key: "k", sequence: sequence).encoded()) }

        let migrations = [Migration(version: 1, name: "effects", sql: "CREATE TABLE effects (sequence int NOT NULL);")]
        try await withTestDatabase(migrations: migrations) { database in
            let logger = self.logger
            let broken = Atomic<Bool>(true)
            let handler: EventHandler = { event, connection in
                let ping = try event.decode(TestPing.self)
                if ping.payload.sequence == 2 && broken.load(ordering: .relaxed) {
                    struct HandlerBug: Error, CustomStringConvertible { var description: String { "no rule for sequence 2" } }
                    throw HandlerBug()
                }
                try await connection.query("INSERT INTO effects (sequence) VALUES (\(ping.payload.sequence))", logger: logger)
            }
            let registry = PrometheusRegistryProbe()
            let settings = PipelineSettings(maxHandlerAttempts: 3, handlerRetryDelay: .milliseconds(20))
            let consumer = EventConsumer(configuration: TestKafka.consumer(brokers: environment.kafkaBrokers), topics: [topic], database: database,
                                         settings: settings, metrics: registry.pipeline, logger: logger, handler: handler)
            let retrier = DeadLetterRetrier(database: database, handler: handler, metrics: registry.pipeline, logger: logger, sweepInterval: .seconds(30))
            func effects() async throws -> [Int] {
                try await database.query("SELECT sequence FROM effects ORDER BY sequence").collect().map { try $0.decode(Int.self) }
            }
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await consumer.run() }
                group.addTask { try await retrier.run() }
                defer { group.cancelAll() }
                try await waitUntil(timeout: .seconds(60)) { try await effects() == [0, 1, 3, 4] }
                let letters = try await database.withConnection { try await DeadLetters(schema: database.schema).list(stage: .consume, on: $0, logger: logger) }
                #expect(letters.count == 3, "\(letters)")
                let failing = try #require(letters.first { (letter: DeadLetters.Entry) -> Bool in letter.eventID != future.id && letter.eventID != nil && letter.attempts == 3 })
                #expect(failing.error.contains("no rule for sequence 2"))
                let unreadable = letters.filter { (letter: DeadLetters.Entry) -> Bool in letter.eventID == nil && letter.attempts == 1 }
                #expect(unreadable.count == 1 && unreadable[0].error.contains("not a Colony event envelope"))
                let newer = letters.filter { (letter: DeadLetters.Entry) -> Bool in letter.eventID == future.id && letter.attempts == 1 }
                #expect(newer.count == 1 && newer[0].error.contains("schema_version 7"))
                #expect(registry.text().contains(#"colony_event_handler_failures_total{event_type="test_ping"} 3"#), "\(registry.text())")

                // A retry while still broken fails again and says so.
                let first = try await database.withConnection { try await DeadLetters(schema: database.schema).requestRetry(ids: [failing.id], on: $0, logger: logger) }
                #expect(first == DeadLetters.RetryRequest(republished: 0, requested: 1))
                try await waitUntil(timeout: .seconds(30)) {
                    let entry = try await database.withConnection { try await DeadLetters(schema: database.schema).list(stage: .consume, on: $0, logger: logger) }.first { $0.id == failing.id }
                    return entry?.retryRequestedAt == nil && entry?.attempts == 4
                }
                // Fixed: the operator's `colony-admin dead-letters retry` applies it, once, and the
                // dead letter is gone.
                broken.store(false, ordering: .relaxed)
                let listed = try await ChildProcess.run(try builtExecutable("colony-admin"), ["dead-letters", "list", "--service", "habits", "--schema", database.schema])
                #expect(listed.status == 0 && listed.output.contains("no rule for sequence 2"), "\(listed.output)")
                let retried = try await ChildProcess.run(try builtExecutable("colony-admin"),
                                                         ["dead-letters", "retry", "--service", "habits", "--schema", database.schema, "--id", String(failing.id), "--wait", "60"])
                #expect(retried.status == 0 && retried.output.contains("dead letter \(failing.id): applied"), "\(retried.output)")
                #expect(try await effects() == [0, 1, 2, 3, 4])
                try await waitUntil(timeout: .seconds(30)) {
                    try await database.withConnection { try await DeadLetters(schema: database.schema).list(stage: .consume, on: $0, logger: logger) }.count == 2
                }
            }
        }
    }
}

/// A registry of the test's own, with the pipeline's metrics on it, read as exposition text.
struct PrometheusRegistryProbe {
    let metrics = HTTPMetrics()
    var pipeline: PipelineMetrics { PipelineMetrics(registry: metrics.registry) }
    func text() -> String { String(decoding: metrics.exposition(), as: UTF8.self) }
}
