import ColonyModels
import ColonyPlatform
import Foundation
import Logging
import PostgresNIO

/// A queued address request as leased by a dispatcher.
struct QueuedAddressRequest: Sendable {
    var id: UUID
    var app: App
    var kind: AddressRequestKind
    var email: String
    var details: AddressRequestDetails
    /// Leases so far, this one included.
    var attempts: Int
}

/// `address_requests`: queued by the request path, leased by every replica's dispatcher
/// (`FOR UPDATE SKIP LOCKED`), deleted in the transaction that handles them.
struct AddressRequestStore {
    let logger: Logger

    /// One statement, the same for every address. The details as Foundation's coders write them
    /// (read back by `decodeJSON`): no key conversion, so the metadata's keys stay as sent.
    static func enqueue(id: UUID, app: App, kind: AddressRequestKind, email: String, details: AddressRequestDetails) throws -> PostgresQuery {
        let json = String(decoding: try JSONEncoder().encode(details), as: UTF8.self)
        return "INSERT INTO address_requests (id, app, kind, email, details) VALUES (\(id), \(app.rawValue), \(kind.rawValue), \(email), \(json)::jsonb)"
    }

    /// Takes up to `limit` due requests for `leaseSeconds`: one a dispatcher dies with comes due
    /// again after it.
    func lease(limit: Int, leaseSeconds: Int, on connection: PostgresConnection) async throws -> [QueuedAddressRequest] {
        let rows = try await connection.query("""
            UPDATE address_requests SET attempts = attempts + 1, due_at = now() + make_interval(secs => \(leaseSeconds))
            WHERE id IN (SELECT id FROM address_requests WHERE due_at <= now() ORDER BY due_at LIMIT \(limit) FOR UPDATE SKIP LOCKED)
            RETURNING id, app, kind, email, details::text, attempts
            """, logger: logger)
        var leased: [QueuedAddressRequest] = []
        for try await row in rows {
            let (id, appText, kindText, email, details, attempts) = try row.read { c in
                try (c.next(UUID.self), c.next(String.self), c.next(String.self), c.next(String.self), c.next(String.self), c.next(Int.self))
            }
            guard let app = App(rawValue: appText), let kind = AddressRequestKind(rawValue: kindText) else {
                logger.error("address request of an unknown app or kind dropped", metadata: ["id": "\(id)"])
                try await delete(id: id, on: connection)
                continue
            }
            leased.append(QueuedAddressRequest(id: id, app: app, kind: kind, email: email, details: try decodeJSON(details), attempts: attempts))
        }
        return leased
    }

    /// Deletes the request in the caller's transaction: false when another dispatcher took it.
    func take(id: UUID, on connection: PostgresConnection) async throws -> Bool {
        try await connection.query("DELETE FROM address_requests WHERE id = \(id) RETURNING id", logger: logger).firstValue(UUID.self) != nil
    }

    func delete(id: UUID, on connection: PostgresConnection) async throws {
        try await connection.query("DELETE FROM address_requests WHERE id = \(id)", logger: logger)
    }

    /// Requests still queued (tests, and the dispatcher's metric of its backlog).
    func pending(on connection: PostgresConnection) async throws -> Int {
        try await connection.query("SELECT count(*)::int FROM address_requests", logger: logger).firstValue(Int.self) ?? 0
    }
}
