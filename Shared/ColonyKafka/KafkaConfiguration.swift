import CRdKafka
import Logging
import Synchronization

/// librdkafka properties (https://github.com/confluentinc/librdkafka/blob/master/CONFIGURATION.md)
/// with Colony's defaults. Callers may override any property.
public struct KafkaConfiguration: Sendable {
    public var properties: [String: String]
    /// A consumer's dozing between bursts (nil: it fetches all the time). Not a librdkafka property.
    public var idleFetching: IdleFetching?

    public init(bootstrapServers: String, properties: [String: String] = [:]) {
        self.properties = [
            "bootstrap.servers": bootstrapServers, "client.id": "colony",
            // A broker that comes back is found within a second of accepting again (librdkafka's
            // default backs off up to 10 s, which is how long idle relays and consumers took).
            "reconnect.backoff.ms": "100",
            "reconnect.backoff.max.ms": "1000",
            // A peer that vanished without a reset (a partition, a dead host) is noticed.
            "socket.keepalive.enable": "true",
        ]
        self.properties.merge(properties) { _, new in new }
    }

    /// Idempotent, acks=all: a retried send never duplicates or reorders within a partition.
    public static func producer(bootstrapServers: String, clientId: String = "colony", overrides: [String: String] = [:]) -> KafkaConfiguration {
        var configuration = KafkaConfiguration(bootstrapServers: bootstrapServers, properties: [
            "client.id": clientId,
            "enable.idempotence": "true",
            "acks": "all",
            "linger.ms": "1",
            "message.timeout.ms": "30000",
            "partitioner": "murmur2_random",  // Java client's partitioner: same key, same partition as other clients
            // Small requests go out at once; with Nagle a pipelined request can wait ~40 ms for
            // the broker's delayed ACK.
            "socket.nagle.disable": "true",
        ])
        configuration.properties.merge(overrides) { _, new in new }
        return configuration
    }

    /// How long the broker may hold a fetch while nothing new is there. Short, because the local
    /// broker (Tansu 0.6) holds every fetch for its whole wait, data or not: at 500 ms (Kafka's
    /// default) an event took 131 ms at p50 and 255 ms at p99 from produce to consume, at 10 ms
    /// 5.1 and 11.0 ms (500 events/s; docs/benchmarks.md, "The idle stack"). Idle
    /// consumers doze instead (`IdleFetching`). Apache Kafka answers a held fetch as soon as data
    /// arrives: set `COLONY_KAFKA_FETCH_WAIT_MS=500` and `COLONY_KAFKA_IDLE_FETCH_INTERVAL_MS=0` there.
    public static let consumerFetchWaitMilliseconds = 10

    /// Consumer-group consumer that commits only what the application stored as handled.
    /// Session and heartbeat are short because the local broker holds joins for half a session.
    public static func consumer(bootstrapServers: String, groupId: String, clientId: String = "colony", overrides: [String: String] = [:],
                                idleFetching: IdleFetching? = nil) -> KafkaConfiguration {
        var configuration = KafkaConfiguration(bootstrapServers: bootstrapServers, properties: [
            "client.id": clientId,
            "group.id": groupId,
            "enable.auto.commit": "true",
            "enable.auto.offset.store": "false",
            "auto.commit.interval.ms": "1000",
            "auto.offset.reset": "earliest",
            "session.timeout.ms": "6000",
            "heartbeat.interval.ms": "1000",
            "partition.assignment.strategy": "cooperative-sticky",
            "enable.partition.eof": "false",
            "fetch.wait.max.ms": String(consumerFetchWaitMilliseconds),
            "socket.nagle.disable": "true",
            "fetch.error.backoff.ms": "10",
            // Lag per partition and broker state for metrics (KafkaConsumer.statistics).
            "statistics.interval.ms": "5000",
        ])
        configuration.properties.merge(overrides) { _, new in new }
        configuration.idleFetching = idleFetching
        return configuration
    }

