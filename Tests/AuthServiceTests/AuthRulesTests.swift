@testable import AuthService
import ColonyModels
import ColonyPlatform
import Foundation
import Testing

/// The auth rules as plain types, without HTTP or a database.
@Suite("Auth rules")
struct AuthRulesTests {
    let settings = AppAuthSettings(redirectUrls: ["unify://auth-callback", "https://unify.example/*"], siteUrl: "unify://auth-callback", refreshTokenReuseIntervalSeconds: 10, sessionTimeboxSeconds: nil, sessionInactivityTimeoutSeconds: 3600)
    let now = Date()

    func decide(revokedAgo: TimeInterval?, parent: Bool = false, refreshedAgo: TimeInterval = 0) -> RefreshTokenRules.Decision {
        RefreshTokenRules.decide(
            token: .init(revokedAt: revokedAgo.map { now.addingTimeInterval(-$0) }, isParentOfActive: parent),
            session: .init(createdAt: now.addingTimeInterval(-7200), refreshedAt: now.addingTimeInterval(-refreshedAgo), notAfter: nil),
            settings: settings, now: now
        )
    }

    @Test("refresh decisions follow Supabase's rotation rules; after the reuse interval even the active token's parent is a replay")
    func refreshDecisions() {
        #expect(decide(revokedAgo: nil) == .rotate)
        #expect(decide(revokedAgo: 5, parent: true) == .returnActive)
        #expect(decide(revokedAgo: 5) == .rotateWithinReuseInterval)
        #expect(decide(revokedAgo: 11) == .reuseDetected)
        #expect(decide(revokedAgo: 300, parent: true) == .reuseDetected)
        #expect(decide(revokedAgo: nil, refreshedAgo: 3601) == .sessionExpired)
    }

    @Test("a child token is reproducible from its parent and salt only")
    func childTokens() {
        let salt = RefreshTokenRules.newSalt()
        let parent = Secrets.opaqueToken()
        #expect(RefreshTokenRules.childToken(parent: parent, salt: salt) == RefreshTokenRules.childToken(parent: parent, salt: salt))
        #expect(RefreshTokenRules.childToken(parent: parent, salt: salt) != RefreshTokenRules.childToken(parent: Secrets.opaqueToken(), salt: salt))
    }

    @Test("emails and phones are normalized as Supabase stores them")
    func normalization() {
        #expect(Credentials.normalizedEmail("  Ada@Example.COM ") == "ada@example.com")
        #expect(Credentials.normalizedEmail("no-at-sign") == nil)
        #expect(Credentials.normalizedEmail("a@b") == nil)
        #expect(Credentials.normalizedPhone("+1 (555) 123-4567") == "15551234567")
        #expect(Credentials.normalizedPhone("12ab") == nil)
        #expect(Credentials.passwordProblems("12345", minimumLength: 6) == ["length"])
        #expect(Credentials.phoneHash(digits: "15551234567", pepper: "p") == Credentials.phoneHash(digits: "15551234567", pepper: "p"))
        #expect(Credentials.phoneHash(digits: "15551234567", pepper: "p") != Credentials.phoneHash(digits: "15551234567", pepper: "q"))
    }

    @Test("redirects only to allowed URLs, else the site URL")
    func redirects() {
        #expect(settings.redirect("https://unify.example/welcome") == "https://unify.example/welcome")
        #expect(settings.redirect("https://evil.example/") == "unify://auth-callback")
        #expect(settings.redirect(nil) == "unify://auth-callback")
    }

    @Test("bcrypt verifies Supabase's $2a$ hashes and refuses wrong passwords")
    func bcrypt() throws {
        let hash = try Bcrypt.hash("secret-1", cost: 4)
        #expect(hash.hasPrefix("$2b$04$"))
        #expect(Bcrypt.verify("secret-1", hash: hash))
        #expect(!Bcrypt.verify("secret-2", hash: hash))
        #expect(Bcrypt.verify("secret-1", hash: "$2a$" + hash.dropFirst(4)))
        #expect(!Bcrypt.verify("secret-1", hash: "not a hash"))
    }

