import ColonyPlatform
import Crypto
import Foundation
import Logging
import PostgresNIO

/// Answers to requests sent with an `Idempotency-Key` header, kept for a day: a replay of the
/// same request gets the stored answer and changes nothing.
struct IdempotencyStore: Sendable {
    let logger: Logger

    static let retentionHours = 24

    struct Stored: Sendable {
        var requestHash: String
        var status: Int
        var body: ByteBuffer
    }

    /// Takes the key for this transaction (waiting for a concurrent request with the same key)
    /// and returns a stored answer if there is one.
    func lookup(userID: UUID, key: String, on connection: PostgresConnection) async throws -> Stored? {
        try await connection.query("SELECT pg_advisory_xact_lock(hashtext(\(userID.uuidString + "|" + key)))", logger: logger)
        let rows = try await connection.query("""
            SELECT request_hash, status, response FROM idempotency_keys
            WHERE user_id = \(userID) AND key = \(key) AND created_at > now() - make_interval(hours => \(Self.retentionHours)::int)
            """, logger: logger)
        return try await rows.read { c in Stored(requestHash: try c.next(String.self), status: try c.next(Int.self), body: try c.next(ByteBuffer.self)) }.first
    }

    func store(userID: UUID, key: String, requestHash: String, status: Int, body: ByteBuffer, on connection: PostgresConnection) async throws {
        try await connection.query("""
            INSERT INTO idempotency_keys (user_id, key, request_hash, status, response) VALUES (\(userID), \(key), \(requestHash), \(status), \(body))
            ON CONFLICT (user_id, key) DO UPDATE SET request_hash = EXCLUDED.request_hash, status = EXCLUDED.status, response = EXCLUDED.response, created_at = now()
            """, logger: logger)
    }

    func deleteExpired(on connection: PostgresConnection) async throws {
        try await connection.query("DELETE FROM idempotency_keys WHERE created_at < now() - make_interval(hours => \(Self.retentionHours)::int)", logger: logger)
    }

    static func hash(method: String, path: String, body: ByteBuffer) -> String {
        var hasher = SHA256()
        hasher.update(data: Data("\(method) \(path)\n".utf8))
        hasher.update(data: Data(buffer: body))
        return hasher.finalize().map { String(format: "%02x", $0) }.joined()
    }
}
