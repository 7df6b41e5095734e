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
        // One prepared statement (planned once per connection) writes the row and notifies.
        let statement = PublishStatement(eventID: event.id, topic: event.topic(prefix: topicPrefix), key: event.aggregateId, type: event.type.rawValue,
                                         payload: ByteBuffer(bytes: try event.encoded()), channel: notificationChannel)
        for try await _ in try await connection.execute(statement, logger: logger) {}
    }

    struct PublishStatement: PostgresPreparedStatement {
        static let sql = """
            WITH inserted AS (
                INSERT INTO outbox (event_id, topic, event_key, event_type, payload) VALUES ($1, $2, $3, $4, $5) RETURNING 1
            )
            SELECT pg_notify($6, '') FROM inserted
            """
        typealias Row = Void

        var eventID: UUID
        var topic: String
        var key: String
        var type: String
        var payload: ByteBuffer
        var channel: String

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 6)
            bindings.append(eventID)
            bindings.append(topic)
            bindings.append(key)
            bindings.append(type)
            bindings.append(payload)
            bindings.append(channel)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws {}
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
