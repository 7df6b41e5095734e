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
    private let rebalanceContext: RebalanceContext
    private let closed = AtomicFlag()
    private let stopRequested = AtomicFlag()
    private let batchSize = 500

    public init(configuration: KafkaConfiguration, topics: [String], logger: Logger) throws {
        self.logger = logger
        self.worker = BlockingWorker(name: "colony-kafka-consumer")
        let context = RebalanceContext(logger: logger)
        self.rebalanceContext = context
        let conf = try configuration.makeNativeConfiguration()
        rd_kafka_conf_set_opaque(conf, Unmanaged.passUnretained(context).toOpaque())
        rd_kafka_conf_set_rebalance_cb(conf) { handle, error, partitions, opaque in
            guard let handle, let opaque else { return }
            Unmanaged<RebalanceContext>.fromOpaque(opaque).takeUnretainedValue().rebalance(handle: handle, error: error, partitions: partitions)
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
                if let first = rd_kafka_consumer_poll(handle.pointer, 100) {
                    buffer[0] = first
                    let more = buffer.withUnsafeMutableBufferPointer { rest in
                        rd_kafka_consume_batch_queue(consumerQueue, 0, rest.baseAddress! + 1, batchSize - 1)
                    }
                    count = 1 + max(0, more)
                }
                var messages: [KafkaConsumerMessage] = []
                var fatal: KafkaError?
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
                        logger.warning("Kafka consumer error", metadata: ["error": "\(KafkaError(error))"])
                    }
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

/// Handles partition assignment for both the eager and the cooperative protocol. Runs on the
/// polling thread, inside librdkafka's poll.
private final class RebalanceContext: Sendable {
    let logger: Logger

    init(logger: Logger) {
        self.logger = logger
    }

    func rebalance(handle: OpaquePointer, error: rd_kafka_resp_err_t, partitions: UnsafeMutablePointer<rd_kafka_topic_partition_list_t>?) {
        let cooperative = String(cString: rd_kafka_rebalance_protocol(handle)) == "COOPERATIVE"
        let count = partitions?.pointee.cnt ?? 0
        switch error {
        case RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS:
            logger.info("partitions assigned", metadata: ["count": "\(count)", "protocol": "\(cooperative ? "cooperative" : "eager")"])
            if cooperative {
                if let failure = rd_kafka_incremental_assign(handle, partitions) { log(failure) }
            } else {
                rd_kafka_assign(handle, partitions)
            }
        case RD_KAFKA_RESP_ERR__REVOKE_PARTITIONS:
            logger.info("partitions revoked", metadata: ["count": "\(count)"])
            // Commit what was handled before another member takes over.
            _ = rd_kafka_commit(handle, partitions, 0)
            if cooperative {
                if let failure = rd_kafka_incremental_unassign(handle, partitions) { log(failure) }
            } else {
                rd_kafka_assign(handle, nil)
            }
        default:
            logger.warning("rebalance error", metadata: ["error": "\(KafkaError(error))"])
            if cooperative {
                if let failure = rd_kafka_incremental_unassign(handle, partitions) { log(failure) }
            } else {
                rd_kafka_assign(handle, nil)
            }
        }
    }

    private func log(_ error: OpaquePointer) {
        logger.warning("rebalance assignment failed", metadata: ["error": "\(String(cString: rd_kafka_error_string(error)))"])
        rd_kafka_error_destroy(error)
    }
}
