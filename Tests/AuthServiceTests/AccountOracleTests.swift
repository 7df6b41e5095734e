import AsyncHTTPClient
@testable import AuthService
import ColonyModels
import ColonyPlatform
import ColonyTesting
import Foundation
import NIOHTTP1
import Testing

extension RunningAuth {
    /// Requests still queued (recover, magic links, confirming sign-ups are handled a moment
    /// after their answer).
    func pendingAddressRequests() async throws -> Int {
        try await withDatabase { database in
            for try await count in try await database.query("SELECT count(*)::int FROM address_requests").decode(Int.self) { return count }
            return 0
        }
    }

    /// Waits until every queued request was handled.
    func drainAddressRequests() async throws {
        try await waitUntil(timeout: .seconds(20)) { try await pendingAddressRequests() == 0 }
    }

    /// The messages to `recipient` (of `kind`, if given) once there are at least `count`.
    func waitForMessages(to recipient: String, count: Int = 1, kind: String? = nil) async throws -> [OutgoingMessage] {
        var found: [OutgoingMessage] = []
        try await waitUntil(timeout: .seconds(20)) {
            found = try messages(to: recipient).filter { kind == nil || $0.kind == kind }
            return found.count >= count
        }
        return found
    }

    /// The newest message to `recipient` (of `kind`, if given), once one came.
    func waitForMessage(to recipient: String, kind: String? = nil) async throws -> OutgoingMessage {
        try #require(try await waitForMessages(to: recipient, kind: kind).last)
    }
}

/// Issue 33: who has an account cannot be asked. Recover, magic links (and OTP without
/// creation) and a confirming app's sign-up answer the same status, body and time for a
/// registered and an unknown address, and their budgets count per address asked.
@Suite("No account oracle", .serialized)
struct AccountOracleTests {
    let password = "correct-horse-1"

    // MARK: rules, without HTTP

    @Test("the rules: what each request does for an unknown, an unconfirmed, a confirmed and a banned account")
    func plans() {
        let open = AppAuthSettings.defaults(for: .mycirclee)
        var closed = open
        closed.otpCreateUser = false
        let confirmed = AddressAccount(emailConfirmed: true, banned: false)
        let unconfirmed = AddressAccount(emailConfirmed: false, banned: false)
        let banned = AddressAccount(emailConfirmed: true, banned: true)
        #expect(AddressRequestRules.plan(.recovery, account: nil, createUser: true, app: open) == .nothing)
        #expect(AddressRequestRules.plan(.recovery, account: confirmed, createUser: true, app: open) == .send(.recovery, confirmsSignUp: false))
        #expect(AddressRequestRules.plan(.recovery, account: banned, createUser: true, app: open) == .nothing)
        #expect(AddressRequestRules.plan(.magiclink, account: nil, createUser: true, app: open) == .create(.magiclink, confirmsSignUp: false))
        #expect(AddressRequestRules.plan(.magiclink, account: nil, createUser: false, app: open) == .nothing)
        #expect(AddressRequestRules.plan(.magiclink, account: nil, createUser: true, app: closed) == .nothing)
        #expect(AddressRequestRules.plan(.magiclink, account: unconfirmed, createUser: false, app: closed) == .send(.magiclink, confirmsSignUp: false))
        let unify = AppAuthSettings.defaults(for: .unify)
        #expect(AddressRequestRules.plan(.signup, account: nil, createUser: true, app: unify) == .create(.signup, confirmsSignUp: true))
        // A repeated sign-up proves the address, never the password an earlier one stored.
        #expect(AddressRequestRules.plan(.signup, account: unconfirmed, createUser: true, app: unify) == .send(.signup, confirmsSignUp: false))
        #expect(AddressRequestRules.plan(.signup, account: confirmed, createUser: true, app: unify) == .nothing)
        #expect(AddressRequestRules.plan(.signup, account: banned, createUser: true, app: unify) == .nothing)
    }

    @Test("the rules: a sign-up's answer has one shape whoever holds the address, with fresh ids")
    func signUpAnswerShape() throws {
        let now = Date()
        let first = UserResource(AddressRequestRules.signUpUser(app: .unify, email: "a@example.com", userID: UUID(), identityID: .timeOrdered(), encryptedPassword: "h", data: ["full_name": .string("Ada")], now: now))
        let second = UserResource(AddressRequestRules.signUpUser(app: .unify, email: "a@example.com", userID: UUID(), identityID: .timeOrdered(), encryptedPassword: "h", data: ["full_name": .string("Ada")], now: now))
        #expect(first.id != second.id && first.identities.count == 1 && first.identities[0].userId == first.id)
        #expect(first.confirmationSentAt == now && first.emailConfirmedAt == nil && first.identities[0].identityData["email_verified"] == JSONValue.bool(false))
        #expect(try masked(encode(first)) == masked(encode(second)))
    }

