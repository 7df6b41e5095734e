import ColonyModels
import Foundation
import Logging
import PostgresNIO

/// What a mailed or texted code is for.
public enum OneTimeTokenKind: String, Sendable, CaseIterable {
    case signup, magiclink, recovery
    case emailChange = "email_change"
    case sms
    case phoneChange = "phone_change"
}

struct OneTimeTokenRecord: Sendable {
    var id: UUID
    var app: App
    var userId: UUID
    var kind: OneTimeTokenKind
    var recipient: String
    var codeHash: [UInt8]
    var attempts: Int
    var redirectTo: String?
    var codeChallenge: String?
    var codeChallengeMethod: String?
    var expiresAt: Date
}

/// Codes and links (`one_time_tokens`) and PKCE auth codes (`flow_states`).
struct OneTimeTokenStore {
    let logger: Logger

    /// Replaces any earlier token of the kind for the user: only the newest code works.
    func issue(app: App, userID: UUID, kind: OneTimeTokenKind, recipient: String, codeHash: [UInt8], linkHash: [UInt8]?, redirectTo: String?, codeChallenge: String?, codeChallengeMethod: String?, lifetime: TimeInterval, on connection: PostgresConnection) async throws {
        try await connection.query("DELETE FROM one_time_tokens WHERE user_id = \(userID) AND kind = \(kind.rawValue)", logger: logger)
        try await connection.query("""
            INSERT INTO one_time_tokens (id, app, user_id, kind, recipient, code_hash, link_hash, redirect_to, code_challenge, code_challenge_method, expires_at)
            VALUES (\(UUID.timeOrdered()), \(app.rawValue), \(userID), \(kind.rawValue), \(recipient), \(ByteBuffer(bytes: codeHash)),
                    \(linkHash.map { ByteBuffer(bytes: $0) }), \(redirectTo), \(codeChallenge), \(codeChallengeMethod), \(Date().addingTimeInterval(lifetime)))
            """, logger: logger)
    }

    /// The live token of one of the kinds sent to the recipient, locked for the attempt.
    func findLive(app: App, recipient: String, kinds: [OneTimeTokenKind], on connection: PostgresConnection) async throws -> OneTimeTokenRecord? {
        try await records(connection.query("""
            SELECT id, user_id, kind, recipient, code_hash, attempts, redirect_to, code_challenge, code_challenge_method, expires_at, app
            FROM one_time_tokens
            WHERE app = \(app.rawValue) AND recipient = \(recipient) AND kind = ANY(\(kinds.map(\.rawValue))) AND expires_at > now()
            ORDER BY created_at DESC LIMIT 1 FOR UPDATE
            """, logger: logger)).first
    }

    /// The live token behind a link; with `app` nil, whichever app it belongs to (link hashes
    /// are unique across apps).
    func findByLink(app: App?, linkHash: [UInt8], on connection: PostgresConnection) async throws -> OneTimeTokenRecord? {
        try await records(connection.query("""
            SELECT id, user_id, kind, recipient, code_hash, attempts, redirect_to, code_challenge, code_challenge_method, expires_at, app
            FROM one_time_tokens WHERE (\(app?.rawValue)::text IS NULL OR app = \(app?.rawValue)) AND link_hash = \(ByteBuffer(bytes: linkHash)) AND expires_at > now() FOR UPDATE
            """, logger: logger)).first
    }

    /// Counts a wrong code; the token dies at the limit.
    func recordFailedAttempt(id: UUID, limit: Int, on connection: PostgresConnection) async throws {
        try await connection.query("UPDATE one_time_tokens SET attempts = attempts + 1 WHERE id = \(id)", logger: logger)
        try await connection.query("DELETE FROM one_time_tokens WHERE id = \(id) AND attempts >= \(limit)", logger: logger)
    }

    func consume(id: UUID, on connection: PostgresConnection) async throws {
        try await connection.query("DELETE FROM one_time_tokens WHERE id = \(id)", logger: logger)
    }

    func deleteExpired(on connection: PostgresConnection) async throws {
        try await connection.query("DELETE FROM one_time_tokens WHERE expires_at < now()", logger: logger)
        try await connection.query("DELETE FROM flow_states WHERE expires_at < now()", logger: logger)
    }

    private func records(_ rows: PostgresRowSequence) async throws -> [OneTimeTokenRecord] {
        var result: [OneTimeTokenRecord] = []
        for try await (id, user, kind, recipient, code, attempts, redirect, challenge, method, expires, app) in rows.decode((UUID, UUID, String, String, ByteBuffer, Int, String?, String?, String?, Date, String).self) {
            guard let kind = OneTimeTokenKind(rawValue: kind), let app = App(rawValue: app) else { continue }
            result.append(OneTimeTokenRecord(id: id, app: app, userId: user, kind: kind, recipient: recipient, codeHash: Array(buffer: code), attempts: attempts, redirectTo: redirect, codeChallenge: challenge, codeChallengeMethod: method, expiresAt: expires))
        }
        return result
    }

    // MARK: PKCE flow states

    func createFlowState(authCodeHash: [UInt8], app: App, userID: UUID, codeChallenge: String, method: String, authenticationMethod: String, on connection: PostgresConnection) async throws {
        try await connection.query("""
            INSERT INTO flow_states (auth_code_hash, app, user_id, code_challenge, code_challenge_method, authentication_method, expires_at)
            VALUES (\(ByteBuffer(bytes: authCodeHash)), \(app.rawValue), \(userID), \(codeChallenge), \(method), \(authenticationMethod), \(Date().addingTimeInterval(300)))
            """, logger: logger)
    }

    /// Takes (deletes and returns) the live flow state of an auth code: each code works once.
    func takeFlowState(authCodeHash: [UInt8], app: App, on connection: PostgresConnection) async throws -> (userID: UUID, challenge: String, method: String, authenticationMethod: String)? {
        let rows = try await connection.query("""
            DELETE FROM flow_states WHERE auth_code_hash = \(ByteBuffer(bytes: authCodeHash)) AND app = \(app.rawValue)
            RETURNING user_id, code_challenge, code_challenge_method, authentication_method, expires_at
            """, logger: logger)
        for try await (user, challenge, method, authentication, expires) in rows.decode((UUID, String, String, String, Date).self) where expires > Date() {
            return (user, challenge, method, authentication)
        }
        return nil
    }
}
