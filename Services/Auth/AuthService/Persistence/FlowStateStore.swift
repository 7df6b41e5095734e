import ColonyModels
import ColonyPlatform
import Foundation
import Logging
import PostgresNIO

/// An authorization in progress with a provider (`GET /authorize` → the provider → `/callback`).
struct OAuthStateRecord: Sendable, Equatable {
    var id: UUID
    var app: App
    var provider: String
    /// Where the app wants the user back: already checked against its allowed URLs.
    var redirectTo: String
    /// The app's PKCE challenge (nil: the implicit flow).
    var codeChallenge: String?
    var codeChallengeMethod: String?
    /// Sent to the provider; its id_token must carry it back.
    var nonce: String
    /// Auth's own PKCE verifier toward the provider.
    var providerCodeVerifier: String?
    /// Manual linking: the signed-in user who asked.
    var linkingUserID: UUID?
    var expiresAt: Date
}

/// `oauth_states`: each row is used once, before it expires.
struct FlowStateStore {
    let logger: Logger
    /// How long the user has to authorize at the provider.
    static let lifetimeSeconds: TimeInterval = 600

    func create(_ state: OAuthStateRecord, on connection: PostgresConnection) async throws {
        // Abandoned authorizations are swept as new ones start (a bounded batch at a time).
        try await connection.query("""
            DELETE FROM oauth_states WHERE id IN (SELECT id FROM oauth_states WHERE expires_at < now() - interval '1 hour' LIMIT 100)
            """, logger: logger)
        try await connection.query("""
            INSERT INTO oauth_states (id, app, provider, redirect_to, code_challenge, code_challenge_method, nonce, provider_code_verifier, linking_user_id, expires_at)
            VALUES (\(state.id), \(state.app.rawValue), \(state.provider), \(state.redirectTo), \(state.codeChallenge), \(state.codeChallengeMethod),
                    \(state.nonce), \(state.providerCodeVerifier), \(state.linkingUserID), \(state.expiresAt))
            """, logger: logger)
    }

    enum Taken: Sendable, Equatable {
        case live(OAuthStateRecord)
        /// Known but used before or expired: where to tell the app so.
        case spent(redirectTo: String, used: Bool)
        case unknown
    }

    /// Marks the state used and returns it, if it was neither used nor expired.
    func take(id: UUID, app: App, on connection: PostgresConnection) async throws -> Taken {
        let rows = try await connection.query("""
            UPDATE oauth_states SET used_at = now()
            WHERE id = \(id) AND app = \(app.rawValue) AND used_at IS NULL AND expires_at > now()
            RETURNING provider, redirect_to, code_challenge, code_challenge_method, nonce, provider_code_verifier, linking_user_id, expires_at
            """, logger: logger)
        for try await row in rows {
            let (provider, redirectTo, challenge, method, nonce, verifier, linking, expires) = try row.read { c in
                try (c.next(String.self), c.next(String.self), c.next(String?.self), c.next(String?.self), c.next(String.self), c.next(String?.self), c.next(UUID?.self), c.next(Date.self))
            }
            return .live(OAuthStateRecord(id: id, app: app, provider: provider, redirectTo: redirectTo, codeChallenge: challenge, codeChallengeMethod: method,
                                          nonce: nonce, providerCodeVerifier: verifier, linkingUserID: linking, expiresAt: expires))
        }
        let spent = try await connection.query("SELECT redirect_to, used_at IS NOT NULL FROM oauth_states WHERE id = \(id) AND app = \(app.rawValue)", logger: logger)
        for try await row in spent {
            let (redirectTo, used) = try row.read { c in try (c.next(String.self), c.next(Bool.self)) }
            return .spent(redirectTo: redirectTo, used: used)
        }
        return .unknown
    }
}
