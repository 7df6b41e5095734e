import ColonyModels
import Foundation
import Logging
import PostgresNIO

/// The idempotent consumer: a handler runs in a transaction that first records the event id
/// in the service's `inbox` table. A redelivered event finds its id there and changes nothing.
public struct Inbox: Sendable {
    public let database: Database

    public init(database: Database) {
        self.database = database
    }

    /// Runs `body` for the event unless it was handled before. Returns whether it ran.
    @discardableResult
    public func handle(_ event: ReceivedEvent, _ body: (PostgresConnection) async throws -> Void) async throws -> Bool {
        try await database.transaction { connection in
            guard try await record(event, on: connection) else { return false }
            try await body(connection)
            return true
        }
    }

    /// Records the event as handled in the caller's transaction; false when it already was.
    public func record(_ event: ReceivedEvent, on connection: PostgresConnection) async throws -> Bool {
        let rows = try await connection.query("""
            INSERT INTO inbox (event_id, event_type) VALUES (\(event.id), \(event.type.rawValue))
            ON CONFLICT (event_id) DO NOTHING
            RETURNING event_id
            """, logger: database.logger)
        return try await rows.collect().count == 1
    }

    /// Whether an event id is recorded as handled.
    public func contains(_ eventID: UUID) async throws -> Bool {
        try await database.query("SELECT 1 FROM inbox WHERE event_id = \(eventID)").collect().count == 1
    }
}
