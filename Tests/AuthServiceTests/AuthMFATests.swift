import AsyncHTTPClient
import AuthService
import ColonyModels
import ColonyPlatform
import ColonyTesting
import Foundation
import NIOCore
import NIOHTTP1
import Testing

/// MFA as Supabase Auth has it: TOTP and phone factors enrolled, challenged and verified into an
/// `aal2` session (amr first the factor, then the sign-in), unenrolled under GoTrue's rules, the
/// user's other `aal1` sessions ended, attempts budgeted, and an operator's recovery through the
/// admin API; and a domain service's verifier refusing `aal1` where the app requires `aal2`.
@Suite("Auth MFA", .serialized)
struct AuthMFATests {
    let password = "correct-horse-1"

    func claims(_ token: String) throws -> [String: Any] { try unverifiedClaims(token) }

    func methods(_ token: String) throws -> [String] {
        (try claims(token)["amr"] as? [[String: Any]] ?? []).compactMap { $0["method"] as? String }
    }

    /// A MyCirclee account (autoconfirmed) and its first session.
    func account(_ auth: RunningAuth) async throws -> (email: String, id: String, session: [String: Any]) {
        let email = "mfa-\(UUID().uuidString.prefix(8).lowercased())@example.com"
        let signedUp = try await auth.request(.POST, "/signup", json: ["email": email, "password": password])
        try #require(signedUp.status == 200, "\(signedUp.json)")
        let id = try #require((signedUp.json["user"] as? [String: Any])?["id"] as? String)
        return (email, id, signedUp.json)
    }

