import ColonyKafka
import ColonyModels
import Foundation
import Logging
import PostgresNIO
import ServiceLifecycle
import Synchronization

/// Sends outbox rows to Kafka in outbox order and marks them relayed only once the broker
/// acknowledged them; relayed rows are kept for `retention`, then deleted.
///
/// - One relay per schema works at a time: the leader holds a session advisory lock on a
///   connection of its own (released when that session ends, even if the process dies), on
///   which it also LISTENs, so each commit that published wakes it at once.
/// - Batches are pipelined: the next batch is read and handed to the producer while earlier ones
///   wait for their acknowledgements (librdkafka keeps them in order per partition). Rows in
///   flight are remembered, so a row that becomes visible late (its transaction committed after
///   a later one) is still sent.
/// - A failed send (broker down) stops the pipeline: the relay waits for what is in flight,
///   starts a fresh producer (one whose broker lost all state can stay stuck), backs off and
///   resends everything still in the outbox, in order. A broker that comes back empty gets its
///   topics recreated.
/// - When every broker connection went down, the relay does not wait for a send to fail: as soon
///   as a broker answers again it starts a fresh producer and asks for its topics again (a broker
///   restarted without its state refuses the old producer's id until the 30 s message timeout).
/// - A row the broker refuses for good (too large, invalid, a topic name Kafka does not accept)
///   moves to the dead letters with the error, and the rows behind it go on.
/// - After a failure, the relay compares what it kept with the broker: rows relayed within the
///   retention to a partition that now ends before them (a broker restarted without its data, a
///   lost topic) are sent again, in order, before anything newer. Consumers' inboxes drop what
///   they had already applied.
public final class OutboxRelay: Service, Sendable {
    private let database: Database
    private let producerConfiguration: KafkaConfiguration
    private let producer: Mutex<KafkaProducer>
    private let admin: KafkaAdmin
    private let outbox: Outbox
    private let logger: Logger
    private let batchSize: Int
    private let maxBatchesInFlight: Int
    private let topicPartitions: Int32
    private let replicationFactor: Int32
    private let idleInterval: Duration
    private let deadLetters: DeadLetters
    private let metrics: PipelineMetrics?
    private let retention: Duration
    private let lastCleanup = Mutex<ContinuousClock.Instant?>(nil)
    private let knownTopics = Mutex<Set<String>>([])
    private let signal = WakeSignal()
    private let stopping = Atomic<Bool>(false)
    private let isLeader = Atomic<Bool>(false)
    /// The leader's own session: it reads and deletes outbox rows there, with
    /// `synchronous_commit` off (a delete lost in a crash only means a resend, which inboxes
    /// absorb), so the relay neither waits for WAL flushes nor takes pool connections from the
    /// service's requests.
    private let session = Mutex<PostgresConnection?>(nil)
    private let pipeline = Mutex(Pipeline())

    /// Rows handed to the producer and not yet acknowledged or failed.
    private struct Pipeline {
        var inFlight: Set<Int64> = []
        var batchesInFlight = 0
        var failure: KafkaError?
    }

    public init(database: Database, producerConfiguration: KafkaConfiguration, outbox: Outbox, logger: Logger, batchSize: Int = 1000, maxBatchesInFlight: Int = 8,
                topicPartitions: Int32 = 3, replicationFactor: Int32 = 1, idleInterval: Duration = .milliseconds(500), metrics: PipelineMetrics? = nil,
                retention: Duration = PipelineSettings().outboxRetention) throws {
        // The relay batches rows itself: librdkafka need not hold messages back to batch them.
        var producerConfiguration = producerConfiguration
        producerConfiguration.properties["linger.ms"] = "0"
        // Topics are made by `ensureTopics`, with the configured partitions, never by the broker's
        // defaults when a metadata request names one that is gone.
        producerConfiguration.properties["allow.auto.create.topics"] = "false"
        self.database = database
        self.producerConfiguration = producerConfiguration
        self.producer = Mutex(try KafkaProducer(configuration: producerConfiguration, logger: logger))
        self.admin = KafkaAdmin(configuration: producerConfiguration)
        self.outbox = outbox
        self.logger = logger
        self.batchSize = batchSize
        self.maxBatchesInFlight = maxBatchesInFlight
        self.topicPartitions = topicPartitions
        self.replicationFactor = replicationFactor
        self.idleInterval = idleInterval
        self.deadLetters = DeadLetters(schema: database.schema)
        self.metrics = metrics
        self.retention = retention
    }

