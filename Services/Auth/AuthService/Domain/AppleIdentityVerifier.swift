import AsyncHTTPClient
import ColonyModels
import ColonyPlatform
import Foundation

/// What a verified Sign in with Apple identity token says about the user.
public struct AppleIdentity: Sendable, Equatable {
    public var subject: String
    public var email: String?
    public var emailVerified: Bool
    public var isPrivateEmail: Bool
}

extension ProviderUser {
    /// A verified Sign in with Apple identity as a provider user. Apple sends the name only on the
    /// first sign-in; the app passes it along as metadata (`names`).
    init(apple identity: AppleIdentity, names: [String: JSONValue]) {
        var data: [String: JSONValue] = [
            "sub": .string(identity.subject), "iss": .string(AppleIdentityVerifier.issuer),
            "email_verified": .bool(identity.emailVerified), "is_private_email": .bool(identity.isPrivateEmail),
            "provider_id": .string(identity.subject),
        ]
        if let email = identity.email { data["email"] = .string(email) }
        for key in ["full_name", "name", "given_name", "family_name"] { if let value = names[key] { data[key] = value } }
        self.init(subject: identity.subject, emails: identity.email.map { [ProviderEmail(email: $0, verified: identity.emailVerified, primary: true)] } ?? [], identityData: data)
    }
}

/// `email_verified` and the like: booleans, or (Apple) the strings "true"/"false".
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

/// Sign in with Apple's native identity tokens: the generic `OIDCVerifier` with Apple's issuer,
/// its key set (a configurable URL, `COLONY_AUTH_APPLE_KEYS_URL`), the app's bundle ids as
/// audiences, and the hashed nonce required.
public struct AppleIdentityVerifier: Sendable {
    public static let issuer = "https://appleid.apple.com"
    private let keysURL: URL
    private let verifier: OIDCVerifier

    public init(keysURL: URL, httpClient: HTTPClient = .shared) {
        self.keysURL = keysURL
        self.verifier = OIDCVerifier(httpClient: httpClient)
    }

    /// - Parameter nonce: the raw nonce the app generated; Apple's token must carry its SHA-256.
    ///   Required: without it a token captured elsewhere (another app using Sign in with Apple for
    ///   the same bundle id, a log) could be replayed here.
    public func verify(idToken: String, bundleIDs: [String], nonce: String?) async throws -> AppleIdentity {
        guard let nonce, !nonce.isEmpty else { throw AuthErrors.appleNonceRequired }
        do {
            let identity = try await verifier.verify(idToken: idToken, issuer: Self.issuer, jwksURL: keysURL.absoluteString, audiences: bundleIDs, nonce: .hashedRequired(nonce))
            return AppleIdentity(subject: identity.subject, email: identity.email, emailVerified: identity.emailVerified, isPrivateEmail: identity.isPrivateEmail)
        } catch OIDCError.invalid(let message) {
            throw APIError(.badRequest, code: "bad_oauth_callback", message: message == "Bad ID token" ? AuthErrors.badOAuthCallback.message : message)
        } catch is OIDCError {
            throw AuthErrors.badOAuthCallback
        }
    }
}
