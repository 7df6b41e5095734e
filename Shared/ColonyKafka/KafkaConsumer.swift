import CRdKafka
import Foundation
import Logging
import Synchronization

/// A consumer-group consumer. Messages arrive through `messages()`, an `AsyncSequence` fed by
/// polls on a dedicated thread (one blocking poll, then whatever else is ready; librdkafka's poll
/// blocks, so it stays off Swift's shared threads). Offsets are committed only for messages passed to `markHandled`:
/// a message handled but not marked is delivered again after a restart or a rebalance.
public final class KafkaConsumer: @unchecked Sendable {
    // @unchecked: every call on `handle` that must not race (poll, commit, close) runs on `worker`.
    private let handle: OpaquePointer
    private let worker: BlockingWorker
    private let logger: Logger
    private let callbacks: ConsumerCallbacks
    private let closed = AtomicFlag()
    private let stopRequested = AtomicFlag()
    private let batchSize = 500
    /// Set when the configuration asks idle consumers to doze (`KafkaConfiguration.idleFetching`).
    private let idleFetching: IdleFetcher?

    public init(configuration: KafkaConfiguration, topics: [String], logger: Logger) throws {
        self.logger = logger
        self.worker = BlockingWorker(name: "colony-kafka-consumer")
        // A consumer that never commits (a live fan-out that always starts at the end) must not
        // commit on revocation either.
        let context = ConsumerCallbacks(logger: logger, commitsOnRevoke: configuration.properties["enable.auto.commit"] != "false")
        self.callbacks = context
        self.idleFetching = configuration.idleFetching.map { settings in
            IdleFetcher(settings: settings)
        }
        let conf = try configuration.makeNativeConfiguration()
        rd_kafka_conf_set_opaque(conf, Unmanaged.passUnretained(context).toOpaque())
        rd_kafka_conf_set_rebalance_cb(conf) { handle, error, partitions, opaque in
            guard let handle, let opaque else { return }
            Unmanaged<ConsumerCallbacks>.fromOpaque(opaque).takeUnretainedValue().rebalance(handle: handle, error: error, partitions: partitions)
        }
        // librdkafka's statistics (every `statistics.interval.ms`) give the lag per partition and
        // whether a broker is up; they arrive on the polling thread.
        rd_kafka_conf_set_stats_cb(conf) { _, json, length, opaque in
            guard let json, let opaque else { return 0 }
            let bytes = UnsafeRawBufferPointer(start: json, count: length)
            Unmanaged<ConsumerCallbacks>.fromOpaque(opaque).takeUnretainedValue().statistics(json: Data(bytes))
            return 0  // librdkafka frees the JSON
        }
        self.handle = try makeHandle(type: RD_KAFKA_CONSUMER, conf: conf)
        rd_kafka_poll_set_consumer(handle)

        let list = rd_kafka_topic_partition_list_new(Int32(topics.count))
        defer { rd_kafka_topic_partition_list_destroy(list) }
        for topic in topics {
            rd_kafka_topic_partition_list_add(list, topic, RD_KAFKA_PARTITION_UA)
        }
        let error = rd_kafka_subscribe(handle, list)
        if error != RD_KAFKA_RESP_ERR_NO_ERROR {
            rd_kafka_destroy(handle)
            throw KafkaError(error)
        }
    }

    deinit {
        if !closed.isSet {
            rd_kafka_consumer_close(handle)
        }
        rd_kafka_destroy(handle)
        worker.stop()
    }

    /// The subscribed topics' messages, in order per partition. Ends when the consumer is closed
    /// or the iterating task is cancelled; throws on a fatal consumer error.
    public func messages() -> Messages {
        Messages(consumer: self)
    }

    /// What librdkafka last reported about this consumer: its partitions, their lag, its brokers,
    /// and when a poll last completed while a broker was up.
    public var statistics: KafkaConsumerStatistics {
        callbacks.current
    }

    /// Whether the consumer is dozing now: idle, its partitions paused between looks
    /// (`KafkaConfiguration.idleFetching`).
    public var isDozing: Bool { idleFetching?.isDozing ?? false }

    /// How many times it dozed off since it was made.
    public var dozes: Int { idleFetching?.dozes ?? 0 }

