import ColonyModels
import ColonyPlatform
import Foundation
import Logging
import PostgresNIO

/// An MFA factor as `GET /user` lists it (the secret stays in `FactorStore`).
public struct FactorRecord: Sendable, Equatable {
    public enum Kind: String, Sendable { case totp, phone }

    public var id: UUID
    public var factorType: String
    public var status: String
    public var friendlyName: String
    /// Digits of the number, phone factors only.
    public var phone: String?
    public var lastChallengedAt: Date?
    public var createdAt: Date
    public var updatedAt: Date

    public var isVerified: Bool { status == "verified" }
    public var kind: Kind? { Kind(rawValue: factorType) }
}

/// A factor with what verification needs.
struct FactorSecrets: Sendable {
    var factor: FactorRecord
    var userID: UUID
    var secret: String?
    /// The last TOTP time step accepted: a code of it or an earlier step is a replay.
    var lastTOTPStep: Int64?
}

struct ChallengeRecord: Sendable {
    var id: UUID
    var factorID: UUID
    var ip: String
    var codeHash: [UInt8]?
    var expiresAt: Date
    var verifiedAt: Date?
}

/// Plain SQL over `mfa_factors`, `mfa_challenges`, and the MFA columns of `sessions`.
struct FactorStore {
    let logger: Logger

    /// The `factors` column of `UserStore.columns`: a user's factors as a JSON array.
    static let column = """
        (SELECT coalesce(json_agg(json_build_object(
            'id', f.id, 'factor_type', f.factor_type, 'status', f.status, 'friendly_name', f.friendly_name, 'phone', f.phone,
            'last_challenged_at', to_char(f.last_challenged_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
            'created_at', to_char(f.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
            'updated_at', to_char(f.updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')) ORDER BY f.created_at, f.id), '[]')::text
         FROM mfa_factors f WHERE f.user_id = users.id) AS factors
        """

    static func factors(fromJSON text: String) throws -> [FactorRecord] {
        struct Row: Decodable {
            var id: UUID, factorType: String, status: String, friendlyName: String, phone: String?
            var lastChallengedAt: Date?, createdAt: Date, updatedAt: Date
        }
        return try ColonyJSON.decoder().decode([Row].self, from: Data(text.utf8)).map {
            FactorRecord(id: $0.id, factorType: $0.factorType, status: $0.status, friendlyName: $0.friendlyName, phone: $0.phone,
                         lastChallengedAt: $0.lastChallengedAt, createdAt: $0.createdAt, updatedAt: $0.updatedAt)
        }
    }

    // MARK: factors

    func insert(_ factor: FactorRecord, userID: UUID, app: App, secret: String?, on connection: PostgresConnection) async throws {
        do {
            try await connection.query("""
                INSERT INTO mfa_factors (id, user_id, app, factor_type, status, friendly_name, secret, phone, created_at, updated_at)
                VALUES (\(factor.id), \(userID), \(app.rawValue), \(factor.factorType), \(factor.status), \(factor.friendlyName), \(secret), \(factor.phone), \(factor.createdAt), \(factor.updatedAt))
                """, logger: logger)
        } catch let error as PSQLError where error.serverInfo?[.sqlState] == "23505" {
            // The user's row is locked while enrolling, so only a name taken meanwhile by the
            // same user could get here; answered as the check before would have.
            throw FactorErrors.nameConflict(factor.friendlyName)
        }
    }

    /// Unverified factors nobody challenged lately, older than `lifetime` (GoTrue's
    /// `DeleteExpiredFactors`): an abandoned enrollment does not hold a slot or a name.
    func deleteExpiredUnverified(userID: UUID, lifetimeSeconds: Int, on connection: PostgresConnection) async throws {
        try await connection.query("""
            DELETE FROM mfa_factors WHERE user_id = \(userID) AND status = 'unverified'
              AND created_at < now() - make_interval(secs => \(lifetimeSeconds))
              AND (last_challenged_at IS NULL OR last_challenged_at < now() - make_interval(secs => \(lifetimeSeconds)))
            """, logger: logger)
    }

    func list(userID: UUID, on connection: PostgresConnection) async throws -> [FactorRecord] {
        let rows = try await connection.query("""
            SELECT id, factor_type, status, friendly_name, phone, last_challenged_at, created_at, updated_at
            FROM mfa_factors WHERE user_id = \(userID) ORDER BY created_at, id
            """, logger: logger)
        return try await rows.read { c in
            FactorRecord(id: try c.next(UUID.self), factorType: try c.next(String.self), status: try c.next(String.self), friendlyName: try c.next(String.self),
                         phone: try c.next(String?.self), lastChallengedAt: try c.next(Date?.self), createdAt: try c.next(Date.self), updatedAt: try c.next(Date.self))
        }
    }

