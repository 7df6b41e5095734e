import AsyncHTTPClient
import ColonyModels
import ColonyPlatform
import Crypto
import Foundation
import JWTKit
import NIOCore

/// The endpoints an OIDC issuer publishes at `/.well-known/openid-configuration`.
public struct OIDCDiscoveryDocument: Codable, Sendable, Equatable {
    public var issuer: String
    public var authorizationEndpoint: String
    public var tokenEndpoint: String
    public var userinfoEndpoint: String?
    public var jwksUri: String
}

/// What a verified id_token says about its user.
public struct OIDCIdentity: Sendable, Equatable {
    public var issuer: String
    public var subject: String
    public var email: String?
    public var emailVerified: Bool
    /// Apple's relay addresses.
    public var isPrivateEmail: Bool
    public var name: String?
    public var givenName: String?
    public var familyName: String?
    public var picture: String?
    public var phone: String?
    public var phoneVerified: Bool
}

/// How an id_token's `nonce` must relate to the one the caller has.
public enum OIDCNonceRule: Sendable, Equatable {
    /// The web flow: auth sent this nonce to the provider; the token must carry it as is.
    case exactly(String)
    /// `grant_type=id_token` (GoTrue's rule): the app passes its raw nonce and the token carries
    /// its SHA-256 in hex, or neither has one.
    case hashedIfPresent(String?)
    /// Sign in with Apple natively: the hashed nonce is required.
    case hashedRequired(String?)
}

/// The claims of an id_token. Providers write `email_verified` as a boolean or (Apple) a string.
struct OIDCClaims: JWTPayload {
    var iss: IssuerClaim
    var aud: AudienceClaim
    var exp: ExpirationClaim
    var sub: SubjectClaim
    var nonce: String?
    var email: String?
    var emailVerified: FlexibleBool?
    var isPrivateEmail: FlexibleBool?
    var name: String?
    var givenName: String?
    var familyName: String?
    var picture: String?
    var phoneNumber: String?
    var phoneNumberVerified: FlexibleBool?

    enum CodingKeys: String, CodingKey {
        case iss, aud, exp, sub, nonce, email, name, picture
        case emailVerified = "email_verified"
        case isPrivateEmail = "is_private_email"
        case givenName = "given_name"
        case familyName = "family_name"
        case phoneNumber = "phone_number"
        case phoneNumberVerified = "phone_number_verified"
    }

    func verify(using algorithm: some JWTAlgorithm) async throws {
        try exp.verifyNotExpired()
    }
}

