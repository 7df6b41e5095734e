import ColonyModels
import ColonyPlatform
import Foundation
import Logging
import PostgresNIO

/// What a mailed or texted code is for.
public enum OneTimeTokenKind: String, Sendable, CaseIterable {
    case signup, magiclink, recovery
    /// An operator's invitation (`POST /invite`): confirms the address like a sign-up's code.
    case invite
    case emailChange = "email_change"
    /// A secure email change's code to the current address.
    case emailChangeCurrent = "email_change_current"
    case sms
    case phoneChange = "phone_change"
    /// `GET /reauthenticate`: the `nonce` of a sensitive change.
    case reauthentication

    /// The `kind` of the message that carries it (both email-change mails are `email_change`,
    /// as in GoTrue; the recipient tells them apart).
    var messageKind: String { self == .emailChangeCurrent ? OneTimeTokenKind.emailChange.rawValue : rawValue }
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
    /// Issued by the sign-up that set the account's password.
    var confirmsSignUp: Bool
}

/// A code (and, for mail, a link token) to send.
struct IssuedCode: Sendable {
    var code: String
    var linkToken: String?
}

/// Codes and links (`one_time_tokens`) and PKCE auth codes (`flow_states`).
struct OneTimeTokenStore {
    let logger: Logger
    static let columns = "id, user_id, kind, recipient, code_hash, attempts, redirect_to, code_challenge, code_challenge_method, expires_at, app, confirms_sign_up"

    /// A code of the kind for the user. Asked again while the live one (same recipient, tries
    /// left) has at least half its lifetime ahead, it is sent again, so a new request cannot kill
    /// the code the owner just received; it then follows the newest request's redirect and PKCE
    /// challenge. Otherwise a new code replaces every earlier one of the kind.
    func issue(app: App, userID: UUID, kind: OneTimeTokenKind, recipient: String, withLink: Bool, redirectTo: String?, pkce: PKCEChallenge?, confirmsSignUp: Bool, lifetime: TimeInterval, maxAttempts: Int, on connection: PostgresConnection) async throws -> IssuedCode {
        let reusable = try await connection.query("""
            SELECT id, seed FROM one_time_tokens
            WHERE user_id = \(userID) AND kind = \(kind.rawValue) AND recipient = \(recipient) AND seed IS NOT NULL
              AND attempts < \(maxAttempts) AND expires_at > now() + make_interval(secs => \(lifetime / 2))
            ORDER BY created_at DESC LIMIT 1 FOR UPDATE
            """, logger: logger)
        for try await row in reusable {
            let (id, seed) = try row.read { c in try (c.next(UUID.self), c.next(ByteBuffer.self)) }
            try await connection.query("""
                UPDATE one_time_tokens SET redirect_to = \(redirectTo), code_challenge = \(pkce?.challenge), code_challenge_method = \(pkce?.method.rawValue),
                    confirms_sign_up = confirms_sign_up AND \(confirmsSignUp)
                WHERE id = \(id)
                """, logger: logger)
            return Self.derived(seed: Array(buffer: seed), withLink: withLink)
        }
        let seed = Secrets.randomBytes(32)
        let issued = Self.derived(seed: seed, withLink: withLink)
        try await connection.query("DELETE FROM one_time_tokens WHERE user_id = \(userID) AND kind = \(kind.rawValue)", logger: logger)
        try await connection.query("""
            INSERT INTO one_time_tokens (id, app, user_id, kind, recipient, code_hash, link_hash, redirect_to, code_challenge, code_challenge_method, expires_at, confirms_sign_up, seed)
            VALUES (\(UUID.timeOrdered()), \(app.rawValue), \(userID), \(kind.rawValue), \(recipient), \(ByteBuffer(bytes: Secrets.codeHash(issued.code, recipient: recipient))),
                    \(issued.linkToken.map { ByteBuffer(bytes: Secrets.hash($0)) }), \(redirectTo), \(pkce?.challenge), \(pkce?.method.rawValue),
                    \(Date().addingTimeInterval(lifetime)), \(confirmsSignUp), \(ByteBuffer(bytes: seed)))
            """, logger: logger)
        return issued
    }

    static func derived(seed: [UInt8], withLink: Bool) -> IssuedCode {
        IssuedCode(code: Secrets.numericCode(seed: seed), linkToken: withLink ? Secrets.linkToken(seed: seed) : nil)
    }

    /// The live token of one of the kinds sent to the recipient, locked for the attempt.
    func findLive(app: App, recipient: String, kinds: [OneTimeTokenKind], on connection: PostgresConnection) async throws -> OneTimeTokenRecord? {
        try await records(connection.query("""
            SELECT \(unescaped: Self.columns) FROM one_time_tokens
            WHERE app = \(app.rawValue) AND recipient = \(recipient) AND kind = ANY(\(kinds.map(\.rawValue))) AND expires_at > now()
            ORDER BY created_at DESC LIMIT 1 FOR UPDATE
            """, logger: logger)).first
    }

    /// The user's live token of the kind (a reauthentication code), locked for the attempt.
    func findLive(userID: UUID, kind: OneTimeTokenKind, on connection: PostgresConnection) async throws -> OneTimeTokenRecord? {
        try await records(connection.query("""
            SELECT \(unescaped: Self.columns) FROM one_time_tokens WHERE user_id = \(userID) AND kind = \(kind.rawValue) AND expires_at > now()
            ORDER BY created_at DESC LIMIT 1 FOR UPDATE
            """, logger: logger)).first
    }

    /// The live token behind a link; with `app` nil, whichever app it belongs to (link hashes
    /// are unique across apps).
    func findByLink(app: App?, linkHash: [UInt8], on connection: PostgresConnection) async throws -> OneTimeTokenRecord? {
        try await records(connection.query("""
            SELECT \(unescaped: Self.columns) FROM one_time_tokens
            WHERE (\(app?.rawValue)::text IS NULL OR app = \(app?.rawValue)) AND link_hash = \(ByteBuffer(bytes: linkHash)) AND expires_at > now() FOR UPDATE
            """, logger: logger)).first
    }

    /// Drops the user's codes of these kinds (pending changes cancelled).
    func delete(userID: UUID, kinds: [OneTimeTokenKind], on connection: PostgresConnection) async throws {
        try await connection.query("DELETE FROM one_time_tokens WHERE user_id = \(userID) AND kind = ANY(\(kinds.map(\.rawValue)))", logger: logger)
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
        for try await row in rows {
            let (id, user, kind, recipient, code, attempts, redirect, challenge, method, expires, app, confirmsSignUp) = try row.read { c in
                try (c.next(UUID.self), c.next(UUID.self), c.next(String.self), c.next(String.self), c.next(ByteBuffer.self), c.next(Int.self),
                     c.next(String?.self), c.next(String?.self), c.next(String?.self), c.next(Date.self), c.next(String.self), c.next(Bool.self))
            }
            guard let kind = OneTimeTokenKind(rawValue: kind), let app = App(rawValue: app) else { continue }
            result.append(OneTimeTokenRecord(id: id, app: app, userId: user, kind: kind, recipient: recipient, codeHash: Array(buffer: code), attempts: attempts, redirectTo: redirect, codeChallenge: challenge, codeChallengeMethod: method, expiresAt: expires, confirmsSignUp: confirmsSignUp))
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
        for try await row in rows {
            let (user, challenge, method, authentication, expires) = try row.read { c in
                try (c.next(UUID.self), c.next(String.self), c.next(String.self), c.next(String.self), c.next(Date.self))
            }
            if expires > Date() { return (user, challenge, method, authentication) }
        }
        return nil
    }
}
