import ColonyModels
import Foundation
import Logging
import PostgresNIO

public struct SessionRecord: Sendable, Equatable {
    public var id: UUID
    public var userId: UUID
    public var app: App
    public var aal: String
    /// `[{"method": "password", "timestamp": 1700000000}]`, as Supabase's `amr` claim.
    public var amr: [JSONValue]
    public var notAfter: Date?
    public var refreshedAt: Date?
    public var createdAt: Date
}

/// A stored refresh token, by hash.
struct RefreshTokenRecord: Sendable {
    var id: Int64
    var sessionId: UUID
    var tokenHash: [UInt8]
    var parentHash: [UInt8]?
    var salt: [UInt8]?
    var revokedAt: Date?
}

/// Sessions and their refresh-token chains.
struct SessionStore {
    let logger: Logger

    func create(_ session: SessionRecord, userAgent: String?, ip: String?, on connection: PostgresConnection) async throws {
        try await connection.query("""
            INSERT INTO sessions (id, user_id, app, aal, amr, not_after, user_agent, ip, created_at)
            VALUES (\(session.id), \(session.userId), \(session.app.rawValue), \(session.aal), \(try json(session.amr))::jsonb,
                    \(session.notAfter), \(userAgent), \(ip), \(session.createdAt))
            """, logger: logger)
    }

    func find(id: UUID, on connection: PostgresConnection, forUpdate: Bool = false) async throws -> SessionRecord? {
        let rows = try await connection.query(PostgresQuery(unsafeSQL: """
            SELECT id, user_id, app, aal, amr::text, not_after, refreshed_at, created_at FROM sessions WHERE id = $1\(forUpdate ? " FOR UPDATE" : "")
            """, binds: { var b = PostgresBindings(); b.append(id); return b }()), logger: logger)
        for try await (id, user, app, aal, amr, notAfter, refreshed, created) in rows.decode((UUID, UUID, String, String, String, Date?, Date?, Date).self) {
            guard let app = App(rawValue: app) else { return nil }
            return SessionRecord(id: id, userId: user, app: app, aal: aal, amr: try decodeJSON(amr), notAfter: notAfter, refreshedAt: refreshed, createdAt: created)
        }
        return nil
    }

    func exists(id: UUID, userID: UUID, on connection: PostgresConnection) async throws -> Bool {
        try await connection.query("SELECT 1 FROM sessions WHERE id = \(id) AND user_id = \(userID)", logger: logger).collect().isEmpty == false
    }

    func markRefreshed(id: UUID, on connection: PostgresConnection) async throws {
        try await connection.query("UPDATE sessions SET refreshed_at = now(), updated_at = now() WHERE id = \(id)", logger: logger)
    }

    func delete(id: UUID, on connection: PostgresConnection) async throws {
        try await connection.query("DELETE FROM sessions WHERE id = \(id)", logger: logger)
    }

    /// Logout scopes: `global` ends every session of the user, `others` all but `keeping`.
    func deleteAll(userID: UUID, except keeping: UUID? = nil, on connection: PostgresConnection) async throws {
        if let keeping {
            try await connection.query("DELETE FROM sessions WHERE user_id = \(userID) AND id <> \(keeping)", logger: logger)
        } else {
            try await connection.query("DELETE FROM sessions WHERE user_id = \(userID)", logger: logger)
        }
    }

    // MARK: refresh tokens

    func insertToken(sessionID: UUID, hash: [UInt8], parentHash: [UInt8]?, salt: [UInt8]?, on connection: PostgresConnection) async throws {
        try await connection.query("""
            INSERT INTO refresh_tokens (session_id, token_hash, parent_hash, salt)
            VALUES (\(sessionID), \(ByteBuffer(bytes: hash)), \(parentHash.map { ByteBuffer(bytes: $0) }), \(salt.map { ByteBuffer(bytes: $0) }))
            """, logger: logger)
    }

    /// The token with this hash, locked for the rotation.
    func findToken(hash: [UInt8], on connection: PostgresConnection) async throws -> RefreshTokenRecord? {
        try await tokens(connection.query("""
            SELECT id, session_id, token_hash, parent_hash, salt, revoked_at FROM refresh_tokens WHERE token_hash = \(ByteBuffer(bytes: hash)) FOR UPDATE
            """, logger: logger)).first
    }

    /// The session's newest token not yet revoked.
    func activeToken(sessionID: UUID, on connection: PostgresConnection) async throws -> RefreshTokenRecord? {
        try await tokens(connection.query("""
            SELECT id, session_id, token_hash, parent_hash, salt, revoked_at FROM refresh_tokens
            WHERE session_id = \(sessionID) AND revoked_at IS NULL ORDER BY id DESC LIMIT 1
            """, logger: logger)).first
    }

    func revokeToken(id: Int64, on connection: PostgresConnection) async throws {
        try await connection.query("UPDATE refresh_tokens SET revoked_at = now() WHERE id = \(id) AND revoked_at IS NULL", logger: logger)
    }

    private func tokens(_ rows: PostgresRowSequence) async throws -> [RefreshTokenRecord] {
        var result: [RefreshTokenRecord] = []
        for try await (id, session, hash, parent, salt, revoked) in rows.decode((Int64, UUID, ByteBuffer, ByteBuffer?, ByteBuffer?, Date?).self) {
            result.append(RefreshTokenRecord(id: id, sessionId: session, tokenHash: Array(buffer: hash), parentHash: parent.map { Array(buffer: $0) }, salt: salt.map { Array(buffer: $0) }, revokedAt: revoked))
        }
        return result
    }
}

func json(_ array: [JSONValue]) throws -> String {
    String(decoding: try JSONEncoder().encode(array), as: UTF8.self)
}