    /// The user's factor `id`, locked: challenges and verifications of one factor take turns,
    /// so a TOTP code is accepted once.
    func find(id: UUID, userID: UUID, on connection: PostgresConnection) async throws -> FactorSecrets? {
        let rows = try await connection.query("""
            SELECT id, factor_type, status, friendly_name, phone, last_challenged_at, created_at, updated_at, user_id, secret, last_totp_step
            FROM mfa_factors WHERE id = \(id) AND user_id = \(userID) FOR UPDATE
            """, logger: logger)
        for try await row in rows {
            let (id, type, status, name, phone, challenged, created, updated, user, secret, step) = try row.read { c in
                try (c.next(UUID.self), c.next(String.self), c.next(String.self), c.next(String.self), c.next(String?.self), c.next(Date?.self),
                     c.next(Date.self), c.next(Date.self), c.next(UUID.self), c.next(String?.self), c.next(Int64?.self))
            }
            let factor = FactorRecord(id: id, factorType: type, status: status, friendlyName: name, phone: phone, lastChallengedAt: challenged, createdAt: created, updatedAt: updated)
            return FactorSecrets(factor: factor, userID: user, secret: secret, lastTOTPStep: step)
        }
        return nil
    }

    func markVerified(id: UUID, totpStep: Int64?, on connection: PostgresConnection) async throws {
        try await connection.query("""
            UPDATE mfa_factors SET status = 'verified', last_totp_step = coalesce(\(totpStep), last_totp_step), updated_at = now() WHERE id = \(id)
            """, logger: logger)
    }

    /// The user's other unverified factors of a type, once one of that type is verified.
    func deleteUnverified(userID: UUID, type: String, on connection: PostgresConnection) async throws {
        try await connection.query("DELETE FROM mfa_factors WHERE user_id = \(userID) AND factor_type = \(type) AND status = 'unverified'", logger: logger)
    }

    /// An operator's correction: the name and a phone factor's number.
    func update(_ factor: FactorRecord, on connection: PostgresConnection) async throws {
        try await connection.query("""
            UPDATE mfa_factors SET friendly_name = \(factor.friendlyName), phone = \(factor.phone), updated_at = \(factor.updatedAt) WHERE id = \(factor.id)
            """, logger: logger)
    }

    func delete(id: UUID, on connection: PostgresConnection) async throws {
        try await connection.query("DELETE FROM mfa_factors WHERE id = \(id)", logger: logger)
    }

    func deletePhoneFactors(userID: UUID, phone: String, status: String, on connection: PostgresConnection) async throws {
        try await connection.query("DELETE FROM mfa_factors WHERE user_id = \(userID) AND factor_type = 'phone' AND phone = \(phone) AND status = \(status)", logger: logger)
    }

    // MARK: challenges

    func insertChallenge(_ challenge: ChallengeRecord, on connection: PostgresConnection) async throws {
        try await connection.query("""
            WITH touched AS (UPDATE mfa_factors SET last_challenged_at = now() WHERE id = \(challenge.factorID))
            INSERT INTO mfa_challenges (id, factor_id, ip, code_hash, expires_at)
            VALUES (\(challenge.id), \(challenge.factorID), \(challenge.ip), \(challenge.codeHash.map { ByteBuffer(bytes: $0) }), \(challenge.expiresAt))
            """, logger: logger)
        // Challenges are kept a day past their expiry (a late verify is told it expired), then dropped.
        try await connection.query("DELETE FROM mfa_challenges WHERE factor_id = \(challenge.factorID) AND expires_at < now() - interval '1 day'", logger: logger)
    }

    func findChallenge(id: UUID, factorID: UUID, on connection: PostgresConnection) async throws -> ChallengeRecord? {
        let rows = try await connection.query("""
            SELECT id, factor_id, ip, code_hash, expires_at, verified_at FROM mfa_challenges WHERE id = \(id) AND factor_id = \(factorID) FOR UPDATE
            """, logger: logger)
        for try await row in rows {
            let (id, factor, ip, hash, expires, verified) = try row.read { c in
                try (c.next(UUID.self), c.next(UUID.self), c.next(String.self), c.next(ByteBuffer?.self), c.next(Date.self), c.next(Date?.self))
            }
            return ChallengeRecord(id: id, factorID: factor, ip: ip, codeHash: hash.map { Array(buffer: $0) }, expiresAt: expires, verifiedAt: verified)
        }
        return nil
    }

