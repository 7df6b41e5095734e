import CRdKafka
import Foundation

/// Topic administration over a short-lived librdkafka handle.
public struct KafkaAdmin: Sendable {
    public let configuration: KafkaConfiguration

    /// A consumer's settings may be passed as they are: what only a consumer takes is left out
    /// (the admin handle is a producer, and librdkafka warns about each such property).
    public init(configuration: KafkaConfiguration) {
        var configuration = configuration
        for property in Self.consumerOnlyProperties { configuration.properties.removeValue(forKey: property) }
        self.configuration = configuration
    }

    static let consumerOnlyProperties = [
        "group.id", "partition.assignment.strategy", "session.timeout.ms", "heartbeat.interval.ms", "enable.auto.commit",
        "enable.auto.offset.store", "auto.commit.interval.ms", "auto.offset.reset", "enable.partition.eof", "fetch.wait.max.ms",
        "fetch.error.backoff.ms",
    ]

    /// Creates topics that do not exist yet; existing ones are left alone. The replication factor
    /// is 1 on a single local broker and 3 on a production cluster. Returns the topics it created
    /// (a topic the caller had used before and finds created again was lost by the broker).
    @discardableResult
    public func createTopics(_ names: [String], partitions: Int32 = 3, replicationFactor: Int32 = 1, timeout: Duration = .seconds(10)) async throws -> Set<String> {
        guard !names.isEmpty else { return [] }
        let configuration = self.configuration
        let milliseconds = Int32(timeout.components.seconds * 1000)
        return try await BlockingWorker.runDetached(name: "colony-kafka-admin") {
            try Self.createTopicsBlocking(configuration: configuration, names: names, partitions: partitions, replicationFactor: replicationFactor, milliseconds: milliseconds)
        }
    }

    /// Whether Kafka accepts `name` as a topic name: 1-249 of `[A-Za-z0-9._-]`, not `.` or `..`.
    public static func isValidTopicName(_ name: String) -> Bool {
        guard (1...249).contains(name.utf8.count), name != ".", name != ".." else { return false }
        return name.utf8.allSatisfy { byte in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
        }
    }

    private static func createTopicsBlocking(configuration: KafkaConfiguration, names: [String], partitions: Int32, replicationFactor: Int32, milliseconds: Int32) throws -> Set<String> {
        let conf = try configuration.makeNativeConfiguration()
        let handle = try makeHandle(type: RD_KAFKA_PRODUCER, conf: conf)
        defer { rd_kafka_destroy(handle) }
        let resultQueue = rd_kafka_queue_new(handle)
        defer { rd_kafka_queue_destroy(resultQueue) }

        var errorBuffer = [CChar](repeating: 0, count: 512)
        var newTopics: [OpaquePointer?] = []
        defer { newTopics.forEach { rd_kafka_NewTopic_destroy($0) } }
        for name in names {
            guard let topic = rd_kafka_NewTopic_new(name, partitions, replicationFactor, &errorBuffer, errorBuffer.count) else {
                throw KafkaError(code: -1, message: "invalid topic \(name): \(string(fromErrorBuffer: errorBuffer))")
            }
            newTopics.append(topic)
        }
        let options = rd_kafka_AdminOptions_new(handle, RD_KAFKA_ADMIN_OP_CREATETOPICS)
        defer { rd_kafka_AdminOptions_destroy(options) }
        rd_kafka_AdminOptions_set_operation_timeout(options, milliseconds, &errorBuffer, errorBuffer.count)
        rd_kafka_AdminOptions_set_request_timeout(options, milliseconds, &errorBuffer, errorBuffer.count)
        newTopics.withUnsafeMutableBufferPointer { buffer in
            rd_kafka_CreateTopics(handle, buffer.baseAddress, buffer.count, options, resultQueue)
        }
        guard let event = rd_kafka_queue_poll(resultQueue, milliseconds + 2000) else {
            throw KafkaError(code: RD_KAFKA_RESP_ERR__TIMED_OUT.rawValue, message: "creating topics timed out")
        }
        defer { rd_kafka_event_destroy(event) }
        let eventError = rd_kafka_event_error(event)
        if eventError != RD_KAFKA_RESP_ERR_NO_ERROR {
            throw KafkaError(eventError)
        }
        guard let result = rd_kafka_event_CreateTopics_result(event) else { return [] }
        var count = 0
        guard let topics = rd_kafka_CreateTopics_result_topics(result, &count) else { return [] }
        var created = Set<String>()
        for index in 0..<count {
            let error = rd_kafka_topic_result_error(topics[index])
            let name = String(cString: rd_kafka_topic_result_name(topics[index]))
            if error == RD_KAFKA_RESP_ERR_NO_ERROR {
                created.insert(name)
            } else if error != RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS {
                throw KafkaError(code: error.rawValue, message: "creating topic \(name): \(String(cString: rd_kafka_err2str(error)))")
            }
        }
        return created
    }
}

/// One partition of a consumer group's progress: what it committed and where the partition ends.
public struct KafkaGroupPartitionLag: Sendable, Equatable {
    public var topic: String
    public var partition: Int32
    /// The group's committed offset (nil: nothing committed yet).
    public var committed: Int64?
    /// The partition's end (high watermark).
    public var end: Int64
    /// Messages the group has not committed past (from the partition's start when nothing is committed).
    public var lag: Int64
}