    // MARK: through HTTP

    @Test("recover: a registered and an unknown address answer 200 then 429 alike; only the registered one gets a mail")
    func recover() async throws {
        try await withRunningAuth(configure: { $0.rateLimits.sendPerRecipient = RateLimitRule.perRun(1) }) { auth in
            let registered = "\(uniqueName("reg"))@example.com"
            let unknown = "\(uniqueName("unk"))@example.com"
            #expect(try await auth.request(.POST, "/signup", json: ["email": registered, "password": password]).status == 200)
            var answers: [String: [String]] = [:]
            for email in [registered, unknown] {
                for _ in 0..<2 {
                    let response = try await auth.request(.POST, "/recover", json: ["email": email])
                    answers[email, default: []].append("\(response.status) \(masked(response.json)) \(response.headers.first(name: "Retry-After") != nil)")
                }
            }
            #expect(answers[registered] == answers[unknown], "\(answers)")
            #expect(answers[registered]?.first?.hasPrefix("200") == true && answers[registered]?.last?.hasPrefix("429") == true)
            #expect(try await auth.waitForMessage(to: registered).kind == "recovery")
            try await auth.drainAddressRequests()
            #expect(try auth.messages(to: unknown).isEmpty)
        }
    }

    @Test("OTP without creation: 200 {} for a registered and an unknown address; no account is made for the unknown one")
    func otpWithoutCreation() async throws {
        try await withRunningAuth { auth in
            let registered = "\(uniqueName("reg"))@example.com"
            let unknown = "\(uniqueName("unk"))@example.com"
            #expect(try await auth.request(.POST, "/signup", json: ["email": registered, "password": password]).status == 200)
            let known = try await auth.request(.POST, "/otp", json: ["email": registered, "create_user": false])
            let stranger = try await auth.request(.POST, "/otp", json: ["email": unknown, "create_user": false])
            #expect(known.status == 200 && stranger.status == 200, "\(known.json) \(stranger.json)")
            #expect(masked(known.json) == masked(stranger.json))
            #expect(try await auth.waitForMessage(to: registered).kind == "magiclink")
            try await auth.drainAddressRequests()
            #expect(try auth.messages(to: unknown).isEmpty)
            // No account: a magic link with creation then makes one (and mails it).
            #expect(try await auth.request(.POST, "/otp", json: ["email": unknown]).status == 200)
            #expect(try await auth.waitForMessage(to: unknown).kind == "magiclink")
        }
    }

    @Test("OTP where the app creates no accounts: a registered and an unknown address answer alike")
    func otpAppWithoutCreation() async throws {
        try await withRunningAuth(configure: { $0.apps[.mycirclee]?.otpCreateUser = false }) { auth in
            let registered = "\(uniqueName("reg"))@example.com"
            let unknown = "\(uniqueName("unk"))@example.com"
            #expect(try await auth.request(.POST, "/signup", json: ["email": registered, "password": password]).status == 200)
            let known = try await auth.request(.POST, "/otp", json: ["email": registered, "create_user": true])
            let stranger = try await auth.request(.POST, "/otp", json: ["email": unknown, "create_user": true])
            #expect(known.status == 200 && stranger.status == 200 && masked(known.json) == masked(stranger.json), "\(known.json) \(stranger.json)")
            _ = try await auth.waitForMessage(to: registered)
            try await auth.drainAddressRequests()
            #expect(try auth.messages(to: unknown).isEmpty)
        }
    }

    @Test("SMS without creation: a registered and an unknown number both get 200 and a message id")
    func smsWithoutCreation() async throws {
        try await withRunningAuth { auth in
            let registered = "+1555\(Int.random(in: 1_000_000...9_999_999))"
            let unknown = "+1555\(Int.random(in: 1_000_000...9_999_999))"
            #expect(try await auth.request(.POST, "/otp", app: .habithive, json: ["phone": registered]).status == 200)
            let known = try await auth.request(.POST, "/otp", app: .habithive, json: ["phone": registered, "create_user": false])
            let stranger = try await auth.request(.POST, "/otp", app: .habithive, json: ["phone": unknown, "create_user": false])
            #expect(known.status == 200 && stranger.status == 200, "\(known.json) \(stranger.json)")
            #expect(masked(known.json) == masked(stranger.json) && stranger.json["message_id"] is String)
            #expect(try auth.messages(to: unknown).isEmpty)
        }
    }

