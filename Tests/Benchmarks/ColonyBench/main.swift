import ColonyKafka
import ColonyTesting
import Foundation
import Logging
import PostgresNIO

// colony-bench: the platform's outbox against a raw librdkafka baseline, measured in the same
// run on the same broker and database (absolute figures drift between sessions; the ratios are
// the result). Run through scripts/bench, which builds in release mode and starts the infra.
//
//   colony-bench [--events N] [--rate PER_SECOND] [--seconds S]
//   BENCH_DETAIL=1 prints more latency percentiles; BENCH_WRITERS_ONLY=1 times only the
//   writers' one-event transactions (no relay, no broker).

struct Options {
    var events = 50_000
    var rate = 500
    var seconds = 10

    init(_ arguments: [String]) {
        var iterator = arguments.makeIterator()
        while let argument = iterator.next() {
            let value = iterator.next().flatMap(Int.init)
            switch (argument, value) {
            case ("--events", let value?): events = value
            case ("--rate", let value?): rate = value
            case ("--seconds", let value?): seconds = value
            default:
                FileHandle.standardError.write(Data("usage: colony-bench [--events N] [--rate PER_SECOND] [--seconds S]\n".utf8))
                exit(2)
            }
        }
    }
}

/// The benchmark's event: its sequence and the moment it entered the pipeline (uptime ns).
struct BenchEvent: EventPayload {
    static let eventType: EventType = "bench_event"
    static let source = ColonyService.habits
    var sequence: Int
    var sentAt: UInt64
    var padding: String
}

let options = Options(Array(CommandLine.arguments.dropFirst()))
let logger: Logger = {
    var logger = Logger(label: "colony.bench")
    logger.logLevel = .error
    return logger
}()
let environment = try TestEnvironment.current()
let brokers = environment.kafkaBrokers
let padding = String(repeating: "x", count: 120)

func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

/// One warm-up event per key the benchmark uses.
let warmUpKeys = (0..<16).map { "key-\($0)" }

func envelope(_ sequence: Int, key: String) -> EventEnvelope<BenchEvent> {
    EventEnvelope(app: .habithive, aggregateId: key, payload: BenchEvent(sequence: sequence, sentAt: now(), padding: padding))
}

func percentile(_ sorted: [Double], _ p: Double) -> Double {
    guard !sorted.isEmpty else { return .nan }
    return sorted[min(sorted.count - 1, Int((Double(sorted.count) * p).rounded(.down)))]
}

func format(_ value: Double, _ digits: Int = 2) -> String { String(format: "%.\(digits)f", value) }

/// A consumer that is already in its group (a warm-up message got through) and records, per
/// message, the arrival time and latency until `expected` messages arrived.
final class Receiver: @unchecked Sendable {
    // @unchecked: the fields are written by the one consuming task and read after it finished.
    let consumer: KafkaConsumer
    var latencies: [Double] = []
    var arrivals: [Int: UInt64] = [:]
    var lastArrival: UInt64 = 0

    init(topic: String) async throws {
        try await KafkaAdmin(configuration: KafkaConfiguration(bootstrapServers: brokers)).createTopics([topic], partitions: 3)
        consumer = try KafkaConsumer(configuration: TestKafka.consumer(brokers: brokers), topics: [topic], logger: logger)
    }

    /// Waits for the warm-up events (sequence < 0): then the group is joined and every
    /// partition's fetcher runs, and the sender's connection and producer id are set up.
    func awaitWarmUp(_ count: Int) async throws {
        var warmed = 0
        for try await message in consumer.messages() {
            consumer.markHandled(message)
            warmed += 1
            if warmed == count { return }
        }
    }

    func receive(_ expected: Int) async throws {
        var count = 0
        latencies.reserveCapacity(expected)
        for try await message in consumer.messages() {
            let arrival = now()
            let event = try ReceivedEvent(bytes: message.value).decode(BenchEvent.self)
            consumer.markHandled(message)
            if event.payload.sequence < 0 { continue }
            latencies.append(Double(arrival &- event.payload.sentAt) / 1e6)
            arrivals[event.payload.sequence] = arrival
            lastArrival = arrival
            count += 1
            if count == expected { break }
        }
        await consumer.close()
    }
}

