import AsyncHTTPClient
import AuthService
import ColonyModels
import ColonyPlatform
import ColonyTesting
import Crypto
import CryptoExtras
import Foundation
import Hummingbird
import JWTKit
import NIOCore
import NIOHTTP1
import Testing

/// The auth service from the outside: real Postgres, real broker, HTTP as clients speak it.
@Suite("Auth service", .serialized)
struct AuthServiceTests {
    let password = "correct-horse-1"

    func signUp(_ auth: RunningAuth, app: App = .mycirclee, email: String) async throws -> [String: Any] {
        let response = try await auth.request(.POST, "/signup", app: app, json: ["email": email, "password": password, "data": ["full_name": "Ada"]])
        #expect(response.status == 200, "\(response.json)")
        return response.json
    }

    /// GET without following the redirect, to see where a link sends the app.
    func withoutRedirects(_ url: String) async throws -> HTTPClientResponse {
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(redirectConfiguration: .disallow))
        do {
            let response = try await client.execute(HTTPClientRequest(url: url), timeout: .seconds(10))
            try await client.shutdown()
            return response
        } catch {
            try? await client.shutdown()
            throw error
        }
    }

    @Test("the official Supabase Python client passes its suite against the running service")
    func supabasePythonClient() async throws {
        // I Believe In You asks for a reauthentication code on every password change.
        try await withRunningAuth(configure: { $0.apps[.ibelieveinyou]?.reauthenticationWindowSeconds = 0 }) { auth in
            try await runSupabasePythonClient("test_supabase_client.py", against: auth)
        }
    }

    @Test("refresh tokens rotate; the parent returns the active token; replays inside the reuse interval work; later ones end the session")
    func refreshRotationAndReuseDetection() async throws {
        try await withRunningAuth { auth in
            let session = try await signUp(auth, email: "\(uniqueName("r"))@example.com")
            let t0 = try #require(session["refresh_token"] as? String)
            let first = try await auth.request(.POST, "/token?grant_type=refresh_token", json: ["refresh_token": t0])
            #expect(first.status == 200)
            let t1 = try #require(first.json["refresh_token"] as? String)
            #expect(t1 != t0)
            // A client that lost the answer presents t0 again: it gets the active t1 back.
            let lost = try await auth.request(.POST, "/token?grant_type=refresh_token", json: ["refresh_token": t0])
            #expect(lost.status == 200)
            #expect(lost.json["refresh_token"] as? String == t1)
            let second = try await auth.request(.POST, "/token?grant_type=refresh_token", json: ["refresh_token": t1])
            let t2 = try #require(second.json["refresh_token"] as? String)

            // Another session: a token two rotations old still works inside the 2 s reuse interval.
            let other = try await auth.request(.POST, "/token?grant_type=password", json: ["email": (session["user"] as? [String: Any])?["email"] as? String ?? "", "password": password])
            let b0 = try #require(other.json["refresh_token"] as? String)
            let b1 = try #require(try await auth.request(.POST, "/token?grant_type=refresh_token", json: ["refresh_token": b0]).json["refresh_token"] as? String)
            #expect(try await auth.request(.POST, "/token?grant_type=refresh_token", json: ["refresh_token": b1]).status == 200)
            let withinInterval = try await auth.request(.POST, "/token?grant_type=refresh_token", json: ["refresh_token": b0])
            #expect(withinInterval.status == 200, "\(withinInterval.json)")

            // After the interval, replaying t0 (neither active nor the active token's parent) is
            // theft: 400, and the whole session is revoked.
            try await Task.sleep(for: .milliseconds(2200))
            let replay = try await auth.request(.POST, "/token?grant_type=refresh_token", json: ["refresh_token": t0])
            #expect(replay.status == 400)
            #expect(replay.json["code"] as? String == "refresh_token_already_used")
            let afterRevocation = try await auth.request(.POST, "/token?grant_type=refresh_token", json: ["refresh_token": t2])
            #expect(afterRevocation.status == 400)
            let access = try #require(second.json["access_token"] as? String)
            #expect(try await auth.request(.GET, "/user", bearer: access).status == 403)
            // Two concurrent refreshes with one token (a client retrying): both get the same new token.
            let fresh = try await auth.request(.POST, "/token?grant_type=password", json: ["email": (session["user"] as? [String: Any])?["email"] as? String ?? "", "password": password])
            let c0 = try #require(fresh.json["refresh_token"] as? String)
            async let firstTry = auth.request(.POST, "/token?grant_type=refresh_token", json: ["refresh_token": c0])
            async let secondTry = auth.request(.POST, "/token?grant_type=refresh_token", json: ["refresh_token": c0])
            let (a, b) = try await (firstTry, secondTry)
            #expect(a.status == 200 && b.status == 200)
            #expect(a.json["refresh_token"] as? String == b.json["refresh_token"] as? String)

            let garbage = try await auth.request(.POST, "/token?grant_type=refresh_token", json: ["refresh_token": "nope"])
            #expect(garbage.json["code"] as? String == "refresh_token_not_found")
        }
    }

    @Test("another service's token middleware accepts auth's tokens and rejects expired, tampered and cross-app ones")
    func tokensAtAnotherService() async throws {
        // Tokens live 20 s: long enough for the checks below on a busy machine, then their expiry is
        // awaited (a deadline, not a fixed sleep).
        try await withRunningAuth(configure: { $0.apps[.mycirclee]?.accessTokenLifetimeSeconds = 20 }) { auth in
            let circles = TokenVerifier(configuration: TokenVerifierConfiguration(keySource: .jwks(URL(string: "\(auth.authURL)/.well-known/jwks.json")!), issuer: "colony-auth", audience: .mycirclee), logger: TestEnvironment.logger)
            let habits = TokenVerifier(configuration: TokenVerifierConfiguration(keySource: .jwks(URL(string: "\(auth.authURL)/.well-known/jwks.json")!), issuer: "colony-auth", audience: .habithive), logger: TestEnvironment.logger)
            let session = try await signUp(auth, email: "\(uniqueName("t"))@example.com")
            let token = try #require(session["access_token"] as? String)
            let user = try await circles.verify(token)
            #expect(user.app == .mycirclee)
            #expect(user.id.uuidString.lowercased() == ((session["user"] as? [String: Any])?["id"] as? String))

            var tampered = Array(token)
            tampered[tampered.count - 5] = tampered[tampered.count - 5] == "A" ? "B" : "A"
            await #expect(throws: APIError.self) { try await circles.verify(String(tampered)) }
            do {
                _ = try await habits.verify(token)
                Issue.record("a mycirclee token was accepted for habithive")
            } catch let error as APIError {
                #expect(error.status == .unauthorized)
            }
            try await waitUntil(timeout: .seconds(90)) {
                do {
                    _ = try await circles.verify(token)
                    return false
                } catch {
                    return (error as? APIError)?.code == "token_expired"
                }
            }
        }
    }

    @Test("rotating the signing key keeps tokens signed by the old key valid, and the JWKS lists both")
    func keyRotation() async throws {
        try await withTestDatabase(migrations: AuthService.migrations) { database in
            let ring = KeyRing(database: database, issuer: "colony-auth", retiredKeyRetentionSeconds: 3600, logger: TestEnvironment.logger)
            try await ring.ensureKeys()
            let claims = AccessTokenClaims(sub: UUID().uuidString.lowercased(), aud: "unify", iss: "colony-auth", exp: Date().addingTimeInterval(600))
            let old = try await ring.sign(claims)
            let newKid = try await ring.rotate()
            let new = try await ring.sign(claims)
            #expect(TokenVerifier.keyID(of: new) == newKid)
            #expect(TokenVerifier.keyID(of: old) != newKid)
            _ = try await ring.verify(old)
            _ = try await ring.verify(new)
            let jwks = try await ring.jwks()
            #expect(jwks.components(separatedBy: "\"kid\"").count - 1 == 2)
            // Other services verify both through the published set.
            let verifier = TokenVerifier(configuration: TokenVerifierConfiguration(keySource: .staticJWKS(jwks), issuer: "colony-auth", audience: .unify), logger: TestEnvironment.logger)
            _ = try await verifier.verify(old)
            _ = try await verifier.verify(new)
        }
    }

    @Test("email change, password recovery and logout scopes work as Supabase's do")
    func emailChangeRecoveryAndLogoutScopes() async throws {
        try await withRunningAuth { auth in
            let email = "\(uniqueName("c"))@example.com"
            let session = try await signUp(auth, email: email)
            let access = try #require(session["access_token"] as? String)

            // Email change (secure, the default): confirmed by the codes sent to the current and
            // the new address; the old address is told once it is done.
            let newEmail = "\(uniqueName("n"))@example.com"
            let pending = try await auth.request(.PUT, "/user", bearer: access, json: ["email": newEmail])
            #expect(pending.status == 200)
            #expect(pending.json["new_email"] as? String == newEmail)
            #expect(pending.json["email"] as? String == email)
            let code = try #require(try auth.lastMessage(to: newEmail)?.code)
            let currentCode = try #require(try auth.lastMessage(to: email)?.code)
            #expect(try auth.lastMessage(to: email)?.kind == "email_change")
            #expect(try await auth.request(.POST, "/verify", json: ["type": "email_change", "email": newEmail, "token": code == "000000" ? "000001" : "000000"]).status == 403)
            let half = try await auth.request(.POST, "/verify", json: ["type": "email_change", "email": email, "token": currentCode])
            #expect(half.status == 200, "\(half.json)")
            #expect(half.json["msg"] as? String == "Confirmation link accepted. Please proceed to confirm link sent to the other email")
            #expect(half.json["access_token"] == nil)
            #expect(half.json["email"] as? String == email && half.json["new_email"] as? String == newEmail)
            let changed = try await auth.request(.POST, "/verify", json: ["type": "email_change", "email": newEmail, "token": code])
            #expect(changed.status == 200, "\(changed.json)")
            #expect((changed.json["user"] as? [String: Any])?["email"] as? String == newEmail)
            let notice = try #require(try auth.lastMessage(to: email))
            #expect(notice.kind == "email_changed" && notice.code == nil && notice.text.contains(newEmail))

            // Recovery: the code signs in, then the password is replaced.
            #expect(try await auth.request(.POST, "/recover", json: ["email": newEmail]).status == 200)
            #expect(try await auth.request(.POST, "/recover", json: ["email": "nobody-\(uniqueName("x"))@example.com"]).status == 200)
            let recoveryCode = try #require(try await auth.waitForMessage(to: newEmail, kind: "recovery").code)
            let recovered = try await auth.request(.POST, "/verify", json: ["type": "recovery", "email": newEmail, "token": recoveryCode])
            let recoveredAccess = try #require(recovered.json["access_token"] as? String)
            #expect(try await auth.request(.PUT, "/user", bearer: recoveredAccess, json: ["password": "brand-new-pass"]).status == 200)
            #expect(try await auth.request(.POST, "/token?grant_type=password", json: ["email": newEmail, "password": "brand-new-pass"]).status == 200)
            // The new password ended the other sessions.
            #expect(try await auth.request(.GET, "/user", bearer: access).status == 403)

            // Logout scopes: others keeps this session, local ends only this one, global ends all.
            func signIn() async throws -> String {
                try #require(try await auth.request(.POST, "/token?grant_type=password", json: ["email": newEmail, "password": "brand-new-pass"]).json["access_token"] as? String)
            }
            let (a, b, c) = (try await signIn(), try await signIn(), try await signIn())
            #expect(try await auth.request(.POST, "/logout?scope=others", bearer: a).status == 204)
            #expect(try await auth.request(.GET, "/user", bearer: a).status == 200)
            #expect(try await auth.request(.GET, "/user", bearer: b).status == 403)
            let d = try await signIn()
            #expect(try await auth.request(.POST, "/logout?scope=local", bearer: a).status == 204)
            #expect(try await auth.request(.GET, "/user", bearer: a).status == 403)
            #expect(try await auth.request(.GET, "/user", bearer: d).status == 200)
            #expect(try await auth.request(.POST, "/logout?scope=global", bearer: d).status == 204)
            #expect(try await auth.request(.GET, "/user", bearer: d).status == 403)
            #expect(try await auth.request(.GET, "/user", bearer: c).status == 403)
            let e = try await signIn()
            #expect(try await auth.request(.POST, "/logout?scope=everything", bearer: e).status == 400)
        }
    }

    @Test("sign-up is rate limited per IP with 429 and Retry-After")
    func signUpRateLimit() async throws {
        try await withRunningAuth(configure: { $0.rateLimits.signUpPerIP = RateLimitRule.perRun(3) }) { auth in
            for _ in 0..<3 {
                _ = try await signUp(auth, email: "\(uniqueName("l"))@example.com")
            }
            let limited = try await auth.request(.POST, "/signup", json: ["email": "\(uniqueName("l"))@example.com", "password": password])
            #expect(limited.status == 429)
            #expect(limited.json["code"] as? String == "over_request_rate_limit")
            #expect(Int(limited.headers.first(name: "Retry-After") ?? "") ?? 0 >= 1)
        }
    }

    @Test("one send per recipient per minute: a second OTP request is 429")
    func otpSendRateLimit() async throws {
        try await withRunningAuth(configure: { $0.rateLimits.sendPerRecipient = RateLimitRule.perRun(1) }) { auth in
            let phone = "+1555\(Int.random(in: 1_000_000...9_999_999))"
            #expect(try await auth.request(.POST, "/otp", app: .habithive, json: ["phone": phone]).status == 200)
            let again = try await auth.request(.POST, "/otp", app: .habithive, json: ["phone": phone])
            #expect(again.status == 429)
            #expect(again.json["code"] as? String == "over_sms_send_rate_limit")
        }
    }

    @Test("the same email is 422 twice in one app and fine in another; events carry the app and the phone hash")
    func duplicatesAndEvents() async throws {
        let environment = try TestEnvironment.current()
        try await withRunningAuth { auth in
            let email = "\(uniqueName("d"))@example.com"
            let first = try await signUp(auth, app: .mycirclee, email: email)
            let duplicate = try await auth.request(.POST, "/signup", app: .mycirclee, json: ["email": email.uppercased(), "password": password])
            #expect(duplicate.status == 422)
            #expect(duplicate.json["code"] as? String == "user_already_exists")
            #expect(duplicate.headers.first(name: "X-Supabase-Api-Version") == "2024-01-01")
            let other = try await auth.request(.POST, "/signup", app: .ibelieveinyou, json: ["email": email, "password": password])
            #expect(other.status == 200)
            let firstID = try #require((first["user"] as? [String: Any])?["id"] as? String)
            #expect((other.json["user"] as? [String: Any])?["id"] as? String != firstID)

            // A phone user of HabitHive: user_registered carries the peppered phone hash.
            let phone = "+1555\(Int.random(in: 1_000_000...9_999_999))"
            #expect(try await auth.request(.POST, "/otp", app: .habithive, json: ["phone": phone]).status == 200)
            let code = try #require(try auth.lastMessage(to: phone)?.code)
            let verified = try await auth.request(.POST, "/verify", app: .habithive, json: ["type": "sms", "phone": phone, "token": code])
            #expect(verified.status == 200, "\(verified.json)")
            let phoneUserID = try #require((verified.json["user"] as? [String: Any])?["id"] as? String)

            // Deleting the account (the seeds' delete_user_account) emits user_deleted.
            let access = try #require(first["access_token"] as? String)
            #expect(try await auth.request(.DELETE, "/user", bearer: access).status == 204)
            #expect(try await auth.request(.POST, "/token?grant_type=password", json: ["email": email, "password": password]).json["code"] as? String == "invalid_credentials")

            let events = try await authEvents(brokers: environment.kafkaBrokers, prefix: auth.topicPrefix) { events in
                events.contains { $0.type == .userDeleted } && events.filter { $0.type == .userRegistered }.count == 3
            }
            let registered = try events.filter { $0.type == .userRegistered }.map { try $0.decode(UserRegistered.self) }
            #expect(registered.filter { $0.payload.email == email }.map(\.payload.app).sorted { $0.rawValue < $1.rawValue } == [.ibelieveinyou, .mycirclee])
            let phoneEvent = try #require(registered.first { $0.payload.userId.uuidString.lowercased() == phoneUserID })
            #expect(phoneEvent.payload.app == .habithive)
            #expect(phoneEvent.payload.phoneHash == Credentials.phoneHash(digits: String(phone.dropFirst()), pepper: "test-pepper"))
            let deleted = try events.filter { $0.type == .userDeleted }.map { try $0.decode(UserDeleted.self) }
            #expect(deleted.map { $0.payload.userId.uuidString.lowercased() } == [firstID])
            #expect(deleted.first?.aggregateId == firstID)
        }
    }

    @Test("users imported with Supabase bcrypt hashes sign in with their old passwords")
    func importThenSignIn() async throws {
        try await withRunningAuth { auth in
            // Supabase (Go's bcrypt) writes $2a$ hashes.
            let hash = "$2a$" + (try Bcrypt.hash("imported-secret", cost: 10)).dropFirst(4)
            let id = UUID()
            let email = "\(uniqueName("i"))@example.com"
            let csv = """
                id,email,encrypted_password,email_confirmed_at,raw_app_meta_data,raw_user_meta_data,created_at
                \(id.uuidString.lowercased()),\(email),\(hash),2024-05-01 10:00:00.123456+00,"{""provider"":""email"",""providers"":[""email""]}","{""full_name"":""Grace""}",2024-05-01 10:00:00+00
                """
            let records = try UserImportParser.parse(csv)
            #expect(records.count == 1)
            let settings = testAuthSettings(port: auth.port, mailDirectory: auth.mailDirectory)
            let database = Database(configuration: auth.database, logger: TestEnvironment.logger)
            try await withRunning(database) {
                let accounts = Accounts(
                    settings: settings, database: database, outbox: Outbox(schema: database.schema, topicPrefix: auth.topicPrefix),
                    keyRing: KeyRing(database: database, issuer: settings.issuer, retiredKeyRetentionSeconds: 60, logger: TestEnvironment.logger),
                    hasher: PasswordHasher(cost: 4, threads: 1), sender: FolderMessageSender(folder: auth.mailDirectory, logger: TestEnvironment.logger),
                    apple: AppleIdentityVerifier(keysURL: settings.appleKeysURL), logger: TestEnvironment.logger
                )
                let (imported, skipped) = try await accounts.importUsers(records, into: .unify)
                #expect(imported == 1 && skipped.isEmpty)
                let again = try await accounts.importUsers(records, into: .unify)
                #expect(again.imported == 0 && again.skipped.count == 1)
            }
            let signIn = try await auth.request(.POST, "/token?grant_type=password", app: .unify, json: ["email": email, "password": "imported-secret"])
            #expect(signIn.status == 200, "\(signIn.json)")
            let user = try #require(signIn.json["user"] as? [String: Any])
            #expect(user["id"] as? String == id.uuidString.lowercased())
            #expect((user["user_metadata"] as? [String: Any])?["full_name"] as? String == "Grace")
            #expect(try await auth.request(.POST, "/token?grant_type=password", app: .unify, json: ["email": email, "password": "wrong-secret"]).status == 400)
        }
    }

    @Test("a magic link redirects to the app with the session, and with an auth code under PKCE")
    func magicLinkRedirects() async throws {
        try await withRunningAuth { auth in
            let email = "\(uniqueName("m"))@example.com"
            #expect(try await auth.request(.POST, "/otp?redirect_to=mycirclee://auth-callback", json: ["email": email, "create_user": true]).status == 200)
            let link = try #require(try await auth.waitForMessage(to: email).link)
            let response = try await withoutRedirects(link)
            #expect(response.status == .seeOther)
            let location = try #require(response.headers.first(name: "Location"))
            #expect(location.hasPrefix("mycirclee://auth-callback#access_token="))
            // The same link twice: the app is told the link expired.
            let second = try await withoutRedirects(link)
            #expect(second.headers.first(name: "Location")?.contains("error_code=otp_expired") == true)

            // PKCE: the link hands an auth code, exchanged with the verifier.
            let verifier = "verifier-" + String(repeating: "x", count: 50)
            let challenge = Base64URL.encode(SHA256.hash(data: Data(verifier.utf8)))
            let other = "\(uniqueName("p"))@example.com"
            #expect(try await auth.request(.POST, "/otp", json: ["email": other, "code_challenge": challenge, "code_challenge_method": "s256"]).status == 200)
            let pkceLink = try #require(try await auth.waitForMessage(to: other).link)
            let redirected = try await withoutRedirects(pkceLink)
            let code = try #require(redirected.headers.first(name: "Location").flatMap { URLComponents(string: $0)?.queryItems?.first { $0.name == "code" }?.value })
            let exchanged = try await auth.request(.POST, "/token?grant_type=pkce", json: ["auth_code": code, "code_verifier": verifier])
            #expect(exchanged.status == 200, "\(exchanged.json)")
            #expect((exchanged.json["user"] as? [String: Any])?["email"] as? String == other)
            #expect(try await auth.request(.POST, "/token?grant_type=pkce", json: ["auth_code": code, "code_verifier": verifier]).status == 404)
        }
    }

    @Test("Sign in with Apple: verified token, nonce (required), bundle id; the first sign-in's name is kept")
    func signInWithApple() async throws {
        try await AppleStandIn.run { apple in
            try await withRunningAuth(appleKeysURL: apple.keysURL) { auth in
                let first = try await auth.request(.POST, "/token?grant_type=id_token", app: .habithive, json: [
                    "provider": "apple", "id_token": try await apple.idToken(nonce: "n-1"), "nonce": "n-1", "data": ["full_name": "Tim Apple"],
                ])
                #expect(first.status == 200, "\(first.json)")
                let user = try #require(first.json["user"] as? [String: Any])
                #expect((user["user_metadata"] as? [String: Any])?["full_name"] as? String == "Tim Apple")
                // Apple sends no name the second time; the first one stays.
                let second = try await auth.request(.POST, "/token?grant_type=id_token", app: .habithive, json: ["provider": "apple", "id_token": try await apple.idToken(nonce: "n-2"), "nonce": "n-2"])
                #expect(second.status == 200)
                #expect((second.json["user"] as? [String: Any])?["id"] as? String == user["id"] as? String)
                #expect(((second.json["user"] as? [String: Any])?["user_metadata"] as? [String: Any])?["full_name"] as? String == "Tim Apple")
                let badNonce = try await auth.request(.POST, "/token?grant_type=id_token", app: .habithive, json: ["provider": "apple", "id_token": try await apple.idToken(nonce: "n-3"), "nonce": "other"])
                #expect(badNonce.status == 400)
                let wrongApp = try await auth.request(.POST, "/token?grant_type=id_token", app: .habithive, json: ["provider": "apple", "id_token": try await apple.idToken(audience: "com.other.app", nonce: "n-4"), "nonce": "n-4"])
                #expect(wrongApp.status == 400)
                let disabled = try await auth.request(.POST, "/token?grant_type=id_token", app: .unify, json: ["provider": "apple", "id_token": try await apple.idToken(nonce: "n-5"), "nonce": "n-5"])
                #expect(disabled.status == 400)
                // The nonce is required: a token without one (or a request without one) is refused.
                let noNonce = try await auth.request(.POST, "/token?grant_type=id_token", app: .habithive, json: ["provider": "apple", "id_token": try await apple.idToken(nonce: nil)])
                #expect(noNonce.status == 400 && noNonce.json["code"] as? String == "bad_oauth_callback", "\(noNonce.json)")
                let tokenWithoutNonce = try await auth.request(.POST, "/token?grant_type=id_token", app: .habithive, json: ["provider": "apple", "id_token": try await apple.idToken(nonce: nil), "nonce": "n-6"])
                #expect(tokenWithoutNonce.status == 400)
                let requestWithoutNonce = try await auth.request(.POST, "/token?grant_type=id_token", app: .habithive, json: ["provider": "apple", "id_token": try await apple.idToken(nonce: "n-7")])
                #expect(requestWithoutNonce.status == 400 && requestWithoutNonce.json["code"] as? String == "bad_oauth_callback")
            }
        }
    }

    @Test("API keys, malformed bodies, unknown grants and admin endpoints answer as Supabase Auth does")
    func errorsAndAdmin() async throws {
        try await withRunningAuth { auth in
            #expect(try await auth.request(.GET, "/settings", apiKey: "").status == 401)
            #expect(try await auth.request(.GET, "/settings", apiKey: "not-a-key").json["code"] as? String == "invalid_api_key")
            let settings = try await auth.request(.GET, "/settings", app: .habithive)
            #expect((settings.json["external"] as? [String: Any])?["phone"] as? Bool == true)
            #expect(try await auth.request(.POST, "/token?grant_type=magic", json: [:]).json["code"] as? String == "unsupported_grant_type")
            #expect(try await auth.request(.POST, "/signup", json: ["email": "x@example.com", "password": "123"]).json["code"] as? String == "weak_password")
            #expect(try await auth.request(.POST, "/signup", json: ["email": "not-an-email", "password": password]).status == 422)
            #expect(try await auth.request(.POST, "/signup", app: .habithive, json: ["email": "\(uniqueName("e"))@example.com", "password": password]).json["code"] as? String == "email_provider_disabled")
            #expect(try await auth.request(.GET, "/user").json["code"] as? String == "no_authorization")
            #expect(try await auth.request(.GET, "/user", bearer: "a.b.c").status == 401)
            let jwks = try await HTTPClient.shared.execute(HTTPClientRequest(url: "\(auth.authURL)/.well-known/jwks.json"), timeout: .seconds(5))
            #expect(String(buffer: try await jwks.body.collect(upTo: 1 << 16)).contains(#""alg":"ES256""#))

            // Admin: the service-role key of the app only.
            let service = try #require(auth.serviceKeys[.unify])
            #expect(try await auth.request(.GET, "/admin/users", app: .unify, bearer: auth.anonKeys[.unify]).status == 403)
            let created = try await auth.request(.POST, "/admin/users", app: .unify, bearer: service, apiKey: service, json: ["email": "\(uniqueName("a"))@example.com", "password": password, "email_confirm": true, "user_metadata": ["name": "Admin Made"]])
            #expect(created.status == 200, "\(created.json)")
            let id = try #require(created.json["id"] as? String)
            let list = try await auth.request(.GET, "/admin/users?per_page=10", app: .unify, bearer: service, apiKey: service)
            #expect((list.json["users"] as? [[String: Any]])?.contains { $0["id"] as? String == id } == true)
            // Another app's service key sees nothing of unify's users.
            let foreign = try #require(auth.serviceKeys[.mycirclee])
            #expect(try await auth.request(.GET, "/admin/users/\(id)", app: .mycirclee, bearer: foreign, apiKey: foreign).status == 404)
            let updated = try await auth.request(.PUT, "/admin/users/\(id)", app: .unify, bearer: service, apiKey: service, json: ["user_metadata": ["name": "Renamed"]])
            #expect((updated.json["user_metadata"] as? [String: Any])?["name"] as? String == "Renamed")
            #expect(try await auth.request(.DELETE, "/admin/users/\(id)", app: .unify, bearer: service, apiKey: service).status == 200)
            #expect(try await auth.request(.GET, "/admin/users/\(id)", app: .unify, bearer: service, apiKey: service).status == 404)
        }
    }
}
