import AsyncHTTPClient
import AuthService
import ColonyModels
import ColonyPlatform
import ColonyTesting
import Foundation
import NIOHTTP1
import Testing

/// What the owners and operators see of issue 17's budgets and proofs when nobody attacks.
@Suite("Auth budgets and proofs", .serialized)
struct AuthBudgetTests {
    @Test("asking again within a code's lifetime re-sends the same code; once used, the next is new")
    func resendSameCode() async throws {
        try await withRunningAuth { auth in
            let phone = "+1555\(Int.random(in: 1_000_000...9_999_999))"
            #expect(try await auth.request(.POST, "/otp", app: .habithive, json: ["phone": phone]).status == 200)
            #expect(try await auth.request(.POST, "/otp", app: .habithive, json: ["phone": phone]).status == 200)
            let codes = try auth.messages(to: phone).compactMap(\.code)
            #expect(codes.count == 2 && codes[0] == codes[1], "\(codes)")
            #expect(try await auth.request(.POST, "/verify", app: .habithive, json: ["type": "sms", "phone": phone, "token": codes[0]]).status == 200)
            #expect(try await auth.request(.POST, "/otp", app: .habithive, json: ["phone": phone]).status == 200)
            #expect(try auth.lastMessage(to: phone)?.code != codes[0])

            // The same for mail: the same code and the same link, which still signs in.
            let email = "\(uniqueName("m"))@example.com"
            #expect(try await auth.request(.POST, "/otp", json: ["email": email]).status == 200)
            #expect(try await auth.request(.POST, "/otp", json: ["email": email]).status == 200)
            let mails = try await auth.waitForMessages(to: email, count: 2)
            #expect(mails.count == 2 && mails[0].code == mails[1].code && mails[0].link == mails[1].link)
        }
    }

    @Test("SMS budgets per app and in total answer 429 with Retry-After")
    func smsBudgets() async throws {
        try await withRunningAuth(configure: { settings in
            settings.rateLimits.smsPerApp = RateLimitRule.perRun(2)
            settings.rateLimits.smsGlobal = RateLimitRule.perRun(3)
            settings.apps[.socialspot]?.phoneEnabled = true
        }) { auth in
            func otp(_ app: App) async throws -> (status: Int, json: [String: Any], headers: HTTPHeaders) {
                try await auth.request(.POST, "/otp", app: app, json: ["phone": "+1555\(Int.random(in: 1_000_000...9_999_999))"])
            }
            #expect(try await otp(.habithive).status == 200)
            #expect(try await otp(.habithive).status == 200)
            let overApp = try await otp(.habithive)
            #expect(overApp.status == 429 && overApp.json["code"] as? String == "over_sms_send_rate_limit", "\(overApp.json)")
            #expect(Int(overApp.headers.first(name: "Retry-After") ?? "") ?? 0 >= 1)
            #expect(try await otp(.socialspot).status == 200)
            let overAll = try await otp(.socialspot)
            #expect(overAll.status == 429 && overAll.json["code"] as? String == "over_sms_send_rate_limit")
        }
    }

    @Test("OTP creates accounts only where the app lets it, whatever the client asks (and answers a stranger as a member)")
    func otpCreateUserFollowsTheApp() async throws {
        try await withRunningAuth(configure: { $0.apps[.mycirclee]?.otpCreateUser = false }) { auth in
            let strangerEmail = "\(uniqueName("n"))@example.com"
            let stranger = try await auth.request(.POST, "/otp", json: ["email": strangerEmail, "create_user": true])
            // Not Supabase's 422 otp_disabled: that would tell who has an account (issue 33).
            #expect(stranger.status == 200, "\(stranger.json)")
            let member = "\(uniqueName("m"))@example.com"
            #expect(try await auth.request(.POST, "/signup", json: ["email": member, "password": "correct-horse-1"]).status == 200)
            #expect(try await auth.request(.POST, "/otp", json: ["email": member]).status == 200)
            #expect(try await auth.waitForMessage(to: member).kind == "magiclink")
            try await auth.drainAddressRequests()
            #expect(try auth.messages(to: strangerEmail).isEmpty)
            #expect(try await auth.signIn(email: strangerEmail, password: "correct-horse-1").json["code"] as? String == "invalid_credentials")
        }
    }

    @Test("the owner's own password survives their proofs: the sign-up's code, then Apple linking to a proven address")
    func ownersKeepTheirPasswords() async throws {
        try await AppleStandIn.run { apple in
            try await withRunningAuth(configure: { $0.apps[.socialspot]?.emailAutoconfirm = false }, appleKeysURL: apple.keysURL) { auth in
                let email = "\(uniqueName("own"))@privaterelay.appleid.com"
                #expect(try await auth.request(.POST, "/signup", app: .socialspot, json: ["email": email, "password": "owner-pass-1"]).status == 200)
                let code = try #require(try await auth.waitForMessage(to: email).code)
                let confirmed = try await auth.request(.POST, "/verify", app: .socialspot, json: ["type": "signup", "email": email, "token": code])
                #expect(confirmed.status == 200)
                let userID = try #require((confirmed.json["user"] as? [String: Any])?["id"] as? String)
                #expect(try await auth.signIn(app: .socialspot, email: email, password: "owner-pass-1").status == 200)
                let viaApple = try await auth.request(.POST, "/token?grant_type=id_token", app: .socialspot, json: [
                    "provider": "apple", "id_token": try await apple.idToken(audience: "com.socialspot.app", subject: uniqueName("apple"), email: email, nonce: "n"), "nonce": "n",
                ])
                #expect((viaApple.json["user"] as? [String: Any])?["id"] as? String == userID, "\(viaApple.json)")
                #expect(try await auth.signIn(app: .socialspot, email: email, password: "owner-pass-1").status == 200)
            }
        }
    }
}