/// Raw baseline throughput: librdkafka produce → consume of `count` messages.
func rawThroughput(count: Int) async throws -> Double {
    let topic = uniqueName("bench_raw")
    let receiver = try await Receiver(topic: topic)
    let producer = try KafkaProducer(configuration: TestKafka.producer(brokers: brokers), logger: logger)
    defer { producer.shutdown() }
    _ = await producer.send(try warmUpKeys.map { KafkaOutgoingMessage(topic: topic, key: $0, value: try envelope(-1, key: $0).encoded()) })
    try await receiver.awaitWarmUp(warmUpKeys.count)
    let start = now()
    async let received: Void = receiver.receive(count)
    let batch = 1000
    for first in stride(from: 0, to: count, by: batch) {
        let messages = try (first..<min(count, first + batch)).map { sequence in
            KafkaOutgoingMessage(topic: topic, key: "key-\(sequence % 16)", value: try envelope(sequence, key: "key-\(sequence % 16)").encoded())
        }
        // Keep a batch in flight while preparing the next, as an application producing steadily would.
        _ = await producer.send(messages)
    }
    try await received
    return Double(count) / (Double(receiver.lastArrival - start) / 1e9)
}

/// Outbox throughput: `count` events already committed to the outbox, relayed and consumed.
func outboxThroughput(count: Int) async throws -> (relay: Double, writers: Double) {
    try await withTestDatabase(poolSize: 16) { database in
        let prefix = TestKafka.topicPrefix()
        let outbox = Outbox(schema: database.schema, topicPrefix: prefix)
        // Writer-side figure: one event per transaction, 16 concurrent writers.
        let writerEvents = min(count, 5000)
        let writeStart = now()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<16 {
                group.addTask {
                    for sequence in stride(from: writer, to: writerEvents, by: 16) {
                        try await database.transaction { try await outbox.publish(envelope(sequence, key: "key-\(sequence % 16)"), on: $0, logger: logger) }
                    }
                }
            }
            try await group.waitForAll()
        }
        let writers = Double(writerEvents) / (Double(now() - writeStart) / 1e9)
        try await database.query("DELETE FROM outbox")
        // Warm the relay's producer and the consumer with events relayed by hand.
        let receiver = try await Receiver(topic: EventTopics.topic(for: .habits, prefix: prefix))
        let relay = try OutboxRelay(database: database, producerConfiguration: TestKafka.producer(brokers: brokers), outbox: outbox, logger: logger)
        try await database.transaction { connection in
            for key in warmUpKeys { try await outbox.publish(envelope(-1, key: key), on: connection, logger: logger) }
        }
        try await relay.drain()
        try await receiver.awaitWarmUp(warmUpKeys.count)
        // The measured events in larger transactions, so the relay has the full count waiting.
        for first in stride(from: 0, to: count, by: 1000) {
            try await database.transaction { connection in
                for sequence in first..<min(count, first + 1000) {
                    try await outbox.publish(envelope(sequence, key: "key-\(sequence % 16)"), on: connection, logger: logger)
                }
            }
        }
        let start = now()
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await relay.run() }
            try await receiver.receive(count)
            group.cancelAll()
        }
        return (Double(count) / (Double(receiver.lastArrival - start) / 1e9), writers)
    }
}

/// End-to-end latency at a steady rate: raw produce → consume.
func rawLatency(rate: Int, seconds: Int) async throws -> [Double] {
    let topic = uniqueName("bench_lat")
    let receiver = try await Receiver(topic: topic)
    let producer = try KafkaProducer(configuration: TestKafka.producer(brokers: brokers), logger: logger)
    defer { producer.shutdown() }
    _ = await producer.send(try warmUpKeys.map { KafkaOutgoingMessage(topic: topic, key: $0, value: try envelope(-1, key: $0).encoded()) })
    try await receiver.awaitWarmUp(warmUpKeys.count)
    let total = rate * seconds
    async let received: Void = receiver.receive(total)
    try await paced(total: total, rate: rate) { sequence in
        Task.detached {
            let message = KafkaOutgoingMessage(topic: topic, key: "key-\(sequence % 16)", value: try envelope(sequence, key: "key-\(sequence % 16)").encoded())
            _ = await producer.send([message])
        }
    }
    try await received
    return receiver.latencies.sorted()
}

