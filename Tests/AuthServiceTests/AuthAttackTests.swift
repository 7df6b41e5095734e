import AsyncHTTPClient
import AuthService
import ColonyModels
import ColonyPlatform
import ColonyTesting
import Crypto
import Foundation
import Hummingbird
import NIOCore
import NIOHTTP1
import Synchronization
import Testing

/// Issue 17's attacks, each run as the attacker would run it against the real service, and
/// refused. Every one of them succeeded before the fix.
@Suite("Auth attacks", .serialized)
struct AuthAttackTests {
    let attackerPassword = "attacker-pass-1"

    func session(_ response: (status: Int, json: [String: Any], headers: HTTPHeaders)) throws -> (access: String, refresh: String, userID: String) {
        (try #require(response.json["access_token"] as? String, "\(response.json)"),
         try #require(response.json["refresh_token"] as? String),
         try #require((response.json["user"] as? [String: Any])?["id"] as? String))
    }

    /// Follows no redirect: where a mailed link sends the app.
    func location(of link: String) async throws -> String {
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(redirectConfiguration: .disallow))
        defer { _ = client.shutdown() }
        let response = try await client.execute(HTTPClientRequest(url: link), timeout: .seconds(15))
        return try #require(response.headers.first(name: "Location"))
    }

    /// The session in a link redirect's fragment.
    func fragmentSession(_ location: String) throws -> (access: String, refresh: String) {
        let fragment = try #require(location.split(separator: "#", maxSplits: 1).last)
        let items = Dictionary(uniqueKeysWithValues: fragment.split(separator: "&").map { pair -> (String, String) in
            let parts = pair.split(separator: "=", maxSplits: 1)
            return (String(parts[0]), String(parts.count > 1 ? parts[1] : "").removingPercentEncoding ?? "")
        })
        return (try #require(items["access_token"], "\(location)"), try #require(items["refresh_token"]))
    }

    /// The squatter's password and sessions no longer open the account.
    func expectLockedOut(_ auth: RunningAuth, app: App, email: String? = nil, phone: String? = nil, squatter: (access: String, refresh: String, userID: String)?) async throws {
        let signIn = try await auth.signIn(app: app, email: email, phone: phone, password: attackerPassword)
        #expect(signIn.status == 400 && signIn.json["code"] as? String == "invalid_credentials", "the squatter's password still works: \(signIn.status) \(signIn.json)")
        if let squatter {
            #expect(try await auth.request(.GET, "/user", app: app, bearer: squatter.access).status == 403, "the squatter's session survived")
            #expect(try await auth.refresh(squatter.refresh, app: app).status == 400, "the squatter's refresh token survived")
        }
    }

    // MARK: 1. pre-account hijacking

    @Test("pre-hijack through a magic link: the attacker's password and session die when the owner signs in")
    func preHijackThroughMagicLink() async throws {
        try await withRunningAuth { auth in
            let victim = "\(uniqueName("victim"))@example.com"
            // MyCirclee autoconfirms: the attacker gets a session for the victim's address at once.
            let squatter = try session(try await auth.request(.POST, "/signup", json: ["email": victim, "password": attackerPassword, "data": ["full_name": "Not You"]]))
            // Months later the owner signs in with a magic link.
            #expect(try await auth.request(.POST, "/otp", json: ["email": victim]).status == 200)
            let link = try #require(try await auth.waitForMessage(to: victim).link)
            let owner = try fragmentSession(try await location(of: link))
            #expect(try await auth.request(.GET, "/user", bearer: owner.access).json["email"] as? String == victim)
            try await expectLockedOut(auth, app: .mycirclee, email: victim, squatter: squatter)
            // The owner's own session is untouched by the clean-up.
            #expect(try await auth.request(.GET, "/user", bearer: owner.access).status == 200)
        }
    }

    @Test("pre-hijack through an SMS code: phone + password squatted, the owner's OTP sign-in clears it")
    func preHijackThroughSMSCode() async throws {
        // An operator who offers phone + password somewhere (no seed app does).
        try await withRunningAuth(configure: { $0.apps[.habithive]?.phonePasswordEnabled = true }) { auth in
            let phone = "+1555\(Int.random(in: 1_000_000...9_999_999))"
            let squat = try await auth.request(.POST, "/signup", app: .habithive, json: ["phone": phone, "password": attackerPassword])
            #expect(squat.status == 200, "\(squat.json)")
            // The owner signs in with a texted code.
            #expect(try await auth.request(.POST, "/otp", app: .habithive, json: ["phone": phone]).status == 200)
            let code = try #require(try auth.lastMessage(to: phone)?.code)
            let owner = try await auth.request(.POST, "/verify", app: .habithive, json: ["type": "sms", "phone": phone, "token": code])
            #expect(owner.status == 200, "\(owner.json)")
            try await expectLockedOut(auth, app: .habithive, phone: phone, squatter: nil)
        }
    }

    @Test("pre-hijack through Sign in with Apple: Apple's verified email takes the account back")
    func preHijackThroughApple() async throws {
        try await AppleStandIn.run { apple in
            try await withRunningAuth(appleKeysURL: apple.keysURL) { auth in
                let victim = "\(uniqueName("relay"))@privaterelay.appleid.com"
                // SocialSpot autoconfirms email sign-ups.
                let squatter = try session(try await auth.request(.POST, "/signup", app: .socialspot, json: ["email": victim, "password": attackerPassword]))
                let owner = try await auth.request(.POST, "/token?grant_type=id_token", app: .socialspot, json: [
                    "provider": "apple", "id_token": try await apple.idToken(audience: "com.socialspot.app", subject: uniqueName("apple"), email: victim, nonce: "n-1"), "nonce": "n-1",
                ])
                #expect(owner.status == 200, "\(owner.json)")
                try await expectLockedOut(auth, app: .socialspot, email: victim, squatter: squatter)
                let ownerAccess = try #require(owner.json["access_token"] as? String)
                #expect(try await auth.request(.GET, "/user", app: .socialspot, bearer: ownerAccess).status == 200)
            }
        }
    }

    @Test("phone + password sign-up on HabitHive (OTP and Apple only) is refused and sends nothing")
    func phonePasswordSignUpOnHabitHive() async throws {
        try await withRunningAuth { auth in
            let phone = "+1555\(Int.random(in: 1_000_000...9_999_999))"
            let squat = try await auth.request(.POST, "/signup", app: .habithive, json: ["phone": phone, "password": attackerPassword])
            #expect(squat.status == 422 && squat.json["code"] as? String == "phone_provider_disabled", "\(squat.status) \(squat.json)")
            #expect(try auth.lastMessage(to: phone) == nil)
            // So the owner's first OTP sign-in creates a fresh account with no password on it.
            #expect(try await auth.request(.POST, "/otp", app: .habithive, json: ["phone": phone]).status == 200)
            let code = try #require(try auth.lastMessage(to: phone)?.code)
            #expect(try await auth.request(.POST, "/verify", app: .habithive, json: ["type": "sms", "phone": phone, "token": code]).status == 200)
            #expect(try await auth.signIn(app: .habithive, phone: phone, password: attackerPassword).status == 422)
        }
    }

    // MARK: 2. the client's address

    @Test("a spoofed X-Forwarded-For through the real nginx gateway still hits the per-address limit")
    func spoofedForwardedForThroughGateway() async throws {
        try await withRunningAuth(configure: { $0.rateLimits.signUpPerIP = RateLimitRule.perRun(3) }) { auth in
            try await LocalGateway.run(authPort: auth.port) { gateway in
                var statuses: [Int] = []
                for attempt in 0..<5 {
                    // A new made-up address on every request, as a bypass would send.
                    let response = try await auth.request(.POST, "/signup", json: ["email": "\(uniqueName("spoof"))@example.com", "password": "correct-horse-1"],
                                                          headers: [("X-Forwarded-For", "203.0.113.\(attempt + 1)")], through: gateway.base)
                    statuses.append(response.status)
                    if response.status == 429 { #expect(Int(response.headers.first(name: "Retry-After") ?? "") ?? 0 >= 1) }
                }
                #expect(statuses == [200, 200, 200, 429, 429], "\(statuses)")
                // The gateway logs paths, never query strings (links carry tokens there).
                _ = try await auth.request(.GET, "/verify?token=secret-link-token-42&type=magiclink", through: gateway.base)
                try await waitUntil { gateway.accessLog.contains("/auth/v1/verify") }
                #expect(!gateway.accessLog.contains("secret-link-token-42"))
            }
        }
    }

    // MARK: 3. abuse budgets

    @Test("a stranger's wrong passwords from elsewhere cannot lock the owner out")
    func strangerCannotLockOutOwner() async throws {
        try await withRunningAuth(configure: { $0.rateLimits.signInPerAccount = RateLimitRule.perRun(5) }) { auth in
            let email = "\(uniqueName("owner"))@example.com"
            #expect(try await auth.request(.POST, "/signup", json: ["email": email, "password": "owner-pass-1"]).status == 200)
            var strangerStatuses: [Int] = []
            for _ in 0..<8 {
                strangerStatuses.append(try await auth.signIn(email: email, password: "guess-\(Int.random(in: 0...99999))", headers: [("X-Forwarded-For", "203.0.113.66")]).status)
            }
            #expect(strangerStatuses == [400, 400, 400, 400, 400, 429, 429, 429], "\(strangerStatuses)")
            // The owner, from their own address, signs in (and their successes never count).
            for _ in 0..<7 {
                let owner = try await auth.signIn(email: email, password: "owner-pass-1", headers: [("X-Forwarded-For", "198.51.100.7")])
                #expect(owner.status == 200, "the owner was locked out: \(owner.status) \(owner.json)")
            }
        }
    }

    @Test("guessing an OTP across re-sent codes stops at the recipient's budget, even for the right code")
    func otpGuessingAcrossCodes() async throws {
        try await withRunningAuth(configure: { $0.rateLimits.verifyFailuresPerRecipient = RateLimitRule.perRun(10) }) { auth in
            let phone = "+1555\(Int.random(in: 1_000_000...9_999_999))"
            func wrong(than code: String) -> String { String(format: "%06d", (Int(code)! + Int.random(in: 1...999_999)) % 1_000_000) }
            for round in 0..<2 {
                // Ask for a code, spend its five tries, ask again: a fresh code, five more tries…
                #expect(try await auth.request(.POST, "/otp", app: .habithive, json: ["phone": phone]).status == 200)
                let code = try #require(try auth.lastMessage(to: phone)?.code)
                for _ in 0..<5 {
                    let guess = try await auth.request(.POST, "/verify", app: .habithive, json: ["type": "sms", "phone": phone, "token": wrong(than: code)])
                    #expect(guess.status == 403, "round \(round): \(guess.status) \(guess.json)")
                }
            }
            // …until the budget (10 per hour) is spent: even a lucky guess is refused now.
            #expect(try await auth.request(.POST, "/otp", app: .habithive, json: ["phone": phone]).status == 200)
            let code = try #require(try auth.lastMessage(to: phone)?.code)
            let lucky = try await auth.request(.POST, "/verify", app: .habithive, json: ["type": "sms", "phone": phone, "token": code])
            #expect(lucky.status == 429 && lucky.json["code"] as? String == "over_request_rate_limit", "\(lucky.status) \(lucky.json)")
            #expect(Int(lucky.headers.first(name: "Retry-After") ?? "") ?? 0 >= 1)
        }
    }

    // MARK: 4. sensitive changes need proof

    @Test("with a session that signed in long ago, password change, email change and deletion need proof")
    func sensitiveChangesNeedProof() async throws {
        try await withRunningAuth { auth in
            let email = "\(uniqueName("owner"))@example.com"
            let owner = try session(try await auth.request(.POST, "/signup", json: ["email": email, "password": "owner-pass-1"]))
            // The attacker holds the owner's session, signed in two days ago (a stolen phone, a
            // leaked refresh token).
            _ = try await auth.withDatabase { database in
                try await database.query("UPDATE sessions SET created_at = now() - interval '2 days' WHERE user_id = \(UUID(uuidString: owner.userID)!)")
            }
            let stolen = try session(try await auth.refresh(owner.refresh))

            let password = try await auth.request(.PUT, "/user", bearer: stolen.access, json: ["password": attackerPassword])
            #expect(password.status == 400 && password.json["code"] as? String == "reauthentication_needed", "\(password.status) \(password.json)")
            let guessed = try await auth.request(.PUT, "/user", bearer: stolen.access, json: ["password": attackerPassword, "nonce": "123456"])
            #expect(guessed.status == 422 && guessed.json["code"] as? String == "reauthentication_not_valid", "\(guessed.status) \(guessed.json)")
            #expect(try await auth.signIn(email: email, password: attackerPassword).status == 400)
            #expect(try await auth.signIn(email: email, password: "owner-pass-1").status == 200)

            // Email change to the attacker's mailbox: the attacker confirms their own address,
            // but the owner's address must agree too, and is told.
            let attackerMail = "\(uniqueName("attacker"))@example.com"
            #expect(try await auth.request(.PUT, "/user", bearer: stolen.access, json: ["email": attackerMail]).status == 200)
            let attackerCode = try #require(try auth.lastMessage(to: attackerMail)?.code)
            let half = try await auth.request(.POST, "/verify", json: ["type": "email_change", "email": attackerMail, "token": attackerCode])
            #expect(half.status == 200 && half.json["access_token"] == nil, "\(half.json)")
            #expect(try auth.lastMessage(to: email)?.text.contains(attackerMail) == true, "the owner was not asked")
            let user = try await auth.request(.GET, "/user", bearer: stolen.access)
            #expect(user.json["email"] as? String == email, "the email moved without the owner: \(user.json)")
            #expect(try await auth.signIn(email: attackerMail, password: "owner-pass-1").status == 400)

            let deletion = try await auth.request(.DELETE, "/user", bearer: stolen.access)
            #expect(deletion.status == 400 && deletion.json["code"] as? String == "reauthentication_needed", "\(deletion.status) \(deletion.json)")
            #expect(try await auth.signIn(email: email, password: "owner-pass-1").status == 200, "the account was deleted")

            // The owner, with a code from their mailbox, may do all of it.
            #expect(try await auth.request(.GET, "/reauthenticate", bearer: stolen.access).status == 200)
            let nonce = try #require(try auth.lastMessage(to: email).flatMap { $0.kind == "reauthentication" ? $0.code : nil })
            #expect(try await auth.request(.PUT, "/user", bearer: stolen.access, json: ["password": "owner-pass-2", "nonce": nonce]).status == 200)
            #expect(try await auth.signIn(email: email, password: "owner-pass-2").status == 200)
            #expect(try await auth.request(.PUT, "/user", bearer: stolen.access, json: ["password": "owner-pass-3", "nonce": nonce]).json["code"] as? String == "reauthentication_not_valid", "a nonce works once")
            #expect(try await auth.request(.GET, "/reauthenticate", bearer: stolen.access).status == 200)
            let second = try #require(try auth.lastMessage(to: email)?.code)
            #expect(try await auth.request(.DELETE, "/user", bearer: stolen.access, json: ["nonce": second]).status == 204)
            #expect(try await auth.signIn(email: email, password: "owner-pass-2").status == 400)
        }
    }

    // MARK: 5. bounded metadata

    @Test("a 1 MiB user_metadata is 422 and nothing is written or published")
    func oversizedMetadata() async throws {
        let environment = try TestEnvironment.current()
        try await withRunningAuth { auth in
            let huge = String(repeating: "x", count: 1 << 20)
            let rejected = "\(uniqueName("huge"))@example.com"
            let signUp = try await auth.request(.POST, "/signup", json: ["email": rejected, "password": "correct-horse-1", "data": ["bio": huge]])
            #expect(signUp.status == 422 && signUp.json["code"] as? String == "metadata_too_large", "\(signUp.status) \(signUp.json)")
            #expect(try await auth.signIn(email: rejected, password: "correct-horse-1").json["code"] as? String == "invalid_credentials")
            let otp = try await auth.request(.POST, "/otp", json: ["email": rejected, "data": ["bio": huge]])
            #expect(otp.status == 422 && otp.json["code"] as? String == "metadata_too_large")
            #expect(try auth.lastMessage(to: rejected) == nil)

            // Under the body limit but over the metadata limit, on a signed-in account and by admin.
            let member = "\(uniqueName("member"))@example.com"
            let access = try session(try await auth.request(.POST, "/signup", json: ["email": member, "password": "correct-horse-1"])).access
            let twenty = String(repeating: "y", count: 20 * 1024)
            let update = try await auth.request(.PUT, "/user", bearer: access, json: ["data": ["bio": twenty]])
            #expect(update.status == 422 && update.json["code"] as? String == "metadata_too_large", "\(update.json)")
            var deep: Any = "leaf"
            for _ in 0..<10 { deep = ["nested": deep] }
            let tooDeep = try await auth.request(.PUT, "/user", bearer: access, json: ["data": ["tree": deep]])
            #expect(tooDeep.status == 422 && tooDeep.json["code"] as? String == "metadata_too_deep")
            #expect((try await auth.request(.GET, "/user", bearer: access).json["user_metadata"] as? [String: Any])?["bio"] == nil)
            let service = try #require(auth.serviceKeys[.mycirclee])
            let admin = try await auth.request(.POST, "/admin/users", bearer: service, apiKey: service, json: ["email": "\(uniqueName("adm"))@example.com", "user_metadata": ["bio": twenty]])
            #expect(admin.status == 422 && admin.json["code"] as? String == "metadata_too_large")

            // Nothing reached the outbox. Events that follow on the same keys arrive (a key's
            // events keep their order), the rejected never do: an accepted update of the member,
            // and the rejected address signing up again, now as a fresh account.
            #expect(try await auth.request(.PUT, "/user", bearer: access, json: ["data": ["bio": "short"]]).status == 200)
            #expect(try await auth.request(.POST, "/signup", json: ["email": rejected, "password": "correct-horse-1"]).status == 200, "the rejected sign-up left a row")
            let events = try await authEvents(brokers: environment.kafkaBrokers, prefix: auth.topicPrefix) { events in
                events.contains { $0.type == .userUpdated && (try? $0.decode(UserUpdated.self))?.payload.userMetadata["bio"] == .string("short") }
                    && events.contains { $0.type == .userRegistered && (try? $0.decode(UserRegistered.self))?.payload.email == rejected }
            }
            let updates = events.filter { $0.type == .userUpdated }.compactMap { try? $0.decode(UserUpdated.self).payload.userMetadata }
            #expect(updates.map { $0["bio"] } == [.string("short")], "a rejected update was published")
            let registrations = events.filter { $0.type == .userRegistered }.compactMap { try? $0.decode(UserRegistered.self).payload }.filter { $0.email == rejected }
            #expect(registrations.count == 1 && registrations.first?.userMetadata["bio"] == nil, "the rejected sign-up was published")
        }
    }

    // MARK: 6. smaller holes

    @Test("replaying the active token's parent after the reuse interval revokes the session")
    func parentTokenReplay() async throws {
        try await withRunningAuth { auth in
            let owner = try session(try await auth.request(.POST, "/signup", json: ["email": "\(uniqueName("r"))@example.com", "password": "correct-horse-1"]))
            let rotated = try session(try await auth.refresh(owner.refresh))
            // The attacker copied the first refresh token; the owner's app has moved on to its child.
            try await Task.sleep(for: .milliseconds(2300))  // the tests' reuse interval is 2 s
            let replay = try await auth.refresh(owner.refresh)
            #expect(replay.status == 400 && replay.json["code"] as? String == "refresh_token_already_used", "\(replay.status) \(replay.json)")
            #expect(try await auth.refresh(rotated.refresh).status == 400, "the session survived the replay")
            #expect(try await auth.request(.GET, "/user", bearer: rotated.access).status == 403)
        }
    }

    @Test("PKCE: an unknown challenge method is 400; s256 and an explicit plain are accepted")
    func pkceUnknownMethod() async throws {
        try await withRunningAuth { auth in
            let challenge = String(repeating: "c", count: 43)
            for (method, status) in [("md5", 400), ("", 400), ("S256", 200), ("plain", 200)] {
                var body: [String: Any] = ["email": "\(uniqueName("p"))@example.com", "code_challenge": challenge]
                if !method.isEmpty { body["code_challenge_method"] = method }
                let response = try await auth.request(.POST, "/otp", json: body)
                #expect(response.status == status, "method \(method): \(response.status) \(response.json)")
            }
            let shortChallenge = try await auth.request(.POST, "/otp", json: ["email": "\(uniqueName("p"))@example.com", "code_challenge": "short", "code_challenge_method": "s256"])
            #expect(shortChallenge.status == 400)
        }
    }

    @Test("a redirect pattern with * does not allow a look-alike host")
    func lookAlikeRedirect() async throws {
        try await withRunningAuth(configure: { $0.apps[.mycirclee]?.redirectUrls.append("https://app.example.com*") }) { auth in
            for (requested, allowed) in [
                ("https://app.example.com.evil.com/steal", false), ("https://app.example.com@evil.com/steal", false),
                ("https://app.example.comevil.net/", false), ("https://app.example.com/welcome", true),
            ] {
                let email = "\(uniqueName("l"))@example.com"
                let encoded = requested.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
                #expect(try await auth.request(.POST, "/otp?redirect_to=\(encoded)", json: ["email": email]).status == 200)
                let target = try await location(of: try #require(try await auth.waitForMessage(to: email).link))
                if allowed {
                    #expect(target.hasPrefix(requested + "#access_token="), "\(target)")
                } else {
                    #expect(target.hasPrefix("mycirclee://auth-callback#access_token="), "\(requested) was allowed: \(target)")
                }
            }
        }
    }

    @Test("a webhook delivery carries a Standard Webhooks signature the bridge can verify")
    func webhookSignature() async throws {
        struct Delivery: Sendable { var headers: [String: String]; var body: [UInt8] }
        let deliveries = Mutex<[Delivery]>([])
        let port = try freePort()
        let router = Router()
        router.post("messages") { request, _ -> HTTPResponse.Status in
            let body = try await request.body.collect(upTo: 1 << 20)
            var headers: [String: String] = [:]
            for field in request.headers { headers[field.name.canonicalName] = field.value }
            deliveries.withLock { $0.append(Delivery(headers: headers, body: Array(buffer: body))) }
            return .noContent
        }
        let bridge = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: port)), logger: TestEnvironment.logger)
        let key = (0..<32).map { _ in UInt8.random(in: 0...255) }
        let secret = "whsec_" + Data(key).base64EncodedString()
        try await withTestServer(bridge) {
            try await withRunningAuth(configure: { $0.sender = .webhook(URL(string: "http://127.0.0.1:\(port)/messages")!, secret: WebhookSecret(secret)!) }) { auth in
                let email = "\(uniqueName("w"))@example.com"
                #expect(try await auth.request(.POST, "/otp", json: ["email": email]).status == 200)
                // The magic link is queued: it reaches the bridge a moment after the answer.
                try await waitUntil(timeout: .seconds(20)) { deliveries.withLock { !$0.isEmpty } }
                let delivery = try #require(deliveries.withLock { $0.first })
                let id = try #require(delivery.headers["webhook-id"])
                let timestamp = try #require(delivery.headers["webhook-timestamp"])
                let signature = try #require(delivery.headers["webhook-signature"])
                // Verified as a bridge would, from the secret alone.
                func sign(_ body: [UInt8]) -> String {
                    "v1," + Data(HMAC<SHA256>.authenticationCode(for: Array("\(id).\(timestamp).".utf8) + body, using: SymmetricKey(data: key))).base64EncodedString()
                }
                #expect(signature == sign(delivery.body))
                #expect(abs(Double(timestamp)! - Date().timeIntervalSince1970) < 300)
                #expect(!id.isEmpty)
                let message = try JSONSerialization.jsonObject(with: Data(delivery.body)) as? [String: Any]
                #expect(message?["to"] as? String == email)
                // A forgery (the body changed) does not verify.
                var forged = delivery.body
                forged[forged.count / 2] ^= 1
                #expect(signature != sign(forged))
            }
        }
    }

