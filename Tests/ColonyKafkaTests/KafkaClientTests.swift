import ColonyKafka
import ColonyTesting
import Foundation
import Synchronization
import Testing

/// The librdkafka wrapper against librdkafka's in-process mock cluster (fast, no broker) and
/// against the real local broker.
@Suite("Kafka client")
struct KafkaClientTests {
    let logger = TestEnvironment.logger

    /// A producer and consumer sharing one mock cluster: the producer's handle hosts it.
    @Test("mock cluster: every message gets a delivery report; a failed one reports its error")
    func mockCluster() async throws {
        let topic = uniqueName("mock")
        let producer = try KafkaProducer(
            configuration: KafkaConfiguration(bootstrapServers: "", properties: ["test.mock.num.brokers": "1", "enable.idempotence": "true", "acks": "all", "message.max.bytes": "10000"]),
            logger: logger
        )
        defer { producer.shutdown() }
        let reports = await producer.send((0..<20).map { KafkaOutgoingMessage(topic: topic, key: "k\($0 % 2)", value: Array("m\($0)".utf8)) })
        for report in reports {
            let delivered = try report.get()
            #expect(delivered.topic == topic)
            #expect(delivered.offset >= 0)
        }
        #expect(Set(try reports.map { try "\($0.get().partition)/\($0.get().offset)" }).count == 20)
        // One oversized message in a batch fails alone; its neighbours are delivered.
        let mixed = await producer.send([
            KafkaOutgoingMessage(topic: topic, key: "a", value: [1]),
            KafkaOutgoingMessage(topic: topic, key: "a", value: [UInt8](repeating: 0, count: 20000)),
            KafkaOutgoingMessage(topic: topic, key: "a", value: [2]),
        ])
        #expect((try? mixed[0].get()) != nil)
        #expect((try? mixed[2].get()) != nil)
        switch mixed[1] {
        case .success: Issue.record("an oversized message was accepted")
        case .failure(let error): #expect(error.message.lowercased().contains("too large"))
        }
    }

    @Test("real broker: produce and consume with a consumer group; commits resume where handled")
    func realBrokerRoundTrip() async throws {
        let environment = try TestEnvironment.current()
        let topic = uniqueName("rt")
        try await KafkaAdmin(configuration: KafkaConfiguration(bootstrapServers: environment.kafkaBrokers)).createTopics([topic], partitions: 2)
        let producer = try KafkaProducer(configuration: TestKafka.producer(brokers: environment.kafkaBrokers), logger: logger)
        defer { producer.shutdown() }
        let count = 50
        let results = await producer.send((0..<count).map { KafkaOutgoingMessage(topic: topic, key: "key-\($0 % 5)", value: Array("\($0)".utf8), headers: [("event_type", "test")]) })
        #expect(results.allSatisfy { (try? $0.get()) != nil })

        let group = uniqueName("g")
        // First consumer handles (marks) the first 20 messages, then commits and leaves.
        let first = try KafkaConsumer(configuration: TestKafka.consumer(brokers: environment.kafkaBrokers, group: group), topics: [topic], logger: logger)
        var seen: [String: [Int]] = [:]
        var handled = 0
        for try await message in first.messages() {
            #expect(message.header("event_type") == "test")
            seen[message.keyString, default: []].append(Int(String(decoding: message.value, as: UTF8.self))!)
            first.markHandled(message)
            handled += 1
            if handled == 20 { break }
        }
        try await first.commit()
        await first.close()

        // A second member of the group gets exactly the rest.
        let second = try KafkaConsumer(configuration: TestKafka.consumer(brokers: environment.kafkaBrokers, group: group), topics: [topic], logger: logger)
        for try await message in second.messages() {
            seen[message.keyString, default: []].append(Int(String(decoding: message.value, as: UTF8.self))!)
            second.markHandled(message)
            handled += 1
            if handled == count { break }
        }
        await second.close()
        #expect(seen.values.reduce(0) { $0 + $1.count } == count)
        for (_, values) in seen {
            #expect(values == values.sorted(), "order within a key")
        }
    }

    @Test("real broker: a message handled but not marked is delivered again to the next consumer")
    func redeliveryWithoutCommit() async throws {
        let environment = try TestEnvironment.current()
        let topic = uniqueName("rd")
        try await KafkaAdmin(configuration: KafkaConfiguration(bootstrapServers: environment.kafkaBrokers)).createTopics([topic], partitions: 1)
        let producer = try KafkaProducer(configuration: TestKafka.producer(brokers: environment.kafkaBrokers), logger: logger)
        defer { producer.shutdown() }
        try await producer.send(KafkaOutgoingMessage(topic: topic, key: "a", value: Array("once".utf8)))

        let group = uniqueName("g")
        let first = try KafkaConsumer(configuration: TestKafka.consumer(brokers: environment.kafkaBrokers, group: group), topics: [topic], logger: logger)
        var firstOffset: Int64 = -1
        for try await message in first.messages() {
            firstOffset = message.offset
            break  // "crash" after handling, before marking
        }
        await first.close()

        let second = try KafkaConsumer(configuration: TestKafka.consumer(brokers: environment.kafkaBrokers, group: group), topics: [topic], logger: logger)
        var again: KafkaConsumerMessage?
        for try await message in second.messages() {
            again = message
            second.markHandled(message)
            break
        }
        try await second.commit()
        await second.close()
        #expect(again?.offset == firstOffset)
        #expect(again.map { String(decoding: $0.value, as: UTF8.self) } == "once")
    }