/// The same application without an outbox (the dual write the outbox replaces): each writer
/// commits its one-row transaction, then produces the event straight to Kafka. Measured from the
/// commit's return to consumption, under the same Postgres load as the outbox run, so the
/// difference between the two is what the relay itself adds.
func dualWriteLatency(rate: Int, seconds: Int) async throws -> [Double] {
    try await withTestDatabase(migrations: [Migration(version: 1, name: "app rows", sql: "CREATE TABLE app_rows (sequence int NOT NULL, body text NOT NULL);")], poolSize: 16) { database in
        let topic = uniqueName("bench_dual")
        let receiver = try await Receiver(topic: topic)
        let producer = try KafkaProducer(configuration: TestKafka.producer(brokers: brokers), logger: logger)
        defer { producer.shutdown() }
        _ = await producer.send(try warmUpKeys.map { KafkaOutgoingMessage(topic: topic, key: $0, value: try envelope(-1, key: $0).encoded()) })
        try await receiver.awaitWarmUp(warmUpKeys.count)
        let total = rate * seconds
        let committed = CommitTimes()
        async let received: Void = receiver.receive(total)
        try await withThrowingTaskGroup(of: Void.self) { writers in
            try await paced(total: total, rate: rate) { sequence in
                writers.addTask {
                    let event = envelope(sequence, key: "key-\(sequence % 16)")
                    let value = try event.encoded()
                    _ = try await database.transaction { connection in
                        try await connection.query("INSERT INTO app_rows (sequence, body) VALUES (\(sequence), \(String(decoding: value, as: UTF8.self)))", logger: logger)
                    }
                    committed.add(0, sequence: sequence, at: now())
                    _ = await producer.send([KafkaOutgoingMessage(topic: topic, key: "key-\(sequence % 16)", value: value)])
                }
            }
            try await writers.waitForAll()
        }
        try await received
        return receiver.arrivals.compactMap { sequence, arrival in
            committed.committed(sequence).map { Double(Int64(bitPattern: arrival &- $0)) / 1e6 }
        }.sorted()
    }
}

/// Per event of the outbox latency run: how long its transaction took (ms) and when it returned.
final class CommitTimes: @unchecked Sendable {
    // @unchecked: guarded by the lock.
    private let lock = NSLock()
    private var values: [Double] = []
    private var committedAt: [Int: UInt64] = [:]
    func add(_ value: Double, sequence: Int = -1, at time: UInt64 = 0) {
        lock.lock()
        values.append(value)
        committedAt[sequence] = time
        lock.unlock()
    }
    func sorted() -> [Double] { lock.lock(); defer { lock.unlock() }; return values.sorted() }
    func committed(_ sequence: Int) -> UInt64? { lock.lock(); defer { lock.unlock() }; return committedAt[sequence] }
}
let commitTimes = CommitTimes()

/// End-to-end latency at a steady rate: one event per committed transaction → relay → consume.
func outboxLatency(rate: Int, seconds: Int) async throws -> (fromStart: [Double], fromCommit: [Double]) {
    try await withTestDatabase(poolSize: 16) { database in
        let prefix = TestKafka.topicPrefix()
        let outbox = Outbox(schema: database.schema, topicPrefix: prefix)
        let receiver = try await Receiver(topic: EventTopics.topic(for: .habits, prefix: prefix))
        let relay = try OutboxRelay(database: database, producerConfiguration: TestKafka.producer(brokers: brokers), outbox: outbox, logger: logger)
        let total = rate * seconds
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await relay.run() }
            try await database.transaction { connection in
                for key in warmUpKeys { try await outbox.publish(envelope(-1, key: key), on: connection, logger: logger) }
            }
            try await receiver.awaitWarmUp(warmUpKeys.count)
            group.addTask {
                try await withThrowingTaskGroup(of: Void.self) { writers in
                    try await paced(total: total, rate: rate) { sequence in
                        writers.addTask {
                            let event = envelope(sequence, key: "key-\(sequence % 16)")
                            try await database.transaction { try await outbox.publish(event, on: $0, logger: logger) }
                            let committed = now()
                            commitTimes.add(Double(committed - event.payload.sentAt) / 1e6, sequence: sequence, at: committed)
                        }
                    }
                    try await writers.waitForAll()
                }
            }
            try await receiver.receive(total)
            group.cancelAll()
        }
        return (receiver.latencies.sorted(), sinceCommit(receiver))
    }
}

/// The outbox run's latencies measured from each commit's return instead of from before the
/// transaction: the part the relay is responsible for.
func sinceCommit(_ receiver: Receiver) -> [Double] {
    receiver.arrivals.compactMap { sequence, arrival in
        commitTimes.committed(sequence).map { Double(Int64(bitPattern: arrival &- $0)) / 1e6 }
    }.sorted()
}