    /// Whether a broker answers a metadata request (for `/ready`).
    public func isBrokerReachable() async -> Bool {
        await producer.withLock { $0 }.isBrokerReachable()
    }

    /// Relays until graceful shutdown (or cancellation), then waits for what is in flight and
    /// flushes the producer.
    public func run() async throws {
        await withGracefulShutdownHandler {
            await withDiscardingTaskGroup { group in
                group.addTask { await self.holdLeadership() }
                await self.relayLoop(group: &group)
                group.cancelAll()
            }
        } onGracefulShutdown: {
            self.stopping.store(true, ordering: .relaxed)
            self.signal.wake()
        }
        await producer.withLock { $0 }.close()
    }

    private var shouldStop: Bool { stopping.load(ordering: .relaxed) || Task.isCancelled }

    /// Takes the schema's relay lock on a dedicated session and listens there for commits.
    private func holdLeadership() async {
        let lockName = "\(database.schema).outbox_relay"
        while !Task.isCancelled {
            do {
                try await database.withDedicatedConnection { connection in
                    while !Task.isCancelled {
                        let locked = try await connection.query("SELECT pg_try_advisory_lock(hashtext(\(lockName)))", logger: logger)
                            .firstValue(Bool.self) ?? false
                        if locked { break }
                        try await Task.sleep(for: .seconds(1))  // another replica relays; stand by
                    }
                    try await connection.query("SET synchronous_commit = off", logger: logger)
                    try await connection.listen(on: outbox.notificationChannel) { notifications in
                        self.session.withLock { $0 = connection }
                        defer { self.session.withLock { $0 = nil } }
                        self.isLeader.store(true, ordering: .relaxed)
                        self.signal.wake()  // catch up on anything committed before LISTEN
                        for try await _ in notifications {
                            self.signal.wake()
                        }
                    }
                }
            } catch {
                if Task.isCancelled { break }
                logger.debug("outbox relay lost its session, reconnecting", metadata: ["error": "\(error)"])
            }
            isLeader.store(false, ordering: .relaxed)
            try? await Task.sleep(for: .seconds(1))
        }
        isLeader.store(false, ordering: .relaxed)
    }