    /// Marks a message handled: its offset + 1 is committed with the next (auto or explicit) commit.
    public func markHandled(_ message: KafkaConsumerMessage) {
        let list = rd_kafka_topic_partition_list_new(1)
        defer { rd_kafka_topic_partition_list_destroy(list) }
        let entry = rd_kafka_topic_partition_list_add(list, message.topic, message.partition)
        entry?.pointee.offset = message.offset + 1
        let error = rd_kafka_offsets_store(handle, list)
        if error != RD_KAFKA_RESP_ERR_NO_ERROR {
            // The partition moved to another member: that member gets the message again and
            // the inbox makes the repeat harmless.
            logger.debug("offset not stored", metadata: ["topic": "\(message.topic)", "partition": "\(message.partition)", "error": "\(KafkaError(error))"])
        }
    }

    /// Commits the marked offsets now and waits for the broker's answer.
    public func commit() async throws {
        let handle = NativeHandle(pointer: self.handle)
        let error = try await worker.run { rd_kafka_commit(handle.pointer, nil, 0) }
        if error != RD_KAFKA_RESP_ERR_NO_ERROR && error != RD_KAFKA_RESP_ERR__NO_OFFSET {
            throw KafkaError(error)
        }
    }

    /// Ends `messages()` sequences at their next poll (within about 100 ms) without leaving the
    /// group yet: the caller finishes the message in hand, then calls `close()`.
    public func stopDelivery() {
        stopRequested.set()
    }

    /// Commits marked offsets, leaves the group and stops delivery. Idempotent.
    public func close() async {
        guard !closed.testAndSet() else { return }
        let handle = NativeHandle(pointer: self.handle)
        _ = try? await worker.run { rd_kafka_consumer_close(handle.pointer) }
    }

    /// Polls one batch (waiting up to 100 ms for the first message) on the consumer's thread.
    fileprivate func pollBatch() async throws -> [KafkaConsumerMessage] {
        let handle = NativeHandle(pointer: self.handle)
        let batchSize = self.batchSize
        let closed = self.closed
        let logger = self.logger
        let callbacks = self.callbacks
        let idleFetching = self.idleFetching
        return try await withCheckedThrowingContinuation { continuation in
            worker.submit {
                if closed.isSet {
                    continuation.resume(returning: [])
                    return
                }
                guard let consumerQueue = rd_kafka_queue_get_consumer(handle.pointer) else {
                    continuation.resume(returning: [])
                    return
                }
                defer { rd_kafka_queue_destroy(consumerQueue) }
                // Wait (up to 100 ms) for one message, then take whatever else is already
                // there without waiting: the batch call alone would wait for a full batch.
                var buffer = [UnsafeMutablePointer<rd_kafka_message_t>?](repeating: nil, count: batchSize)
                var count = 0
                let wait = idleFetching?.beforePoll(handle: handle.pointer, logger: logger) ?? 100
                if let first = rd_kafka_consumer_poll(handle.pointer, wait) {
                    buffer[0] = first
                    let more = buffer.withUnsafeMutableBufferPointer { rest in
                        rd_kafka_consume_batch_queue(consumerQueue, 0, rest.baseAddress! + 1, batchSize - 1)
                    }
                    count = 1 + max(0, more)
                }
                var messages: [KafkaConsumerMessage] = []
                var fatal: KafkaError?
                var brokerError = false
                messages.reserveCapacity(count)
                for index in 0..<count {
                    guard let message = buffer[index] else { continue }
                    defer { rd_kafka_message_destroy(message) }
                    let error = message.pointee.err
                    if error == RD_KAFKA_RESP_ERR_NO_ERROR {
                        messages.append(KafkaConsumerMessage(native: message))
                    } else if error == RD_KAFKA_RESP_ERR__FATAL {
                        fatal = KafkaError(error)
                    } else if error != RD_KAFKA_RESP_ERR__PARTITION_EOF {
                        // Transport and broker errors are retried by librdkafka itself.
                        brokerError = true
                        logger.warning("Kafka consumer error", metadata: ["error": "\(KafkaError(error))"])
                    }
                }
                callbacks.polled(cleanly: !brokerError, receivedMessages: !messages.isEmpty)
                if !messages.isEmpty {
                    idleFetching?.received(handle: handle.pointer, logger: logger)
                }
                if let fatal {
                    continuation.resume(throwing: fatal)
                } else {
                    continuation.resume(returning: messages)
                }
            }
        }
    }

    fileprivate var isStopping: Bool { closed.isSet || stopRequested.isSet }

    public struct Messages: AsyncSequence, Sendable {
        public typealias Element = KafkaConsumerMessage
        let consumer: KafkaConsumer

        public func makeAsyncIterator() -> Iterator {
            Iterator(consumer: consumer)
        }

        public struct Iterator: AsyncIteratorProtocol {
            let consumer: KafkaConsumer
            var buffered: [KafkaConsumerMessage] = []
            var position = 0

