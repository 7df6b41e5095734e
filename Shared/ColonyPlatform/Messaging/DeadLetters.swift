import ColonyModels
import Foundation
import Logging
import NIOCore
import PostgresNIO

/// A service's dead letters (its `dead_letters` table): events the pipeline set aside so that
/// the ones behind them could go on.
///
/// - `publish`: an outbox row the broker refused for good (too large, invalid). Retrying puts it
///   back at the end of the outbox.
/// - `consume`: a consumed event whose handler failed `COLONY_CONSUMER_MAX_ATTEMPTS` times, or
///   that could not be read at all (not an envelope, a `schema_version` this build does not
///   know). Retrying asks the service to apply it again (`DeadLetterRetrier`), through its inbox.
///
/// Table names are schema-qualified, so the same code serves the service (its own role) and
/// `colony-admin` (the superuser, any schema).
public struct DeadLetters: Sendable {
    public enum Stage: String, Sendable, Codable, CaseIterable {
        case publish, consume
    }

    /// One dead letter as operators see it (the payload itself is left out of listings).
    public struct Entry: Sendable, Codable, Equatable {
        public var id: Int64
        public var stage: Stage
        public var eventID: UUID?
        public var eventType: String?
        public var topic: String
        public var key: String?
        public var partition: Int32?
        public var offset: Int64?
        public var payloadBytes: Int
        public var error: String
        public var attempts: Int
        public var firstFailedAt: Date
        public var lastFailedAt: Date
        public var retryRequestedAt: Date?
    }

    /// What a retry request did.
    public struct RetryRequest: Sendable, Equatable {
        /// Publish dead letters put back into the outbox.
        public var republished: Int
        /// Consume dead letters the service was asked to apply again.
        public var requested: Int

        public init(republished: Int, requested: Int) {
            self.republished = republished
            self.requested = requested
        }
    }

    public let schema: String

    public init(schema: String) {
        self.schema = schema
    }

    var table: String { quoteIdentifier(schema) + ".dead_letters" }

    /// The channel the service's `DeadLetterRetrier` listens on.
    public var retryChannel: String { "\(schema)_dead_letters" }

    /// Moves outbox rows the broker refused for good into the dead letters, in one statement.
    func moveFromOutbox(positions: [Int64], errors: [String], on connection: PostgresConnection, logger: Logger) async throws {
        guard !positions.isEmpty else { return }
        try await connection.query("""
            WITH failed AS (
                SELECT * FROM unnest(\(positions)::bigint[], \(errors)::text[]) AS f(position, error)
            ), moved AS (
                DELETE FROM \(unescaped: quoteIdentifier(schema)).outbox o USING failed f WHERE o.position = f.position
                RETURNING o.event_id, o.event_type, o.topic, o.event_key, o.payload, f.error
            )
            INSERT INTO \(unescaped: table) (stage, event_id, event_type, topic, event_key, payload, error)
            SELECT 'publish', event_id, event_type, topic, event_key, payload, error FROM moved
            ON CONFLICT (stage, event_id) WHERE event_id IS NOT NULL
            DO UPDATE SET error = EXCLUDED.error, attempts = \(unescaped: table).attempts + 1, last_failed_at = now()
            """, logger: logger)
    }

    /// Records a consumed event that could not be applied. A redelivered event that fails again
    /// updates its entry instead of adding one.
    func recordConsumed(event: ReceivedEvent?, message: ConsumedMessageReference, payload: [UInt8], error: String, attempts: Int,
                        on connection: PostgresConnection, logger: Logger) async throws {
        if let event {
            try await connection.query("""
                INSERT INTO \(unescaped: table) (stage, event_id, event_type, topic, event_key, kafka_partition, kafka_offset, payload, error, attempts)
                VALUES ('consume', \(event.id), \(event.type.rawValue), \(message.topic), \(message.key), \(message.partition), \(message.offset),
                        \(ByteBuffer(bytes: payload)), \(error), \(attempts))
                ON CONFLICT (stage, event_id) WHERE event_id IS NOT NULL
                DO UPDATE SET error = EXCLUDED.error, attempts = \(unescaped: table).attempts + EXCLUDED.attempts, last_failed_at = now(),
                              kafka_partition = EXCLUDED.kafka_partition, kafka_offset = EXCLUDED.kafka_offset, retry_requested_at = NULL
                """, logger: logger)
        } else {
            try await connection.query("""
                INSERT INTO \(unescaped: table) (stage, topic, event_key, kafka_partition, kafka_offset, payload, error, attempts)
                VALUES ('consume', \(message.topic), \(message.key), \(message.partition), \(message.offset), \(ByteBuffer(bytes: payload)), \(error), \(attempts))
                ON CONFLICT (topic, kafka_partition, kafka_offset) WHERE event_id IS NULL DO NOTHING
                """, logger: logger)
        }
    }