    func token(_ session: [String: Any]) throws -> String { try #require(session["access_token"] as? String) }

    func enrollTOTP(_ auth: RunningAuth, _ bearer: String, name: String = "authenticator") async throws -> (id: String, totp: TOTP, json: [String: Any]) {
        let enrolled = try await auth.request(.POST, "/factors", bearer: bearer, json: ["factor_type": "totp", "friendly_name": name, "issuer": "MyCirclee"])
        try #require(enrolled.status == 200, "\(enrolled.json)")
        let details = try #require(enrolled.json["totp"] as? [String: Any])
        let secret = try #require(details["secret"] as? String)
        return (try #require(enrolled.json["id"] as? String), try #require(TOTP(base32Secret: secret)), enrolled.json)
    }

    func challenge(_ auth: RunningAuth, _ bearer: String, _ factor: String) async throws -> String {
        let challenged = try await auth.request(.POST, "/factors/\(factor)/challenge", bearer: bearer, json: [:])
        try #require(challenged.status == 200, "\(challenged.json)")
        return try #require(challenged.json["id"] as? String)
    }

    func verify(_ auth: RunningAuth, _ bearer: String, _ factor: String, challenge: String, code: String) async throws -> (status: Int, json: [String: Any], headers: HTTPHeaders) {
        try await auth.request(.POST, "/factors/\(factor)/verify", bearer: bearer, json: ["factor_id": factor, "challenge_id": challenge, "code": code])
    }

    /// The code of the step after `after` when the clock's current one was used (waits at most one period).
    func freshCode(_ totp: TOTP, after used: String?) async throws -> String {
        var code = try #require(totp.code(at: Date()))
        while code == used {
            try await Task.sleep(for: .seconds(1))
            code = try #require(totp.code(at: Date()))
        }
        return code
    }

    @Test("enroll → QR, URI, secret → challenge → verify with the computed code: aal2, amr totp then password, a new refresh token; other aal1 sessions end; refresh keeps aal2")
    func enrollAndVerify() async throws {
        try await withRunningAuth { auth in
            let (email, userID, first) = try await account(auth)
            let other = try await auth.signIn(email: email, password: password)
            try #require(other.status == 200)
            let bearer = try token(first)
            #expect(try claims(bearer)["aal"] as? String == "aal1")
            #expect(try claims(bearer)["colony_mfa_enrolled"] as? Bool == false)

            let (factorID, totp, enrolled) = try await enrollTOTP(auth, bearer)
            #expect(enrolled["type"] as? String == "totp" && enrolled["friendly_name"] as? String == "authenticator")
            let details = try #require(enrolled["totp"] as? [String: Any])
            let uri = try #require(details["uri"] as? String)
            #expect(uri.hasPrefix("otpauth://totp/MyCirclee:\(email)?") && uri.contains("secret=\(totp.base32Secret)") && uri.contains("issuer=MyCirclee"))
            #expect((details["qr_code"] as? String)?.hasPrefix("<svg") == true)
            #expect(totp.secret.count == 20)
            // Listed unverified; the token still says no factor.
            let listed = try await auth.request(.GET, "/user", bearer: bearer)
            let factors = try #require(listed.json["factors"] as? [[String: Any]])
            #expect(factors.count == 1 && factors[0]["status"] as? String == "unverified" && factors[0]["factor_type"] as? String == "totp" && factors[0]["id"] as? String == factorID)

            let challengeID = try await challenge(auth, bearer, factorID)
            let wrong = try await verify(auth, bearer, factorID, challenge: challengeID, code: "000000" == totp.code(at: Date()) ? "111111" : "000000")
            #expect(wrong.status == 422 && wrong.json["code"] as? String == "mfa_verification_failed")
            let code = try #require(totp.code(at: Date()))
            let verified = try await verify(auth, bearer, factorID, challenge: challengeID, code: code)
            try #require(verified.status == 200, "\(verified.json)")
            let aal2 = try token(verified.json)
            #expect(try claims(aal2)["aal"] as? String == "aal2")
            #expect(try methods(aal2) == ["totp", "password"])
            #expect(try claims(aal2)["colony_mfa_enrolled"] as? Bool == true)
            #expect(try claims(aal2)["session_id"] as? String == (try claims(bearer)["session_id"] as? String))
            let user = try #require(verified.json["user"] as? [String: Any])
            #expect((user["factors"] as? [[String: Any]])?.first?["status"] as? String == "verified")

            // The challenge is spent; the same code on a new challenge is a replay.
            let again = try await verify(auth, bearer, factorID, challenge: challengeID, code: code)
            #expect(again.status == 422 && again.json["code"] as? String == "mfa_ip_address_mismatch")
            let replay = try await verify(auth, aal2, factorID, challenge: try await challenge(auth, aal2, factorID), code: code)
            #expect(replay.status == 422 && replay.json["code"] as? String == "mfa_verification_failed")

            // The other aal1 session ended; the aal1 refresh token of this one is gone too.
            #expect(try await auth.refresh(try #require(other.json["refresh_token"] as? String)).status == 400)
            #expect(try await auth.request(.GET, "/user", bearer: try token(other.json)).status == 403)
            #expect(try await auth.refresh(try #require(first["refresh_token"] as? String)).status == 400)
            let refreshed = try await auth.refresh(try #require(verified.json["refresh_token"] as? String))
            try #require(refreshed.status == 200)
            #expect(try claims(try token(refreshed.json))["aal"] as? String == "aal2")
            #expect(try methods(try token(refreshed.json)) == ["totp", "password"])

            // A new password sign-in starts at aal1, and says the user has a factor.
            let later = try await auth.signIn(email: email, password: password)
            #expect(try claims(try token(later.json))["aal"] as? String == "aal1")
            #expect(try claims(try token(later.json))["colony_mfa_enrolled"] as? Bool == true)

            // A domain service whose app requires aal2: the aal1 token is 403, the aal2 one passes.
            var configuration = TokenVerifierConfiguration(keySource: .jwks(URL(string: "\(auth.authURL)/.well-known/jwks.json")!), issuer: "colony-auth", audience: .mycirclee)
            configuration.accessPolicies = AppAccessPolicies([.mycirclee: AppAccessPolicy(requireAal2: true)])
            let service = TokenVerifier(configuration: configuration, logger: TestEnvironment.logger)
            await #expect(throws: AppAccessPolicy.insufficientAAL) { _ = try await service.verify(try token(later.json)) }
            #expect(try await service.verify(aal2).id.uuidString.lowercased() == userID)
            let (_, _, stranger) = try await account(auth)
            #expect(try await service.verify(try token(stranger)).aal == "aal1")
        }
    }

    @Test("a challenge expires; a second factor needs aal2; names are unique per user; unknown or foreign factors are 404; bad input is 400, never 500")
    func challengeExpiryAndEnrollRules() async throws {
        try await withRunningAuth(configure: { $0.mfa.challengeLifetimeSeconds = 1 }) { auth in
            let (_, _, session) = try await account(auth)
            let bearer = try token(session)
            let (factorID, totp, _) = try await enrollTOTP(auth, bearer)
            let challengeID = try await challenge(auth, bearer, factorID)
            try await Task.sleep(for: .milliseconds(1500))
            let late = try await verify(auth, bearer, factorID, challenge: challengeID, code: try #require(totp.code(at: Date())))
            #expect(late.status == 422 && late.json["code"] as? String == "mfa_challenge_expired")

            let taken = try await auth.request(.POST, "/factors", bearer: bearer, json: ["factor_type": "totp", "friendly_name": "authenticator"])
            #expect(taken.status == 422 && taken.json["code"] as? String == "mfa_factor_name_conflict")
            let verified = try await verify(auth, bearer, factorID, challenge: try await challenge(auth, bearer, factorID), code: try #require(totp.code(at: Date())))
            try #require(verified.status == 200)
            // From an aal1 session (a new sign-in) a second factor is refused; from aal2 it is fine.
            let email = try #require((verified.json["user"] as? [String: Any])?["email"] as? String)
            let aal1 = try token(try await auth.signIn(email: email, password: password).json)
            let refused = try await auth.request(.POST, "/factors", bearer: aal1, json: ["factor_type": "totp", "friendly_name": "second"])
            #expect(refused.status == 403 && refused.json["code"] as? String == "insufficient_aal")
            #expect(try await auth.request(.POST, "/factors", bearer: try token(verified.json), json: ["factor_type": "totp", "friendly_name": "second"]).status == 200)

            // Another user's factor is not theirs to challenge; odd input is a 4xx.
            let (_, _, strangerSession) = try await account(auth)
            let stranger = try token(strangerSession)
            #expect(try await auth.request(.POST, "/factors/\(factorID)/challenge", bearer: stranger, json: [:]).json["code"] as? String == "mfa_factor_not_found")
            #expect(try await auth.request(.DELETE, "/factors/\(factorID)", bearer: stranger).status == 404)
            #expect(try await auth.request(.POST, "/factors/not-a-uuid/challenge", bearer: stranger, json: [:]).status == 404)
            for body in [["factor_type": "webauthn"], ["factor_type": "phone", "phone": "+15551234567"], [:], ["factor_type": "totp", "friendly_name": String(repeating: "x", count: 300)],
                         ["factor_type": "totp", "friendly_name": "a\u{0}b"], ["factor_type": 5]] as [[String: Any]] {
                let answer = try await auth.request(.POST, "/factors", bearer: stranger, json: body)
                #expect((400..<500).contains(answer.status), "\(body) → \(answer.status) \(answer.json)")
            }
            for body in [["challenge_id": "x", "code": "123456"], ["code": "123456"], ["challenge_id": UUID().uuidString], ["challenge_id": UUID().uuidString, "code": 12]] as [[String: Any]] {
                let answer = try await auth.request(.POST, "/factors/\(factorID)/verify", bearer: bearer, json: body)
                #expect((400..<500).contains(answer.status), "\(body) → \(answer.status) \(answer.json)")
            }
            #expect(try await auth.request(.POST, "/factors", json: ["factor_type": "totp"]).status == 401)
        }
    }

    @Test("wrong codes are budgeted per user (then 429 even for the right code), every attempt per address")
    func rateLimits() async throws {
        try await withRunningAuth(configure: { $0.rateLimits.mfaFailuresPerUser = RateLimitRule.perRun(3) }) { auth in
            let (_, _, session) = try await account(auth)
            let bearer = try token(session)
            let (factorID, totp, _) = try await enrollTOTP(auth, bearer)
            let challengeID = try await challenge(auth, bearer, factorID)
            let right = try #require(totp.code(at: Date()))
            let wrongCode = String(format: "%06d", ((Int(right) ?? 0) + 500_000) % 1_000_000)
            for _ in 0..<3 {
                #expect(try await verify(auth, bearer, factorID, challenge: challengeID, code: wrongCode).status == 422)
            }
            let limited = try await verify(auth, bearer, factorID, challenge: challengeID, code: right)
            #expect(limited.status == 429 && limited.json["code"] as? String == "over_request_rate_limit" && limited.headers.first(name: "Retry-After") != nil)
        }
        try await withRunningAuth(configure: { $0.rateLimits.mfaVerifyPerIP = RateLimitRule.perRun(4) }) { auth in
            let (_, _, session) = try await account(auth)
            let bearer = try token(session)
            let (factorID, _, _) = try await enrollTOTP(auth, bearer)
            var statuses: [Int] = []
            for _ in 0..<6 { statuses.append(try await auth.request(.POST, "/factors/\(factorID)/challenge", bearer: bearer, json: [:]).status) }
            #expect(statuses == [200, 200, 200, 200, 429, 429])
        }
    }

    @Test("unenroll: an unverified factor from aal1, a verified one only from aal2 (422 insufficient_aal); its sessions go back to aal1")
    func unenroll() async throws {
        try await withRunningAuth { auth in
            let (email, _, session) = try await account(auth)
            let bearer = try token(session)
            let (pending, _, _) = try await enrollTOTP(auth, bearer, name: "pending")
            let removed = try await auth.request(.DELETE, "/factors/\(pending)", bearer: bearer)
            #expect(removed.status == 200 && removed.json["id"] as? String == pending)

            let (factorID, totp, _) = try await enrollTOTP(auth, bearer)
            let verified = try await verify(auth, bearer, factorID, challenge: try await challenge(auth, bearer, factorID), code: try #require(totp.code(at: Date())))
            try #require(verified.status == 200)
            let aal1 = try token(try await auth.signIn(email: email, password: password).json)
            let refused = try await auth.request(.DELETE, "/factors/\(factorID)", bearer: aal1)
            #expect(refused.status == 422 && refused.json["code"] as? String == "insufficient_aal")
            let done = try await auth.request(.DELETE, "/factors/\(factorID)", bearer: try token(verified.json))
            #expect(done.status == 200 && done.json["id"] as? String == factorID)
            let refreshed = try await auth.refresh(try #require(verified.json["refresh_token"] as? String))
            try #require(refreshed.status == 200)
            let after = try token(refreshed.json)
            #expect(try claims(after)["aal"] as? String == "aal1" && (try methods(after)) == ["password"])
            #expect(try claims(after)["colony_mfa_enrolled"] as? Bool == false)
            #expect(try await auth.request(.GET, "/user", bearer: after).json["factors"] == nil)
        }
    }

    @Test("operators list, rename and delete a user's factors with the service-role key only; deleting recovers the account")
    func adminFactors() async throws {
        try await withRunningAuth { auth in
            let (_, userID, session) = try await account(auth)
            let bearer = try token(session)
            let (factorID, totp, _) = try await enrollTOTP(auth, bearer)
            let verified = try await verify(auth, bearer, factorID, challenge: try await challenge(auth, bearer, factorID), code: try #require(totp.code(at: Date())))
            try #require(verified.status == 200)
            let serviceKey = try #require(auth.serviceKeys[.mycirclee])

            #expect(try await auth.request(.GET, "/admin/users/\(userID)/factors", bearer: bearer).status == 403)
            #expect(try await auth.request(.GET, "/admin/users/\(userID)/factors").json["code"] as? String == "not_admin")
            let otherApp = try await auth.request(.GET, "/admin/users/\(userID)/factors", app: .unify, bearer: auth.serviceKeys[.unify], apiKey: auth.serviceKeys[.unify])
            #expect(otherApp.status == 404)

            let request = AdminFactorClient(auth: auth, serviceKey: serviceKey)
            let listed = try await request.send(.GET, "/admin/users/\(userID)/factors")
            let factors = try #require(listed.array)
            #expect(listed.status == 200 && factors.count == 1 && factors[0]["id"] as? String == factorID && factors[0]["status"] as? String == "verified")
            // Renamed by an operator (GoTrue's PUT); a user's own token may not.
            let renamed = try await auth.request(.PUT, "/admin/users/\(userID)/factors/\(factorID)", bearer: serviceKey, apiKey: serviceKey, json: ["friendly_name": "Backup phone"])
            #expect(renamed.status == 200 && renamed.json["friendly_name"] as? String == "Backup phone" && renamed.json["status"] as? String == "verified", "\(renamed.json)")
            #expect(try await auth.request(.PUT, "/admin/users/\(userID)/factors/\(factorID)", bearer: bearer, json: ["friendly_name": "mine"]).status == 403)
            let badNumber = try await auth.request(.PUT, "/admin/users/\(userID)/factors/\(factorID)", bearer: serviceKey, apiKey: serviceKey, json: ["phone": "not a number"])
            #expect(badNumber.status == 400 && badNumber.json["code"] as? String == "validation_failed")
            #expect(try await request.send(.GET, "/admin/users/\(userID)/factors").array?.first?["friendly_name"] as? String == "Backup phone")
            #expect(try await request.send(.DELETE, "/admin/users/\(userID)/factors/\(UUID().uuidString.lowercased())").status == 404)
            let deleted = try await request.send(.DELETE, "/admin/users/\(userID)/factors/\(factorID)")
            #expect(deleted.status == 200 && deleted.object?["id"] as? String == factorID)
            #expect(try await request.send(.GET, "/admin/users/\(userID)/factors").array?.isEmpty == true)
            #expect(try await request.send(.GET, "/admin/users/\(UUID().uuidString.lowercased())/factors").status == 404)
        }
    }

    @Test("a phone factor: enrolled with a number, its challenge texted through the sender (the dev folder), verified into aal2 with amr mfa/phone")
    func phoneFactor() async throws {
        try await withRunningAuth(configure: { $0.apps[.mycirclee]?.mfaPhoneEnabled = true }) { auth in
            let (_, _, session) = try await account(auth)
            let bearer = try token(session)
            let phone = "+1555\(Int.random(in: 1_000_000...9_999_999))"
            let enrolled = try await auth.request(.POST, "/factors", bearer: bearer, json: ["factor_type": "phone", "phone": phone, "friendly_name": "my phone"])
            try #require(enrolled.status == 200, "\(enrolled.json)")
            #expect(enrolled.json["phone"] as? String == phone && enrolled.json["type"] as? String == "phone" && enrolled.json["totp"] == nil)
            let factorID = try #require(enrolled.json["id"] as? String)
            let challenged = try await auth.request(.POST, "/factors/\(factorID)/challenge", bearer: bearer, json: ["channel": "sms"])
            try #require(challenged.status == 200, "\(challenged.json)")
            #expect(challenged.json["type"] as? String == "phone")
            let message = try #require(try auth.lastMessage(to: phone))
            #expect(message.channel == .sms && message.kind == "mfa")
            let code = try #require(message.code)
            #expect(message.text.contains(code))
            let challengeID = try #require(challenged.json["id"] as? String)
            let wrong = try await verify(auth, bearer, factorID, challenge: challengeID, code: code == "123456" ? "654321" : "123456")
            #expect(wrong.status == 422 && wrong.json["code"] as? String == "mfa_verification_failed")
            let verified = try await verify(auth, bearer, factorID, challenge: challengeID, code: code)
            try #require(verified.status == 200, "\(verified.json)")
            #expect(try methods(try token(verified.json)) == ["mfa/phone", "password"])
            #expect(try claims(try token(verified.json))["aal"] as? String == "aal2")
            // A second enrollment of the same verified number is refused; whatsapp is not offered.
            let twice = try await auth.request(.POST, "/factors", bearer: try token(verified.json), json: ["factor_type": "phone", "phone": phone])
            #expect(twice.status == 422 && twice.json["code"] as? String == "mfa_verified_factor_exists")
            #expect(try await auth.request(.POST, "/factors/\(factorID)/challenge", bearer: bearer, json: ["channel": "whatsapp"]).status == 400)
        }
        // Off by default (GoTrue's phone MFA is opt-in).
        try await withRunningAuth { auth in
            let (_, _, session) = try await account(auth)
            let refused = try await auth.request(.POST, "/factors", bearer: try token(session), json: ["factor_type": "phone", "phone": "+15551234567"])
            #expect(refused.status == 422 && refused.json["code"] as? String == "mfa_phone_enroll_not_enabled")
        }
    }

    @Test("the official Python client: enroll, challenge, verify, challenge_and_verify, list_factors, get_authenticator_assurance_level, unenroll, admin list/delete")
    func supabasePythonClient() async throws {
        try await withRunningAuth { auth in
            try await runSupabasePythonClient("test_mfa.py", against: auth, environment: ["COLONY_SERVICE_ROLE_KEY": auth.serviceKeys[.mycirclee]])
        }
    }
}

/// Admin requests whose answer may be a JSON array (the factor list), with the service-role key.
struct AdminFactorClient {
    let auth: RunningAuth
    let serviceKey: String

    func send(_ method: HTTPMethod, _ path: String) async throws -> (status: Int, array: [[String: Any]]?, object: [String: Any]?) {
        var request = HTTPClientRequest(url: "\(auth.authURL)\(path)")
        request.method = method
        request.headers.add(name: "apikey", value: serviceKey)
        request.headers.add(name: "Authorization", value: "Bearer \(serviceKey)")
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
        let body = try await response.body.collect(upTo: 1 << 20)
        let parsed = try? JSONSerialization.jsonObject(with: Data(buffer: body))
        return (Int(response.status.code), parsed as? [[String: Any]], parsed as? [String: Any])
    }
}
