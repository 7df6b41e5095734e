import ColonyKafka
import ColonyModels
import Foundation
import Logging
import PostgresNIO
import ServiceLifecycle
import Synchronization

/// Sends outbox rows to Kafka in outbox order and deletes them only once the broker
/// acknowledged them. One relay per schema works at a time (an advisory lock), so order per
/// aggregate key holds across replicas. A broker outage leaves rows waiting; a broker that
/// comes back empty gets its topics recreated and everything unacknowledged resent. The relay
/// owns its producer: when a whole batch fails it starts a fresh one, since a producer whose
/// broker lost all state (producer ids, topics) can stay stuck until its session is reset.
public final class OutboxRelay: Service, Sendable {
    private let database: Database
    private let producerConfiguration: KafkaConfiguration
    private let producer: Mutex<KafkaProducer>
    private let admin: KafkaAdmin
    private let outbox: Outbox
    private let logger: Logger
    private let batchSize: Int
    private let topicPartitions: Int32
    private let idleInterval: Duration
    private let knownTopics = Mutex<Set<String>>([])
    private let signal = WakeSignal()
    private let stopping = Atomic<Bool>(false)

    public init(database: Database, producerConfiguration: KafkaConfiguration, outbox: Outbox, logger: Logger, batchSize: Int = 1000, topicPartitions: Int32 = 3, idleInterval: Duration = .milliseconds(500)) throws {
        self.database = database
        self.producerConfiguration = producerConfiguration
        self.producer = Mutex(try KafkaProducer(configuration: producerConfiguration, logger: logger))
        self.admin = KafkaAdmin(configuration: producerConfiguration)
        self.outbox = outbox
        self.logger = logger
        self.batchSize = batchSize
        self.topicPartitions = topicPartitions
        self.idleInterval = idleInterval
    }

    /// Whether a broker answers a metadata request (for `/ready`).
    public func isBrokerReachable() async -> Bool {
        await producer.withLock { $0 }.isBrokerReachable()
    }

    /// Relays until graceful shutdown, then flushes what is in flight.
    public func run() async throws {
        defer { producer.withLock { $0 }.shutdown() }
        await withGracefulShutdownHandler {
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await self.listenForCommits() }
                await self.relayLoop()
                group.cancelAll()
            }
        } onGracefulShutdown: {
            self.stopping.store(true, ordering: .relaxed)
            self.signal.wake()
        }
    }

    /// Sends pending rows until the outbox is empty or shutdown begins.
    private func relayLoop() async {
        var backoff: Duration = .milliseconds(100)
        while !stopping.load(ordering: .relaxed) && !Task.isCancelled {
            do {
                let outcome = try await relayBatch()
                backoff = .milliseconds(100)
                switch outcome {
                case .sent(let count) where count >= batchSize:
                    continue
                case .sent, .empty, .otherRelayActive:
                    await signal.wait(timeout: idleInterval)
                }
            } catch {
                logger.warning("outbox relay failed, will retry", metadata: ["error": "\(error)", "retry_in": "\(backoff)"])
                await signal.wait(timeout: backoff)
                backoff = min(backoff * 2, .seconds(5))
            }
        }
    }

    /// Wakes the relay on each commit that published (Postgres NOTIFY); polling covers gaps.
    private func listenForCommits() async {
        while !Task.isCancelled {
            do {
                try await database.client.withConnection { connection in
                    try await connection.listen(on: outbox.notificationChannel) { notifications in
                        self.signal.wake()  // catch up on anything committed before LISTEN
                        for try await _ in notifications {
                            self.signal.wake()
                        }
                    }
                }
            } catch {
                if Task.isCancelled { return }
                logger.debug("outbox listener reconnecting", metadata: ["error": "\(error)"])
                try? await Task.sleep(for: .seconds(1))
            }
        }
    }

    public enum BatchOutcome: Sendable, Equatable {
        case sent(Int)
        case empty
        case otherRelayActive
    }

    struct RelayFailure: Error, CustomStringConvertible {
        let failed: Int
        let firstError: KafkaError
        var description: String { "\(failed) outbox events not acknowledged: \(firstError)" }
    }

    /// Sends one batch and deletes what the broker acknowledged. Public for tests and tools.
    public func relayBatch() async throws -> BatchOutcome {
        let schema = database.schema
        let batchSize = self.batchSize
        let logger = self.logger
        return try await database.transaction { connection in
            let locked = try await connection.query("SELECT pg_try_advisory_xact_lock(hashtext(\(schema + ".outbox_relay")))", logger: logger)
                .collect().first?.decode(Bool.self) ?? false
            guard locked else { return .otherRelayActive }

            var positions: [Int64] = []
            var messages: [KafkaOutgoingMessage] = []
            let rows = try await connection.query(
                "SELECT position, event_id, topic, event_key, event_type, payload FROM outbox ORDER BY position LIMIT \(batchSize)",
                logger: logger
            )
            for try await (position, eventID, topic, key, type, payload) in rows.decode((Int64, UUID, String, String, String, ByteBuffer).self) {
                positions.append(position)
                messages.append(KafkaOutgoingMessage(
                    topic: topic,
                    key: Array(key.utf8),
                    value: Array(buffer: payload),
                    headers: [("event_type", Array(type.utf8)), ("event_id", Array(eventID.uuidString.lowercased().utf8))]
                ))
            }
            guard !messages.isEmpty else { return .empty }

            try await self.ensureTopics(Set(messages.map(\.topic)))
            let producer = self.producer.withLock { $0 }
            let results = await producer.send(messages)
            var delivered: [Int64] = []
            var firstError: KafkaError?
            for (position, result) in zip(positions, results) {
                switch result {
                case .success: delivered.append(position)
                case .failure(let error): firstError = firstError ?? error
                }
            }
            if !delivered.isEmpty {
                try await connection.query("DELETE FROM outbox WHERE position = ANY(\(delivered))", logger: logger)
            }
            if let firstError {
                // The broker may have lost its topics (a memory-only broker restarted): recreate them next time.
                self.knownTopics.withLock { $0.removeAll() }
                if delivered.isEmpty {
                    try self.replaceProducer(producer)
                    throw RelayFailure(failed: positions.count, firstError: firstError)
                }
                logger.warning("some outbox events not acknowledged, will resend", metadata: ["failed": "\(positions.count - delivered.count)", "error": "\(firstError)"])
            }
            return .sent(delivered.count)
        }
    }

    /// Swaps in a fresh producer; the old one's remaining messages are purged (their rows are
    /// still in the outbox and go out with the next batch).
    private func replaceProducer(_ failed: KafkaProducer) throws {
        let fresh = try KafkaProducer(configuration: producerConfiguration, logger: logger)
        let replaced = producer.withLock { current -> Bool in
            guard current === failed else { return false }
            current = fresh
            return true
        }
        if replaced {
            failed.shutdown(flushTimeout: .zero)
            logger.info("outbox relay restarted its Kafka producer")
        } else {
            fresh.shutdown(flushTimeout: .zero)
        }
    }

    private func ensureTopics(_ topics: Set<String>) async throws {
        let missing = knownTopics.withLock { topics.subtracting($0) }
        guard !missing.isEmpty else { return }
        try await admin.createTopics(Array(missing).sorted(), partitions: topicPartitions)
        knownTopics.withLock { $0.formUnion(missing) }
    }
}