    /// The dead letters, oldest first.
    public func list(stage: Stage? = nil, limit: Int = 100, on connection: PostgresConnection, logger: Logger) async throws -> [Entry] {
        let rows = try await connection.query("""
            SELECT id, stage, event_id, event_type, topic, event_key, kafka_partition, kafka_offset, octet_length(payload), error, attempts,
                   first_failed_at, last_failed_at, retry_requested_at
            FROM \(unescaped: table) WHERE \(stage?.rawValue)::text IS NULL OR stage = \(stage?.rawValue)
            ORDER BY id LIMIT \(limit)
            """, logger: logger)
        var entries: [Entry] = []
        for try await row in rows {
            entries.append(try row.read { c in
                Entry(id: try c.next(), stage: Stage(rawValue: try c.next(String.self)) ?? .consume, eventID: try c.next(), eventType: try c.next(), topic: try c.next(),
                      key: try c.next(), partition: try c.next(Int32?.self), offset: try c.next(Int64?.self), payloadBytes: Int(try c.next(Int32.self)), error: try c.next(),
                      attempts: Int(try c.next(Int32.self)), firstFailedAt: try c.next(), lastFailedAt: try c.next(), retryRequestedAt: try c.next())
            })
        }
        return entries
    }

    /// How many dead letters each stage holds.
    public func counts(on connection: PostgresConnection, logger: Logger) async throws -> [Stage: Int] {
        var counts = Dictionary(uniqueKeysWithValues: Stage.allCases.map { ($0, 0) })
        for try await row in try await connection.query("SELECT stage, count(*) FROM \(unescaped: table) GROUP BY stage", logger: logger) {
            var cells = RowCells(row)
            let stage: String = try cells.next(), count: Int64 = try cells.next()
            if let stage = Stage(rawValue: stage) { counts[stage] = Int(count) }
        }
        return counts
    }

    /// Retries dead letters (all when `ids` is nil): publish ones go back to the end of the
    /// outbox at once (the relay is woken); consume ones are marked for the service's retrier,
    /// which is woken too. Both happen in one transaction.
    public func requestRetry(ids: [Int64]?, on connection: PostgresConnection, logger: Logger) async throws -> RetryRequest {
        let schema = quoteIdentifier(self.schema)
        var republished = 0
        for try await _ in try await connection.query("""
            WITH moved AS (
                DELETE FROM \(unescaped: table) WHERE stage = 'publish' AND (\(ids)::bigint[] IS NULL OR id = ANY(\(ids)::bigint[]))
                RETURNING event_id, topic, event_key, event_type, payload
            )
            INSERT INTO \(unescaped: schema).outbox (event_id, topic, event_key, event_type, payload)
            SELECT event_id, topic, event_key, event_type, payload FROM moved WHERE event_id IS NOT NULL
            ON CONFLICT (event_id) DO NOTHING
            RETURNING event_id
            """, logger: logger) {
            republished += 1
        }
        var requested = 0
        for try await _ in try await connection.query("""
            UPDATE \(unescaped: table) SET retry_requested_at = now()
            WHERE stage = 'consume' AND (\(ids)::bigint[] IS NULL OR id = ANY(\(ids)::bigint[]))
            RETURNING id
            """, logger: logger) {
            requested += 1
        }
        if republished > 0 { try await connection.query("SELECT pg_notify(\(self.schema + "_outbox"), '')", logger: logger) }
        if requested > 0 { try await connection.query("SELECT pg_notify(\(retryChannel), '')", logger: logger) }
        return RetryRequest(republished: republished, requested: requested)
    }

    /// Deletes dead letters for good (all when `ids` is nil). Returns how many.
    public func drop(ids: [Int64]?, on connection: PostgresConnection, logger: Logger) async throws -> Int {
        var dropped = 0
        for try await _ in try await connection.query("""
            DELETE FROM \(unescaped: table) WHERE \(ids)::bigint[] IS NULL OR id = ANY(\(ids)::bigint[]) RETURNING id
            """, logger: logger) {
            dropped += 1
        }
        return dropped
    }
}

/// Where a consumed message came from, for its dead letter.
struct ConsumedMessageReference: Sendable {
    var topic: String
    var key: String
    var partition: Int32
    var offset: Int64
}