    func markChallengeVerified(id: UUID, on connection: PostgresConnection) async throws {
        try await connection.query("UPDATE mfa_challenges SET verified_at = now() WHERE id = \(id)", logger: logger)
    }

    // MARK: sessions

    /// The session's `aal` (nil: no such session of this user).
    func sessionAAL(id: UUID, userID: UUID, on connection: PostgresConnection) async throws -> String? {
        let rows = try await connection.query("SELECT aal FROM sessions WHERE id = \(id) AND user_id = \(userID) FOR UPDATE", logger: logger)
        return try await rows.firstValue(String.self)
    }

    /// Raises the session to `aal2` with `method` first in its `amr` (GoTrue keeps one entry per
    /// method, most recent first), and gives it a new refresh token: the tokens issued at `aal1`
    /// are deleted, so none of them can obtain an `aal2` session (GoTrue moves its counter on).
    func upgrade(sessionID: UUID, factorID: UUID, method: String, at time: Date, newTokenHash: [UInt8], on connection: PostgresConnection) async throws -> SessionRecord? {
        let rows = try await connection.query("SELECT amr::text FROM sessions WHERE id = \(sessionID) FOR UPDATE", logger: logger)
        var amr: [JSONValue]?
        for text in try await rows.values(String.self) { amr = try decodeJSON(text) }
        guard let existing = amr else { return nil }
        let entry = JSONValue.object(["method": .string(method), "timestamp": .number(time.timeIntervalSince1970.rounded(.down))])
        let updated = [entry] + existing.filter { Self.method(of: $0) != method }
        try await connection.query("""
            UPDATE sessions SET aal = 'aal2', amr = \(try json(updated))::jsonb, factor_id = \(factorID), updated_at = now() WHERE id = \(sessionID)
            """, logger: logger)
        try await connection.query("DELETE FROM refresh_tokens WHERE session_id = \(sessionID)", logger: logger)
        try await connection.query("INSERT INTO refresh_tokens (session_id, token_hash) VALUES (\(sessionID), \(ByteBuffer(bytes: newTokenHash)))", logger: logger)
        let found = try await connection.query("""
            SELECT id, user_id, app, aal, amr::text, not_after, refreshed_at, created_at FROM sessions WHERE id = \(sessionID)
            """, logger: logger)
        for try await row in found {
            let (id, user, app, aal, amr, notAfter, refreshed, created) = try row.read { c in
                try (c.next(UUID.self), c.next(UUID.self), c.next(String.self), c.next(String.self), c.next(String.self), c.next(Date?.self), c.next(Date?.self), c.next(Date.self))
            }
            guard let app = App(rawValue: app) else { return nil }
            return SessionRecord(id: id, userId: user, app: app, aal: aal, amr: try decodeJSON(amr), notAfter: notAfter, refreshedAt: refreshed, createdAt: created)
        }
        return nil
    }

    /// Ends the user's sessions below `aal2` (GoTrue's `InvalidateSessionsWithAALLessThan`):
    /// once a factor is verified, a session that never passed one is not kept alive.
    func endSessionsBelowAAL2(userID: UUID, on connection: PostgresConnection) async throws {
        try await connection.query("DELETE FROM sessions WHERE user_id = \(userID) AND aal < 'aal2'", logger: logger)
    }

    /// The sessions that reached `aal2` with this factor go back to `aal1`, its method out of
    /// their `amr` (GoTrue's `DowngradeSessionsToAAL1`); before the factor is deleted.
    func downgradeSessions(factorID: UUID, method: String, on connection: PostgresConnection) async throws {
        let rows = try await connection.query("SELECT id, amr::text FROM sessions WHERE factor_id = \(factorID) FOR UPDATE", logger: logger)
        var sessions: [(UUID, [JSONValue])] = []
        for try await row in rows {
            let (id, amr) = try row.read { c in try (c.next(UUID.self), c.next(String.self)) }
            sessions.append((id, try decodeJSON(amr)))
        }
        for (id, amr) in sessions {
            let kept = amr.filter { Self.method(of: $0) != method }
            try await connection.query("""
                UPDATE sessions SET aal = 'aal1', amr = \(try json(kept))::jsonb, factor_id = NULL, updated_at = now() WHERE id = \(id)
                """, logger: logger)
        }
    }

    static func method(of entry: JSONValue) -> String? {
        guard case .object(let fields) = entry, case .string(let method)? = fields["method"] else { return nil }
        return method
    }
}