            public mutating func next() async throws -> KafkaConsumerMessage? {
                while position == buffered.count {
                    if Task.isCancelled || consumer.isStopping { return nil }
                    buffered = try await consumer.pollBatch()
                    position = 0
                }
                defer { position += 1 }
                return buffered[position]
            }
        }
    }
}

extension KafkaConsumerMessage {
    init(native message: UnsafeMutablePointer<rd_kafka_message_t>) {
        let pointee = message.pointee
        topic = pointee.rkt.map { String(cString: rd_kafka_topic_name($0)) } ?? ""
        partition = pointee.partition
        offset = pointee.offset
        key = pointee.key.map { Array(UnsafeRawBufferPointer(start: $0, count: pointee.key_len)) } ?? []
        value = pointee.payload.map { Array(UnsafeRawBufferPointer(start: $0, count: pointee.len)) } ?? []
        var timestampType = RD_KAFKA_TIMESTAMP_NOT_AVAILABLE
        timestampMilliseconds = rd_kafka_message_timestamp(message, &timestampType)
        var headers: [String: [UInt8]] = [:]
        var nativeHeaders: OpaquePointer? = nil
        if rd_kafka_message_headers(message, &nativeHeaders) == RD_KAFKA_RESP_ERR_NO_ERROR, let nativeHeaders {
            var index = 0
            var name: UnsafePointer<CChar>? = nil
            var value: UnsafeRawPointer? = nil
            var size = 0
            while rd_kafka_header_get_all(nativeHeaders, index, &name, &value, &size) == RD_KAFKA_RESP_ERR_NO_ERROR {
                if let name {
                    headers[String(cString: name)] = value.map { Array(UnsafeRawBufferPointer(start: $0, count: size)) } ?? []
                }
                index += 1
            }
        }
        self.headers = headers
    }
}

/// One partition of a consumer's assignment as librdkafka's statistics last described it.
public struct KafkaPartitionStatistics: Sendable, Equatable {
    public var topic: String
    public var partition: Int32
    /// Messages between what the application marked handled (or, before that, what the group
    /// committed) and the partition's end; nil while librdkafka does not know it yet.
    public var lag: Int64?
}

/// A snapshot of a consumer's state for metrics and logs.
public struct KafkaConsumerStatistics: Sendable {
    /// The partitions assigned to this member now.
    public var assignedPartitions: Int = 0
    /// Per assigned partition, from the latest statistics (empty until the first arrive).
    public var partitions: [KafkaPartitionStatistics] = []
    /// Whether a broker connection was up at the latest statistics (nil before the first).
    public var brokerUp: Bool?
    /// When a poll last completed without a broker error while a broker was up (nil: never).
    public var lastSuccessfulPoll: ContinuousClock.Instant?
    /// When a message was last received (nil: never).
    public var lastMessage: ContinuousClock.Instant?
    /// The group membership as librdkafka's statistics name it (`cgrp.state`, `cgrp.join_state`:
    /// "up" and "steady" once the member has its assignment; nil before the first statistics).
    public var groupState: String?
    public var joinState: String?
    /// Rebalances this member went through (`cgrp.rebalance_cnt`).
    public var rebalances: Int = 0
    /// When the member last left the steady state, or was made (nil: it is steady).
    public var unsettledSince: ContinuousClock.Instant?

    /// Whether the member has joined its group and holds its assignment.
    public var isSettled: Bool { groupState == "up" && joinState == "steady" }

    public init() {}

    /// The summed lag of the partitions whose lag is known.
    public var totalLag: Int64 { partitions.reduce(0) { $0 + max(0, $1.lag ?? 0) } }
}

/// librdkafka's callbacks for one consumer: partition assignment for both the eager and the
/// cooperative protocol, and statistics. Runs on the polling thread, inside librdkafka's poll.
private final class ConsumerCallbacks: Sendable {
    let logger: Logger
    let commitsOnRevoke: Bool
    private let state: Mutex<KafkaConsumerStatistics>

    init(logger: Logger, commitsOnRevoke: Bool) {
        self.logger = logger
        self.commitsOnRevoke = commitsOnRevoke
        var initial = KafkaConsumerStatistics()
        initial.unsettledSince = .now
        self.state = Mutex(initial)
    }

    var current: KafkaConsumerStatistics { state.withLock { $0 } }

