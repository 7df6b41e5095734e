import ColonyModels
import ColonyTesting
import Crypto
import CryptoExtras
import Foundation
import Hummingbird
import JWTKit

/// Apple's side of Sign in with Apple for tests: its key set served over HTTP, and identity
/// tokens signed with the matching key, as Apple signs them.
struct AppleStandIn: Sendable {
    let keysURL: URL
    let signer: JWTKeyCollection

    struct Claims: JWTPayload {
        var iss: IssuerClaim, aud: AudienceClaim, exp: ExpirationClaim, sub: SubjectClaim, nonce: String?, email: String, email_verified: String
        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    /// An identity token for `subject`, carrying the SHA-256 of `nonce` (none when nil).
    func idToken(audience: String = "com.habithive.app", subject: String = "001234.apple", email: String = "apple-user@privaterelay.appleid.com", emailVerified: Bool = true, nonce: String?) async throws -> String {
        let hashed = nonce.map { SHA256.hash(data: Data($0.utf8)).map { String(format: "%02x", $0) }.joined() }
        return try await signer.sign(Claims(iss: "https://appleid.apple.com", aud: AudienceClaim(value: audience), exp: ExpirationClaim(value: Date().addingTimeInterval(600)), sub: SubjectClaim(value: subject), nonce: hashed, email: email, email_verified: emailVerified ? "true" : "false"))
    }

    /// Serves the key set for `body`'s duration.
    static func run(_ body: @Sendable (AppleStandIn) async throws -> Void) async throws {
        let rsa = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let primitives = try rsa.publicKey.getKeyPrimitives()
        let jwks = #"{"keys":[{"kty":"RSA","kid":"apple-test","use":"sig","alg":"RS256","n":"\#(Base64URL.encode(primitives.modulus))","e":"\#(Base64URL.encode(primitives.publicExponent))"}]}"#
        let port = try freePort()
        let router = Router()
        router.get("auth/keys") { _, _ in jwks }
        let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: port)), logger: TestEnvironment.logger)
        let signer = await JWTKeyCollection().add(rsa: try Insecure.RSA.PrivateKey(backing: rsa), digestAlgorithm: .sha256, kid: "apple-test")
        try await withTestServer(app) {
            try await body(AppleStandIn(keysURL: URL(string: "http://127.0.0.1:\(port)/auth/keys")!, signer: signer))
        }
    }
}
