/// A message to send: the key picks the partition, so one aggregate's messages stay in order.
public struct KafkaOutgoingMessage: Sendable {
    public var topic: String
    public var key: [UInt8]
    public var value: [UInt8]
    public var headers: [(String, [UInt8])]

    public init(topic: String, key: [UInt8], value: [UInt8], headers: [(String, [UInt8])] = []) {
        self.topic = topic
        self.key = key
        self.value = value
        self.headers = headers
    }

    public init(topic: String, key: String, value: [UInt8], headers: [(String, String)] = []) {
        self.init(topic: topic, key: Array(key.utf8), value: value, headers: headers.map { ($0.0, Array($0.1.utf8)) })
    }
}

/// Where the broker stored an acknowledged message.
public struct KafkaDeliveryReport: Sendable, Equatable {
    public var topic: String
    public var partition: Int32
    public var offset: Int64
}

/// A message as consumed. Its bytes are copied out of librdkafka's buffers.
public struct KafkaConsumerMessage: Sendable {
    public var topic: String
    public var partition: Int32
    public var offset: Int64
    public var key: [UInt8]
    public var value: [UInt8]
    public var headers: [String: [UInt8]]
    /// Broker or producer timestamp, milliseconds since the epoch (-1 when unknown).
    public var timestampMilliseconds: Int64

    public var keyString: String { String(decoding: key, as: UTF8.self) }

    public func header(_ name: String) -> String? {
        headers[name].map { String(decoding: $0, as: UTF8.self) }
    }
}
