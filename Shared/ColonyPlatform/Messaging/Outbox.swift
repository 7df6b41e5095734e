import ColonyModels
import Foundation
import Logging
import PostgresNIO

/// The transactional outbox: `publish` writes the event into the service's `outbox` table
/// inside the caller's transaction, so the event exists exactly when the change commits.
/// `OutboxRelay` sends it to Kafka afterwards.
public struct Outbox: Sendable {
    public let topicPrefix: String
    public let schema: String

    public init(schema: String, topicPrefix: String = EventTopics.defaultPrefix) {
        self.schema = schema
        self.topicPrefix = topicPrefix
    }

    /// The channel the relay listens on; a commit that published wakes it at once.
    var notificationChannel: String { "\(schema)_outbox" }

    /// Records the event in the current transaction. Call it on the connection of the
    /// transaction that makes the change the event describes.
    public func publish<Payload: EventPayload>(_ event: EventEnvelope<Payload>, on connection: PostgresConnection, logger: Logger) async throws {
        let payload = try event.encoded()
        try await connection.query("""
            INSERT INTO outbox (event_id, topic, event_key, event_type, payload)
            VALUES (\(event.id), \(event.topic(prefix: topicPrefix)), \(event.aggregateId), \(event.type.rawValue), \(ByteBuffer(bytes: payload)))
            """, logger: logger)
        try await connection.query("SELECT pg_notify(\(notificationChannel), '')", logger: logger)
    }
}