    @Test("the import reads Supabase's JSON and CSV exports")
    func importParsing() throws {
        let json = #"[{"id":"6f1c2b9e-4c1d-4a53-9a53-2f1d6c1e0b11","email":"A@B.io","encrypted_password":"$2a$10$abcdefghijklmnopqrstuu5RjVwTPOaUuS1M2Q6ZyQyGm3cNxN3bK","email_confirmed_at":"2024-01-02T03:04:05.123456Z","raw_user_meta_data":{"name":"A"},"created_at":"2024-01-02 03:04:05+00"}]"#
        let users = try UserImportParser.parse(json)
        #expect(users.first?.email == "a@b.io")
        #expect(users.first?.userMetadata["name"] == .string("A"))
        #expect(users.first?.emailConfirmedAt != nil)
        #expect(throws: UserImportParser.Failure.self) { try UserImportParser.parse("id,email\nnot-a-uuid,a@b.io") }
    }
}

/// Issue 17's rules as plain types.
@Suite("Auth security rules")
struct AuthSecurityRulesTests {
    func user(password: String? = "$2b$04$hash", unproven: Bool, emailProven: Bool = false) -> UserRecord {
        UserRecord(id: UUID(), app: .mycirclee, email: "a@example.com", phone: nil, encryptedPassword: password, emailConfirmedAt: Date(), phoneConfirmedAt: nil,
                   appMetadata: [:], userMetadata: [:], createdAt: Date(), updatedAt: Date(), emailProvenAt: emailProven ? Date() : nil, passwordUnproven: unproven)
    }

    @Test("a proof clears a password its prover did not set; the sign-up's own code keeps it")
    func proofs() {
        var squatted = user(unproven: true)
        #expect(AccountProof.apply(.email, confirmsSignUp: false, to: &squatted, now: Date()) == .reclaimed)
        #expect(squatted.encryptedPassword == nil && !squatted.passwordUnproven && squatted.emailProvenAt != nil)
        var confirming = user(unproven: true)
        #expect(AccountProof.apply(.email, confirmsSignUp: true, to: &confirming, now: Date()) == .proven)
        #expect(confirming.encryptedPassword != nil && !confirming.passwordUnproven)
        var owned = user(unproven: false)
        #expect(AccountProof.apply(.email, confirmsSignUp: false, to: &owned, now: Date()) == .proven)
        #expect(owned.encryptedPassword != nil)
        var phone = user(password: nil, unproven: true)
        #expect(AccountProof.apply(.phone, confirmsSignUp: false, to: &phone, now: Date()) == .proven)
        #expect(phone.phoneProvenAt != nil && phone.phoneConfirmedAt != nil)
        #expect(!AccountProof.appleMayLink(to: user(unproven: true), appleVerifiedEmail: false))
        #expect(AccountProof.appleMayLink(to: user(unproven: false, emailProven: true), appleVerifiedEmail: false))
        #expect(RecentSignIn.needsProof(sessionCreatedAt: Date().addingTimeInterval(-90_000), windowSeconds: 86_400, now: Date()))
        #expect(!RecentSignIn.needsProof(sessionCreatedAt: Date().addingTimeInterval(-60), windowSeconds: 86_400, now: Date()))
        #expect(RecentSignIn.needsProof(sessionCreatedAt: nil, windowSeconds: 86_400, now: Date()))
    }

