import AsyncHTTPClient
@testable import AuthService
import ColonyModels
import ColonyPlatform
import ColonyTesting
import Foundation
import NIOHTTP1
import Testing

/// Issue 34: `POST /resend` (queued and answered alike for every recipient, as `/otp`),
/// operators' `POST /invite` and `POST /admin/generate_link`, and GoTrue's `GET /health`.
@Suite("Resend and operators' calls", .serialized)
struct AuthOperatorCallsTests {
    let password = "correct-horse-1"

    // MARK: rules, without HTTP

    @Test("the rules: what a resend sends for each type and account")
    func resendRules() {
        let unconfirmed = ResendAccount(email: "a@example.com", phone: "15550000001")
        let confirmed = ResendAccount(email: "a@example.com", phone: "15550000001", emailConfirmed: true, phoneConfirmed: true)
        #expect(ResendRules.plan(.signup, account: nil, secureEmailChange: true).isEmpty)
        #expect(ResendRules.plan(.signup, account: unconfirmed, secureEmailChange: true) == [ResendMessage(kind: .signup, recipient: "a@example.com", confirmsSignUp: true)])
        #expect(ResendRules.plan(.signup, account: confirmed, secureEmailChange: true).isEmpty)
        #expect(ResendRules.plan(.sms, account: unconfirmed, secureEmailChange: true) == [ResendMessage(kind: .sms, recipient: "15550000001", confirmsSignUp: true)])
        #expect(ResendRules.plan(.sms, account: confirmed, secureEmailChange: true).isEmpty)
        var banned = unconfirmed
        banned.banned = true
        #expect(ResendRules.plan(.signup, account: banned, secureEmailChange: true).isEmpty)
        #expect(ResendRules.plan(.emailChange, account: confirmed, secureEmailChange: true).isEmpty)
        #expect(ResendRules.plan(.phoneChange, account: confirmed, secureEmailChange: true).isEmpty)
        var changing = confirmed
        (changing.newEmail, changing.newPhone) = ("b@example.com", "15550000002")
        #expect(ResendRules.plan(.phoneChange, account: changing, secureEmailChange: true) == [ResendMessage(kind: .phoneChange, recipient: "15550000002", confirmsSignUp: false)])
        let new = ResendMessage(kind: .emailChange, recipient: "b@example.com", confirmsSignUp: false)
        let current = ResendMessage(kind: .emailChangeCurrent, recipient: "a@example.com", confirmsSignUp: false)
        // A plain change: its one code, always.
        #expect(ResendRules.plan(.emailChange, account: changing, secureEmailChange: false) == [new])
        // A secure change: the codes not yet used; a used one is never sent again.
        changing.unusedEmailChangeCodes = [.emailChange, .emailChangeCurrent]
        #expect(ResendRules.plan(.emailChange, account: changing, secureEmailChange: true) == [new, current])
        (changing.unusedEmailChangeCodes, changing.emailChangeConfirmStatus) = ([.emailChangeCurrent], 1)
        #expect(ResendRules.plan(.emailChange, account: changing, secureEmailChange: true) == [current])
        // Swept codes: both again while nobody confirmed, nothing once one side did.
        changing.unusedEmailChangeCodes = []
        #expect(ResendRules.plan(.emailChange, account: changing, secureEmailChange: true).isEmpty)
        changing.emailChangeConfirmStatus = 0
        #expect(ResendRules.plan(.emailChange, account: changing, secureEmailChange: true) == [new, current])
    }

    // MARK: resend through HTTP

