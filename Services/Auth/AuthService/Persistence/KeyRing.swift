import ColonyModels
import ColonyPlatform
import Crypto
import Foundation
import JWTKit
import Logging

/// A compact JWS (ES256) over JSON claims, as jwt-kit writes it: `header.payload.signature`.
enum CompactJWS {
    static func sign(_ claims: some Encodable, kid: String, key: P256.Signing.PrivateKey) throws -> String {
        let header = #"{"alg":"ES256","kid":"\#(kid)","typ":"JWT"}"#
        // JWT's JSON, not Colony's: times are NumericDate seconds (RFC 7519), as jwt-kit reads them.
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        let input = Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(try encoder.encode(claims))
        let signature = try key.signature(for: Data(input.utf8))
        return input + "." + Base64URL.encode(signature.rawRepresentation)
    }
}

/// The signing keys and API keys, loaded from the database and refreshed every 30 s, so every
/// replica picks up a rotation or a new key without a restart.
public actor KeyRing {
    struct Snapshot: Sendable {
        var keys: JWTKeyCollection
        var currentKid: String
        /// The current key as swift-crypto's type: access tokens are signed with it directly.
        var signingKey: P256.Signing.PrivateKey
        var jwksJSON: String
        var apiKeys: [String: APIKeyRecord]
        var loadedAt: ContinuousClock.Instant
    }

    private let database: Database
    private let store: KeyStore
    private let issuer: String
    private let retention: TimeInterval
    private var snapshot: Snapshot?
    private var lastReloadForUnknownKey: ContinuousClock.Instant?
    /// Access tokens verified before: `GET /user` and every other call with a session checks one.
    private var verifiedTokens = VerifiedTokens()

    public init(database: Database, issuer: String, retiredKeyRetentionSeconds: Int, logger: Logger) {
        self.database = database
        self.store = KeyStore(logger: logger)
        self.issuer = issuer
        self.retention = TimeInterval(retiredKeyRetentionSeconds)
    }

    /// Creates the first signing key and the apps' API keys when missing.
    public func ensureKeys() async throws {
        let store = self.store, issuer = self.issuer
        try await database.transaction { connection in
            try await store.createKeyIfNone(on: connection)
        }
        let loaded = try await load()
        try await database.transaction { connection in
            try await store.createAPIKeysIfMissing(signer: loaded.keys, kid: loaded.currentKid, issuer: issuer, on: connection)
        }
        install(try await load())
    }

    /// Retires the current signing key and starts signing with a new one.
    public func rotate() async throws -> String {
        let store = self.store
        let kid = try await database.transaction { connection in try await store.rotate(on: connection) }
        install(try await load())
        return kid
    }

    /// Every signing key kept (current, retired and still published, retired and past it).
    public func signingKeyStates() async throws -> [SigningKeyState] {
        let store = self.store
        return try await database.withConnection { try await store.signingKeyStates(on: $0) }
    }

    /// Takes a retired signing key out of the JWKS at once. This replica forgets it now, auth's
    /// other replicas within 30 s, other services when their JWKS cache expires (10 min).
    public func revokeSigningKey(kid: String) async throws -> Bool {
        let store = self.store
        let revoked = try await database.transaction { try await store.revokeSigningKey(kid: kid, on: $0) }
        install(try await load())
        return revoked
    }

    /// Replaces an app's API key of a role: the old one stops working at once.
    public func rotateAPIKey(app: App, role: APIKeyRecord.Role) async throws -> APIKeyRecord {
        let store = self.store, issuer = self.issuer
        let loaded = try await current()
        try await database.transaction { connection in
            try await store.revokeAPIKey(app: app, role: role, on: connection)
            try await store.createAPIKeysIfMissing(signer: loaded.keys, kid: loaded.currentKid, issuer: issuer, on: connection)
        }
        install(try await load())
        guard let key = snapshot?.apiKeys.values.first(where: { $0.app == app && $0.role == role }) else {
            throw APIError(.internalServerError, code: "keys_unavailable", message: "the new API key was not stored")
        }
        return key
    }

    /// Revokes one API key. Returns whether it was active.
    public func revokeAPIKey(_ key: String) async throws -> Bool {
        let store = self.store
        let revoked = try await database.transaction { try await store.revokeAPIKey(key, on: $0) }
        install(try await load())
        return revoked
    }

    public func apiKeys() async throws -> [APIKeyRecord] {
        try await current().apiKeys.values.sorted { ($0.app.rawValue, $0.role.rawValue) < ($1.app.rawValue, $1.role.rawValue) }
    }

    /// The app and role an `apikey` header names, or nil for an unknown key.
    public func apiKey(_ key: String) async throws -> APIKeyRecord? {
        if let found = try await current().apiKeys[key] { return found }
        // A key made since the last load (say, by `colony-auth keys` on another machine):
        // reload, but at most every 5 s, so garbage keys cannot hammer the database.
        let now = ContinuousClock.now
        if let last = lastReloadForUnknownKey, now - last < .seconds(5) { return nil }
        lastReloadForUnknownKey = now
        install(try await load())
        return snapshot?.apiKeys[key]
    }

    /// Signs with the current key (API keys and other rare tokens).
    public func sign(_ claims: some JWTPayload) async throws -> String {
        let snapshot = try await current()
        return try await snapshot.keys.sign(claims, kid: JWKIdentifier(string: snapshot.currentKid))
    }

    /// The current key and its id, for signing access tokens outside the actor: every sign-in
    /// and refresh signs one, and they need not queue behind each other.
    public func signingKey() async throws -> (kid: String, key: P256.Signing.PrivateKey) {
        let snapshot = try await current()
        return (snapshot.currentKid, snapshot.signingKey)
    }

    /// Verifies an access token's signature and expiry against the published keys.
    public func verify(_ token: String) async throws -> AccessTokenClaims {
        let keys = try await current().keys
        if let cached = verifiedTokens.claims(of: token) { return cached }
        let generation = verifiedTokens.generation
        let claims = try await keys.verify(token, as: AccessTokenClaims.self)
        verifiedTokens.remember(token, claims, verifiedAtGeneration: generation)
        return claims
    }

    public func jwks() async throws -> String {
        try await current().jwksJSON
    }

    private func current() async throws -> Snapshot {
        if let snapshot, ContinuousClock.now - snapshot.loadedAt < .seconds(30) { return snapshot }
        do {
            if snapshot == nil { try await ensureKeys() } else { install(try await load()) }
        } catch {
            // The database hiccuped: keep the keys we have rather than failing every request.
            if let snapshot { return snapshot }
            throw error
        }
        return snapshot!
    }

    /// Puts loaded keys in place. A change of published keys (a rotation, a revocation, a
    /// retired key's retention ending) empties the verified tokens, so a revoked key's tokens
    /// stop working here at once.
    private func install(_ loaded: Snapshot) {
        if loaded.jwksJSON != snapshot?.jwksJSON { verifiedTokens.forgetAll() }
        snapshot = loaded
    }

    private func load() async throws -> Snapshot {
        let store = self.store, retention = self.retention
        let (records, apiKeys) = try await database.withConnection { connection in
            (try await store.signingKeys(retention: retention, on: connection), try await store.apiKeys(on: connection))
        }
        guard let currentRecord = records.first(where: { $0.retiredAt == nil }) else {
            throw APIError(.serviceUnavailable, code: "keys_unavailable", message: "no signing key; run `colony-auth keys`")
        }
        let keys = JWTKeyCollection()
        var published: [String] = []
        for record in records {
            let privateKey = try ES256PrivateKey(pem: record.privateKeyPEM)
            await keys.add(ecdsa: privateKey, kid: JWKIdentifier(string: record.kid))
            if let parameters = privateKey.publicKey.parameters {
                published.append(#"{"kty":"EC","crv":"P-256","alg":"ES256","use":"sig","key_ops":["verify"],"kid":"\#(record.kid)","x":"\#(parameters.x)","y":"\#(parameters.y)"}"#)
            }
        }
        return Snapshot(
            keys: keys,
            currentKid: currentRecord.kid,
            signingKey: try P256.Signing.PrivateKey(pemRepresentation: currentRecord.privateKeyPEM),
            jwksJSON: #"{"keys":[\#(published.joined(separator: ","))]}"#,
            apiKeys: Dictionary(apiKeys.map { ($0.key, $0) }, uniquingKeysWith: { first, _ in first }),
            loadedAt: .now
        )
    }
}
