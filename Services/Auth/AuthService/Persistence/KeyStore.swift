import ColonyModels
import ColonyPlatform
import Foundation
import JWTKit
import Logging
import PostgresNIO

/// A signing key as stored.
struct SigningKeyRecord: Sendable {
    var kid: String
    var privateKeyPEM: String
    var retiredAt: Date?
}

/// An app's API key: `anon` ships in the app, `service_role` stays on servers.
public struct APIKeyRecord: Sendable, Equatable {
    public enum Role: String, Sendable { case anon, serviceRole = "service_role" }
    public var key: String
    public var app: App
    public var role: Role
}

/// A signing key as operators see it (never its private part).
public struct SigningKeyState: Sendable, Equatable {
    public var kid: String
    public var createdAt: Date
    public var retiredAt: Date?
}

/// The claims of an API key, shaped like Supabase's anon and service-role keys.
struct APIKeyClaims: JWTPayload {
    var iss: IssuerClaim
    var role: String
    var ref: String
    var iat: IssuedAtClaim
    var exp: ExpirationClaim
    func verify(using algorithm: some JWTAlgorithm) async throws {}
}

/// `signing_keys` and `api_keys`.
struct KeyStore {
    let logger: Logger

    /// The current key and those retired within `retention`, newest first.
    func signingKeys(retention: TimeInterval, on connection: PostgresConnection) async throws -> [SigningKeyRecord] {
        var keys: [SigningKeyRecord] = []
        let cutoff = Date().addingTimeInterval(-retention)
        let rows = try await connection.query("""
            SELECT kid, private_key_pem, retired_at FROM signing_keys
            WHERE retired_at IS NULL OR retired_at > \(cutoff) ORDER BY created_at DESC
            """, logger: logger)
        for try await row in rows {
            let (kid, pem, retired) = try row.read { c in try (c.next(String.self), c.next(String.self), c.next(Date?.self)) }
            keys.append(SigningKeyRecord(kid: kid, privateKeyPEM: pem, retiredAt: retired))
        }
        return keys
    }

    /// Creates the first signing key; a no-op when one is current (replicas may race here).
    func createKeyIfNone(on connection: PostgresConnection) async throws {
        let key = ES256PrivateKey()
        try await connection.query("""
            INSERT INTO signing_keys (kid, private_key_pem)
            SELECT \(Self.newKeyID()), \(key.pemRepresentation) WHERE NOT EXISTS (SELECT 1 FROM signing_keys WHERE retired_at IS NULL)
            ON CONFLICT DO NOTHING
            """, logger: logger)
    }

    /// Retires the current key and makes a new one current; tokens signed by the old key keep
    /// verifying while it is published.
    func rotate(on connection: PostgresConnection) async throws -> String {
        let kid = Self.newKeyID()
        try await connection.query("UPDATE signing_keys SET retired_at = now() WHERE retired_at IS NULL", logger: logger)
        try await connection.query("INSERT INTO signing_keys (kid, private_key_pem) VALUES (\(kid), \(ES256PrivateKey().pemRepresentation))", logger: logger)
        return kid
    }

    func apiKeys(on connection: PostgresConnection) async throws -> [APIKeyRecord] {
        var keys: [APIKeyRecord] = []
        let rows = try await connection.query("SELECT key, app, role FROM api_keys WHERE revoked_at IS NULL ORDER BY app, role", logger: logger)
        for try await row in rows {
            let (key, app, role) = try row.read { c in try (c.next(String.self), c.next(String.self), c.next(String.self)) }
            guard let app = App(rawValue: app), let role = APIKeyRecord.Role(rawValue: role) else { continue }
            keys.append(APIKeyRecord(key: key, app: app, role: role))
        }
        return keys
    }

    /// Issues an anon and a service-role key for every app that lacks one.
    func createAPIKeysIfMissing(signer: JWTKeyCollection, kid: String, issuer: String, on connection: PostgresConnection) async throws {
        let existing = Set(try await apiKeys(on: connection).map { "\($0.app.rawValue)/\($0.role.rawValue)" })
        for app in App.allCases {
            for role in [APIKeyRecord.Role.anon, .serviceRole] where !existing.contains("\(app.rawValue)/\(role.rawValue)") {
                let now = Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down))  // integer iat/exp
                let claims = APIKeyClaims(iss: IssuerClaim(value: issuer), role: role.rawValue, ref: app.rawValue, iat: IssuedAtClaim(value: now), exp: ExpirationClaim(value: now.addingTimeInterval(10 * 365 * 86_400)))
                let key = try await signer.sign(claims, kid: JWKIdentifier(string: kid))
                try await connection.query("""
                    INSERT INTO api_keys (key, app, role) VALUES (\(key), \(app.rawValue), \(role.rawValue)) ON CONFLICT DO NOTHING
                    """, logger: logger)
            }
        }
    }

    /// Every signing key kept, newest first, with when it was made and retired (for operators).
    func signingKeyStates(on connection: PostgresConnection) async throws -> [SigningKeyState] {
        var states: [SigningKeyState] = []
        for try await row in try await connection.query("SELECT kid, created_at, retired_at FROM signing_keys ORDER BY created_at DESC", logger: logger) {
            let (kid, created, retired) = try row.read { c in try (c.next(String.self), c.next(Date.self), c.next(Date?.self)) }
            states.append(SigningKeyState(kid: kid, createdAt: created, retiredAt: retired))
        }
        return states
    }

    /// Deletes a retired signing key (one that leaked): it leaves the JWKS, and tokens it signed
    /// stop verifying. The current key is never revoked this way: rotate first. Returns whether
    /// a key was deleted.
    func revokeSigningKey(kid: String, on connection: PostgresConnection) async throws -> Bool {
        try await connection.query("DELETE FROM signing_keys WHERE kid = \(kid) AND retired_at IS NOT NULL RETURNING kid", logger: logger)
            .collect().count == 1
    }

    /// Revokes an API key (the apps that ship it stop working until they ship its successor).
    func revokeAPIKey(_ key: String, on connection: PostgresConnection) async throws -> Bool {
        try await connection.query("UPDATE api_keys SET revoked_at = now() WHERE key = \(key) AND revoked_at IS NULL RETURNING key", logger: logger)
            .collect().count == 1
    }

    /// Revokes an app's active key of a role, so that `createAPIKeysIfMissing` issues a new one.
    func revokeAPIKey(app: App, role: APIKeyRecord.Role, on connection: PostgresConnection) async throws {
        try await connection.query("UPDATE api_keys SET revoked_at = now() WHERE app = \(app.rawValue) AND role = \(role.rawValue) AND revoked_at IS NULL", logger: logger)
    }

    static func newKeyID() -> String {
        "colony-" + UUID().uuidString.lowercased().prefix(8)
    }
}
