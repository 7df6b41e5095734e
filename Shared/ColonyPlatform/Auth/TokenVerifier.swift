import AsyncHTTPClient
import ColonyModels
import Foundation
import JWTKit
import Logging
import NIOCore

/// Where the verification keys come from.
public struct TokenVerifierConfiguration: Sendable {
    public enum KeySource: Sendable {
        /// Auth's JWKS endpoint, fetched and cached; refetched on an unknown `kid`.
        case jwks(URL)
        /// A fixed set of keys (tests, or an operator who pins the key): a JWKS JSON document.
        case staticJWKS(String)
        /// One PEM-encoded ES256 public key.
        case staticPEM(String)
    }

    public var keySource: KeySource
    public var issuer: String
    /// The app this service serves; nil accepts every app's tokens (realtime, notifications).
    public var audience: App?
    /// How long fetched keys are trusted before a refresh.
    public var cacheLifetime: Duration
    /// Per app: `aal2` required of users with a verified factor, anonymous users accepted or not
    /// (the apps file's `require_aal2` and `anonymous_users`).
    public var accessPolicies: AppAccessPolicies = .open
    /// Where suspended accounts are read from (auth, `ServiceConfiguration.authURL`; nil: nowhere,
    /// as in auth itself, whose ban ends the account's sessions).
    public var suspensions: SuspensionSource?

    public init(keySource: KeySource, issuer: String, audience: App?, cacheLifetime: Duration = .seconds(600)) {
        self.keySource = keySource
        self.issuer = issuer
        self.audience = audience
        self.cacheLifetime = cacheLifetime
    }

    static func load(audience: App?, environment: EnvironmentReader) throws(ConfigurationError) -> TokenVerifierConfiguration {
        var configuration = try loadKeys(audience: audience, environment: environment)
        configuration.accessPolicies = try AppAccessPolicies.load(environment: environment)
        return configuration
    }