    @Test("Unify: a second sign-up of a confirmed address answers as a new one; its owner's account and password are untouched")
    func repeatedSignUpInAConfirmingApp() async throws {
        try await withRunningAuth { auth in
            let owner = "\(uniqueName("owner"))@example.com"
            let fresh = "\(uniqueName("fresh"))@example.com"
            // The owner signs up and confirms.
            let created = try await auth.request(.POST, "/signup", app: .unify, json: ["email": owner, "password": password])
            #expect(created.status == 200 && created.json["access_token"] == nil, "\(created.json)")
            let code = try #require(try await auth.waitForMessage(to: owner, kind: "signup").code)
            let confirmed = try await auth.request(.POST, "/verify", app: .unify, json: ["type": "signup", "email": owner, "token": code])
            #expect(confirmed.status == 200, "\(confirmed.json)")
            let ownerID = try #require((confirmed.json["user"] as? [String: Any])?["id"] as? String)
            #expect((created.json["id"] as? String) == ownerID)

            // A stranger signs up with the owner's address, and with a new one.
            let repeated = try await auth.request(.POST, "/signup", app: .unify, json: ["email": owner, "password": "stranger-pass-1", "data": ["full_name": "X"]])
            let new = try await auth.request(.POST, "/signup", app: .unify, json: ["email": fresh, "password": "stranger-pass-1", "data": ["full_name": "X"]])
            #expect(repeated.status == 200 && new.status == 200, "\(repeated.json) \(new.json)")
            #expect(masked(repeated.json, email: owner) == masked(new.json, email: fresh), "\(repeated.json)\n\(new.json)")
            #expect(repeated.json["id"] as? String != ownerID)
            #expect(((repeated.json["identities"] as? [[String: Any]])?.count ?? 0) == 1)
            _ = try await auth.waitForMessage(to: fresh, kind: "signup")
            try await auth.drainAddressRequests()
            // Supabase Auth mails the owner nothing; neither does Colony.
            #expect(try auth.messages(to: owner).count == 1)
            #expect(try await auth.signIn(app: .unify, email: owner, password: password).status == 200)
            #expect(try await auth.signIn(app: .unify, email: owner, password: "stranger-pass-1").status == 400)
            // The new address's account is the one the answer named.
            let newCode = try #require(try await auth.waitForMessage(to: fresh, kind: "signup").code)
            let newConfirmed = try await auth.request(.POST, "/verify", app: .unify, json: ["type": "signup", "email": fresh, "token": newCode])
            #expect((newConfirmed.json["user"] as? [String: Any])?["id"] as? String == new.json["id"] as? String)
        }
    }

    @Test("Unify: a sign-up of an unconfirmed address re-sends a code that proves the address, not the earlier sign-up's password")
    func repeatedSignUpOfAnUnconfirmedAddress() async throws {
        try await withRunningAuth { auth in
            let victim = "\(uniqueName("victim"))@example.com"
            // A squatter signs up first with the victim's address and never confirms.
            #expect(try await auth.request(.POST, "/signup", app: .unify, json: ["email": victim, "password": "squatter-pass-1"]).status == 200)
            _ = try await auth.waitForMessage(to: victim, kind: "signup")
            // The victim signs up: the answer looks like any sign-up's, a code comes.
            let second = try await auth.request(.POST, "/signup", app: .unify, json: ["email": victim, "password": password])
            #expect(second.status == 200 && second.json["access_token"] == nil)
            let codes = try await auth.waitForMessages(to: victim, count: 2, kind: "signup")
            let code = try #require(codes.last?.code)
            let verified = try await auth.request(.POST, "/verify", app: .unify, json: ["type": "signup", "email": victim, "token": code])
            #expect(verified.status == 200 && verified.json["access_token"] is String, "\(verified.json)")
            // The squatter's password did not come with it.
            #expect(try await auth.signIn(app: .unify, email: victim, password: "squatter-pass-1").status == 400)
        }
    }

    // MARK: helpers

    func encode(_ user: UserResource) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: ColonyJSON.encoder().encode(user)) as? [String: Any])
    }

    /// The body as text with what is random for every answer (ids, times) and the address
    /// (`email`) blanked out.
    func masked(_ json: [String: Any], email: String? = nil) -> String {
        func mask(_ value: Any, key: String) -> Any {
            if let object = value as? [String: Any] { return Dictionary(uniqueKeysWithValues: object.map { ($0.key, mask($0.value, key: $0.key)) }) }
            if let array = value as? [Any] { return array.map { mask($0, key: key) } }
            if ["id", "user_id", "identity_id", "sub", "message_id"].contains(key) || key.hasSuffix("_at") { return "<\(key)>" }
            if let email, let text = value as? String, text == email { return "<email>" }
            // A rate limit's wait counts down with the clock ("after 24 seconds"), whoever asked.
            if key == "message", let text = value as? String { return text.replacing(/[0-9]+/, with: "<n>") }
            return value
        }
        let masked = mask(json, key: "")
        guard let data = try? JSONSerialization.data(withJSONObject: masked, options: [.sortedKeys]) else { return "\(json)" }
        return String(decoding: data, as: UTF8.self)
    }
}
