import ColonyPlatform
import Foundation
import Logging
import PostgresNIO

/// An operator's session as stored (`operator_sessions`), found by its token's hash.
public struct OperatorSession: Sendable, Equatable {
    public enum Stage: String, Sendable {
        /// The password was right; the second factor is awaited.
        case password
        /// The operator has no confirmed TOTP yet and is setting one up.
        case enrolling
        /// Signed in.
        case full
    }

    public var tokenHash: String
    public var operatorID: UUID
    public var stage: Stage
    public var csrfToken: String
    public var createdAt: Date
    public var lastSeenAt: Date
    public var endedAt: Date?
}

struct SessionStore {
    let logger: Logger

    func insert(tokenHash: String, operatorID: UUID, stage: OperatorSession.Stage, csrfToken: String, ipAddress: String, userAgent: String?,
                on connection: PostgresConnection) async throws {
        try await connection.query("""
            INSERT INTO operator_sessions (token_hash, operator_id, stage, csrf_token, ip_address, user_agent)
            VALUES (\(tokenHash), \(operatorID), \(stage.rawValue), \(csrfToken), \(ipAddress), \(userAgent.map { String($0.prefix(512)) }))
            """, logger: logger)
    }

    func find(tokenHash: String, on connection: PostgresConnection) async throws -> OperatorSession? {
        let rows = try await connection.query("""
            SELECT token_hash, operator_id, stage, csrf_token, created_at, last_seen_at, ended_at FROM operator_sessions WHERE token_hash = \(tokenHash)
            """, logger: logger)
        for try await row in rows {
            let session = try row.read { c -> OperatorSession? in
                let (hash, id, stage, csrf, created, seen, ended) = try (
                    c.next(String.self), c.next(UUID.self), c.next(String.self), c.next(String.self), c.next(Date.self), c.next(Date.self), c.next(Date?.self))
                guard let stage = OperatorSession.Stage(rawValue: stage) else { return nil }
                return OperatorSession(tokenHash: hash, operatorID: id, stage: stage, csrfToken: csrf, createdAt: created, lastSeenAt: seen, endedAt: ended)
            }
            return session
        }
        return nil
    }

    /// Marks the session used now; at most once a minute is written, so reading pages costs no write each.
    func touch(tokenHash: String, on connection: PostgresConnection) async throws {
        try await connection.query("""
            UPDATE operator_sessions SET last_seen_at = now() WHERE token_hash = \(tokenHash) AND last_seen_at < now() - interval '1 minute'
            """, logger: logger)
    }

    func setStage(tokenHash: String, stage: OperatorSession.Stage, on connection: PostgresConnection) async throws {
        try await connection.query("UPDATE operator_sessions SET stage = \(stage.rawValue), last_seen_at = now() WHERE token_hash = \(tokenHash)", logger: logger)
    }

    func end(tokenHash: String, on connection: PostgresConnection) async throws {
        try await connection.query("UPDATE operator_sessions SET ended_at = now() WHERE token_hash = \(tokenHash) AND ended_at IS NULL", logger: logger)
    }

    /// Ends every session of an operator (disabled, invited again, rights changed).
    func endAll(operatorID: UUID, on connection: PostgresConnection) async throws {
        try await connection.query("UPDATE operator_sessions SET ended_at = now() WHERE operator_id = \(operatorID) AND ended_at IS NULL", logger: logger)
    }

    /// Deletes sessions ended or idle for more than a day past any timeout.
    func sweep(olderThan cutoff: Date, on connection: PostgresConnection) async throws -> Int {
        try await connection.query("""
            DELETE FROM operator_sessions WHERE COALESCE(ended_at, last_seen_at) < \(cutoff) RETURNING operator_id
            """, logger: logger).values(UUID.self).count
    }
}