extension KafkaAdmin {
    /// The end (high watermark) of each partition of a topic, asked of the broker.
    public func highWatermarks(topic: String, timeout: Duration = .seconds(10)) async throws -> [Int32: Int64] {
        let configuration = self.configuration
        let milliseconds = Int32(timeout.components.seconds * 1000)
        return try await BlockingWorker.runDetached(name: "colony-kafka-watermarks") {
            let handle = try makeHandle(type: RD_KAFKA_PRODUCER, conf: try configuration.makeNativeConfiguration())
            defer { rd_kafka_destroy(handle) }
            var ends: [Int32: Int64] = [:]
            for partition in try partitions(of: topic, handle: handle, milliseconds: milliseconds) {
                var low: Int64 = 0
                var high: Int64 = 0
                let error = rd_kafka_query_watermark_offsets(handle, topic, partition, &low, &high, milliseconds)
                guard error == RD_KAFKA_RESP_ERR_NO_ERROR else { throw KafkaError(error) }
                ends[partition] = high
            }
            return ends
        }
    }

    /// A consumer group's committed offsets against the end of each partition of `topics`,
    /// asked of the broker without joining the group.
    public func groupLag(group: String, topics: [String], timeout: Duration = .seconds(10)) async throws -> [KafkaGroupPartitionLag] {
        var configuration = self.configuration
        configuration.properties["group.id"] = group
        configuration.properties["enable.auto.commit"] = "false"
        let conf = configuration
        let milliseconds = Int32(timeout.components.seconds * 1000)
        return try await BlockingWorker.runDetached(name: "colony-kafka-lag") {
            let handle = try makeHandle(type: RD_KAFKA_CONSUMER, conf: try conf.makeNativeConfiguration())
            defer { rd_kafka_destroy(handle) }
            guard let list = rd_kafka_topic_partition_list_new(16) else { throw KafkaError(code: -1, message: "out of memory") }
            defer { rd_kafka_topic_partition_list_destroy(list) }
            for topic in topics {
                for partition in try partitions(of: topic, handle: handle, milliseconds: milliseconds) {
                    rd_kafka_topic_partition_list_add(list, topic, partition)
                }
            }
            let committedError = rd_kafka_committed(handle, list, milliseconds)
            guard committedError == RD_KAFKA_RESP_ERR_NO_ERROR else { throw KafkaError(committedError) }
            var result: [KafkaGroupPartitionLag] = []
            for index in 0..<Int(list.pointee.cnt) {
                let element = list.pointee.elems[index]
                let topic = String(cString: element.topic)
                var low: Int64 = 0
                var high: Int64 = 0
                let watermarkError = rd_kafka_query_watermark_offsets(handle, topic, element.partition, &low, &high, milliseconds)
                guard watermarkError == RD_KAFKA_RESP_ERR_NO_ERROR else { throw KafkaError(watermarkError) }
                let committed: Int64? = element.offset >= 0 ? element.offset : nil
                result.append(KafkaGroupPartitionLag(topic: topic, partition: element.partition, committed: committed, end: high,
                                                     lag: max(0, high - (committed ?? low))))
            }
            return result.sorted { ($0.topic, $0.partition) < ($1.topic, $1.partition) }
        }
    }
}

/// The partition ids of a topic, from a metadata request on `handle`.
private func partitions(of topic: String, handle: OpaquePointer, milliseconds: Int32) throws -> [Int32] {
    let topicHandle = rd_kafka_topic_new(handle, topic, nil)
    defer { rd_kafka_topic_destroy(topicHandle) }
    var metadata: UnsafePointer<rd_kafka_metadata>? = nil
    let error = rd_kafka_metadata(handle, 0, topicHandle, &metadata, milliseconds)
    guard error == RD_KAFKA_RESP_ERR_NO_ERROR, let metadata else { throw KafkaError(error) }
    defer { rd_kafka_metadata_destroy(metadata) }
    var ids: [Int32] = []
    for index in 0..<Int(metadata.pointee.topic_cnt) {
        let entry = metadata.pointee.topics[index]
        guard entry.err == RD_KAFKA_RESP_ERR_NO_ERROR else { throw KafkaError(entry.err) }
        for partition in 0..<Int(entry.partition_cnt) { ids.append(entry.partitions[partition].id) }
    }
    return ids
}

extension KafkaAdmin {
    /// The cluster as a metadata request sees it: how many brokers, and every topic's name. It
    /// never creates a topic (a request for one named topic might, on a broker that auto-creates).
    public func clusterTopics(timeout: Duration = .seconds(10)) async throws -> (brokers: Int, topics: Set<String>) {
        let configuration = self.configuration
        let milliseconds = Int32(timeout.components.seconds * 1000)
        return try await BlockingWorker.runDetached(name: "colony-kafka-metadata") {
            let handle = try makeHandle(type: RD_KAFKA_PRODUCER, conf: try configuration.makeNativeConfiguration())
            defer { rd_kafka_destroy(handle) }
            var metadata: UnsafePointer<rd_kafka_metadata>? = nil
            let error = rd_kafka_metadata(handle, 1, nil, &metadata, milliseconds)
            guard error == RD_KAFKA_RESP_ERR_NO_ERROR, let metadata else { throw KafkaError(error) }
            defer { rd_kafka_metadata_destroy(metadata) }
            var topics = Set<String>()
            for index in 0..<Int(metadata.pointee.topic_cnt) where metadata.pointee.topics[index].err == RD_KAFKA_RESP_ERR_NO_ERROR {
                topics.insert(String(cString: metadata.pointee.topics[index].topic))
            }
            return (Int(metadata.pointee.broker_cnt), topics)
        }
    }
}