    @Test("real broker: two group members share the partitions; when one leaves the other takes over", arguments: ["cooperative-sticky", "range"])
    func rebalance(strategy: String) async throws {
        let environment = try TestEnvironment.current()
        let topic = uniqueName("rb")
        try await KafkaAdmin(configuration: KafkaConfiguration(bootstrapServers: environment.kafkaBrokers)).createTopics([topic], partitions: 4)
        let producer = try KafkaProducer(configuration: TestKafka.producer(brokers: environment.kafkaBrokers), logger: logger)
        defer { producer.shutdown() }
        let group = uniqueName("g")
        let configuration = TestKafka.consumer(brokers: environment.kafkaBrokers, group: group)
        var settings = configuration
        settings.properties["partition.assignment.strategy"] = strategy

        let first = try KafkaConsumer(configuration: settings, topics: [topic], logger: logger)
        let second = try KafkaConsumer(configuration: settings, topics: [topic], logger: logger)
        let tally = PartitionTally()
        func drain(_ name: String, _ consumer: KafkaConsumer) -> Task<Void, any Error> {
            Task {
                for try await message in consumer.messages() {
                    tally.record(name, partition: message.partition)
                    consumer.markHandled(message)
                }
            }
        }
        let firstTask = drain("first", first)
        let secondTask = drain("second", second)
        // Keep producing across the partitions until both members have received something.
        var sent = 0
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            _ = await producer.send((0..<64).map { KafkaOutgoingMessage(topic: topic, key: "k\($0)", value: Array("\(sent + $0)".utf8)) })
            sent += 8
            if tally.read({ $0["first"] != nil && $0["second"] != nil }) { break }
            try await Task.sleep(for: .milliseconds(200))
        }
        #expect(tally.read { $0["first"] != nil && $0["second"] != nil }, "both members got partitions")

        // The second member leaves; the first ends up with every partition.
        second.stopDelivery()
        try await secondTask.value
        await second.close()
        tally.reset("first")
        let takeoverDeadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < takeoverDeadline {
            _ = await producer.send((0..<64).map { KafkaOutgoingMessage(topic: topic, key: "k\($0)", value: Array("\(sent + $0)".utf8)) })
            sent += 8
            if tally.read({ $0["first"]?.count == 4 }) { break }
            try await Task.sleep(for: .milliseconds(200))
        }
        #expect(tally.read { $0["first"]?.count } == 4, "the remaining member consumes all four partitions")
        first.stopDelivery()
        try await firstTask.value
        await first.close()
    }

    @Test("readiness: a reachable broker answers metadata, an unreachable one does not, and its producer says it lost every broker")
    func brokerReachability() async throws {
        let environment = try TestEnvironment.current()
        let producer = try KafkaProducer(configuration: TestKafka.producer(brokers: environment.kafkaBrokers), logger: logger)
        defer { producer.shutdown() }
        #expect(await producer.isBrokerReachable())
        let nowhere = try KafkaProducer(configuration: TestKafka.producer(brokers: "127.0.0.1:\(try freePort())"), logger: logger)
        defer { nowhere.shutdown(flushTimeout: .milliseconds(10)) }
        #expect(await nowhere.isBrokerReachable(timeout: .milliseconds(500)) == false)
        // What the outbox relay watches to start a fresh producer once a broker is back.
        try await waitUntil { nowhere.hasLostAllBrokers }
        #expect(producer.hasLostAllBrokers == false)
    }

    @Test("invalid settings fail at construction with the setting named")
    func invalidSettings() {
        do {
            _ = try KafkaProducer(configuration: KafkaConfiguration(bootstrapServers: "x", properties: ["no.such.setting": "1"]), logger: logger)
            Issue.record("accepted an unknown setting")
        } catch let error as KafkaError {
            #expect(error.message.contains("no.such.setting"))
        } catch {
            Issue.record("unexpected \(error)")
        }
    }
}

/// Which partitions each group member has received messages from.
final class PartitionTally: Sendable {
    private let received = Mutex<[String: Set<Int32>]>([:])

    func record(_ member: String, partition: Int32) {
        received.withLock { _ = $0[member, default: []].insert(partition) }
    }

    func reset(_ member: String) {
        received.withLock { $0[member] = [] }
    }

    func read<Value>(_ body: ([String: Set<Int32>]) -> Value) -> Value {
        received.withLock { body($0) }
    }
}
