import CRdKafka
import Foundation

/// Topic administration over a short-lived librdkafka handle.
public struct KafkaAdmin: Sendable {
    public let configuration: KafkaConfiguration

    public init(configuration: KafkaConfiguration) {
        self.configuration = configuration
    }

    /// Creates topics that do not exist yet; existing ones are left alone.
    public func createTopics(_ names: [String], partitions: Int32 = 3, timeout: Duration = .seconds(10)) async throws {
        guard !names.isEmpty else { return }
        let configuration = self.configuration
        let milliseconds = Int32(timeout.components.seconds * 1000)
        try await BlockingWorker.runDetached(name: "colony-kafka-admin") {
            try Self.createTopicsBlocking(configuration: configuration, names: names, partitions: partitions, milliseconds: milliseconds)
        }
    }

    private static func createTopicsBlocking(configuration: KafkaConfiguration, names: [String], partitions: Int32, milliseconds: Int32) throws {
        let conf = try configuration.makeNativeConfiguration()
        let handle = try makeHandle(type: RD_KAFKA_PRODUCER, conf: conf)
        defer { rd_kafka_destroy(handle) }
        let resultQueue = rd_kafka_queue_new(handle)
        defer { rd_kafka_queue_destroy(resultQueue) }

        var errorBuffer = [CChar](repeating: 0, count: 512)
        var newTopics: [OpaquePointer?] = []
        defer { newTopics.forEach { rd_kafka_NewTopic_destroy($0) } }
        for name in names {
            guard let topic = rd_kafka_NewTopic_new(name, partitions, 1, &errorBuffer, errorBuffer.count) else {
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
        guard let result = rd_kafka_event_CreateTopics_result(event) else { return }
        var count = 0
        guard let topics = rd_kafka_CreateTopics_result_topics(result, &count) else { return }
        for index in 0..<count {
            let error = rd_kafka_topic_result_error(topics[index])
            if error != RD_KAFKA_RESP_ERR_NO_ERROR && error != RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS {
                let name = String(cString: rd_kafka_topic_result_name(topics[index]))
                throw KafkaError(code: error.rawValue, message: "creating topic \(name): \(String(cString: rd_kafka_err2str(error)))")
            }
        }
    }
}