/// Calls `body` `total` times, `rate` times a second.
func paced(total: Int, rate: Int, _ body: (Int) throws -> Void) async throws {
    let interval = 1e9 / Double(rate)
    let start = now()
    for sequence in 0..<total {
        let due = start + UInt64(Double(sequence) * interval)
        let current = now()
        if due > current { try await Task.sleep(nanoseconds: due - current) }
        try body(sequence)
    }
}

print("colony-bench: outbox vs raw librdkafka on one broker and database (librdkafka \(librdkafkaVersion))")
print("events for throughput: \(options.events); latency: \(options.rate)/s for \(options.seconds) s; payload \(try envelope(0, key: "key-0").encoded().count) bytes")

/// The writer side alone (no relay, no broker): how long one-event transactions take at the rate.
func writersOnly(rate: Int, seconds: Int) async throws {
    try await withTestDatabase(poolSize: 16) { database in
        let outbox = Outbox(schema: database.schema, topicPrefix: "w")
        try await withThrowingTaskGroup(of: Void.self) { writers in
            try await paced(total: rate * seconds, rate: rate) { sequence in
                writers.addTask {
                    let event = envelope(sequence, key: "key-\(sequence % 16)")
                    try await database.transaction { try await outbox.publish(event, on: $0, logger: logger) }
                    commitTimes.add(Double(now() - event.payload.sentAt) / 1e6)
                }
            }
            try await writers.waitForAll()
        }
    }
    let commits = commitTimes.sorted()
    print("writers only: p50 \(format(percentile(commits, 0.5))) p90 \(format(percentile(commits, 0.9))) p99 \(format(percentile(commits, 0.99)))")
}

if ProcessInfo.processInfo.environment["BENCH_WRITERS_ONLY"] != nil {
    try await writersOnly(rate: options.rate, seconds: options.seconds)
    exit(0)
}
let raw = try await rawThroughput(count: options.events)
let (relayed, writers) = try await outboxThroughput(count: options.events)
let rawLatencies = try await rawLatency(rate: options.rate, seconds: options.seconds)
let dualWrite = try await dualWriteLatency(rate: options.rate, seconds: options.seconds)
let (outboxLatencies, commitToConsume) = try await outboxLatency(rate: options.rate, seconds: options.seconds)

let ratio = relayed / raw
let rawP99 = percentile(rawLatencies, 0.99)
let outboxP99 = percentile(outboxLatencies, 0.99)
let dualP99 = percentile(dualWrite, 0.99)
let added = percentile(commitToConsume, 0.99) - dualP99
print("")
print("throughput")
print("  raw produce → consume              \(format(raw, 0)) events/s")
print("  outbox relay → consume             \(format(relayed, 0)) events/s   ratio \(format(ratio)) (target ≥ 0.5: \(ratio >= 0.5 ? "met" : "MISSED"))")
print("  outbox writers (1 event/tx, 16)    \(format(writers, 0)) events/s committed (Postgres-bound, for reference)")
if ProcessInfo.processInfo.environment["BENCH_DETAIL"] != nil {
    for p in [0.5, 0.8, 0.9, 0.95, 0.98, 0.99, 0.999] {
        print("  p\(p): raw \(format(percentile(rawLatencies, p))) commit+produce \(format(percentile(dualWrite, p))) commit→relay→consume \(format(percentile(commitToConsume, p)))")
    }
}
print("latency (ms)                          p50      p99")
print("  raw produce → consume              \(format(percentile(rawLatencies, 0.5)))     \(format(rawP99))   (idle database)")
print("  commit, then produce → consume     \(format(percentile(dualWrite, 0.5)))     \(format(dualP99))   (raw produce after each writer's commit: same Postgres load, no outbox)")
print("  outbox write → relay → consume     \(format(percentile(outboxLatencies, 0.5)))     \(format(outboxP99))")
let commits = commitTimes.sorted()
print("    the writer's transaction         \(format(percentile(commits, 0.5)))     \(format(percentile(commits, 0.99)))   (BEGIN, INSERT, NOTIFY, COMMIT)")
print("    commit → relay → consume         \(format(percentile(commitToConsume, 0.5)))     \(format(percentile(commitToConsume, 0.99)))")
print("  relay adds at p99                  \(format(added)) ms: commit → relay → consume p99 minus commit, then produce p99 (target ≤ 10 ms: \(added <= 10 ? "met" : "MISSED"))")
print("  (against the idle-database raw p99: \(format(percentile(commitToConsume, 0.99) - rawP99)) ms)")
