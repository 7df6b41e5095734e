import AuthService
import ColonyModels
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

    @Test("refresh decisions follow Supabase's rotation rules")
    func refreshDecisions() {
        #expect(decide(revokedAgo: nil) == .rotate)
        #expect(decide(revokedAgo: 300, parent: true) == .returnActive)
        #expect(decide(revokedAgo: 5) == .rotateWithinReuseInterval)
        #expect(decide(revokedAgo: 11) == .reuseDetected)
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
