import AuthService
import ColonyModels
import ColonyPlatform
import ColonyTesting
import Foundation
import NIOHTTP1
import Testing

/// Anonymous users (`signInAnonymously`), as Supabase Auth has them: off unless the app's
/// settings say `anonymous_sign_ins`, `is_anonymous` in the token, the user and the admin API,
/// made permanent with their id kept by a confirmed address, budgeted per address, and erased
/// when never converted if the app says so.
@Suite("Auth anonymous users", .serialized)
struct AuthAnonymousTests {
    let password = "correct-horse-1"

    func claims(_ token: String) throws -> [String: Any] { try unverifiedClaims(token) }

    /// `is_anonymous` of the access token in a session answer.
    func anonymousClaim(_ session: [String: Any]) throws -> Bool? {
        let token = try #require(session["access_token"] as? String)
        return try claims(token)["is_anonymous"] as? Bool
    }

    func signInAnonymously(_ auth: RunningAuth, app: App = .mycirclee, data: [String: Any] = [:]) async throws -> (status: Int, json: [String: Any], headers: HTTPHeaders) {
        // What supabase clients send: no address, no password.
        try await auth.request(.POST, "/signup", app: app, json: ["data": data, "gotrue_meta_security": ["captcha_token": NSNull()]])
    }

    func anonymousOn(_ apps: App...) -> @Sendable (inout AuthSettings) -> Void {
        { settings in for app in apps { settings.apps[app]?.anonymousSignIns = true } }
    }

    @Test("off by default for every app: refused with anonymous_provider_disabled, and /settings says so")
    func offByDefault() async throws {
        try await withRunningAuth { auth in
            for app in App.allCases {
                let refused = try await signInAnonymously(auth, app: app)
                #expect(refused.status == 422, "\(app): \(refused.json)")
                #expect(refused.json["code"] as? String == "anonymous_provider_disabled")
                let settings = try await auth.request(.GET, "/settings", app: app)
                #expect((settings.json["external"] as? [String: Any])?["anonymous_users"] as? Bool == false)
            }
            // An address-less sign-up that names a password is no anonymous sign-in.
            let withPassword = try await auth.request(.POST, "/signup", json: ["password": password])
            #expect(withPassword.status == 422)
            #expect(withPassword.json["code"] as? String == "validation_failed")
            let count = try await auth.withDatabase { database in
                try await database.query("SELECT count(*)::int FROM users").collect().first?.decode(Int.self) ?? -1
            }
            #expect(count == 0)
        }
    }

