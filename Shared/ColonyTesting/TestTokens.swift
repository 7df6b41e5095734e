import ColonyModels
import ColonyPlatform
import Foundation
import JWTKit

/// Mints Colony access tokens with a key made for the test, and gives the verifier settings
/// that trust it (the "static key for tests").
public struct TestTokens: Sendable {
    public let privateKey: ES256PrivateKey
    public let keyID: String
    public let issuer: String

    public init(issuer: String = "colony-auth", keyID: String = "test-key") {
        self.privateKey = ES256PrivateKey()
        self.keyID = keyID
        self.issuer = issuer
    }

    /// Verifier settings that accept this key's tokens for the app.
    public func verifierConfiguration(audience: App?) -> TokenVerifierConfiguration {
        TokenVerifierConfiguration(keySource: .staticJWKS(jwksJSON()), issuer: issuer, audience: audience)
    }

    /// The public key as a JWKS document, as auth publishes it.
    public func jwksJSON() -> String {
        let parameters = privateKey.publicKey.parameters!
        return """
            {"keys":[{"kty":"EC","crv":"P-256","alg":"ES256","use":"sig","kid":"\(keyID)","x":"\(parameters.x)","y":"\(parameters.y)"}]}
            """
    }

    public func token(
        user: UUID = UUID(),
        app: App,
        expiresIn: TimeInterval = 3600,
        issuer: String? = nil,
        audience: String? = nil,
        role: String = "authenticated",
        email: String? = nil,
        userMetadata: [String: JSONValue]? = nil
    ) async throws -> String {
        let claims = AccessTokenClaims(
            sub: user.uuidString.lowercased(),
            aud: audience ?? app.rawValue,
            iss: issuer ?? self.issuer,
            exp: Date().addingTimeInterval(expiresIn),
            iat: Date(),
            role: role,
            sessionId: UUID().uuidString.lowercased(),
            email: email,
            userMetadata: userMetadata
        )
        return try await sign(claims)
    }

    /// An app's API key as auth issues it (anon by default), signed with this key.
    public func apiKey(app: App, role: String = "anon", issuer: String? = nil) async throws -> String {
        let claims = APIKeyClaims(iss: issuer ?? self.issuer, role: role, ref: app.rawValue, exp: Date().addingTimeInterval(365 * 86_400))
        return try await sign(claims)
    }

    /// An app's service-role API key, shaped as auth issues it (`role`, `ref`, no subject).
    public func serviceKey(app: App, role: String = "service_role", expiresIn: TimeInterval = 3600) async throws -> String {
        try await sign(APIKeyClaims(iss: issuer, role: role, ref: app.rawValue, exp: Date().addingTimeInterval(expiresIn)))
    }

    private func sign(_ claims: some JWTPayload) async throws -> String {
        let keys = await JWTKeyCollection().add(ecdsa: privateKey, kid: JWKIdentifier(string: keyID))
        return try await keys.sign(claims, kid: JWKIdentifier(string: keyID))
    }
}
