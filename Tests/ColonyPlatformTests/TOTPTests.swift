import ColonyModels
import ColonyPlatform
import Foundation
import Testing

@Suite("TOTP (RFC 6238) and the apps' access policy")
struct TOTPTests {
    // RFC 6238 appendix B: the seeds are ASCII "1234567890" repeated to the hash's key size.
    static let seed20 = Array("12345678901234567890".utf8)
    static let seed32 = Array("12345678901234567890123456789012".utf8)
    static let seed64 = Array("1234567890123456789012345678901234567890123456789012345678901234".utf8)
    static let vectors: [(time: Double, sha1: String, sha256: String, sha512: String)] = [
        (59, "94287082", "46119246", "90693936"),
        (1_111_111_109, "07081804", "68084774", "25091201"),
        (1_111_111_111, "14050471", "67062674", "99943326"),
        (1_234_567_890, "89005924", "91819424", "93441116"),
        (2_000_000_000, "69279037", "90698825", "38618901"),
        (20_000_000_000, "65353130", "77737706", "47863826"),
    ]

    @Test("RFC 6238's test vectors: SHA-1, SHA-256 and SHA-512, 8 digits, 30 s")
    func rfcVectors() throws {
        let sha1 = try #require(TOTP(secret: Self.seed20, digits: 8, algorithm: .sha1))
        let sha256 = try #require(TOTP(secret: Self.seed32, digits: 8, algorithm: .sha256))
        let sha512 = try #require(TOTP(secret: Self.seed64, digits: 8, algorithm: .sha512))
        for vector in Self.vectors {
            let date = Date(timeIntervalSince1970: vector.time)
            #expect(sha1.code(at: date) == vector.sha1, "SHA1 at \(vector.time)")
            #expect(sha256.code(at: date) == vector.sha256, "SHA256 at \(vector.time)")
            #expect(sha512.code(at: date) == vector.sha512, "SHA512 at \(vector.time)")
        }
        // 6 digits are the last six of the 8 (RFC 4226's truncation modulo 10^6).
        let six = try #require(TOTP(secret: Self.seed20))
        #expect(six.code(at: Date(timeIntervalSince1970: 59)) == "287082")
    }

    @Test("verification: one step either side, never a step at or before the last used, only digits of the right length")
    func verification() throws {
        let totp = try #require(TOTP(secret: Self.seed20))
        let now = Date(timeIntervalSince1970: 1_234_567_890)
        let step = try #require(totp.step(at: now))
        #expect(totp.verify(totp.code(forStep: step), at: now) == step)
        #expect(totp.verify(totp.code(forStep: step - 1), at: now) == step - 1)
        #expect(totp.verify(totp.code(forStep: step + 1), at: now) == step + 1)
        #expect(totp.verify(totp.code(forStep: step - 2), at: now) == nil)
        #expect(totp.verify(totp.code(forStep: step + 2), at: now) == nil)
        // A code is good once: its step, or an earlier one, is refused after use.
        #expect(totp.verify(totp.code(forStep: step), at: now, after: step) == nil)
        #expect(totp.verify(totp.code(forStep: step - 1), at: now, after: step) == nil)
        #expect(totp.verify(totp.code(forStep: step + 1), at: now, after: step) == step + 1)
        for bad in ["", "12345", "1234567", "12345a", " 123456", "١٢٣٤٥٦", "123 456"] {
            #expect(totp.verify(bad, at: now) == nil, "\(bad)")
        }
        #expect(totp.verify("000000", at: Date(timeIntervalSince1970: -100)) == nil)
        #expect(totp.verify("000000", at: Date(timeIntervalSince1970: 1e300)) == nil)
        #expect(TOTP(secret: []) == nil)
        #expect(TOTP(secret: Self.seed20, digits: 9) == nil)
        #expect(TOTP(secret: Self.seed20, period: 0) == nil)
    }