    private func relayLoop(group: inout DiscardingTaskGroup) async {
        var backoff: Duration = .milliseconds(100)
        while !shouldStop {
            let current = producer.withLock { $0 }
            if current.hasLostAllBrokers {
                // The broker went away. One that comes back without our producer's id (Tansu
                // keeps it in memory) refuses every send until the message timeout (30 s): once a
                // broker answers, start a fresh producer. What was in flight fails and is sent
                // again. The topics are asked for again at once, not at the next send: a broker
                // that lost its data lost them too, and consumers waiting for them join sooner.
                guard await current.isBrokerReachable() else {
                    await signal.wait(timeout: backoff)
                    backoff = min(backoff * 2, .seconds(5))
                    continue
                }
                logger.notice("the broker answers again; outbox relay starts a fresh producer")
                let topics = knownTopics.withLock { known in
                    defer { known.removeAll() }
                    return known
                }
                replaceProducer()
                do {
                    if try await ensureTopics(topics) { signal.wake() }
                } catch {
                    logger.warning("outbox relay could not recreate its topics; the next send asks again", metadata: ["error": "\(error)"])
                }
            }
            if let failure = pipeline.withLock({ $0.batchesInFlight == 0 ? $0.failure : nil }) {
                // Everything in flight has settled: start over with a fresh producer.
                logger.warning("outbox relay could not reach the broker; events wait in the outbox and will be resent", metadata: ["error": "\(failure)", "retry_in": "\(backoff)"])
                knownTopics.withLock { $0.removeAll() }
                replaceProducer()
                pipeline.withLock { $0.failure = nil }
                await signal.wait(timeout: backoff)
                backoff = min(backoff * 2, .seconds(5))
                continue
            }
            let (busy, failed) = pipeline.withLock { ($0.batchesInFlight >= maxBatchesInFlight, $0.failure != nil) }
            guard isLeader.load(ordering: .relaxed), !busy, !failed else {
                await signal.wait(timeout: idleInterval)
                continue
            }
            do {
                let queued = try await sendNextBatch(group: &group)
                if queued > 0, pipeline.withLock({ $0.failure == nil }) {
                    backoff = .milliseconds(100)
                }
                // A short batch emptied what was visible: the next commit's notification (or
                // one that came during the read) wakes the loop, so no empty read follows.
                if queued < batchSize {
                    await signal.wait(timeout: idleInterval)
                }
            } catch let error as KafkaError {
                // Creating topics failed: the broker is unreachable. Back off and try again.
                logger.warning("outbox relay could not create topics; the broker is unreachable, will retry", metadata: ["error": "\(error)", "retry_in": "\(backoff)"])
                knownTopics.withLock { $0.removeAll() }
                await signal.wait(timeout: backoff)
                backoff = min(backoff * 2, .seconds(5))
            } catch {
                logger.warning("outbox relay could not read the outbox", metadata: ["error": "\(error)"])
                await signal.wait(timeout: backoff)
                backoff = min(backoff * 2, .seconds(5))
            }
        }
        // Shutting down: let what is in flight be acknowledged and deleted. Cancelled (the
        // shutdown's grace ran out), it stops waiting at once: a cancelled sleep returns at once,
        // so waiting on would spin, and what was not acknowledged stays in the outbox and is sent
        // again after the restart (consumers apply it once).
        while pipeline.withLock({ $0.batchesInFlight > 0 }) && !Task.isCancelled {
            try? await Task.sleep(for: .milliseconds(5))
        }
    }

    /// Reads the oldest rows not yet in flight and hands them to the producer; a child task
    /// deletes them once acknowledged. Returns how many rows were queued.
    private func sendNextBatch(group: inout DiscardingTaskGroup) async throws -> Int {
        let inFlight = pipeline.withLock { Array($0.inFlight) }
        try await deleteExpiredRows()
        let rows = try await runOnSession("""
            SELECT position, event_id, topic, event_key, event_type, payload, trace_parent FROM outbox
            WHERE relayed_at IS NULL AND NOT (position = ANY(\(inFlight)))
            ORDER BY position LIMIT \(batchSize)
            """)
        var positions: [Int64] = []
        var messages: [KafkaOutgoingMessage] = []
        var invalid: [(Int64, String)] = []
        for try await row in rows {
            var cells = RowCells(row)
            let position: Int64 = try cells.next(), eventID: UUID = try cells.next(), topic: String = try cells.next(), key: String = try cells.next()
            let type: String = try cells.next(), payload: ByteBuffer = try cells.next(), traceParent: String? = try cells.next()
            guard KafkaAdmin.isValidTopicName(topic) else {
                invalid.append((position, "topic name \"\(topic)\" is not valid in Kafka"))
                continue
            }
            positions.append(position)
            messages.append(KafkaOutgoingMessage(
                topic: topic,
                key: Array(key.utf8),
                value: Array(buffer: payload),
                headers: [("event_type", Array(type.utf8)), ("event_id", Array(eventID.uuidString.lowercased().utf8))]
                    + (traceParent.map { [("traceparent", Array($0.utf8))] } ?? [])
            ))
        }
        if !invalid.isEmpty {
            try await moveToDeadLetters(invalid)
        }
        guard !messages.isEmpty else { return invalid.count }
        if try await ensureTopics(Set(messages.map(\.topic))) {
            // Rows relayed to a lost topic are due again and come before this batch: read again.
            signal.wake()
            return 0
        }

        let producer = self.producer.withLock { $0 }
        pipeline.withLock {
            $0.inFlight.formUnion(positions)
            $0.batchesInFlight += 1
        }
        let batch = messages
        let batchPositions = positions
        group.addTask {
            let results = await producer.send(batch)
            await self.settle(positions: batchPositions, results: results)
        }
        return batchPositions.count
    }

