import ColonyModels
import Foundation
import Logging
import PostgresNIO
import Tracing

/// The transactional outbox: `publish` writes the event into the service's `outbox` table
/// inside the caller's transaction, so the event exists exactly when the change commits.
/// `OutboxRelay` sends it to Kafka afterwards. An event larger than `maxEventBytes` is refused
/// at publish (413 `event_too_large`), so the caller's transaction, and the change, roll back.
public struct Outbox: Sendable {
    public let topicPrefix: String
    public let schema: String
    public let maxEventBytes: Int

    public init(schema: String, topicPrefix: String = EventTopics.defaultPrefix, maxEventBytes: Int = PipelineSettings().maxEventBytes) {
        self.schema = schema
        self.topicPrefix = topicPrefix
        self.maxEventBytes = maxEventBytes
    }

    /// The channel the relay listens on; a commit that published wakes it at once.
    var notificationChannel: String { "\(schema)_outbox" }

    /// Records the event in the current transaction. Call it on the connection of the
    /// transaction that makes the change the event describes.
    public func publish<Payload: EventPayload>(_ event: EventEnvelope<Payload>, on connection: PostgresConnection, logger: Logger) async throws {
        let payload = try event.encoded()
        try checkSize(payload.count, of: event.type.rawValue)
        // One prepared statement (planned once per connection) writes the row and notifies.
        let statement = PublishStatement(eventID: event.id, topic: event.topic(prefix: topicPrefix), key: event.aggregateId, type: event.type.rawValue,
                                         payload: ByteBuffer(bytes: payload), channel: notificationChannel, traceParent: Self.currentTraceParent)
        for try await _ in try await connection.execute(statement, logger: logger) {}
    }

    struct PublishStatement: PostgresPreparedStatement {
        static let sql = """
            WITH inserted AS (
                INSERT INTO outbox (event_id, topic, event_key, event_type, payload, trace_parent) VALUES ($1, $2, $3, $4, $5, $7) RETURNING 1
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
        var traceParent: String?

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 7)
            bindings.append(eventID)
            bindings.append(topic)
            bindings.append(key)
            bindings.append(type)
            bindings.append(payload)
            bindings.append(channel)
            bindings.append(traceParent)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws {}
    }

    /// Records many events (of any types) in the current transaction with one statement, for
    /// jobs that change many aggregates at once. Order in the array is the publishing order.
    public func publish(_ events: [OutboxMessage], on connection: PostgresConnection, logger: Logger) async throws {
        guard !events.isEmpty else { return }
        for event in events { try checkSize(event.payload.readableBytes, of: event.type) }
        try await connection.query("""
            INSERT INTO outbox (event_id, topic, event_key, event_type, payload, trace_parent)
            SELECT event_id, topic, event_key, event_type, payload, \(Self.currentTraceParent) FROM unnest(\(events.map(\.id))::uuid[], \(events.map { $0.topic(prefix: topicPrefix) })::text[],
                                 \(events.map(\.key))::text[], \(events.map(\.type))::text[], \(events.map(\.payload))::bytea[])
                WITH ORDINALITY AS e(event_id, topic, event_key, event_type, payload, n)
            ORDER BY n
            """, logger: logger)
        try await connection.query("SELECT pg_notify(\(notificationChannel), '')", logger: logger)
    }
}

extension Outbox {
    /// The `traceparent` of the work publishing (the request or event being handled), so the
    /// trace follows the event through the broker to its consumers.
    static var currentTraceParent: String? {
        TraceParent.current?.description
    }

    /// Refuses an event the broker would refuse: better a 4xx for the request that made it than
    /// a row that can never leave the outbox.
    func checkSize(_ size: Int, of type: String) throws(APIError) {
        guard size <= maxEventBytes else {
            throw APIError(.contentTooLarge, code: "event_too_large",
                           message: "this change would publish a \(type) event of \(size) bytes, over the limit of \(maxEventBytes)")
        }
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
