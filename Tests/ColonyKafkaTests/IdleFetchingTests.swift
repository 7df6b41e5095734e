import ColonyKafka
import ColonyTesting
import Foundation
import Synchronization
import Testing

/// Idle consumers doze (`KafkaConfiguration.IdleFetching`): paused between looks, woken by the
/// first event they find. Against the real local broker: nothing is lost or delivered twice however
/// often a consumer pauses and resumes, partitions it never consumed from included.
@Suite("Kafka idle fetching")
struct IdleFetchingTests {
    let logger = TestEnvironment.logger

    /// What a consumer received, per partition, in order.
    final class Received: Sendable {
        private let values = Mutex<[Int32: [Int]]>([:])
        func add(_ message: KafkaConsumerMessage) {
            let value = Int(String(decoding: message.value, as: UTF8.self)) ?? -1
            values.withLock { $0[message.partition, default: []].append(value) }
        }
        var all: [Int32: [Int]] { values.withLock { $0 } }
        var count: Int { values.withLock { $0.values.reduce(0) { $0 + $1.count } } }
    }

    func consume(_ consumer: KafkaConsumer, into received: Received) -> Task<Void, any Error> {
        Task {
            for try await message in consumer.messages() {
                received.add(message)
                consumer.markHandled(message)
            }
        }
    }

