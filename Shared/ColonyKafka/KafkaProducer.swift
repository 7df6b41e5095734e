import CRdKafka
import Foundation
import Logging
import ServiceLifecycle
import Synchronization

/// An idempotent producer. `send` suspends until the broker acknowledged (or librdkafka gave up
/// on) each message. A dedicated thread serves librdkafka's delivery reports; as a lifecycle
/// service it flushes what is in flight on graceful shutdown.
public final class KafkaProducer: Service, @unchecked Sendable {
    // @unchecked: `handle` is a librdkafka producer, which is thread-safe; the rest is immutable or atomic.
    private let handle: OpaquePointer
    private let logger: Logger
    private let stopPolling = AtomicFlag()
    private let pollThreadDone = DispatchSemaphore(value: 0)
    private let isShutDown = Mutex(false)
    /// Set when every broker connection went down (librdkafka's `_ALL_BROKERS_DOWN`).
    private let allBrokersLost = AtomicFlag()

    public init(configuration: KafkaConfiguration, logger: Logger) throws {
        self.logger = logger
        let conf = try configuration.makeNativeConfiguration()
        // The flag outlives the handle (destroyed in deinit, before the properties).
        rd_kafka_conf_set_opaque(conf, Unmanaged.passUnretained(allBrokersLost).toOpaque())
        rd_kafka_conf_set_error_cb(conf) { handle, code, reason, opaque in
            if code == RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN.rawValue, let opaque {
                Unmanaged<AtomicFlag>.fromOpaque(opaque).takeUnretainedValue().set()
            }
            // What librdkafka logs for an error when no callback is set.
            var metadata: Logger.Metadata = ["error": .string(KafkaError(code: code, message: reason.map { String(cString: $0) } ?? "").description)]
            if let handle { metadata["client"] = .string(String(cString: rd_kafka_name(handle))) }
            Logger(label: "librdkafka").error("Kafka client error", metadata: metadata)
        }
        rd_kafka_conf_set_dr_msg_cb(conf) { _, message, _ in
            guard let message, let opaque = message.pointee._private else { return }
            let ticket = Unmanaged<DeliveryTicket>.fromOpaque(opaque).takeRetainedValue()
            let error = message.pointee.err
            if error == RD_KAFKA_RESP_ERR_NO_ERROR {
                let topic = message.pointee.rkt.map { String(cString: rd_kafka_topic_name($0)) } ?? ""
                ticket.complete(.success(KafkaDeliveryReport(topic: topic, partition: message.pointee.partition, offset: message.pointee.offset)))
            } else {
                ticket.complete(.failure(KafkaError(error)))
            }
        }
        self.handle = try makeHandle(type: RD_KAFKA_PRODUCER, conf: conf)
        let native = NativeHandle(pointer: handle)
        let thread = Thread { [stopPolling, pollThreadDone] in
            while !stopPolling.isSet {
                rd_kafka_poll(native.pointer, 50)
            }
            pollThreadDone.signal()
        }
        thread.name = "colony-kafka-producer-poll"
        thread.start()
    }

    deinit {
        shutdownNow(flushTimeout: .seconds(5))
        rd_kafka_destroy(handle)
    }

    /// Sends one message and waits for its acknowledgement.
    @discardableResult
    public func send(_ message: KafkaOutgoingMessage) async throws -> KafkaDeliveryReport {
        try await send([message])[0].get()
    }

    /// Sends messages in order and waits until each is acknowledged or failed. Messages with the
    /// same key keep their order (idempotent producer, one partition per key).
    public func send(_ messages: [KafkaOutgoingMessage]) async -> [Result<KafkaDeliveryReport, KafkaError>] {
        if messages.isEmpty { return [] }
        return await withCheckedContinuation { continuation in
            let batch = DeliveryBatch(count: messages.count, continuation: continuation)
            for (index, message) in messages.enumerated() {
                if let error = enqueue(message, ticket: DeliveryTicket(batch: batch, index: index)) {
                    batch.complete(index: index, result: .failure(error))
                }
            }
        }
    }

    /// Hands one message to librdkafka; on failure the ticket is released and the error returned.
    private func enqueue(_ message: KafkaOutgoingMessage, ticket: DeliveryTicket) -> KafkaError? {
        if isShutDown.withLock({ $0 }) {
            return KafkaError(code: RD_KAFKA_RESP_ERR__DESTROY.rawValue, message: "producer is shut down")
        }
        let opaque = Unmanaged.passRetained(ticket).toOpaque()
        while true {
            var headers: OpaquePointer? = nil
            if !message.headers.isEmpty {
                headers = rd_kafka_headers_new(message.headers.count)
                for (name, value) in message.headers {
                    value.withUnsafeBytes { bytes in
                        _ = rd_kafka_header_add(headers, name, -1, bytes.baseAddress, bytes.count)
                    }
                }
            }
            let error = message.key.withUnsafeBytes { key in
                message.value.withUnsafeBytes { value in
                    colony_rd_kafka_produce(handle, message.topic, key.baseAddress, key.count, value.baseAddress, value.count, headers, opaque)
                }
            }
            guard let error else { return nil }
            let code = rd_kafka_error_code(error)
            rd_kafka_error_destroy(error)
            if let headers { rd_kafka_headers_destroy(headers) }
            if code == RD_KAFKA_RESP_ERR__QUEUE_FULL {
                // The local queue drains as the broker acknowledges; wait briefly and retry.
                usleep(1000)
                continue
            }
            Unmanaged<DeliveryTicket>.fromOpaque(opaque).release()
            return KafkaError(code)
        }
    }