    /// Deletes the acknowledged rows of a batch and records a failure, if any.
    private func settle(positions: [Int64], results: [Result<KafkaDeliveryReport, KafkaError>]) async {
        var delivered: [Int64] = []
        var placements: [(partition: Int32, offset: Int64)] = []
        var refused: [(Int64, String)] = []
        var failed = 0
        var firstError: KafkaError?
        for (position, result) in zip(positions, results) {
            switch result {
            case .success(let report):
                delivered.append(position)
                placements.append((report.partition, report.offset))
            case .failure(let error) where error.isPermanentForMessage: refused.append((position, error.description))
            case .failure(let error):
                failed += 1
                firstError = firstError ?? error
            }
        }
        metrics?.relayed(delivered.count, result: .delivered)
        metrics?.relayed(failed, result: .failed)
        var deleteFailure: (any Error)?
        if !delivered.isEmpty {
            do {
                if retention > .zero {
                    try await runOnSession("""
                        UPDATE outbox o SET relayed_at = now(), relayed_partition = d.part, relayed_offset = d.off
                        FROM unnest(\(delivered)::bigint[], \(placements.map { Int32($0.partition) })::int[], \(placements.map(\.offset))::bigint[])
                            AS d(pos, part, off)
                        WHERE o.position = d.pos
                        """)
                } else {
                    try await runOnSession("DELETE FROM outbox WHERE position = ANY(\(delivered))")
                }
            } catch {
                // Sent but still in the outbox: sent again later (consumers' inboxes drop the repeat).
                deleteFailure = error
            }
        }
        if !refused.isEmpty {
            do {
                try await moveToDeadLetters(refused)
            } catch {
                // Still in the outbox: refused again on the next pass, and moved then.
                deleteFailure = deleteFailure ?? error
            }
        }
        let loopWaitsForUs = pipeline.withLock { state -> Bool in
            let wasFull = state.batchesInFlight >= maxBatchesInFlight
            state.inFlight.subtract(positions)
            state.batchesInFlight -= 1
            if let firstError { state.failure = state.failure ?? firstError }
            return wasFull || state.failure != nil
        }
        if let deleteFailure {
            logger.warning("could not delete relayed outbox rows", metadata: ["error": "\(deleteFailure)"])
        }
        // Only a loop held back by a full pipeline or a failure waits for settled batches;
        // waking it otherwise would only cost an empty read of the outbox.
        if loopWaitsForUs || stopping.load(ordering: .relaxed) { signal.wake() }
    }

    /// Moves rows no retry can send into the dead letters, so the rows behind them go on.
    private func moveToDeadLetters(_ rows: [(Int64, String)]) async throws {
        if let connection = session.withLock({ $0 }) {
            try await deadLetters.moveFromOutbox(positions: rows.map(\.0), errors: rows.map(\.1), on: connection, logger: logger)
        } else {
            try await database.withConnection { try await deadLetters.moveFromOutbox(positions: rows.map(\.0), errors: rows.map(\.1), on: $0, logger: logger) }
        }
        for (position, error) in rows {
            logger.error("outbox row refused by the broker for good; moved to the dead letters", metadata: ["position": "\(position)", "error": "\(error)"])
            metrics?.deadLettered(stage: .publish)
        }
        metrics?.relayed(rows.count, result: .deadLettered)
    }

    /// Runs a statement on the leader's session, or on the pool between sessions.
    @discardableResult
    private func runOnSession(_ query: PostgresQuery) async throws -> PostgresRowSequence {
        if let connection = session.withLock({ $0 }) {
            return try await connection.query(query, logger: logger)
        }
        return try await database.query(query)
    }