    private static func loadKeys(audience: App?, environment: EnvironmentReader) throws(ConfigurationError) -> TokenVerifierConfiguration {
        let issuer = environment.string("COLONY_JWT_ISSUER", default: "colony-auth")
        if let pem = environment.optionalString("COLONY_JWT_PUBLIC_KEY") {
            return TokenVerifierConfiguration(keySource: .staticPEM(pem.replacingOccurrences(of: "\\n", with: "\n")), issuer: issuer, audience: audience)
        }
        guard let url = try environment.url("COLONY_JWKS_URL") else {
            try environment.problem(ConfigurationError(variable: "COLONY_JWKS_URL", problem: "is required (or set COLONY_JWT_PUBLIC_KEY)"))
            return TokenVerifierConfiguration(keySource: .staticJWKS(#"{"keys":[]}"#), issuer: issuer, audience: audience)  // a check goes on
        }
        return TokenVerifierConfiguration(keySource: .jwks(url), issuer: issuer, audience: audience)
    }
}

/// Verifies Colony access tokens: ES256 signature by a known key, expiry, issuer and audience.
public actor TokenVerifier {
    private let configuration: TokenVerifierConfiguration
    private let httpClient: HTTPClient
    private let logger: Logger
    private var keys: JWTKeyCollection?
    private var knownKeyIDs: Set<String> = []
    private var fetchedAt: ContinuousClock.Instant?
    private var lastRefetchForUnknownKey: ContinuousClock.Instant?
    /// Access tokens verified before; emptied when the fetched keys change.
    private var verifiedTokens = VerifiedTokens()
    /// Accounts whose tokens are refused although valid (`SuspensionWatcher` fills it).
    public nonisolated let suspendedAccounts: SuspendedAccounts

    public init(configuration: TokenVerifierConfiguration, suspendedAccounts: SuspendedAccounts = SuspendedAccounts(), httpClient: HTTPClient = .shared, logger: Logger) {
        self.configuration = configuration
        self.suspendedAccounts = suspendedAccounts
        self.httpClient = httpClient
        self.logger = logger
    }

    /// The verified caller, or a 401 `APIError` saying what was wrong.
    public func verify(_ token: String) async throws(APIError) -> AuthenticatedUser {
        let claims: AccessTokenClaims
        do {
            if let cached = verifiedTokens.claims(of: token), !keysNeedRefresh {
                claims = cached
            } else {
                let generation = verifiedTokens.generation
                claims = try await verifiedClaims(token)
                verifiedTokens.remember(token, claims, verifiedAtGeneration: generation)
            }
        } catch let error as JWTError {
            throw Self.apiError(for: error)
        } catch let error as APIError {
            throw error
        } catch {
            throw APIError.unauthorized("invalid access token", code: "invalid_token")
        }
        let user = try Self.user(from: claims, issuer: configuration.issuer, audience: configuration.audience, policies: configuration.accessPolicies)
        guard !suspendedAccounts.isSuspended(user.id) else {
            throw APIError(.forbidden, code: "user_banned", message: "the account is suspended")
        }
        return user
    }

    /// Checks the claims a verified signature vouches for: issuer, audience (the app, when the
    /// caller serves one app) and a user id as subject; then the app's access policy (a 403 for
    /// an `aal1` token where the app requires `aal2`, or an anonymous user it refuses). Auth's
    /// own endpoints pass `.open`: a user must reach `/factors` to get to `aal2`.
    public static func user(from claims: AccessTokenClaims, issuer: String, audience: App?, policies: AppAccessPolicies = .open) throws(APIError) -> AuthenticatedUser {
        guard claims.iss.value == issuer else {
            throw APIError.unauthorized("token was not issued by Colony auth", code: "invalid_token")
        }
        guard let app = claims.aud.value.lazy.compactMap(App.init(rawValue:)).first else {
            throw APIError.unauthorized("token has no known app audience", code: "invalid_token")
        }
        if let audience, !claims.aud.value.contains(audience.rawValue) {
            throw APIError.unauthorized("token is for another app", code: "invalid_token")
        }
        guard let id = UUID(uuidString: claims.sub.value) else {
            throw APIError.unauthorized("token subject is not a user id", code: "invalid_token")
        }
        try policies.policy(for: app).check(claims)
        var user = AuthenticatedUser(id: id, role: claims.role, app: app, sessionID: claims.sessionId, email: claims.email, phone: claims.phone)
        user.userMetadata = claims.userMetadata ?? [:]
        user.aal = claims.aal ?? "aal1"
        return user
    }

    /// An app's API key (the socket's `apikey` on realtime): one auth issued, signed by its keys,
    /// with the `anon` or `service_role` role and a known app as `ref`. Anything else is a 401.
    public func verifyAPIKey(_ key: String) async throws(APIError) -> APIKeyIdentity {
        let claims: APIKeyClaims
        do {
            claims = try await verifiedClaims(key, as: APIKeyClaims.self)
        } catch let error as APIError {
            throw error
        } catch {
            throw APIError.unauthorized("the apikey is not one of this deployment's API keys", code: "invalid_api_key")
        }
        guard claims.iss.value == configuration.issuer, let app = App(rawValue: claims.ref),
              let role = APIKeyIdentity.Role(rawValue: claims.role)
        else { throw APIError.unauthorized("the apikey is not one of this deployment's API keys", code: "invalid_api_key") }
        return APIKeyIdentity(app: app, role: role)
    }

    /// The app whose service-role key `token` is (auth's `service_role` API key: signed by the
    /// same keys, `role` service_role, `ref` the app); a 401 for anything else, a user's access
    /// token included. A service serving one app accepts only that app's key.
    public func verifyServiceKey(_ token: String) async throws(APIError) -> App {
        let identity: APIKeyIdentity
        do {
            identity = try await verifyAPIKey(token)
        } catch where error.status == .unauthorized {
            throw APIError.unauthorized("a service-role key is required", code: "invalid_service_key")
        }
        guard identity.role == .serviceRole else { throw APIError.unauthorized("a service-role key is required", code: "invalid_service_key") }
        if let audience = configuration.audience, audience != identity.app {
            throw APIError.unauthorized("the service-role key is for another app", code: "invalid_service_key")
        }
        return identity.app
    }

    private func verifiedClaims(_ token: String) async throws -> AccessTokenClaims {
        try await verifiedClaims(token, as: AccessTokenClaims.self)
    }

    private func verifiedClaims<Claims: JWTPayload>(_ token: String, as type: Claims.Type) async throws -> Claims {
        var keys = try await currentKeys()
        // Keys rotated since the last fetch (a `kid` we have not seen): refetch once, at most
        // every 30 s, so a flood of forged key ids cannot hammer auth.
        if case .jwks = configuration.keySource, let kid = Self.keyID(of: token), !knownKeyIDs.contains(kid), canRefetchForUnknownKey() {
            keys = (try? await fetchKeys()) ?? keys
        }
        return try await keys.verify(token, as: type)
    }

    /// Whether the cached keys are due for a fetch: a cached token is then verified again, so a
    /// change of keys (a revocation) is seen first.
    private var keysNeedRefresh: Bool {
        guard case .jwks = configuration.keySource, let fetchedAt else { return false }
        return ContinuousClock.now - fetchedAt >= configuration.cacheLifetime
    }

    /// The `kid` in a token's header, if it has one.
    public static func keyID(of token: String) -> String? {
        guard let header = token.split(separator: ".", maxSplits: 1).first else { return nil }
        struct Header: Decodable { let kid: String? }
        guard let data = Base64URL.decode(header), let decoded = try? JSONDecoder().decode(Header.self, from: Data(data)) else { return nil }
        return decoded.kid
    }

    /// The key ids a JWKS document lists.
    static func keyIDs(inJWKS json: String) -> Set<String> {
        struct Document: Decodable { struct Key: Decodable { let kid: String? }; let keys: [Key] }
        let document = try? JSONDecoder().decode(Document.self, from: Data(json.utf8))
        return Set(document?.keys.compactMap(\.kid) ?? [])
    }

    private func canRefetchForUnknownKey() -> Bool {
        let now = ContinuousClock.now
        if let last = lastRefetchForUnknownKey, now - last < .seconds(30) { return false }
        lastRefetchForUnknownKey = now
        return true
    }

    private func currentKeys() async throws -> JWTKeyCollection {
        if let keys, let fetchedAt, ContinuousClock.now - fetchedAt < configuration.cacheLifetime {
            return keys
        }
        switch configuration.keySource {
        case .staticJWKS(let json):
            let collection = try await JWTKeyCollection().add(jwksJSON: json)
            keys = collection
            fetchedAt = .now
            return collection
        case .staticPEM(let pem):
            let collection = await JWTKeyCollection().add(ecdsa: try ES256PublicKey(pem: pem))
            keys = collection
            fetchedAt = .now
            return collection
        case .jwks:
            do {
                return try await fetchKeys()
            } catch {
                // Auth unreachable: keep verifying with the keys we have rather than locking everyone out.
                if let keys {
                    logger.warning("JWKS refresh failed, using cached keys", metadata: ["error": "\(error)"])
                    return keys
                }
                throw APIError(.serviceUnavailable, code: "keys_unavailable", message: "token keys are not available yet")
            }
        }
    }

    private func fetchKeys() async throws -> JWTKeyCollection {
        guard case .jwks(let url) = configuration.keySource else { return try await currentKeys() }
        var request = HTTPClientRequest(url: url.absoluteString)
        request.method = .GET
        let response = try await httpClient.execute(request, timeout: .seconds(5))
        guard response.status == .ok else {
            throw APIError(.serviceUnavailable, code: "keys_unavailable", message: "JWKS answered \(response.status.code)")
        }
        let body = try await response.body.collect(upTo: 1 << 20)
        let json = String(buffer: body)
        let collection = try await JWTKeyCollection().add(jwksJSON: json)
        keys = collection
        let fetchedIDs = Self.keyIDs(inJWKS: json)
        if fetchedIDs != knownKeyIDs { verifiedTokens.forgetAll() }
        knownKeyIDs = fetchedIDs
        fetchedAt = .now
        return collection
    }

    public static func apiError(for error: JWTError) -> APIError {
        switch error.errorType {
        case .claimVerificationFailure:
            if error.failedClaim is ExpirationClaim {
                return .unauthorized("access token has expired", code: "token_expired")
            }
            return .unauthorized("access token claims are invalid", code: "invalid_token")
        case .signatureVerificationFailed:
            return .unauthorized("access token signature is invalid", code: "invalid_token")
        case .unknownKID:
            return .unauthorized("access token was signed by an unknown key", code: "invalid_token")
        default:
            return .unauthorized("access token is malformed", code: "invalid_token")
        }
    }
}