    func polled(cleanly: Bool, receivedMessages: Bool) {
        let now = ContinuousClock.now
        state.withLock { state in
            if receivedMessages {
                state.lastMessage = now
                state.lastSuccessfulPoll = now
            } else if cleanly, state.brokerUp == true {
                state.lastSuccessfulPoll = now
            }
        }
    }

    /// Parses librdkafka's statistics JSON (STATISTICS.md): broker states and, per assigned
    /// partition, `consumer_lag_stored` (or `consumer_lag` before anything was stored).
    func statistics(json: Data) {
        guard let root = try? JSONDecoder().decode(KafkaStatistics.self, from: json) else { return }
        let brokerUp = (root.brokers ?? [:]).values.contains { $0.state == "UP" }
        var partitions: [KafkaPartitionStatistics] = []
        for (topic, value) in root.topics ?? [:] {
            for (key, entry) in value.partitions ?? [:] {
                guard let partition = Int32(key), partition >= 0, entry.fetch_state != "none" else { continue }
                let stored = entry.consumer_lag_stored ?? -1
                let committed = entry.consumer_lag ?? -1
                let lag = stored >= 0 ? stored : (committed >= 0 ? committed : nil)
                partitions.append(KafkaPartitionStatistics(topic: topic, partition: partition, lag: lag))
            }
        }
        partitions.sort { ($0.topic, $0.partition) < ($1.topic, $1.partition) }
        let group = root.cgrp
        let now = ContinuousClock.now
        state.withLock { state in
            state.brokerUp = brokerUp
            state.partitions = partitions
            state.groupState = group?.state
            state.joinState = group?.join_state
            state.rebalances = group?.rebalance_cnt ?? 0
            if state.isSettled {
                state.unsettledSince = nil
            } else if state.unsettledSince == nil {
                state.unsettledSince = now
            }
        }
    }

    private func assigned(_ count: Int32, adding: Bool) {
        state.withLock { state in
            state.assignedPartitions = adding ? state.assignedPartitions + Int(count) : max(0, state.assignedPartitions - Int(count))
        }
    }

    private func unassignAll() {
        state.withLock { $0.assignedPartitions = 0 }
    }

    func rebalance(handle: OpaquePointer, error: rd_kafka_resp_err_t, partitions: UnsafeMutablePointer<rd_kafka_topic_partition_list_t>?) {
        let cooperative = String(cString: rd_kafka_rebalance_protocol(handle)) == "COOPERATIVE"
        let count = partitions?.pointee.cnt ?? 0
        switch error {
        case RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS:
            logger.info("partitions assigned", metadata: ["count": "\(count)", "protocol": "\(cooperative ? "cooperative" : "eager")"])
            if cooperative {
                if let failure = rd_kafka_incremental_assign(handle, partitions) { log(failure) } else { assigned(count, adding: true) }
            } else {
                rd_kafka_assign(handle, partitions)
                unassignAll()
                assigned(count, adding: true)
            }
        case RD_KAFKA_RESP_ERR__REVOKE_PARTITIONS:
            logger.info("partitions revoked", metadata: ["count": "\(count)"])
            // Commit what was handled before another member takes over.
            if commitsOnRevoke { _ = rd_kafka_commit(handle, partitions, 0) }
            if cooperative {
                if let failure = rd_kafka_incremental_unassign(handle, partitions) { log(failure) } else { assigned(count, adding: false) }
            } else {
                rd_kafka_assign(handle, nil)
                unassignAll()
            }
        default:
            logger.warning("rebalance error", metadata: ["error": "\(KafkaError(error))"])
            if cooperative {
                if let failure = rd_kafka_incremental_unassign(handle, partitions) { log(failure) } else { assigned(count, adding: false) }
            } else {
                rd_kafka_assign(handle, nil)
                unassignAll()
            }
        }
    }

    private func log(_ error: OpaquePointer) {
        logger.warning("rebalance assignment failed", metadata: ["error": "\(String(cString: rd_kafka_error_string(error)))"])
        rd_kafka_error_destroy(error)
    }
}

/// The fields of librdkafka's statistics JSON (STATISTICS.md) the consumer reads; librdkafka's
/// own names.
struct KafkaStatistics: Decodable {
    struct Broker: Decodable { let state: String? }
    struct Topic: Decodable { let partitions: [String: Partition]? }
    struct Partition: Decodable {
        let fetch_state: String?
        let consumer_lag_stored: Int64?
        let consumer_lag: Int64?
    }
    struct Group: Decodable {
        let state: String?
        let join_state: String?
        let rebalance_cnt: Int?
    }
    let brokers: [String: Broker]?
    let topics: [String: Topic]?
    let cgrp: Group?
}