    func waitUntil(_ what: String, seconds: Int = 60, reportsTimeout: Bool = true, _ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while !condition() {
            guard ContinuousClock.now < deadline else {
                if reportsTimeout { Issue.record("not within \(seconds) s: \(what)") }
                return
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    @Test("a dozing consumer wakes for the next event, on a partition it never consumed from too, and misses none")
    func wakesForEvents() async throws {
        let environment = try TestEnvironment.current()
        let topic = uniqueName("idle")
        try await KafkaAdmin(configuration: KafkaConfiguration(bootstrapServers: environment.kafkaBrokers)).createTopics([topic], partitions: 3)
        let producer = try KafkaProducer(configuration: TestKafka.producer(brokers: environment.kafkaBrokers), logger: logger)
        defer { producer.shutdown() }
        let consumer = try KafkaConsumer(
            configuration: .consumer(bootstrapServers: environment.kafkaBrokers, groupId: uniqueName("g"),
                                     idleFetching: .init(after: .milliseconds(300), interval: .milliseconds(200), look: .milliseconds(60))),
            topics: [topic], logger: logger)
        let received = Received()
        let task = consume(consumer, into: received)
        var sent = 0
        // Rounds: wait until it dozes, then one event (keys spread them over the partitions: each
        // partition's first event reaches it while it never consumed from that partition).
        for round in 0..<6 {
            try await waitUntil("the consumer dozes (round \(round))") { consumer.isDozing }
            let report = await producer.send([KafkaOutgoingMessage(topic: topic, key: "round-\(round)", value: Array("\(sent)".utf8))])
            _ = try report[0].get()
            sent += 1
            let produced = ContinuousClock.now
            try await waitUntil("event \(sent - 1) arrives") { received.count == sent }
            print("idle fetching: round \(round): the event arrived \(ContinuousClock.now - produced) after it was acknowledged")
        }
        consumer.stopDelivery()
        try await task.value
        await consumer.close()
        #expect(received.all.values.flatMap { $0 }.sorted() == Array(0..<sent))
    }

    @Test("a stream produced across hundreds of pauses and resumes arrives whole, once, in order per partition")
    func streamAcrossDozes() async throws {
        let environment = try TestEnvironment.current()
        let topic = uniqueName("idle-stream")
        try await KafkaAdmin(configuration: KafkaConfiguration(bootstrapServers: environment.kafkaBrokers)).createTopics([topic], partitions: 3)
        let producer = try KafkaProducer(configuration: TestKafka.producer(brokers: environment.kafkaBrokers), logger: logger)
        defer { producer.shutdown() }
        // Dozes after 5 ms of silence and looks every 15 ms: pauses land between fetches and on them.
        let consumer = try KafkaConsumer(
            configuration: .consumer(bootstrapServers: environment.kafkaBrokers, groupId: uniqueName("g"),
                                     idleFetching: .init(after: .milliseconds(5), interval: .milliseconds(15), look: .milliseconds(12))),
            topics: [topic], logger: logger)
        let received = Received()
        let task = consume(consumer, into: received)
        let count = 600
        for batch in stride(from: 0, to: count, by: 3) {
            // Uneven gaps; keys spread the messages over the partitions.
            let messages = (batch..<min(count, batch + 3)).map { KafkaOutgoingMessage(topic: topic, key: "k\($0 % 5)", value: Array("\($0)".utf8)) }
            for report in await producer.send(messages) { _ = try report.get() }
            try await Task.sleep(for: .milliseconds(batch % 2 == 0 ? 30 : 3))
        }
        try await waitUntil("all \(count) events arrive") { received.count >= count }
        consumer.stopDelivery()
        try await task.value
        await consumer.close()
        let all = received.all
        #expect(received.count == count, "each event once")
        #expect(consumer.dozes >= 20, "it dozed \(consumer.dozes) times")
        for (partition, values) in all {
            #expect(values == values.sorted(), "order within partition \(partition)")
        }
        #expect(Set(all.values.flatMap { $0 }) == Set(0..<count))
    }

    @Test("a live consumer (starting at the end, committing nothing) delivers each event produced after it started, once, across dozes")
    func liveConsumerAcrossDozes() async throws {
        let environment = try TestEnvironment.current()
        let topic = uniqueName("idle-live")
        try await KafkaAdmin(configuration: KafkaConfiguration(bootstrapServers: environment.kafkaBrokers)).createTopics([topic], partitions: 2)
        let producer = try KafkaProducer(configuration: TestKafka.producer(brokers: environment.kafkaBrokers), logger: logger)
        defer { producer.shutdown() }
        // History before it starts. (The local broker answers "the end" one offset past each
        // partition's start, so a live consumer there sees most of it: EventConsumer's live mode
        // drops what happened before it started. This test is about what comes after.)
        for report in await producer.send((0..<10).map { KafkaOutgoingMessage(topic: topic, key: "k\($0)", value: Array("\(-1 - $0)".utf8)) }) {
            _ = try report.get()
        }
        var configuration = KafkaConfiguration.consumer(bootstrapServers: environment.kafkaBrokers, groupId: uniqueName("live"),
                                                        idleFetching: .init(after: .milliseconds(300), interval: .milliseconds(200), look: .milliseconds(60)))
        configuration.properties["auto.offset.reset"] = "latest"
        configuration.properties["enable.auto.commit"] = "false"
        let consumer = try KafkaConsumer(configuration: configuration, topics: [topic], logger: logger)
        let received = Received()
        let task = consume(consumer, into: received)
        // Starting at the end takes a lookup after the assignment: what is produced before it
        // answered is history too. A marker, sent again until one arrives, shows it is past that.
        let markers = ContinuousClock.now + .seconds(60)
        while !received.all.values.contains(where: { $0.contains(-100) }) && ContinuousClock.now < markers {
            _ = try await producer.send([KafkaOutgoingMessage(topic: topic, key: "marker", value: Array("-100".utf8))])[0].get()
            try await waitUntil("a marker arrives", seconds: 3, reportsTimeout: false) { received.all.values.contains { $0.contains(-100) } }
        }
        for round in 0..<4 {
            try await waitUntil("the live consumer dozes (round \(round))") { consumer.isDozing }
            let before = received.count
            _ = try await producer.send([KafkaOutgoingMessage(topic: topic, key: "round-\(round)", value: Array("\(round)".utf8))])[0].get()
            try await waitUntil("event \(round) arrives") { received.count == before + 1 }
        }
        consumer.stopDelivery()
        try await task.value
        await consumer.close()
        let values = received.all.values.flatMap { $0 }
        #expect(values.filter { $0 >= 0 }.sorted() == [0, 1, 2, 3], "each new event once")
        #expect(values.filter { $0 != -100 }.count == Set(values.filter { $0 != -100 }).count, "nothing twice")
    }
}