    @Test("secrets: 20 CSPRNG bytes, base32 both ways (RFC 4648 vectors), the otpauth URI")
    func secretsAndURI() throws {
        let a = TOTP.newSecret(), b = TOTP.newSecret()
        #expect(a.count == 20 && a != b)
        let vectors = [("", ""), ("f", "MY"), ("fo", "MZXQ"), ("foo", "MZXW6"), ("foob", "MZXW6YQ"), ("fooba", "MZXW6YTB"), ("foobar", "MZXW6YTBOI")]
        for (plain, encoded) in vectors {
            #expect(Base32.encode(Array(plain.utf8)) == encoded)
            #expect(Base32.decode(encoded) == Array(plain.utf8))
            #expect(Base32.decode(encoded.lowercased() + "======") == Array(plain.utf8))
        }
        #expect(Base32.decode("MZXW1") == nil)
        #expect(Base32.decode("M") == nil)
        let totp = try #require(TOTP(secret: a))
        #expect(totp.base32Secret.count == 32)
        #expect(TOTP(base32Secret: totp.base32Secret) == totp)
        let uri = totp.uri(issuer: "My Circlee", accountName: "ann@example.com")
        #expect(uri == "otpauth://totp/My%20Circlee:ann@example.com?algorithm=SHA1&digits=6&issuer=My%20Circlee&period=30&secret=\(totp.base32Secret)")
    }

    func claims(aal: String, enrolled: Bool?, anonymous: Bool = false) -> AccessTokenClaims {
        AccessTokenClaims(sub: UUID().uuidString.lowercased(), aud: "unify", iss: "colony-auth", exp: Date().addingTimeInterval(60), aal: aal, isAnonymous: anonymous, colonyMfaEnrolled: enrolled)
    }

    @Test("require_aal2 refuses aal1 tokens of enrolled users only; anonymous_users false refuses anonymous tokens; defaults accept all")
    func accessPolicy() throws {
        let strict = AppAccessPolicy(requireAal2: true, anonymousUsers: false)
        #expect(throws: AppAccessPolicy.insufficientAAL) { try strict.check(claims(aal: "aal1", enrolled: true)) }
        try strict.check(claims(aal: "aal2", enrolled: true))
        try strict.check(claims(aal: "aal1", enrolled: false))
        try strict.check(claims(aal: "aal1", enrolled: nil))
        #expect(throws: AppAccessPolicy.anonymousNotAllowed) { try strict.check(claims(aal: "aal1", enrolled: false, anonymous: true)) }
        try AppAccessPolicy.open.check(claims(aal: "aal1", enrolled: true, anonymous: true))

        let policies = try AppAccessPolicies(AppsFile.parse(Data(#"{"unify": {"require_aal2": true, "anonymous_users": false, "display_name": "Unify"}, "habithive": {}}"#.utf8)))
        #expect(policies.policy(for: .unify) == strict)
        #expect(policies.policy(for: .habithive) == .open && policies.policy(for: .mycirclee) == .open)
        // Through the verifier's claim check: a 403 with the policy's code, for the token's app only.
        #expect(throws: AppAccessPolicy.insufficientAAL) { try TokenVerifier.user(from: claims(aal: "aal1", enrolled: true), issuer: "colony-auth", audience: nil, policies: policies) }
        let user = try TokenVerifier.user(from: claims(aal: "aal2", enrolled: true), issuer: "colony-auth", audience: nil, policies: policies)
        #expect(user.aal == "aal2")
        _ = try TokenVerifier.user(from: claims(aal: "aal1", enrolled: true), issuer: "colony-auth", audience: nil)

        for bad in [#"[]"#, #"{"nope": {}}"#, #"{"unify": true}"#, #"{"unify": {"require_aal": true}}"#, #"{"unify": {"require_aal2": 1}}"#, "not json"] {
            #expect(throws: ConfigurationError.self, "\(bad)") { try AppAccessPolicies(AppsFile.parse(Data(bad.utf8))) }
        }
        #expect(try AppAccessPolicies.load(environment: EnvironmentReader([:])) == .open)
        #expect(throws: ConfigurationError.self) { try AppAccessPolicies.load(environment: EnvironmentReader(["COLONY_APPS_FILE": "/nonexistent/apps.json"])) }
        // The file's old names stop a start rather than drop the policies they held.
        for retired in AppsFile.retiredVariables {
            #expect(throws: ConfigurationError.self, "\(retired)") { try AppAccessPolicies.load(environment: EnvironmentReader([retired: "/etc/colony/access.json"])) }
        }
    }
}
