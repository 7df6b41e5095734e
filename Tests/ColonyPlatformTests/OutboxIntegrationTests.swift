import ColonyKafka
import ColonyTesting
import Foundation
import Logging
import PostgresNIO
import ServiceLifecycle
import Testing

/// A payload for platform tests: its sequence number shows order within an aggregate.
struct TestPing: EventPayload {
    static let eventType: EventType = "test_ping"
    static let source = ColonyService.habits
    var key: String
    var sequence: Int
}

/// The outbox, relay, inbox and consumer against real Postgres and a real broker.
@Suite("Outbox and inbox against a real broker", .serialized)
struct OutboxIntegrationTests {
    let logger = TestEnvironment.logger

    func event(key: String, sequence: Int) -> EventEnvelope<TestPing> {
        EventEnvelope(app: .habithive, aggregateId: key, payload: TestPing(key: key, sequence: sequence))
    }

    /// Runs a relay (and its producer) for the body's duration.
    func withRelay<Result: Sendable>(database: Database, outbox: Outbox, brokers: String, _ body: () async throws -> Result) async throws -> Result {
        let relay = try OutboxRelay(database: database, producerConfiguration: TestKafka.producer(brokers: brokers), outbox: outbox, logger: logger, idleInterval: .milliseconds(200))
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await relay.run() }
            defer { group.cancelAll() }
            return try await body()
        }
    }

    /// Reads events of `topic` with a fresh consumer group until `count` arrived or the timeout passed.
    /// The topic is made first (as the relay would, with its partitions): a consumer that
    /// subscribes before its topic exists may not see it until librdkafka's next metadata refresh
    /// (five minutes), a race the relay starting alongside used to lose on a busy machine.
    func consume(topic: String, brokers: String, count: Int, timeout: Duration = .seconds(60)) async throws -> [EventEnvelope<TestPing>] {
        try await KafkaAdmin(configuration: KafkaConfiguration(bootstrapServers: brokers)).createTopics([topic], partitions: PipelineSettings().topicPartitions)
        let consumer = try KafkaConsumer(configuration: TestKafka.consumer(brokers: brokers), topics: [topic], logger: logger)
        var events: [EventEnvelope<TestPing>] = []
        let deadline = ContinuousClock.now + timeout
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                try? await Task.sleep(until: deadline)
                consumer.stopDelivery()
            }
            for try await message in consumer.messages() {
                events.append(try ReceivedEvent(bytes: message.value).decode(TestPing.self))
                consumer.markHandled(message)
                if events.count >= count { break }
            }
            group.cancelAll()
        }
        await consumer.close()
        return events
    }

    func pendingCount(_ database: Database) async throws -> Int {
        try await database.query("SELECT count(*) FROM outbox WHERE relayed_at IS NULL").collect().first!.decode(Int.self)
    }

    @Test("1,000 events from concurrent transactions all arrive, in order per aggregate key")
    func thousandEventsInOrder() async throws {
        let environment = try TestEnvironment.current()
        let prefix = TestKafka.topicPrefix()
        try await withTestDatabase { database in
            let outbox = Outbox(schema: database.schema, topicPrefix: prefix)
            try await withRelay(database: database, outbox: outbox, brokers: environment.kafkaBrokers) {
                // 20 aggregates written concurrently, each aggregate's 50 events in sequence.
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for aggregate in 0..<20 {
                        group.addTask {
                            for sequence in 0..<50 {
                                try await database.transaction { connection in
                                    try await outbox.publish(event(key: "agg-\(aggregate)", sequence: sequence), on: connection, logger: logger)
                                }
                            }
                        }
                    }
                    try await group.waitForAll()
                }
                let events = try await consume(topic: EventTopics.topic(for: .habits, prefix: prefix), brokers: environment.kafkaBrokers, count: 1000)
                #expect(events.count == 1000)
                #expect(Set(events.map(\.id)).count == 1000)
                let byKey = Dictionary(grouping: events, by: \.aggregateId)
                #expect(byKey.count == 20)
                for (key, list) in byKey {
                    #expect(list.map(\.payload.sequence) == Array(0..<50), "order of \(key)")
                }
                // Acknowledged rows are gone from the outbox.
                try await waitUntil { try await pendingCount(database) == 0 }
            }
        }
    }

    @Test("a rolled-back transaction publishes nothing")
    func rollbackPublishesNothing() async throws {
        struct Abort: Error {}
        let environment = try TestEnvironment.current()
        let prefix = TestKafka.topicPrefix()
        try await withTestDatabase { database in
            let outbox = Outbox(schema: database.schema, topicPrefix: prefix)
            await #expect(throws: Abort.self) {
                try await database.transaction { connection in
                    try await outbox.publish(event(key: "a", sequence: 0), on: connection, logger: logger)
                    throw Abort()
                }
            }
            #expect(try await pendingCount(database) == 0)
            try await database.transaction { connection in
                try await outbox.publish(event(key: "a", sequence: 1), on: connection, logger: logger)
            }
            // A later event of the same key marks the end: had the rolled-back one been sent, it
            // would arrive before it (one key, one partition, in order). No fixed wait.
            try await database.transaction { connection in
                try await outbox.publish(event(key: "a", sequence: 2), on: connection, logger: logger)
            }
            try await withRelay(database: database, outbox: outbox, brokers: environment.kafkaBrokers) {
                let events = try await consume(topic: EventTopics.topic(for: .habits, prefix: prefix), brokers: environment.kafkaBrokers, count: 2)
                #expect(events.map(\.payload.sequence) == [1, 2])
            }
        }
    }

    @Test("with the broker down, commits go on and nothing is lost once a broker is back, even what the broker had acknowledged and then lost")
    func brokerOutage() async throws {
        let broker = try BrokerProcess()
        try await broker.start()
        defer { broker.stop() }
        let prefix = TestKafka.topicPrefix()
        let topic = EventTopics.topic(for: .habits, prefix: prefix)
        try await withTestDatabase { database in
            let outbox = Outbox(schema: database.schema, topicPrefix: prefix)
            try await withRelay(database: database, outbox: outbox, brokers: broker.bootstrapServers) {
                for sequence in 0..<10 {
                    try await database.transaction { try await outbox.publish(event(key: "before", sequence: sequence), on: $0, logger: logger) }
                }
                let before = try await consume(topic: topic, brokers: broker.bootstrapServers, count: 10)
                #expect(before.count == 10)

                broker.stop()
                logger.info("broker stopped")
                for sequence in 0..<100 {
                    try await database.transaction { try await outbox.publish(event(key: "during-\(sequence % 4)", sequence: sequence), on: $0, logger: logger) }
                }
                logger.info("100 committed while broker down")
                try await Task.sleep(for: .seconds(1))
                #expect(try await pendingCount(database) == 100, "events wait in the outbox")

                // The local broker is memory-only: it comes back empty, topics included. The 10
                // events it had acknowledged before are gone with it; the relay kept them and
                // sends them again, ahead of the 100.
                try await broker.start()
                let after = try await consume(topic: topic, brokers: broker.bootstrapServers, count: 110, timeout: .seconds(120))
                #expect(after.filter { $0.aggregateId == "before" }.map(\.payload.sequence) == Array(0..<10))
                #expect(Set(after.filter { $0.aggregateId != "before" }.map(\.payload.sequence)) == Set(0..<100))
                try await waitUntil(timeout: .seconds(30)) { try await pendingCount(database) == 0 }
            }
        }
    }

    @Test("a consumer stopped after handling but before committing redelivers; the inbox makes it a no-op")
    func inboxDeduplicatesRedelivery() async throws {
        let environment = try TestEnvironment.current()
        let topic = uniqueName("inbox")
        try await KafkaAdmin(configuration: KafkaConfiguration(bootstrapServers: environment.kafkaBrokers)).createTopics([topic], partitions: 1)
        let producer = try KafkaProducer(configuration: TestKafka.producer(brokers: environment.kafkaBrokers), logger: logger)
        defer { producer.shutdown() }
        let sent = event(key: "k", sequence: 7)
        try await producer.send(KafkaOutgoingMessage(topic: topic, key: sent.aggregateId, value: try sent.encoded()))

        let migrations = [Migration(version: 1, name: "effects", sql: "CREATE TABLE effects (sequence int NOT NULL);")]
        try await withTestDatabase(migrations: migrations) { database in
            let inbox = Inbox(database: database)
            let group = uniqueName("g")
            func handleNext(markAfterwards: Bool) async throws -> Bool {
                let consumer = try KafkaConsumer(configuration: TestKafka.consumer(brokers: environment.kafkaBrokers, group: group), topics: [topic], logger: logger)
                var applied = false
                for try await message in consumer.messages() {
                    let received = try ReceivedEvent(bytes: message.value)
                    applied = try await inbox.handle(received) { connection in
                        let ping = try received.decode(TestPing.self)
                        try await connection.query("INSERT INTO effects (sequence) VALUES (\(ping.payload.sequence))", logger: logger)
                    }
                    if markAfterwards { consumer.markHandled(message) }
                    break
                }
                if markAfterwards { try await consumer.commit() }
                await consumer.close()
                return applied
            }
            #expect(try await handleNext(markAfterwards: false) == true)   // handled, then "killed"
            #expect(try await handleNext(markAfterwards: true) == false)   // redelivered: no second effect
            let effects = try await database.query("SELECT count(*) FROM effects").collect().first!.decode(Int.self)
            #expect(effects == 1)
            #expect(try await inbox.contains(sent.id))
        }
    }

    @Test("EventConsumer applies each event once even when the broker holds it twice")
    func eventConsumerService() async throws {
        let environment = try TestEnvironment.current()
        let prefix = TestKafka.topicPrefix()
        let topic = EventTopics.topic(for: .habits, prefix: prefix)
        try await KafkaAdmin(configuration: KafkaConfiguration(bootstrapServers: environment.kafkaBrokers)).createTopics([topic])
        let producer = try KafkaProducer(configuration: TestKafka.producer(brokers: environment.kafkaBrokers), logger: logger)
        defer { producer.shutdown() }
        let events = (0..<5).map { event(key: "k", sequence: $0) }
        // Every event twice, as a producer retry after a lost acknowledgement would leave it.
        for message in events.flatMap({ [$0, $0] }) {
            try await producer.send(KafkaOutgoingMessage(topic: topic, key: message.aggregateId, value: try message.encoded()))
        }
        let migrations = [Migration(version: 1, name: "effects", sql: "CREATE TABLE effects (sequence int NOT NULL);")]
        try await withTestDatabase(migrations: migrations) { database in
            let logger = self.logger
            let consumer = EventConsumer(configuration: TestKafka.consumer(brokers: environment.kafkaBrokers), topics: [topic], database: database, logger: logger) { event, connection in
                guard event.type == TestPing.eventType else { return }
                let ping = try event.decode(TestPing.self)
                try await connection.query("INSERT INTO effects (sequence) VALUES (\(ping.payload.sequence))", logger: logger)
            }
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await consumer.run() }
                try await waitUntil { try await database.query("SELECT count(*) FROM inbox").collect().first!.decode(Int.self) == 5 }
                try await Task.sleep(for: .seconds(1))
                group.cancelAll()
            }
            let effects = try await database.query("SELECT sequence FROM effects ORDER BY sequence").collect().map { try $0.decode(Int.self) }
            #expect(effects == [0, 1, 2, 3, 4])
        }
    }
}

