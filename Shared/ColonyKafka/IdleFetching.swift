import CRdKafka
import Logging
import Synchronization

extension KafkaConfiguration {
    /// How a consumer fetches while nothing arrives: once it has received nothing for `after`, it
    /// pauses its partitions and looks for new events every `interval`, for `look` each time; the
    /// first event it finds wakes it (`after` 5 s, `interval` 1 s, `look` 50 ms: a look is a metadata
    /// request and two or three fetches). A broker that answers a held fetch as soon as data arrives
    /// (Apache Kafka) needs none of this: a long `fetch.wait.max.ms` is as quiet and adds no
    /// latency. The local broker (Tansu 0.6) holds every fetch for its whole wait, data or not, so
    /// there a short wait keeps a busy stream fast, and this keeps an idle one quiet: 100 fetches
    /// a second per consumer become a few. The first event after a quiet spell waits up to
    /// `interval` longer; events after it, none.
    public struct IdleFetching: Sendable, Equatable {
        public var after: Duration
        public var interval: Duration
        public var look: Duration

        public init(after: Duration = .seconds(5), interval: Duration = .seconds(1), look: Duration = .milliseconds(50)) {
            self.after = after
            self.interval = interval
            self.look = look
        }
    }
}

/// A consumer's dozing, driven by its polling thread between polls.
final class IdleFetcher: Sendable {
    private let state: Mutex<IdleFetchingState>

    init(settings: KafkaConfiguration.IdleFetching) {
        state = Mutex(IdleFetchingState(settings: settings))
    }

    /// Pauses or resumes as the time says; returns how long the next poll may wait (ms).
    func beforePoll(handle: OpaquePointer, logger: Logger) -> Int32 {
        state.withLock { $0.beforePoll(handle: handle, now: .now, logger: logger) }
    }

    /// Whether the consumer's partitions are paused now (between looks).
    var isDozing: Bool { state.withLock { $0.isPaused } }

    /// How many times it paused since it was made.
    var dozes: Int { state.withLock { $0.dozes } }

    /// An event arrived: stay awake for at least `after`.
    func received(handle: OpaquePointer, logger: Logger) {
        state.withLock { $0.received(handle: handle, now: .now, logger: logger) }
    }
}

/// The dozing state: only the polling thread touches it, between polls.
///
/// Pausing loses nothing: librdkafka resumes a partition from the application's position (after
/// the last message polled) or, before any was polled, from the concrete offset its fetching started
/// at; what a fetch brought in the moment of the pause is fetched again.
struct IdleFetchingState {
    let settings: KafkaConfiguration.IdleFetching
    private var lastActive = ContinuousClock.now
    /// Paused: when to look again.
    private var lookAt: ContinuousClock.Instant?
    /// Looking: when to pause again.
    private var lookEnds: ContinuousClock.Instant?
    /// How often it paused (for tests and the logs).
    private(set) var dozes = 0

    init(settings: KafkaConfiguration.IdleFetching) {
        self.settings = settings
    }

    var isPaused: Bool { lookAt != nil }

    /// Pauses or resumes as the time says; returns how long the next poll may wait (ms).
    mutating func beforePoll(handle: OpaquePointer, now: ContinuousClock.Instant, logger: Logger) -> Int32 {
        if let lookAt {
            guard now >= lookAt else { return Self.milliseconds(min(.milliseconds(100), lookAt - now)) }
            Self.resume(handle: handle, logger: logger)
            self.lookAt = nil
            lookEnds = ContinuousClock.now + settings.look
            return Self.milliseconds(min(.milliseconds(100), settings.look))
        }
        let quietFor = now - lastActive
        if let lookEnds, now < lookEnds { return Self.milliseconds(min(.milliseconds(100), lookEnds - now)) }
        // Awake: wait no longer than until the quiet spell would be long enough.
        guard quietFor >= settings.after else { return Self.milliseconds(min(.milliseconds(100), settings.after - quietFor)) }
        if Self.pause(handle: handle, logger: logger) {
            lookAt = now + settings.interval
            lookEnds = nil
            dozes += 1
            return Self.milliseconds(min(.milliseconds(100), settings.interval))
        }
        lastActive = now  // nothing assigned yet: try again after another quiet spell
        return 100
    }

    /// An event arrived: stay awake for at least `after`.
    mutating func received(handle: OpaquePointer, now: ContinuousClock.Instant, logger: Logger) {
        lastActive = now
        lookEnds = nil
        if lookAt != nil {
            Self.resume(handle: handle, logger: logger)
            lookAt = nil
        }
    }

    private static func milliseconds(_ duration: Duration) -> Int32 {
        let (seconds, attoseconds) = duration.components
        return Int32(clamping: max(1, seconds * 1000 + attoseconds / 1_000_000_000_000_000))
    }

    /// Pauses every assigned partition; false when none is assigned or librdkafka refused.
    private static func pause(handle: OpaquePointer, logger: Logger) -> Bool {
        guard let list = assignment(handle) else { return false }
        defer { rd_kafka_topic_partition_list_destroy(list) }
        let error = rd_kafka_pause_partitions(handle, list)
        guard error == RD_KAFKA_RESP_ERR_NO_ERROR else {
            logger.warning("pausing an idle consumer failed", metadata: ["error": "\(KafkaError(error))"])
            return false
        }
        return true
    }

    /// Resumes every assigned partition and wakes the broker connection's thread: with nothing to
    /// fetch it naps up to a second, and a resume alone does not wake it (a look would end before
    /// its fetch began). A metadata request of the subscribed topics (one small request) does.
    private static func resume(handle: OpaquePointer, logger: Logger) {
        guard let list = assignment(handle) else { return }
        defer { rd_kafka_topic_partition_list_destroy(list) }
        let error = rd_kafka_resume_partitions(handle, list)
        guard error == RD_KAFKA_RESP_ERR_NO_ERROR else {
            logger.warning("resuming an idle consumer failed", metadata: ["error": "\(KafkaError(error))"])
            return
        }
        var metadata: UnsafePointer<rd_kafka_metadata>? = nil
        if rd_kafka_metadata(handle, 0, nil, &metadata, 2000) == RD_KAFKA_RESP_ERR_NO_ERROR, let metadata {
            rd_kafka_metadata_destroy(metadata)
        }
    }

    /// The assigned partitions (nil when none).
    private static func assignment(_ handle: OpaquePointer) -> UnsafeMutablePointer<rd_kafka_topic_partition_list_t>? {
        var list: UnsafeMutablePointer<rd_kafka_topic_partition_list_t>? = nil
        let listed = rd_kafka_assignment(handle, &list)
        guard let list else { return nil }
        guard listed == RD_KAFKA_RESP_ERR_NO_ERROR, list.pointee.cnt > 0 else {
            rd_kafka_topic_partition_list_destroy(list)
            return nil
        }
        return list
    }
}
