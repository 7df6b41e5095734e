import AsyncHTTPClient
import ColonyPlatform
import Crypto
import Foundation
import JWTKit
import Logging

/// What a verified Sign in with Apple identity token says about the user.
public struct AppleIdentity: Sendable, Equatable {
    public var subject: String
    public var email: String?
    public var emailVerified: Bool
    public var isPrivateEmail: Bool
}

/// The claims of Apple's identity token. Apple sends `email_verified` and `is_private_email` as
/// booleans or as the strings "true"/"false".
struct AppleIdentityClaims: JWTPayload {
    var iss: IssuerClaim
    var aud: AudienceClaim
    var exp: ExpirationClaim
    var sub: SubjectClaim
    var nonce: String?
    var email: String?
    var emailVerified: FlexibleBool?
    var isPrivateEmail: FlexibleBool?

    enum CodingKeys: String, CodingKey {
        case iss, aud, exp, sub, nonce, email
        case emailVerified = "email_verified"
        case isPrivateEmail = "is_private_email"
    }

    func verify(using algorithm: some JWTAlgorithm) async throws {
        try exp.verifyNotExpired()
    }
}

struct FlexibleBool: Codable, Sendable {
    var value: Bool
    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let bool = try? container.decode(Bool.self) { value = bool } else { value = (try container.decode(String.self)) == "true" }
    }
    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(value)
    }
}

/// Verifies Apple identity tokens: signature against Apple's key set (fetched from a
/// configurable URL and cached), issuer, audience (the app's bundle id), expiry and nonce.
public actor AppleIdentityVerifier {
    public static let issuer = "https://appleid.apple.com"
    private let keysURL: URL
    private let httpClient: HTTPClient
    private var keys: JWTKeyCollection?
    private var fetchedAt: ContinuousClock.Instant?

    public init(keysURL: URL, httpClient: HTTPClient = .shared) {
        self.keysURL = keysURL
        self.httpClient = httpClient
    }

    /// - Parameter nonce: the raw nonce the app generated; Apple's token must carry its SHA-256.
    ///   Required: without it a token captured elsewhere (another app using Sign in with Apple for
    ///   the same bundle id, a log) could be replayed here.
    public func verify(idToken: String, bundleIDs: [String], nonce: String?) async throws -> AppleIdentity {
        guard let nonce, !nonce.isEmpty else { throw AuthErrors.appleNonceRequired }
        let claims: AppleIdentityClaims
        do {
            claims = try await verifiedClaims(idToken)
        } catch {
            throw AuthErrors.badOAuthCallback
        }
        guard claims.iss.value == Self.issuer else { throw AuthErrors.badOAuthCallback }
        guard claims.aud.value.contains(where: bundleIDs.contains) else {
            throw APIError(.badRequest, code: "bad_oauth_callback", message: "Unacceptable audience in id_token")
        }
        guard let hashed = claims.nonce, hex(SHA256.hash(data: Data(nonce.utf8))) == hashed else {
            throw APIError(.badRequest, code: "bad_oauth_callback", message: "Nonces mismatch")
        }
        return AppleIdentity(subject: claims.sub.value, email: claims.email?.lowercased(), emailVerified: claims.emailVerified?.value ?? false, isPrivateEmail: claims.isPrivateEmail?.value ?? false)
    }

    private func verifiedClaims(_ token: String) async throws -> AppleIdentityClaims {
        let keys = try await currentKeys(refresh: false)
        do {
            return try await keys.verify(token, as: AppleIdentityClaims.self)
        } catch let error as JWTError where error.errorType == .unknownKID {
            // Apple rotated its keys since we fetched them.
            return try await currentKeys(refresh: true).verify(token, as: AppleIdentityClaims.self)
        }
    }

    private func currentKeys(refresh: Bool) async throws -> JWTKeyCollection {
        if !refresh, let keys, let fetchedAt, ContinuousClock.now - fetchedAt < .seconds(3600) { return keys }
        if refresh, let fetchedAt, ContinuousClock.now - fetchedAt < .seconds(10), let keys { return keys }
        var request = HTTPClientRequest(url: keysURL.absoluteString)
        request.method = .GET
        let response = try await httpClient.execute(request, timeout: .seconds(5))
        guard response.status == .ok else { throw AuthErrors.badOAuthCallback }
        let body = try await response.body.collect(upTo: 1 << 20)
        let collection = try await JWTKeyCollection().add(jwksJSON: String(buffer: body))
        keys = collection
        fetchedAt = .now
        return collection
    }
}