    /// Builds a `rd_kafka_conf_t`; the caller owns it until `rd_kafka_new` takes it.
    func makeNativeConfiguration() throws(KafkaError) -> OpaquePointer {
        guard let conf = rd_kafka_conf_new() else {
            throw KafkaError(code: -1, message: "rd_kafka_conf_new failed")
        }
        // librdkafka's own messages go through swift-log (the service's JSON lines), not to stderr.
        rd_kafka_conf_set_log_cb(conf) { handle, level, facility, message in
            let logger = Logger(label: "librdkafka")
            let text = message.map { String(cString: $0) } ?? ""
            var metadata: Logger.Metadata = ["facility": .string(facility.map { String(cString: $0) } ?? "")]
            if let handle { metadata["client"] = .string(String(cString: rd_kafka_name(handle))) }
            logger.log(level: librdkafkaLogLevel(level), "\(text)", metadata: metadata)
        }
        var errorBuffer = [CChar](repeating: 0, count: 512)
        for (key, value) in properties.sorted(by: { $0.key < $1.key }) {
            let result = rd_kafka_conf_set(conf, key, value, &errorBuffer, errorBuffer.count)
            if result != RD_KAFKA_CONF_OK {
                rd_kafka_conf_destroy(conf)
                throw KafkaError(code: -1, message: "invalid Kafka setting \(key)=\(value): \(string(fromErrorBuffer: errorBuffer))")
            }
        }
        return conf
    }
}

/// swift-log's level for a librdkafka (syslog) level.
func librdkafkaLogLevel(_ level: Int32) -> Logger.Level {
    switch level {
    case ...2: .critical
    case 3: .error
    case 4: .warning
    case 5: .notice
    case 6: .info
    default: .debug
    }
}

/// A librdkafka error: its code and description.
public struct KafkaError: Error, Sendable, Equatable, CustomStringConvertible {
    public var code: Int32
    public var message: String

    public init(code: Int32, message: String) {
        self.code = code
        self.message = message
    }

    init(_ error: rd_kafka_resp_err_t) {
        self.code = error.rawValue
        self.message = String(cString: rd_kafka_err2str(error))
    }

    /// The topic is unknown to the broker (for example a memory-only broker that restarted).
    public var isUnknownTopic: Bool {
        code == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART.rawValue || code == RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC.rawValue
    }

    /// A produce error that no retry can fix for this message (too large, invalid, a topic name
    /// the broker refuses): the message must be set aside so the ones behind it can go.
    public var isPermanentForMessage: Bool {
        [RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE, RD_KAFKA_RESP_ERR_INVALID_MSG, RD_KAFKA_RESP_ERR_INVALID_RECORD,
         RD_KAFKA_RESP_ERR_RECORD_LIST_TOO_LARGE, RD_KAFKA_RESP_ERR_TOPIC_EXCEPTION, RD_KAFKA_RESP_ERR_INVALID_MSG_SIZE,
         RD_KAFKA_RESP_ERR__INVALID_ARG].contains { $0.rawValue == code }
    }

    public var description: String { "Kafka error \(code): \(message)" }
}

/// Creates a librdkafka handle of the given kind from a configuration.
func makeHandle(type: rd_kafka_type_t, conf: OpaquePointer) throws(KafkaError) -> OpaquePointer {
    var errorBuffer = [CChar](repeating: 0, count: 512)
    guard let handle = rd_kafka_new(type, conf, &errorBuffer, errorBuffer.count) else {
        rd_kafka_conf_destroy(conf)
        throw KafkaError(code: -1, message: "rd_kafka_new failed: \(string(fromErrorBuffer: errorBuffer))")
    }
    return handle
}

/// A librdkafka handle that may cross threads: librdkafka's handles are thread-safe, and the
/// owners serialize the calls that must not overlap.
struct NativeHandle: @unchecked Sendable {
    let pointer: OpaquePointer
}

/// A flag shared with a polling thread or queue (an `Atomic` itself cannot be captured).
final class AtomicFlag: Sendable {
    private let value = Atomic<Bool>(false)

    var isSet: Bool { value.load(ordering: .relaxed) }

    func set() { value.store(true, ordering: .relaxed) }

    /// Sets the flag and returns whether it was already set.
    func testAndSet() -> Bool { value.exchange(true, ordering: .relaxed) }
}

/// The text librdkafka wrote into an error buffer.
func string(fromErrorBuffer buffer: [CChar]) -> String {
    let bytes = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
    return String(decoding: bytes, as: UTF8.self)
}

/// The librdkafka version actually loaded at run time (not the headers built against).
public var librdkafkaVersion: String { String(cString: rd_kafka_version_str()) }