    /// Swaps in a fresh producer; the old one's undelivered messages are purged (their rows are
    /// still in the outbox and go out again).
    private func replaceProducer() {
        do {
            let fresh = try KafkaProducer(configuration: producerConfiguration, logger: logger)
            let old = producer.withLock { current -> KafkaProducer in
                defer { current = fresh }
                return current
            }
            old.shutdown(flushTimeout: .zero)
        } catch {
            logger.error("could not create a Kafka producer", metadata: ["error": "\(error)"])
        }
    }

    /// Makes sure the topics exist (after a failure, asking again) and that the broker still holds
    /// what was relayed to them: rows kept within the retention that sit at or past a partition's
    /// current end were lost with the broker's data, and are marked unrelayed to go out again.
    /// Returns whether any were.
    private func ensureTopics(_ topics: Set<String>) async throws -> Bool {
        let missing = knownTopics.withLock { topics.subtracting($0) }
        guard !missing.isEmpty else { return false }
        try await admin.createTopics(Array(missing).sorted(), partitions: topicPartitions, replicationFactor: replicationFactor)
        var resent = 0
        if retention > .zero {
            for topic in missing.sorted() {
                let ends = try await admin.highWatermarks(topic: topic)
                let partitions = ends.keys.map { Int32($0) }
                let offsets = partitions.map { ends[$0]! }
                for try await _ in try await runOnSession("""
                    UPDATE outbox SET relayed_at = NULL
                    WHERE relayed_at IS NOT NULL AND topic = \(topic)
                      AND coalesce(relayed_offset, 0) >= coalesce((SELECT e.ending FROM unnest(\(partitions)::int[], \(offsets)::bigint[]) AS e(part, ending)
                                                                  WHERE e.part = outbox.relayed_partition), 0)
                    RETURNING 1
                    """) {
                    resent += 1
                }
            }
        }
        knownTopics.withLock { $0.formUnion(missing) }
        if resent > 0 {
            logger.warning("the broker no longer holds events it had acknowledged; sending them again",
                           metadata: ["topics": "\(missing.sorted())", "events": "\(resent)", "retention": "\(retention)"])
        }
        return resent > 0
    }

    /// Deletes rows relayed longer ago than the retention, at most every 30 seconds.
    private func deleteExpiredRows() async throws {
        guard retention > .zero else { return }
        let now = ContinuousClock.now
        let due = lastCleanup.withLock { last -> Bool in
            guard last.map({ now - $0 >= .seconds(30) }) ?? true else { return false }
            last = now
            return true
        }
        guard due else { return }
        let seconds = Double(retention.components.seconds)
        try await runOnSession("DELETE FROM outbox WHERE relayed_at < now() - make_interval(secs => \(seconds))")
    }

    /// Sends everything now in the outbox and waits until it is acknowledged (tools, tests and
    /// benchmarks that relay by hand). Requires that no relay loop runs for this schema.
    public func drain() async throws {
        try await database.withDedicatedConnection { _ in }  // fail fast when Postgres is unreachable
        try await withThrowingDiscardingTaskGroup { group in
            group.addTask { await self.holdLeadership() }
            defer { group.cancelAll() }
            while !isLeader.load(ordering: .relaxed) { try await Task.sleep(for: .milliseconds(5)) }
            var readError: (any Error)?
            await withDiscardingTaskGroup { batches in
                do {
                    while try await sendNextBatch(group: &batches) > 0 {
                        while pipeline.withLock({ $0.batchesInFlight >= maxBatchesInFlight }) {
                            try await Task.sleep(for: .milliseconds(1))  // cancelled: ends the drain
                        }
                    }
                } catch {
                    readError = error
                }
            }
            if let readError { throw readError }
            if let failure = pipeline.withLock({ $0.failure }) {
                pipeline.withLock { $0.failure = nil }
                throw failure
            }
        }
    }
}