    /// Waits until every message in flight is delivered or failed.
    public func flush(timeout: Duration = .seconds(10)) -> Bool {
        let milliseconds = Int32(timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000)
        return rd_kafka_flush(handle, milliseconds) == RD_KAFKA_RESP_ERR_NO_ERROR
    }

    /// Whether every broker connection went down since this producer was made. A broker that
    /// comes back may not know the producer's id any more (a memory-only broker restarted, a
    /// cluster restored): librdkafka then retries under that id until the message timeout, so the
    /// owner replaces such a producer once a broker answers again.
    public var hasLostAllBrokers: Bool { allBrokersLost.isSet }

    /// Asks the broker for cluster metadata: true when a broker answers within the timeout.
    public func isBrokerReachable(timeout: Duration = .seconds(2)) async -> Bool {
        let handle = NativeHandle(pointer: self.handle)
        let milliseconds = Int32(timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000)
        return (try? await BlockingWorker.runDetached(name: "colony-kafka-metadata") {
            var metadata: UnsafePointer<rd_kafka_metadata>? = nil
            let error = rd_kafka_metadata(handle.pointer, 0, nil, &metadata, milliseconds)
            if let metadata { rd_kafka_metadata_destroy(metadata) }
            return error == RD_KAFKA_RESP_ERR_NO_ERROR
        }) ?? false
    }

    /// Runs until graceful shutdown, then flushes what is in flight and stops polling.
    public func run() async throws {
        try? await gracefulShutdown()
        await close()
    }

    /// Flushes in-flight messages (up to the timeout), then stops the poll thread. Idempotent.
    /// It blocks the calling thread: async code calls `close`.
    public func shutdown(flushTimeout: Duration = .seconds(10)) {
        shutdownNow(flushTimeout: flushTimeout)
    }

    /// `shutdown` on a thread of its own, so that a slow flush (a broker that is down) does not
    /// hold one of Swift's shared threads for up to the flush timeout.
    public func close(flushTimeout: Duration = .seconds(10)) async {
        _ = try? await BlockingWorker.runDetached(name: "colony-kafka-close") { self.shutdownNow(flushTimeout: flushTimeout) }
    }

    private func shutdownNow(flushTimeout: Duration) {
        let alreadyDown = isShutDown.withLock { down in
            defer { down = true }
            return down
        }
        if alreadyDown { return }
        if !flush(timeout: flushTimeout) {
            logger.warning("Kafka producer shut down with messages still in flight", metadata: ["in_flight": "\(rd_kafka_outq_len(handle))"])
        }
        stopPolling.set()
        pollThreadDone.wait()
        // Fail whatever librdkafka still holds so no sender waits forever.
        rd_kafka_purge(handle, Int32(RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT))
        rd_kafka_poll(handle, 0)
    }
}

/// Collects the outcome of each message of one `send` call and resumes the caller once all are in.
private final class DeliveryBatch: Sendable {
    private struct State {
        var results: [Result<KafkaDeliveryReport, KafkaError>?]
        var remaining: Int
        var continuation: CheckedContinuation<[Result<KafkaDeliveryReport, KafkaError>], Never>?
    }

    private let state: Mutex<State>

    init(count: Int, continuation: CheckedContinuation<[Result<KafkaDeliveryReport, KafkaError>], Never>) {
        state = Mutex(State(results: Array(repeating: nil, count: count), remaining: count, continuation: continuation))
    }

    func complete(index: Int, result: Result<KafkaDeliveryReport, KafkaError>) {
        let finished: (CheckedContinuation<[Result<KafkaDeliveryReport, KafkaError>], Never>, [Result<KafkaDeliveryReport, KafkaError>])? = state.withLock { state in
            guard state.results[index] == nil else { return nil }
            state.results[index] = result
            state.remaining -= 1
            guard state.remaining == 0, let continuation = state.continuation else { return nil }
            state.continuation = nil
            return (continuation, state.results.map { $0! })
        }
        if let (continuation, results) = finished {
            continuation.resume(returning: results)
        }
    }
}

/// The per-message opaque librdkafka hands back in the delivery report.
private final class DeliveryTicket: Sendable {
    let batch: DeliveryBatch
    let index: Int

    init(batch: DeliveryBatch, index: Int) {
        self.batch = batch
        self.index = index
    }

    func complete(_ result: Result<KafkaDeliveryReport, KafkaError>) {
        batch.complete(index: index, result: result)
    }
}