    @Test("on: a session whose token, user and admin record say is_anonymous; data is the user's metadata; other apps stay off")
    func anonymousSession() async throws {
        try await withRunningAuth(configure: anonymousOn(.mycirclee)) { auth in
            let settings = try await auth.request(.GET, "/settings")
            #expect((settings.json["external"] as? [String: Any])?["anonymous_users"] as? Bool == true)
            let session = try await signInAnonymously(auth, data: ["full_name": "Guest"])
            #expect(session.status == 200, "\(session.json)")
            let token = try #require(session.json["access_token"] as? String)
            let tokenClaims = try claims(token)
            #expect(tokenClaims["is_anonymous"] as? Bool == true)
            #expect(tokenClaims["role"] as? String == "authenticated")
            #expect(tokenClaims["email"] as? String == "")
            #expect((tokenClaims["amr"] as? [[String: Any]])?.first?["method"] as? String == "anonymous")
            #expect((tokenClaims["user_metadata"] as? [String: Any])?["full_name"] as? String == "Guest")
            let user = try #require(session.json["user"] as? [String: Any])
            let id = try #require(user["id"] as? String)
            #expect(user["is_anonymous"] as? Bool == true)
            #expect(user["email"] as? String == "")
            #expect((user["identities"] as? [Any])?.isEmpty == true)

            let me = try await auth.request(.GET, "/user", bearer: token)
            #expect(me.status == 200)
            #expect(me.json["id"] as? String == id)
            #expect(me.json["is_anonymous"] as? Bool == true)
            // A refreshed token is still anonymous.
            let refreshed = try await auth.refresh(try #require(session.json["refresh_token"] as? String))
            #expect(try anonymousClaim(refreshed.json) == true)

            let service = try #require(auth.serviceKeys[.mycirclee])
            let listed = try await auth.request(.GET, "/admin/users", bearer: service)
            let users = try #require(listed.json["users"] as? [[String: Any]])
            #expect(users.first { $0["id"] as? String == id }?["is_anonymous"] as? Bool == true)
            let one = try await auth.request(.GET, "/admin/users/\(id)", bearer: service)
            #expect(one.json["is_anonymous"] as? Bool == true)

            let elsewhere = try await signInAnonymously(auth, app: .unify)
            #expect(elsewhere.json["code"] as? String == "anonymous_provider_disabled")
            // A password alone cannot be given to an account with no address.
            let passwordOnly = try await auth.request(.PUT, "/user", bearer: token, json: ["password": password])
            #expect(passwordOnly.status == 422)
            #expect(passwordOnly.json["code"] as? String == "validation_failed")
            // No second factor for an account with no address (GoTrue's requireNotAnonymous).
            let enroll = try await auth.request(.POST, "/factors", bearer: token, json: ["factor_type": "totp", "friendly_name": "phone"])
            #expect(enroll.status == 403, "\(enroll.json)")
            #expect(enroll.json["code"] as? String == "no_authorization")
            let unknownFactor = try await auth.request(.POST, "/factors/\(UUID().uuidString.lowercased())/challenge", bearer: token, json: [:])
            #expect(unknownFactor.status == 403)
        }
    }

    @Test("an app that autoconfirms: PUT /user with email and password converts at once, the id kept; user_updated tells the services")
    func conversionAutoconfirmed() async throws {
        let environment = try TestEnvironment.current()
        try await withRunningAuth(configure: anonymousOn(.mycirclee)) { auth in
            let session = try await signInAnonymously(auth, data: ["full_name": "Guest"])
            let token = try #require(session.json["access_token"] as? String)
            let id = try #require((session.json["user"] as? [String: Any])?["id"] as? String)
            let email = "\(uniqueName("anon"))@example.com"
            let updated = try await auth.request(.PUT, "/user", bearer: token, json: ["email": email, "password": password])
            #expect(updated.status == 200, "\(updated.json)")
            #expect(updated.json["id"] as? String == id)
            #expect(updated.json["is_anonymous"] as? Bool == false)
            #expect(updated.json["email"] as? String == email)
            let identities = updated.json["identities"] as? [[String: Any]] ?? []
            let providers: [String] = identities.compactMap { $0["provider"] as? String }
            #expect(providers == ["email"])
            // The next token says so; the password signs in to the same account.
            let refreshed = try await auth.refresh(try #require(session.json["refresh_token"] as? String))
            #expect(try anonymousClaim(refreshed.json) == false)
            let signedIn = try await auth.signIn(email: email, password: password)
            #expect(signedIn.status == 200, "\(signedIn.json)")
            #expect((signedIn.json["user"] as? [String: Any])?["id"] as? String == id)
            let events = try await authEvents(brokers: environment.kafkaBrokers, prefix: auth.topicPrefix) { events in
                events.contains { $0.type == .userUpdated }
            }
            let update = try #require(events.first { $0.type == .userUpdated }).decode(UserUpdated.self)
            #expect(update.payload.userId.uuidString.lowercased() == id)
            #expect(update.payload.email == email)
        }
    }

    @Test("an app that confirms: the account stays anonymous until the code from the new address, then converts with its id")
    func conversionConfirmed() async throws {
        try await withRunningAuth(configure: anonymousOn(.unify)) { auth in
            let session = try await signInAnonymously(auth, app: .unify)
            let token = try #require(session.json["access_token"] as? String)
            let id = try #require((session.json["user"] as? [String: Any])?["id"] as? String)
            let email = "\(uniqueName("anon"))@example.com"
            let updated = try await auth.request(.PUT, "/user", app: .unify, bearer: token, json: ["email": email, "password": password])
            #expect(updated.status == 200, "\(updated.json)")
            #expect(updated.json["is_anonymous"] as? Bool == true)
            #expect(updated.json["new_email"] as? String == email)
            #expect(updated.json["email"] as? String == "")
            let unconfirmed = try await auth.signIn(app: .unify, email: email, password: password)
            #expect(unconfirmed.status == 400)
            let code = try #require(try auth.lastMessage(to: email)?.code)
            let verified = try await auth.request(.POST, "/verify", app: .unify, json: ["type": "email_change", "email": email, "token": code])
            #expect(verified.status == 200, "\(verified.json)")
            let user = try #require(verified.json["user"] as? [String: Any])
            #expect(user["id"] as? String == id)
            #expect(user["is_anonymous"] as? Bool == false)
            #expect(user["email"] as? String == email)
            #expect(try anonymousClaim(verified.json) == false)
            let signedIn = try await auth.signIn(app: .unify, email: email, password: password)
            #expect(signedIn.status == 200, "\(signedIn.json)")
            #expect((signedIn.json["user"] as? [String: Any])?["id"] as? String == id)
        }
    }

    @Test("by phone: permanent once the texted code is verified")
    func conversionByPhone() async throws {
        try await withRunningAuth(configure: anonymousOn(.habithive)) { auth in
            let session = try await signInAnonymously(auth, app: .habithive)
            let token = try #require(session.json["access_token"] as? String)
            let id = try #require((session.json["user"] as? [String: Any])?["id"] as? String)
            let digits = "49151\(Int.random(in: 10_000_000...99_999_999))"
            let updated = try await auth.request(.PUT, "/user", app: .habithive, bearer: token, json: ["phone": "+\(digits)"])
            #expect(updated.status == 200, "\(updated.json)")
            #expect(updated.json["is_anonymous"] as? Bool == true)
            let code = try #require(try auth.lastMessage(to: "+\(digits)")?.code)
            let verified = try await auth.request(.POST, "/verify", app: .habithive, json: ["type": "phone_change", "phone": digits, "token": code])
            #expect(verified.status == 200, "\(verified.json)")
            let user = try #require(verified.json["user"] as? [String: Any])
            #expect(user["id"] as? String == id)
            #expect(user["is_anonymous"] as? Bool == false)
            #expect(user["phone"] as? String == digits)
        }
    }

    @Test("an anonymous account needs no reauthentication code (it has no address to get one): converting and deleting from an old session")
    func noReauthenticationWithoutAddress() async throws {
        try await withRunningAuth(configure: { settings in
            settings.apps[.mycirclee]?.anonymousSignIns = true
            settings.apps[.mycirclee]?.reauthenticationWindowSeconds = 0  // every session counts as signed in long ago
        }) { auth in
            let first = try await signInAnonymously(auth)
            let converting = try #require(first.json["access_token"] as? String)
            let email = "\(uniqueName("old"))@example.com"
            let converted = try await auth.request(.PUT, "/user", bearer: converting, json: ["email": email, "password": password])
            #expect(converted.status == 200, "\(converted.json)")
            #expect(converted.json["is_anonymous"] as? Bool == false)
            // Permanent now: the next password change needs the code, as for everyone.
            let again = try await auth.request(.PUT, "/user", bearer: converting, json: ["password": "another-horse-2"])
            #expect(again.status == 400)
            #expect(again.json["code"] as? String == "reauthentication_needed")

            let second = try await signInAnonymously(auth)
            let leaving = try #require(second.json["access_token"] as? String)
            let deleted = try await auth.request(.DELETE, "/user", bearer: leaving)
            #expect(deleted.status == 204, "\(deleted.json)")
            #expect(try await auth.request(.GET, "/user", bearer: leaving).status == 403)
        }
    }

    @Test("an address another account holds is refused with email_exists, and the account stays anonymous")
    func emailTaken() async throws {
        try await withRunningAuth(configure: anonymousOn(.mycirclee, .unify)) { auth in
            for app in [App.mycirclee, .unify] {
                let email = "\(uniqueName("taken"))@example.com"
                let service = try #require(auth.serviceKeys[app])
                let owner = try await auth.request(.POST, "/admin/users", app: app, bearer: service, json: ["email": email, "password": password, "email_confirm": true])
                #expect(owner.status == 200, "\(owner.json)")
                let session = try await signInAnonymously(auth, app: app)
                let token = try #require(session.json["access_token"] as? String)
                let refused = try await auth.request(.PUT, "/user", app: app, bearer: token, json: ["email": email.uppercased(), "password": password])
                #expect(refused.status == 422, "\(app): \(refused.json)")
                #expect(refused.json["code"] as? String == "email_exists")
                let me = try await auth.request(.GET, "/user", app: app, bearer: token)
                #expect(me.json["is_anonymous"] as? Bool == true)
                #expect(me.json["email"] as? String == "")
                // The owner's password still signs in.
                #expect(try await auth.signIn(app: app, email: email, password: password).status == 200)
            }
        }
    }

    @Test("anonymous sign-ins are budgeted per address (COLONY_AUTH_RATE_ANONYMOUS_IP), and the default is GoTrue's 30 an hour")
    func budgetPerAddress() async throws {
        #expect(RateLimitSettings().anonymousPerIP == RateLimitRule(30, per: 3600))
        try await withRunningAuth(configure: { settings in
            settings.apps[.mycirclee]?.anonymousSignIns = true
            settings.rateLimits.anonymousPerIP = RateLimitRule.perRun(3)
        }) { auth in
            for _ in 0..<3 { #expect(try await signInAnonymously(auth).status == 200) }
            let over = try await signInAnonymously(auth)
            #expect(over.status == 429, "\(over.json)")
            #expect(over.json["code"] as? String == "over_request_rate_limit")
            let retryAfter: Int = over.headers.first(name: "Retry-After").flatMap { Int($0) } ?? 0
            #expect(retryAfter > 0)
            // Sign-ups with an address are not counted against it.
            let signUp = try await auth.request(.POST, "/signup", json: ["email": "\(uniqueName("b"))@example.com", "password": password])
            #expect(signUp.status == 200)
            let count = try await auth.withDatabase { database in
                try await database.query("SELECT count(*)::int FROM users WHERE is_anonymous").collect().first?.decode(Int.self) ?? -1
            }
            #expect(count == 3)
        }
    }

    @Test("never-converted anonymous accounts older than anonymous_cleanup_days are erased with user_deleted; newer and converted ones stay")
    func cleanup() async throws {
        let environment = try TestEnvironment.current()
        let configure: @Sendable (inout AuthSettings) -> Void = { settings in
            settings.apps[.mycirclee]?.anonymousSignIns = true
            settings.apps[.mycirclee]?.anonymousCleanupDays = 7
            settings.apps[.unify]?.anonymousSignIns = true  // no cleanup for Unify
        }
        try await withRunningAuth(configure: configure) { auth in
            func anonymousID(_ app: App) async throws -> (id: String, token: String) {
                let session = try await signInAnonymously(auth, app: app)
                return (try #require((session.json["user"] as? [String: Any])?["id"] as? String), try #require(session.json["access_token"] as? String))
            }
            let old = try await anonymousID(.mycirclee)
            let fresh = try await anonymousID(.mycirclee)
            let converted = try await anonymousID(.mycirclee)
            let otherApp = try await anonymousID(.unify)
            let updated = try await auth.request(.PUT, "/user", bearer: converted.token, json: ["email": "\(uniqueName("c"))@example.com", "password": password])
            #expect(updated.json["is_anonymous"] as? Bool == false)
            let deleted = try await auth.withDatabase { database in
                try await database.query("UPDATE users SET created_at = now() - interval '8 days' WHERE id = ANY(\([old.id, converted.id, otherApp.id].compactMap(UUID.init(uuidString:))))")
                var settings = testAuthSettings(port: auth.port, mailDirectory: auth.mailDirectory)
                configure(&settings)
                return try await AnonymousUserCleanup.run(settings: settings, database: database, outbox: Outbox(schema: database.schema, topicPrefix: auth.topicPrefix), logger: TestEnvironment.logger)
            }
            #expect(deleted == 1)
            let service = try #require(auth.serviceKeys[.mycirclee])
            #expect(try await auth.request(.GET, "/admin/users/\(old.id)", bearer: service).status == 404)
            #expect(try await auth.request(.GET, "/admin/users/\(fresh.id)", bearer: service).status == 200)
            #expect(try await auth.request(.GET, "/admin/users/\(converted.id)", bearer: service).status == 200)
            let unifyService = try #require(auth.serviceKeys[.unify])
            #expect(try await auth.request(.GET, "/admin/users/\(otherApp.id)", app: .unify, bearer: unifyService).status == 200)
            #expect(try await auth.request(.GET, "/user", bearer: old.token).status == 403)
            let events = try await authEvents(brokers: environment.kafkaBrokers, prefix: auth.topicPrefix) { events in
                events.contains { $0.type == .userDeleted }
            }
            let erased = try events.filter { $0.type == .userDeleted }.map { try $0.decode(UserDeleted.self).payload }
            #expect(erased.map { $0.userId.uuidString.lowercased() } == [old.id])
            #expect(erased.first?.app == .mycirclee)
        }
    }

    @Test("the apps file turns them on per app; a cleanup period out of bounds is refused at start")
    func appsFile() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent(uniqueName("apps") + ".json")
        defer { try? FileManager.default.removeItem(at: file) }
        let pepper = Data((0..<32).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
        let environment = EnvironmentReader(["COLONY_AUTH_PHONE_PEPPER": pepper, "COLONY_AUTH_MAIL_DIR": FileManager.default.temporaryDirectory.path, "COLONY_APPS_FILE": file.path, "COLONY_AUTH_RATE_ANONYMOUS_IP": "5/60"])
        try Data(#"{"habithive":{"anonymous_sign_ins":true,"anonymous_cleanup_days":30}}"#.utf8).write(to: file)
        let settings = try AuthSettings.load(environment: environment, port: 9999, issuer: "colony-auth")
        #expect(settings.app(.habithive).anonymousSignIns)
        #expect(settings.app(.habithive).anonymousCleanupDays == 30)
        #expect(App.allCases.filter { settings.app($0).anonymousSignIns } == [.habithive])
        #expect(settings.rateLimits.anonymousPerIP == RateLimitRule(5, per: 60))
        for days in ["0", "-1", "100000"] {
            try Data(#"{"habithive":{"anonymous_cleanup_days":\#(days)}}"#.utf8).write(to: file)
            #expect(throws: ConfigurationError.self, "\(days)") { try AuthSettings.load(environment: environment, port: 9999, issuer: "colony-auth") }
        }
    }

    @Test("the official Python client: sign_in_anonymously, then update_user converts (autoconfirmed and confirmed apps)")
    func supabasePythonClient() async throws {
        try await withRunningAuth(configure: anonymousOn(.mycirclee, .unify)) { auth in
            try await runSupabasePythonClient("test_anonymous.py", against: auth)
        }
    }
}