/// Verifies id_tokens of any OIDC issuer (Google, Apple, an operator's own): signature against
/// the issuer's key set, issuer, audience, expiry and nonce. Discovery documents and key sets
/// are cached for an hour; a token signed with a key id the cached set lacks refetches it (a
/// provider rotated its keys), at most every 10 seconds per set.
public actor OIDCVerifier {
    private let httpClient: HTTPClient
    private var keySets: [String: (keys: JWTKeyCollection, fetchedAt: ContinuousClock.Instant)] = [:]
    private var documents: [String: (document: OIDCDiscoveryDocument, fetchedAt: ContinuousClock.Instant)] = [:]

    public init(httpClient: HTTPClient = .shared) {
        self.httpClient = httpClient
    }

    /// The issuer's discovery document.
    public func discovery(issuer: String) async throws -> OIDCDiscoveryDocument {
        if let cached = documents[issuer], ContinuousClock.now - cached.fetchedAt < .seconds(3600) { return cached.document }
        let body = try await get("\(issuer)/.well-known/openid-configuration")
        guard let document = try? ColonyJSON.decoder().decode(OIDCDiscoveryDocument.self, from: Data(buffer: body)) else {
            throw OIDCError.unavailable("the discovery document of \(issuer) is not valid")
        }
        // OIDC Discovery §4.3: the document must name the issuer it was fetched for.
        guard document.issuer == issuer else { throw OIDCError.unavailable("the discovery document of \(issuer) names issuer \(document.issuer)") }
        documents[issuer] = (document, .now)
        return document
    }

    /// Verifies `idToken`: issued by `issuer`, for one of `audiences`, not expired, signed by a
    /// key of `jwksURL`, its nonce as `nonce` says.
    public func verify(idToken: String, issuer: String, jwksURL: String, audiences: [String], nonce: OIDCNonceRule) async throws -> OIDCIdentity {
        let claims: OIDCClaims
        do {
            claims = try await verifiedClaims(idToken, jwksURL: jwksURL)
        } catch let error as OIDCError {
            throw error
        } catch {
            throw OIDCError.invalid("Bad ID token")
        }
        guard claims.iss.value == issuer else { throw OIDCError.invalid("Bad ID token: issuer \(claims.iss.value) is not \(issuer)") }
        guard !claims.sub.value.isEmpty else { throw OIDCError.invalid("Missing sub claim in id_token") }
        guard claims.aud.value.contains(where: { !$0.isEmpty && audiences.contains($0) }) else {
            throw OIDCError.invalid("Unacceptable audience in id_token: \(claims.aud.value)")
        }
        try Self.check(nonce: nonce, token: claims.nonce)
        let email = claims.email.flatMap { $0.isEmpty ? nil : $0.lowercased() }
        return OIDCIdentity(
            issuer: claims.iss.value, subject: claims.sub.value, email: email, emailVerified: email != nil && (claims.emailVerified?.value ?? false),
            isPrivateEmail: claims.isPrivateEmail?.value ?? false, name: claims.name, givenName: claims.givenName, familyName: claims.familyName,
            picture: claims.picture, phone: claims.phoneNumber, phoneVerified: claims.phoneNumberVerified?.value ?? false
        )
    }

    /// The nonce rules, apart so tests reach them without tokens.
    static func check(nonce rule: OIDCNonceRule, token: String?) throws {
        let tokenNonce = token.flatMap { $0.isEmpty ? nil : $0 }
        switch rule {
        case .exactly(let expected):
            guard let tokenNonce, ConstantTime.equal(tokenNonce.utf8, expected.utf8) else { throw OIDCError.invalid("Nonces mismatch") }
        case .hashedIfPresent(let raw):
            let raw = raw.flatMap { $0.isEmpty ? nil : $0 }
            guard (raw == nil) == (tokenNonce == nil) else {
                throw OIDCError.invalid("Passed nonce and nonce in id_token should either both exist or not.")
            }
            if let raw, let tokenNonce, hex(SHA256.hash(data: Data(raw.utf8))) != tokenNonce { throw OIDCError.invalid("Nonces mismatch") }
        case .hashedRequired(let raw):
            guard let raw, !raw.isEmpty else { throw OIDCError.invalid("A nonce is required: pass the raw nonce the app generated (its SHA-256 goes in the id_token)") }
            guard let tokenNonce, hex(SHA256.hash(data: Data(raw.utf8))) == tokenNonce else { throw OIDCError.invalid("Nonces mismatch") }
        }
    }

    private func verifiedClaims(_ token: String, jwksURL: String) async throws -> OIDCClaims {
        let keys = try await keySet(jwksURL, refresh: false)
        do {
            return try await keys.verify(token, as: OIDCClaims.self)
        } catch let error as JWTError where error.errorType == .unknownKID {
            return try await keySet(jwksURL, refresh: true).verify(token, as: OIDCClaims.self)
        }
    }

    private func keySet(_ url: String, refresh: Bool) async throws -> JWTKeyCollection {
        if let cached = keySets[url] {
            let age = ContinuousClock.now - cached.fetchedAt
            if !refresh, age < .seconds(3600) { return cached.keys }
            if refresh, age < .seconds(10) { return cached.keys }
        }
        let body = try await get(url)
        let collection: JWTKeyCollection
        do {
            collection = try await JWTKeyCollection().add(jwksJSON: String(buffer: body))
        } catch {
            throw OIDCError.unavailable("the key set at \(url) is not valid")
        }
        keySets[url] = (collection, .now)
        return collection
    }

    private func get(_ url: String) async throws -> ByteBuffer {
        var request = HTTPClientRequest(url: url)
        request.method = .GET
        request.headers.add(name: "Accept", value: "application/json")
        do {
            let response = try await httpClient.execute(request, timeout: .seconds(10))
            guard response.status == .ok else { throw OIDCError.unavailable("\(url) answered \(response.status.code)") }
            return try await response.body.collect(upTo: 1 << 20)
        } catch let error as OIDCError {
            throw error
        } catch {
            throw OIDCError.unavailable("\(url) could not be read: \(error)")
        }
    }
}

/// Why a provider's answer was not accepted: `invalid` (the token or answer is bad: the
/// caller's fault) or `unavailable` (the provider could not be asked).
public enum OIDCError: Error, Sendable, Equatable {
    case invalid(String)
    case unavailable(String)

    public var message: String {
        switch self {
        case .invalid(let message), .unavailable(let message): message
        }
    }
}