    @Test("redirect patterns match the parsed origin, then the rest as a glob")
    func redirectPatterns() throws {
        let pattern = try #require(RedirectPattern("https://app.example.com*"))
        #expect(pattern.matches("https://app.example.com"))
        #expect(pattern.matches("https://app.example.com/welcome?x=1#y"))
        #expect(pattern.matches("HTTPS://APP.example.com/"))
        #expect(!pattern.matches("https://app.example.com.evil.com"))
        #expect(!pattern.matches("https://app.example.com@evil.com/"))
        #expect(!pattern.matches("https://app.example.comevil.net/"))
        #expect(!pattern.matches("http://app.example.com/"))
        #expect(!pattern.matches("https://app.example.com:8443/"))
        let paths = try #require(RedirectPattern("https://example.com/auth/*/done"))
        #expect(paths.matches("https://example.com/auth/a/b/done"))
        #expect(!paths.matches("https://example.com/other/done"))
        let subdomain = try #require(RedirectPattern("https://*.example.com/cb"))
        #expect(subdomain.matches("https://preview.example.com/cb"))
        #expect(!subdomain.matches("https://a.b.example.com/cb"))
        #expect(!subdomain.matches("https://evilexample.com/cb"))
        let custom = try #require(RedirectPattern("unify://auth-callback*"))
        #expect(custom.matches("unify://auth-callback?code=1"))
        #expect(!custom.matches("unify://auth-callback.evil/"))
        #expect(RedirectPattern("*://anything") == nil)
    }

    @Test("PKCE: s256 and plain by name only, both parts or neither, RFC 7636 challenges")
    func pkce() throws {
        let challenge = String(repeating: "a", count: 43)
        #expect(try PKCEChallenge.parse(challenge: nil, method: nil) == nil)
        #expect(try PKCEChallenge.parse(challenge: challenge, method: "S256")?.method == .s256)
        #expect(try PKCEChallenge.parse(challenge: challenge, method: "plain")?.method == .plain)
        #expect(throws: APIError.self) { try PKCEChallenge.parse(challenge: challenge, method: "md5") }
        #expect(throws: APIError.self) { try PKCEChallenge.parse(challenge: challenge, method: nil) }
        #expect(throws: APIError.self) { try PKCEChallenge.parse(challenge: nil, method: "s256") }
        #expect(throws: APIError.self) { try PKCEChallenge.parse(challenge: "short", method: "s256") }
        #expect(throws: APIError.self) { try PKCEChallenge.parse(challenge: challenge + "!", method: "s256") }
    }

    @Test("metadata: 16 KiB of JSON together, 8 levels deep")
    func metadata() throws {
        try MetadataLimits.check(user: ["bio": .string(String(repeating: "x", count: 16_000))], app: [:])
        #expect(throws: APIError.self) { try MetadataLimits.check(user: ["bio": .string(String(repeating: "x", count: 10_000))], app: ["notes": .string(String(repeating: "y", count: 10_000))]) }
        var deep = JSONValue.string("leaf")
        for _ in 0..<7 { deep = .object(["n": deep]) }
        try MetadataLimits.check(user: ["tree": deep], app: [:])
        #expect(throws: APIError.self) { try MetadataLimits.check(user: ["tree": .array([deep])], app: [:]) }
    }

    @Test("a code and link derive from their seed; Standard Webhooks signatures match the spec's example")
    func seedsAndSignatures() throws {
        let seed = Secrets.randomBytes(32)
        #expect(Secrets.numericCode(seed: seed) == Secrets.numericCode(seed: seed))
        #expect(Secrets.numericCode(seed: seed).count == 6 && Secrets.numericCode(seed: seed).allSatisfy(\.isNumber))
        #expect(Secrets.linkToken(seed: seed) != Secrets.linkToken(seed: Secrets.randomBytes(32)))
        // The example of standard-webhooks' specification.
        let secret = try #require(WebhookSecret("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"))
        let body = Array(#"{"test": 2432232314}"#.utf8)
        #expect(secret.signature(id: "msg_p5jXN8AQM9LWM0D4loKWxJek", timestamp: "1614265330", body: body) == "g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
        #expect(WebhookSecret("not-a-secret") == nil)
    }
}
