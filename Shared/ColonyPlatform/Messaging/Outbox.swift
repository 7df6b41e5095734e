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

    /// Records many events (of any types) in the current transaction with one statement, for
    /// jobs that change many aggregates at once. Order in the array is the publishing order.
    public func publish(_ events: [OutboxMessage], on connection: PostgresConnection, logger: Logger) async throws {
        guard !events.isEmpty else { return }
        try await connection.query("""
            INSERT INTO outbox (event_id, topic, event_key, event_type, payload)
            SELECT event_id, topic, event_key, event_type, payload FROM unnest(\(events.map(\.id))::uuid[], \(events.map { $0.topic(prefix: topicPrefix) })::text[],
                                 \(events.map(\.key))::text[], \(events.map(\.type))::text[], \(events.map(\.payload))::bytea[])
                WITH ORDINALITY AS e(event_id, topic, event_key, event_type, payload, n)
            ORDER BY n
            """, logger: logger)
        try await connection.query("SELECT pg_notify(\(notificationChannel), '')", logger: logger)
    }
}

/// An event encoded for the outbox, whatever its payload type.
public struct OutboxMessage: Sendable {
    public let id: UUID
    public let source: ColonyService
    public let key: String
    public let type: String
    public let payload: ByteBuffer

    public init<Payload: EventPayload>(_ event: EventEnvelope<Payload>) throws {
        self.id = event.id
        self.source = event.source
        self.key = event.aggregateId
        self.type = event.type.rawValue
        self.payload = ByteBuffer(bytes: try event.encoded())
    }

    func topic(prefix: String) -> String { EventTopics.topic(for: source, prefix: prefix) }
}
