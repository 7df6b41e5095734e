import ColonyModels
import ColonyPlatform
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

    /// The session and its first refresh token, in one statement.
    func create(_ session: SessionRecord, firstTokenHash: [UInt8], userAgent: String?, ip: String?, on connection: PostgresConnection) async throws {
        try await connection.query("""
            WITH created AS (
                INSERT INTO sessions (id, user_id, app, aal, amr, not_after, user_agent, ip, created_at)
                VALUES (\(session.id), \(session.userId), \(session.app.rawValue), \(session.aal), \(try json(session.amr))::jsonb,
                        \(session.notAfter), \(userAgent), \(ip), \(session.createdAt))
                RETURNING id
            )
            INSERT INTO refresh_tokens (session_id, token_hash) SELECT id, \(ByteBuffer(bytes: firstTokenHash)) FROM created
            """, logger: logger)
    }

    func find(id: UUID, on connection: PostgresConnection, forUpdate: Bool = false) async throws -> SessionRecord? {
        let rows = try await connection.query(PostgresQuery(unsafeSQL: """
            SELECT id, user_id, app, aal, amr::text, not_after, refreshed_at, created_at FROM sessions WHERE id = $1\(forUpdate ? " FOR UPDATE" : "")
            """, binds: { var b = PostgresBindings(); b.append(id); return b }()), logger: logger)
        for try await row in rows {
            let (id, user, app, aal, amr, notAfter, refreshed, created) = try row.read { c in
                try (c.next(UUID.self), c.next(UUID.self), c.next(String.self), c.next(String.self), c.next(String.self), c.next(Date?.self), c.next(Date?.self), c.next(Date.self))
            }
            guard let app = App(rawValue: app) else { return nil }
            return SessionRecord(id: id, userId: user, app: app, aal: aal, amr: try decodeJSON(amr), notAfter: notAfter, refreshedAt: refreshed, createdAt: created)
        }
        return nil
    }

    func exists(id: UUID, userID: UUID, on connection: PostgresConnection) async throws -> Bool {
        for try await _ in try await connection.execute(SessionExists(id: id, userID: userID), logger: logger) { return true }
        return false
    }

    // Prepared statements: the hot paths of refresh and `GET /user`.

    struct SessionExists: PostgresPreparedStatement {
        static let sql = "SELECT 1 FROM sessions WHERE id = $1 AND user_id = $2"
        var id: UUID
        var userID: UUID
        func makeBindings() throws -> PostgresBindings { var b = PostgresBindings(); b.append(id); b.append(userID); return b }
        func decodeRow(_ row: PostgresRow) throws -> Int { 1 }
    }

    struct TokenAndSession: PostgresPreparedStatement {
        static let sql = """
            SELECT t.id, t.session_id, t.token_hash, t.parent_hash, t.salt, t.revoked_at,
                   s.user_id, s.app, s.aal, s.amr::text, s.not_after, s.refreshed_at, s.created_at
            FROM refresh_tokens t JOIN sessions s ON s.id = t.session_id
            WHERE t.token_hash = $1 FOR UPDATE OF s, t
            """
        var hash: [UInt8]
        func makeBindings() throws -> PostgresBindings { var b = PostgresBindings(); b.append(ByteBuffer(bytes: hash)); return b }
        func decodeRow(_ row: PostgresRow) throws -> (RefreshTokenRecord, SessionRecord)? {
            var c = RowCells(row)
            let token = RefreshTokenRecord(id: try c.next(Int64.self), sessionId: try c.next(UUID.self), tokenHash: Array(buffer: try c.next(ByteBuffer.self)),
                                           parentHash: try c.next(ByteBuffer?.self).map { Array(buffer: $0) }, salt: try c.next(ByteBuffer?.self).map { Array(buffer: $0) },
                                           revokedAt: try c.next(Date?.self))
            let userID: UUID = try c.next()
            guard let app = App(rawValue: try c.next(String.self)) else { return nil }
            let session = SessionRecord(id: token.sessionId, userId: userID, app: app, aal: try c.next(String.self),
                                        amr: try decodeJSON(try c.next(String.self)), notAfter: try c.next(Date?.self),
                                        refreshedAt: try c.next(Date?.self), createdAt: try c.next(Date.self))
            return (token, session)
        }
    }

    /// The common refresh in one statement, outside a transaction: rotates the presented token
    /// only if it is active, its session is live and its user not banned, and returns the
    /// session and user. No row: something needs the careful path (a replay, an expired
    /// session, an unknown token), which `Accounts.refresh` takes.
    struct RotateIfActive: PostgresPreparedStatement {
        static let sql = """
            WITH candidate AS (
                SELECT t.id, t.session_id FROM refresh_tokens t
                JOIN sessions s ON s.id = t.session_id
                JOIN users u ON u.id = s.user_id
                WHERE t.token_hash = $1 AND t.revoked_at IS NULL AND s.app = $2
                  AND (s.not_after IS NULL OR s.not_after > now())
                  AND ($3::int IS NULL OR coalesce(s.refreshed_at, s.created_at) > now() - make_interval(secs => $3::int))
                  AND (u.banned_until IS NULL OR u.banned_until <= now())
                FOR UPDATE OF t
            ),
            revoked AS (
                UPDATE refresh_tokens SET revoked_at = now() WHERE id IN (SELECT id FROM candidate) AND revoked_at IS NULL RETURNING session_id
            ),
            touched AS (
                UPDATE sessions SET refreshed_at = now(), updated_at = now() WHERE id IN (SELECT session_id FROM revoked)
                RETURNING id, user_id, app, aal, amr, not_after, refreshed_at, created_at
            ),
            inserted AS (
                INSERT INTO refresh_tokens (session_id, token_hash, parent_hash, salt) SELECT id, $4, $1, $5 FROM touched
            ),
            -- GoTrue's `token_refreshed` entry (payload as `AuditActor.payload`), with the rotation.
            audited AS (
                INSERT INTO audit_log_entries (id, app, payload, ip_address)
                SELECT $6, t.app, jsonb_build_object('actor_id', u.id, 'actor_username', coalesce(nullif(u.phone, ''), u.email, ''),
                    'actor_via_sso', false, 'action', 'token_refreshed', 'log_type', 'token')
                    || CASE WHEN u.raw_user_meta_data ? 'full_name' THEN jsonb_build_object('actor_name', u.raw_user_meta_data->'full_name') ELSE '{}'::jsonb END,
                    $7
                FROM touched t JOIN users u ON u.id = t.user_id
            )
            SELECT touched.id, touched.user_id, touched.app, touched.aal, touched.amr::text, touched.not_after, touched.refreshed_at, touched.created_at, u.*
            FROM touched, LATERAL (SELECT \(UserStore.columns) FROM users WHERE users.id = touched.user_id) u
            """
        var presentedHash: [UInt8]
        var app: String
        var inactivityTimeoutSeconds: Int?
        var childHash: [UInt8]
        var salt: [UInt8]
        var auditID: UUID
        var ip: String
        func makeBindings() throws -> PostgresBindings {
            var b = PostgresBindings()
            b.append(ByteBuffer(bytes: presentedHash))
            b.append(app)
            b.append(inactivityTimeoutSeconds)
            b.append(ByteBuffer(bytes: childHash))
            b.append(ByteBuffer(bytes: salt))
            b.append(auditID)
            b.append(ip)
            return b
        }
        func decodeRow(_ row: PostgresRow) throws -> (SessionRecord, UserRecord)? {
            var c = RowCells(row)
            let (id, userID, appText, aal, amr, notAfter, refreshed, created) =
                try (c.next(UUID.self), c.next(UUID.self), c.next(String.self), c.next(String.self), c.next(String.self), c.next(Date?.self), c.next(Date?.self), c.next(Date.self))
            // The account's columns follow the session's.
            guard let app = App(rawValue: appText), let user = try UserStore.user(from: &c) else { return nil }
            let session = SessionRecord(id: id, userId: userID, app: app, aal: aal, amr: try decodeJSON(amr), notAfter: notAfter, refreshedAt: refreshed, createdAt: created)
            return (session, user)
        }
    }

    func rotateIfActive(presentedHash: [UInt8], app: App, inactivityTimeoutSeconds: Int?, childHash: [UInt8], salt: [UInt8], ip: String, on connection: PostgresConnection) async throws -> (SessionRecord, UserRecord)? {
        let statement = RotateIfActive(presentedHash: presentedHash, app: app.rawValue, inactivityTimeoutSeconds: inactivityTimeoutSeconds, childHash: childHash, salt: salt, auditID: UUID.timeOrdered(), ip: ip)
        for try await found in try await connection.execute(statement, logger: logger) { return found }
        return nil
    }

    struct Rotate: PostgresPreparedStatement {
        static let sql = """
            WITH revoked AS (UPDATE refresh_tokens SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL),
                 touched AS (UPDATE sessions SET refreshed_at = now(), updated_at = now() WHERE id = $2)
            INSERT INTO refresh_tokens (session_id, token_hash, parent_hash, salt) VALUES ($2, $3, $4, $5)
            """
        var tokenID: Int64
        var sessionID: UUID
        var childHash: [UInt8]
        var parentHash: [UInt8]
        var salt: [UInt8]
        func makeBindings() throws -> PostgresBindings {
            var b = PostgresBindings()
            b.append(tokenID)
            b.append(sessionID)
            b.append(ByteBuffer(bytes: childHash))
            b.append(ByteBuffer(bytes: parentHash))
            b.append(ByteBuffer(bytes: salt))
            return b
        }
        func decodeRow(_ row: PostgresRow) throws -> Int { 0 }
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

    /// `GET /admin/users/{id}/sessions`: the user's sessions, newest first. Last used: the later
    /// of its last refresh and its newest refresh token (a factor's verification issues one
    /// without a refresh), else its start.
    func list(userID: UUID, on connection: PostgresConnection) async throws -> [SessionSummary] {
        try await connection.query("""
            SELECT s.id, s.user_id, s.created_at, s.updated_at, s.refreshed_at,
                   greatest(s.created_at, s.refreshed_at, (SELECT t.created_at FROM refresh_tokens t WHERE t.session_id = s.id ORDER BY t.id DESC LIMIT 1)),
                   s.user_agent, s.ip, s.aal, s.factor_id, s.not_after
            FROM sessions s WHERE s.user_id = \(userID) ORDER BY s.created_at DESC, s.id DESC
            """, logger: logger).read { c in
            SessionSummary(id: try c.next(), userId: try c.next(), createdAt: try c.next(), updatedAt: try c.next(), refreshedAt: try c.next(),
                           lastUsedAt: try c.next(), userAgent: try c.next(), ip: try c.next(), aal: try c.next(), factorId: try c.next(), notAfter: try c.next())
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

    /// The token with this hash and its session, both locked: concurrent refreshes of one
    /// session take turns.
    func findTokenAndSession(hash: [UInt8], on connection: PostgresConnection) async throws -> (RefreshTokenRecord, SessionRecord)? {
        for try await found in try await connection.execute(TokenAndSession(hash: hash), logger: logger) { return found }
        return nil
    }

    /// One round trip for a rotation: revoke the presented token, add its child, note the refresh.
    func rotate(tokenID: Int64, sessionID: UUID, childHash: [UInt8], parentHash: [UInt8], salt: [UInt8], on connection: PostgresConnection) async throws {
        for try await _ in try await connection.execute(Rotate(tokenID: tokenID, sessionID: sessionID, childHash: childHash, parentHash: parentHash, salt: salt), logger: logger) {}
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
        try await rows.read { c in
            RefreshTokenRecord(id: try c.next(Int64.self), sessionId: try c.next(UUID.self), tokenHash: Array(buffer: try c.next(ByteBuffer.self)),
                               parentHash: try c.next(ByteBuffer?.self).map { Array(buffer: $0) }, salt: try c.next(ByteBuffer?.self).map { Array(buffer: $0) },
                               revokedAt: try c.next(Date?.self))
        }
    }
}

func json(_ array: [JSONValue]) throws -> String {
    String(decoding: try ColonyJSON.encode(array), as: UTF8.self)
}