    @Test("resend signup: the same code again to an unconfirmed sign-up (its password kept); unknown and confirmed addresses get {} and nothing")
    func resendSignup() async throws {
        try await withRunningAuth { auth in
            let (pending, confirmed, unknown) = (email("pending"), email("confirmed"), email("unknown"))
            #expect(try await auth.request(.POST, "/signup", app: .unify, json: ["email": pending, "password": password]).status == 200)
            let first = try await auth.waitForMessage(to: pending, kind: "signup")
            try await createUser(auth, app: .unify, ["email": confirmed, "password": password, "email_confirm": true])
            var answers: [String] = []
            for address in [pending, unknown, confirmed] {
                let response = try await auth.request(.POST, "/resend?redirect_to=unify://auth-callback", app: .unify, json: ["type": "signup", "email": address])
                answers.append("\(response.status) \(masked(response.json))")
            }
            #expect(Set(answers) == ["200 {}"], "\(answers)")
            let again = try await auth.waitForMessages(to: pending, count: 2, kind: "signup")
            #expect(again.last?.code == first.code && again.last?.subject == first.subject)
            try await auth.drainAddressRequests()
            #expect(try auth.messages(to: unknown).isEmpty && auth.messages(to: confirmed).isEmpty)
            let verified = try await auth.request(.POST, "/verify", app: .unify, json: ["type": "signup", "email": pending, "token": try #require(first.code)])
            #expect(verified.status == 200 && verified.json["access_token"] is String, "\(verified.json)")
            // The sign-up's own confirmation, re-sent: the password it stored stays.
            #expect(try await auth.signIn(app: .unify, email: pending, password: password).status == 200)
        }
    }

    @Test("resend budgets: a known and an unknown recipient answer 200 then 429 alike, by mail and by SMS")
    func resendBudgets() async throws {
        try await withRunningAuth(configure: { settings in
            settings.rateLimits.sendPerRecipient = RateLimitRule.perRun(1)
            settings.apps[.habithive]?.phoneEnabled = true
        }) { auth in
            let (known, unknown) = (email("known"), email("unknown"))
            try await createUser(auth, app: .unify, ["email": known, "password": password])
            let (knownPhone, unknownPhone) = (phone(), phone())
            try await createUser(auth, app: .habithive, ["phone": knownPhone])
            var answers: [String: [String]] = [:]
            for (address, app, body) in [(known, App.unify, ["type": "signup", "email": known]), (unknown, .unify, ["type": "signup", "email": unknown]),
                                         (knownPhone, .habithive, ["type": "sms", "phone": knownPhone]), (unknownPhone, .habithive, ["type": "sms", "phone": unknownPhone])] {
                for _ in 0..<2 {
                    let response = try await auth.request(.POST, "/resend", app: app, json: body)
                    answers[address, default: []].append("\(response.status) \(masked(response.json)) \(response.headers.first(name: "Retry-After") != nil)")
                }
            }
            #expect(answers[known] == answers[unknown] && answers[knownPhone] == answers[unknownPhone], "\(answers)")
            #expect(answers[known]?.first == "200 {} false" && answers[known]?.last?.hasPrefix("429") == true, "\(answers)")
            #expect(answers[knownPhone]?.first == #"200 {"message_id":"<message_id>"} false"# && answers[knownPhone]?.last?.hasPrefix("429") == true, "\(answers)")
            #expect(try await auth.waitForMessage(to: known).kind == "signup")
            #expect(try await auth.waitForMessage(to: knownPhone).kind == "sms")
            try await auth.drainAddressRequests()
            #expect(try auth.messages(to: unknown).isEmpty && auth.messages(to: unknownPhone).isEmpty)
            #expect(try auth.messages(to: known).count == 1)
        }
    }

    @Test("resend validation: GoTrue's 400s for a missing or unknown type, a missing recipient, both recipients")
    func resendValidation() async throws {
        try await withRunningAuth { auth in
            for body: [String: Any] in [["email": email("x")], ["type": "recovery", "email": email("x")], ["type": "signup"], ["type": "sms", "email": email("x")],
                                        ["type": "email_change"], ["type": "email_change", "email": email("x"), "phone": "+15550001234"]] {
                let response = try await auth.request(.POST, "/resend", json: body)
                #expect(response.status == 400 && response.json["code"] as? String == "validation_failed", "\(body) \(response.json)")
            }
            #expect(try await auth.request(.POST, "/resend", json: ["type": "signup", "email": "not-an-address"]).status == 422)
            #expect(try await auth.request(.POST, "/resend", apiKey: "nope", json: ["type": "signup", "email": email("x")]).status == 401)
            // MyCirclee has no phone sign-in.
            #expect(try await auth.request(.POST, "/resend", json: ["type": "sms", "phone": "+15550001234"]).json["code"] as? String == "phone_provider_disabled")
        }
    }

    @Test("resend email_change re-sends the secure change's unused codes; phone_change and sms re-send the texted code")
    func resendChanges() async throws {
        try await withRunningAuth(configure: { $0.apps[.habithive]?.phoneEnabled = true }) { auth in
            // Email: a secure change mails both addresses; resend mails both again, the same codes.
            let (current, new) = (email("current"), email("new"))
            let session = try await auth.request(.POST, "/signup", json: ["email": current, "password": password])
            let access = try #require(session.json["access_token"] as? String, "\(session.json)")
            #expect(try await auth.request(.PUT, "/user", bearer: access, json: ["email": new]).status == 200)
            let toNew = try await auth.waitForMessage(to: new, kind: "email_change")
            let toCurrent = try await auth.waitForMessage(to: current, kind: "email_change")
            let resent = try await auth.request(.POST, "/resend", json: ["type": "email_change", "email": current])
            #expect(resent.status == 200 && masked(resent.json) == "{}")
            #expect(try await auth.waitForMessages(to: new, count: 2).last?.code == toNew.code)
            #expect(try await auth.waitForMessages(to: current, count: 2).last?.code == toCurrent.code)
            // The new address confirms: only the current address's code is sent again.
            let half = try await auth.request(.POST, "/verify", json: ["type": "email_change", "email": new, "token": try #require(toNew.code)])
            #expect(half.status == 200 && half.json["msg"] != nil, "\(half.json)")
            #expect(try await auth.request(.POST, "/resend", json: ["type": "email_change", "email": current]).status == 200)
            #expect(try await auth.waitForMessages(to: current, count: 3).last?.code == toCurrent.code)
            try await auth.drainAddressRequests()
            #expect(try auth.messages(to: new).count == 2)
            let done = try await auth.request(.POST, "/verify", json: ["type": "email_change", "email": current, "token": try #require(toCurrent.code)])
            #expect(done.status == 200 && (done.json["user"] as? [String: Any])?["email"] as? String == new, "\(done.json)")

            // SMS: an unconfirmed number gets its code again, with a message id.
            let number = phone()
            let texted = number
            let otp = try await auth.request(.POST, "/otp", app: .habithive, json: ["phone": number])
            #expect(otp.status == 200)
            let code = try #require(try await auth.waitForMessage(to: texted, kind: "sms").code)
            let again = try await auth.request(.POST, "/resend", app: .habithive, json: ["type": "sms", "phone": number])
            #expect(again.status == 200 && (again.json["message_id"] as? String).flatMap(UUID.init(uuidString:)) != nil, "\(again.json)")
            #expect(try await auth.waitForMessages(to: texted, count: 2).last?.code == code)
            let signedIn = try await auth.request(.POST, "/verify", app: .habithive, json: ["type": "sms", "phone": number, "token": code])
            let phoneAccess = try #require(signedIn.json["access_token"] as? String, "\(signedIn.json)")

            // Phone change: the new number's code again.
            let newNumber = phone()
            let newTexted = newNumber
            #expect(try await auth.request(.PUT, "/user", app: .habithive, bearer: phoneAccess, json: ["phone": newNumber]).status == 200)
            let changeCode = try #require(try await auth.waitForMessage(to: newTexted, kind: "phone_change").code)
            let changeAgain = try await auth.request(.POST, "/resend", app: .habithive, json: ["type": "phone_change", "phone": number])
            #expect(changeAgain.status == 200 && changeAgain.json["message_id"] is String, "\(changeAgain.json)")
            #expect(try await auth.waitForMessages(to: newTexted, count: 2).last?.code == changeCode)
            let changed = try await auth.request(.POST, "/verify", app: .habithive, json: ["type": "phone_change", "phone": newNumber, "token": changeCode])
            #expect(changed.status == 200, "\(changed.json)")
        }
    }

    // MARK: invitations

    @Test("invite: service key only; the invitee gets an invite mail, its link confirms and signs in, then a password is set")
    func invite() async throws {
        try await withRunningAuth { auth in
            let invitee = email("invitee")
            let anon = try await auth.request(.POST, "/invite", json: ["email": invitee])
            #expect(anon.status == 403 && anon.json["code"] as? String == "not_admin", "\(anon.json)")
            #expect(try auth.messages(to: invitee).isEmpty)
            let key = try #require(auth.serviceKeys[.mycirclee])
            let invited = try await auth.request(.POST, "/invite?redirect_to=mycirclee://auth-callback", bearer: key, apiKey: key, json: ["email": invitee, "data": ["team": "blue"]])
            #expect(invited.status == 200, "\(invited.json)")
            #expect(invited.json["email"] as? String == invitee && invited.json["email_confirmed_at"] == nil && invited.json["id"] is String)
            #expect((invited.json["user_metadata"] as? [String: Any])?["team"] as? String == "blue")
            #expect((invited.json["identities"] as? [Any])?.count == 1)
            let mail = try await auth.waitForMessage(to: invitee, kind: "invite")
            let mailedCode = try #require(mail.code)
            #expect(mail.subject == "You have been invited to MyCirclee" && mail.text.contains(mailedCode))
            let link = try #require(mail.link)
            #expect(link.hasPrefix("\(auth.authURL)/verify?") && link.contains("type=invite"))
            // Invited again while unconfirmed: a new mail (the same code).
            #expect(try await auth.request(.POST, "/invite", bearer: key, apiKey: key, json: ["email": invitee]).status == 200)
            #expect(try await auth.waitForMessages(to: invitee, count: 2).last?.code == mail.code)
            let location = try await self.location(of: link)
            #expect(location.hasPrefix("mycirclee://auth-callback#access_token="), "\(location)")
            let access = try #require(fragment(location)["access_token"])
            let user = try await auth.request(.GET, "/user", bearer: access)
            #expect(user.json["email_confirmed_at"] is String, "\(user.json)")
            #expect(try await auth.request(.PUT, "/user", bearer: access, json: ["password": password]).status == 200)
            #expect(try await auth.signIn(email: invitee, password: password).status == 200)
            // Confirmed now: GoTrue's 422.
            let again = try await auth.request(.POST, "/invite", bearer: key, apiKey: key, json: ["email": invitee])
            #expect(again.status == 422 && again.json["code"] as? String == "email_exists", "\(again.json)")
            // Another app's key invites into that app only; Unify writes German.
            let unifyKey = try #require(auth.serviceKeys[.unify])
            #expect(try await auth.request(.POST, "/invite", app: .unify, bearer: unifyKey, apiKey: unifyKey, json: ["email": invitee]).status == 200)
            #expect(try await auth.waitForMessage(to: invitee, kind: "invite").subject == "Du wurdest zu Unify eingeladen")
            // The code works too (POST /verify with type invite).
            let codeInvitee = email("code")
            #expect(try await auth.request(.POST, "/invite", bearer: key, apiKey: key, json: ["email": codeInvitee]).status == 200)
            let code = try #require(try await auth.waitForMessage(to: codeInvitee, kind: "invite").code)
            let verified = try await auth.request(.POST, "/verify", json: ["type": "invite", "email": codeInvitee, "token": code])
            #expect(verified.status == 200 && verified.json["access_token"] is String, "\(verified.json)")
            #expect(try await auth.request(.POST, "/invite", bearer: key, apiKey: key, json: ["email": "nope"]).status == 422)
        }
    }

    // MARK: generate_link

    @Test("generate_link: each type returns GoTrue's link, code and hashed token without mailing; the link works; service key only")
    func generateLink() async throws {
        try await withRunningAuth { auth in
            let key = try #require(auth.serviceKeys[.mycirclee])
            func generate(_ body: [String: Any], key: String = key, app: App = .mycirclee) async throws -> (status: Int, json: [String: Any], headers: HTTPHeaders) {
                try await auth.request(.POST, "/admin/generate_link", app: app, bearer: key, apiKey: key, json: body)
            }
            func verifyHash(_ link: [String: Any], type: String) async throws -> [String: Any] {
                let response = try await auth.request(.POST, "/verify", json: ["type": type, "token_hash": try #require(link["hashed_token"] as? String)])
                #expect(response.status == 200, "\(response.json)")
                return response.json
            }
            let fresh = email("fresh")
            // An anon key is refused.
            let anon = try await generate(["type": "signup", "email": fresh, "password": password], key: try #require(auth.anonKeys[.mycirclee]))
            #expect(anon.status == 403 && anon.json["code"] as? String == "not_admin")

            // signup, new address: the account is made with the password.
            let signup = try await generate(["type": "signup", "email": fresh, "password": password, "data": ["plan": "pro"]])
            #expect(signup.status == 200, "\(signup.json)")
            try expectShape(signup.json, type: "signup", linkType: "signup", email: fresh, auth: auth)
            #expect((signup.json["user_metadata"] as? [String: Any])?["plan"] as? String == "pro" && signup.json["email_confirmed_at"] == nil)
            #expect(try await verifyHash(signup.json, type: "signup")["access_token"] is String)
            #expect(try await auth.signIn(email: fresh, password: password).status == 200)
            let taken = try await generate(["type": "signup", "email": fresh, "password": password])
            #expect(taken.status == 422 && taken.json["code"] as? String == "email_exists")
            #expect(try await generate(["type": "signup", "email": email("nopass")]).status == 422)
            // An unconfirmed account needs no password (it keeps its own).
            let waiting = email("waiting")
            try await createUser(auth, app: .mycirclee, ["email": waiting, "password": password])
            let again = try await generate(["type": "signup", "email": waiting, "data": ["plan": "team"]])
            try expectShape(again.json, type: "signup", linkType: "signup", email: waiting, auth: auth)
            #expect((again.json["user_metadata"] as? [String: Any])?["plan"] as? String == "team")

            // magiclink: an existing account's; for a new address a signup link and a new account.
            let magic = try await generate(["type": "magiclink", "email": fresh, "redirect_to": "mycirclee://auth-callback"])
            try expectShape(magic.json, type: "magiclink", linkType: "magiclink", email: fresh, auth: auth)
            let location = try await self.location(of: try #require(magic.json["action_link"] as? String))
            #expect(location.hasPrefix("mycirclee://auth-callback#access_token="), "\(location)")
            let stranger = email("stranger")
            let made = try await generate(["type": "magiclink", "email": stranger])
            try expectShape(made.json, type: "signup", linkType: "signup", email: stranger, auth: auth)
            let madeSession = try await auth.request(.POST, "/verify", json: ["type": "signup", "email": stranger, "token": try #require(made.json["email_otp"] as? String)])
            #expect((madeSession.json["user"] as? [String: Any])?["id"] as? String == made.json["id"] as? String, "\(madeSession.json)")

            // invite: a new passwordless account; verified by the code.
            let guest = email("guest")
            let invite = try await generate(["type": "invite", "email": guest, "redirect_to": "https://evil.example/steal"])
            try expectShape(invite.json, type: "invite", linkType: "invite", email: guest, auth: auth)
            #expect(invite.json["redirect_to"] as? String == "mycirclee://auth-callback", "a foreign redirect falls back to the site URL")
            #expect(try await verifyHash(invite.json, type: "invite")["access_token"] is String)
            #expect(try await generate(["type": "invite", "email": guest]).json["code"] as? String == "email_exists")

            // recovery: existing accounts only.
            let missing = try await generate(["type": "recovery", "email": email("missing")])
            #expect(missing.status == 404 && missing.json["code"] as? String == "user_not_found", "\(missing.json)")
            let recovery = try await generate(["type": "recovery", "email": fresh])
            try expectShape(recovery.json, type: "recovery", linkType: "recovery", email: fresh, auth: auth)
            #expect(try await verifyHash(recovery.json, type: "recovery")["access_token"] is String)

            // email change: both sides' links (a secure change); each code confirms its side.
            let moved = email("moved")
            let new = try await generate(["type": "email_change_new", "email": fresh, "new_email": moved])
            try expectShape(new.json, type: "email_change_new", linkType: "email_change", email: fresh, auth: auth)
            #expect(new.json["new_email"] as? String == moved)
            let current = try await generate(["type": "email_change_current", "email": fresh, "new_email": moved])
            try expectShape(current.json, type: "email_change_current", linkType: "email_change", email: fresh, auth: auth)
            #expect(try await verifyHash(new.json, type: "email_change")["msg"] != nil)
            let changed = try await auth.request(.POST, "/verify", json: ["type": "email_change", "email": fresh, "token": try #require(current.json["email_otp"] as? String)])
            #expect((changed.json["user"] as? [String: Any])?["email"] as? String == moved, "\(changed.json)")
            #expect(try await generate(["type": "email_change_new", "email": moved, "new_email": guest]).json["code"] as? String == "email_exists")
            #expect(try await generate(["type": "email_change_new", "email": email("nobody"), "new_email": email("n")]).status == 404)

            // Bad requests.
            let badType = try await generate(["type": "sms", "email": fresh])
            #expect(badType.status == 400 && badType.json["code"] as? String == "validation_failed")
            #expect(try await generate(["type": "magiclink"]).status == 422)
            #expect(try await generate(["type": "email_change_new", "email": moved]).status == 422)

            // No code or link was mailed (only the notice of the finished change to the old address).
            for address in [fresh, stranger, guest, moved] {
                #expect(try auth.messages(to: address).filter { $0.kind != "email_changed" }.isEmpty, "\(address)")
            }
            #expect(try auth.messages(to: fresh).map(\.kind) == ["email_changed"])
        }
    }

    @Test("generate_link email_change_current needs the app's secure email change")
    func generateLinkPlainChange() async throws {
        try await withRunningAuth(configure: { $0.apps[.mycirclee]?.secureEmailChange = false }) { auth in
            let key = try #require(auth.serviceKeys[.mycirclee])
            let owner = email("owner")
            try await createUser(auth, app: .mycirclee, ["email": owner, "password": password, "email_confirm": true])
            let refused = try await auth.request(.POST, "/admin/generate_link", bearer: key, apiKey: key, json: ["type": "email_change_current", "email": owner, "new_email": email("x")])
            #expect(refused.status == 400 && refused.json["code"] as? String == "validation_failed", "\(refused.json)")
            let moved = email("moved")
            let new = try await auth.request(.POST, "/admin/generate_link", bearer: key, apiKey: key, json: ["type": "email_change_new", "email": owner, "new_email": moved])
            let changed = try await auth.request(.POST, "/verify", json: ["type": "email_change", "token_hash": try #require(new.json["hashed_token"] as? String)])
            #expect((changed.json["user"] as? [String: Any])?["email"] as? String == moved, "\(changed.json)")
        }
    }

    @Test("GET /auth/v1/health answers GoTrue's version, name and description, without an API key")
    func health() async throws {
        try await withRunningAuth { auth in
            let response = try await HTTPClient.shared.execute(HTTPClientRequest(url: "\(auth.authURL)/health"), timeout: .seconds(10))
            let body = try await response.body.collect(upTo: 1 << 16)
            let json = try #require(try JSONSerialization.jsonObject(with: Data(buffer: body)) as? [String: Any])
            #expect(response.status == .ok && Set(json.keys) == ["version", "name", "description"], "\(json)")
            #expect(try await HTTPClient.shared.execute(HTTPClientRequest(url: "\(auth.authURL)/ready"), timeout: .seconds(10)).status == .notFound)
        }
    }

    @Test("features Colony does not offer answer as GoTrue does with them off: 404 and the feature's code, never route_not_found")
    func disabledFeatures() async throws {
        try await withRunningAuth { auth in
            let service = try #require(auth.serviceKeys[.mycirclee])
            let cases: [(HTTPMethod, String, String)] = [
                (.POST, "/sso", "saml_provider_disabled"), (.GET, "/sso/saml/metadata", "saml_provider_disabled"),
                (.GET, "/admin/sso/providers", "saml_provider_disabled"), (.GET, "/oauth/authorize", "feature_disabled"),
                (.POST, "/oauth/token", "feature_disabled"), (.GET, "/admin/oauth/clients", "feature_disabled"),
                (.GET, "/user/oauth/grants", "feature_disabled"), (.GET, "/.well-known/openid-configuration", "feature_disabled"),
                (.GET, "/.well-known/oauth-authorization-server", "feature_disabled"), (.PUT, "/admin/custom-providers/x", "feature_disabled"),
                (.GET, "/scim/v2/Schemas", "feature_disabled"), (.POST, "/passkeys/registration/options", "passkey_disabled"),
                (.GET, "/passkeys", "passkey_disabled"), (.DELETE, "/admin/users/\(UUID().uuidString.lowercased())/passkeys/x", "passkey_disabled"),
            ]
            for (method, path, code) in cases {
                let response = try await auth.request(method, path, bearer: service, apiKey: service, json: method == .GET || method == .DELETE ? nil : [:])
                #expect(response.status == 404 && response.json["code"] as? String == code, "\(method) \(path): \(response.status) \(response.json)")
            }
            // What is served is unchanged beside them.
            #expect(try await auth.request(.GET, "/.well-known/jwks.json").status == 200)
            #expect(try await auth.request(.GET, "/admin/users", bearer: service, apiKey: service).status == 200)
        }
    }

    @Test("the official Python client: resend, admin.invite_user_by_email, admin.generate_link")
    func supabasePythonClient() async throws {
        try await withRunningAuth(configure: { $0.apps[.habithive]?.phoneEnabled = true }) { auth in
            try await runSupabasePythonClient("test_resend_and_operators.py", against: auth, environment: [
                "COLONY_SERVICE_KEY": auth.serviceKeys[.mycirclee],
                "COLONY_SERVICE_KEY_UNIFY": auth.serviceKeys[.unify],
            ])
        }
    }

    // MARK: helpers

    func email(_ tag: String) -> String { "\(uniqueName(tag))@example.com" }

    /// A fresh US test number as clients send it.
    func phone() -> String { "+1555" + String(Int.random(in: 1_000_000...9_999_999)) }

    func createUser(_ auth: RunningAuth, app: App, _ body: [String: Any]) async throws {
        let key = try #require(auth.serviceKeys[app])
        let response = try await auth.request(.POST, "/admin/users", app: app, bearer: key, apiKey: key, json: body)
        #expect(response.status == 200, "\(response.json)")
    }

    /// GoTrue's `GenerateLinkResponse`: the user's fields with the link's beside them.
    func expectShape(_ json: [String: Any], type: String, linkType: String, email: String, auth: RunningAuth, sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(json["verification_type"] as? String == type, "\(json)", sourceLocation: sourceLocation)
        #expect(json["email"] as? String == email && json["id"] is String && json["aud"] is String, "\(json)", sourceLocation: sourceLocation)
        let otp = try #require(json["email_otp"] as? String, sourceLocation: sourceLocation)
        #expect(otp.count == 6 && otp.allSatisfy(\.isNumber), sourceLocation: sourceLocation)
        let hashed = try #require(json["hashed_token"] as? String, sourceLocation: sourceLocation)
        let link = try #require(json["action_link"] as? String, sourceLocation: sourceLocation)
        let components = try #require(URLComponents(string: link), sourceLocation: sourceLocation)
        let query = Dictionary(uniqueKeysWithValues: (components.queryItems ?? []).map { ($0.name, $0.value ?? "") })
        #expect(link.hasPrefix("\(auth.authURL)/verify?"), "\(link)", sourceLocation: sourceLocation)
        #expect(query["token"] == hashed && query["type"] == linkType && query["redirect_to"] == json["redirect_to"] as? String, "\(link)", sourceLocation: sourceLocation)
    }

    /// Follows no redirect: where a link sends the app.
    func location(of link: String) async throws -> String {
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(redirectConfiguration: .disallow))
        defer { _ = client.shutdown() }
        let response = try await client.execute(HTTPClientRequest(url: link), timeout: .seconds(15))
        return try #require(response.headers.first(name: "Location"))
    }

    func fragment(_ location: String) -> [String: String] {
        guard let fragment = location.split(separator: "#", maxSplits: 1).dropFirst().first else { return [:] }
        return Dictionary(fragment.split(separator: "&").map { pair -> (String, String) in
            let parts = pair.split(separator: "=", maxSplits: 1)
            return (String(parts[0]), String(parts.count > 1 ? parts[1] : "").removingPercentEncoding ?? "")
        }, uniquingKeysWith: { $1 })
    }

    /// The body as sorted JSON with ids and times blanked.
    func masked(_ json: [String: Any]) -> String {
        func mask(_ value: Any, key: String) -> Any {
            if let object = value as? [String: Any] { return Dictionary(uniqueKeysWithValues: object.map { ($0.key, mask($0.value, key: $0.key)) }) }
            if ["id", "user_id", "message_id"].contains(key) || key.hasSuffix("_at") { return "<\(key)>" }
            if key == "message", let text = value as? String { return text.replacing(/[0-9]+/, with: "<n>") }
            return value
        }
        guard let data = try? JSONSerialization.data(withJSONObject: mask(json, key: ""), options: [.sortedKeys]) else { return "\(json)" }
        return String(decoding: data, as: UTF8.self)
    }
}