    // MARK: 7. no known secrets

    @Test("a service started with a shipped default secret exits at once, naming the variable")
    func defaultSecretsAtStart() async throws {
        let strong = "Qm7vT2xK9pL4wR8zN3cH6jY1aB5dE0fG"
        let base = ["COLONY_PG_HOST": "127.0.0.1", "COLONY_PG_PORT": "1", "COLONY_PG_PASSWORD": strong, "COLONY_KAFKA_BROKERS": "127.0.0.1:1",
                    "COLONY_JWKS_URL": "http://127.0.0.1:1/jwks.json", "COLONY_HTTP_PORT": "1", "COLONY_AUTH_MAIL_DIR": NSTemporaryDirectory()]
        let cases: [(executable: String, arguments: [String], variable: String, environment: [String: String])] = [
            ("colony-circles", [], "COLONY_STORAGE_SIGNING_KEY", ["COLONY_STORAGE_SIGNING_KEY": "change-me-storage-signing-key-at-least-32-chars"]),
            ("colony-auth", [], "COLONY_AUTH_PHONE_PEPPER", ["COLONY_AUTH_PHONE_PEPPER": "change-me-phone-pepper"]),
            ("colony-habits", [], "COLONY_HABITS_PHONE_PEPPER", ["COLONY_HABITS_PHONE_PEPPER": "change-me-phone-pepper"]),
            ("colony-chat", [], "COLONY_PG_PASSWORD", ["COLONY_PG_PASSWORD": "colony", "COLONY_STORAGE_SIGNING_KEY": strong]),
            ("colony-admin", ["provision"], "COLONY_PG_ADMIN_PASSWORD", ["COLONY_PG_ADMIN_PASSWORD": "colony"]),
        ]
        for item in cases {
            let (status, output) = try await ExecutableRun.run(item.executable, item.arguments, environment: base.merging(item.environment) { $1 }, timeout: .seconds(60))
            #expect(status != nil && status != 0, "\(item.executable) with the default \(item.variable) did not exit: \(output)")
            #expect(output.contains(item.variable), "\(item.executable): \(output)")
            #expect(output.contains("known default"), "\(item.executable): \(output)")
        }
    }
}

/// Runs one of the package's executables (built beside the tests) with a deadline.
enum ExecutableRun {
    static func directory() throws -> URL {
        let candidates = [URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent(), Bundle.main.bundleURL.deletingLastPathComponent(),
                          PythonClient.repositoryRoot.appendingPathComponent(".build/debug")]
        guard let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0.appendingPathComponent("colony-auth").path) }) else {
            throw TestSetupError("the colony-* executables are not beside the tests (swift build --build-tests builds them)")
        }
        return found
    }

    /// The exit status (nil when it was still running at the deadline and was killed) and output.
    static func run(_ executable: String, _ arguments: [String], environment: [String: String], timeout: Duration) async throws -> (status: Int32?, output: String) {
        let process = Process()
        process.executableURL = try directory().appendingPathComponent(executable)
        process.arguments = arguments
        // This process's environment (library paths) without its Colony settings, plus the case's.
        process.environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("COLONY_") }.merging(environment) { $1 }
        let output = FileManager.default.temporaryDirectory.appendingPathComponent(uniqueName("out"))
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: output) }
        let handle = try FileHandle(forWritingTo: output)
        process.standardOutput = handle
        process.standardError = handle
        try process.run()
        let exited = (try? await waitUntil(timeout: timeout) { !process.isRunning }) != nil
        if !exited {
            process.terminate()
            process.waitUntilExit()
        }
        try handle.close()
        return (exited ? process.terminationStatus : nil, (try? String(contentsOf: output, encoding: .utf8)) ?? "")
    }
}
