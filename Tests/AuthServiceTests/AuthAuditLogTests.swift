import AsyncHTTPClient
@testable import AuthService
import ColonyModels
import ColonyPlatform
import ColonyTesting
import Foundation
import Logging
import NIOHTTP1
import Testing

/// GoTrue's audit log: entries written with the actions they record, `GET /admin/audit` for the
/// app's service-role key only, with GoTrue's filters and pagination headers.
@Suite("Auth audit log", .serialized)
struct AuthAuditLogTests {
    let password = "correct-horse-1"

    // MARK: rules, without HTTP

    @Test("the rules: log types as GoTrue's, query scopes, page bounds, Link headers")
    func rules() throws {
        #expect(AuditAction.login.logType == "account" && AuditAction.userSignedUp.logType == "team" && AuditAction.tokenRefreshed.logType == "token")
        #expect(AuditAction.userUpdatedPassword.logType == "user" && AuditAction.identityLinked.logType == "user" && AuditAction.factorDeleted.logType == "factor")
        #expect(AuditAction.allCases.count == 23)
        #expect(AuditAction.userExportRequested.logType == "user")

        #expect(try AuditQuery.parse(nil) == nil && AuditQuery.parse("") == nil && AuditQuery.parse("action:") == nil)
        #expect(try AuditQuery.parse("author:ann") == AuditQuery(fields: ["actor_username", "actor_name"], value: "ann"))
        #expect(try AuditQuery.parse("type:a:b") == AuditQuery(fields: ["log_type"], value: "a:b"))
        for bad in ["bogus:x", "action", "author", ":x", "ACTION:login", "author:a\u{0}b"] {
            #expect(throws: APIError.self) { try AuditQuery.parse(bad) }
        }
        // LIKE wildcards in the value match themselves only.
        #expect(try AuditQuery.parse("author:a%_\\b")?.likePattern == "%a\\%\\_\\\\b%")

        #expect(try AuditPage.parse(page: nil, perPage: nil) == AuditPage(page: 1, perPage: 50))
        #expect(try AuditPage.parse(page: "0", perPage: "0") == AuditPage(page: 1, perPage: 50))
        #expect(try AuditPage.parse(page: "3", perPage: "5000") == AuditPage(page: 3, perPage: 1000))
        let huge = try AuditPage.parse(page: "99999999999999999999999999", perPage: "99999999999999999999")
        #expect(huge == AuditPage(page: AuditPage.maximumPage, perPage: 1000) && huge.offset > 0)
        for bad in ["-1", "1.5", "abc", "1e3", " 1", "+2", "٣"] {
            #expect(throws: APIError.self) { try AuditPage.parse(page: bad, perPage: nil) }
            #expect(throws: APIError.self) { try AuditPage.parse(page: nil, perPage: bad) }
        }

        let page = AuditPage(page: 1, perPage: 2)
        #expect(page.linkHeader(path: "/admin/audit", query: [], total: 5) == "</admin/audit?page=2>; rel=\"next\", </admin/audit?page=3>; rel=\"last\"")
        #expect(AuditPage(page: 3, perPage: 2).linkHeader(path: "/admin/audit", query: [("per_page", "2"), ("page", "3")], total: 5)
            == "</admin/audit?page=3&per_page=2>; rel=\"last\"")
        // GoTrue's own test: one entry, no query.
        #expect(AuditPage(page: 1, perPage: 50).linkHeader(path: "/admin/audit", query: [], total: 1) == "</admin/audit?page=1>; rel=\"last\"")

        let user = UserRecord(id: UUID(), app: .mycirclee, email: "a@example.com", phone: "15550001111", appMetadata: [:], userMetadata: ["full_name": .string("Ann")], createdAt: Date(), updatedAt: Date())
        let payload = AuditActor.user(user).payload(.login, traits: ["provider": .string("email")])
        // GoTrue: the phone when there is one, else the email.
        #expect(payload["actor_username"] == .string("15550001111") && payload["actor_name"] == .string("Ann") && payload["log_type"] == .string("account"))
        #expect(AuditActor.serviceRole.payload(.userDeleted, traits: nil)["actor_id"] == .string("00000000-0000-0000-0000-000000000000"))
    }

    // MARK: through HTTP

    @Test("a user's actions appear newest first with action, log_type, actor and address; failed ones leave nothing")
    func actionsRecorded() async throws {
        try await withRunningAuth { auth in
            let address = email("actor")
            let signUp = try await auth.request(.POST, "/signup", json: ["email": address, "password": password], headers: [("X-Forwarded-For", "203.0.113.9")])
            #expect(signUp.status == 200, "\(signUp.json)")
            let refreshToken = try #require(signUp.json["refresh_token"] as? String)
            #expect(try await auth.signIn(email: address, password: "wrong-password-9").status == 400)
            let signedIn = try await auth.signIn(email: address, password: password)
            let access = try #require(signedIn.json["access_token"] as? String)
            #expect(try await auth.refresh(refreshToken).status == 200)
            // The same password again: 422, and no user_modified.
            #expect(try await auth.request(.PUT, "/user", bearer: access, json: ["password": password]).status == 422)
            #expect(try await auth.request(.PUT, "/user", bearer: access, json: ["data": ["full_name": "Ada"]]).status == 200)
            #expect(try await auth.request(.POST, "/logout", bearer: access).status == 204)

            let listed = try await audit(auth, "?query=author:\(address)")
            #expect(listed.status == 200)
            let actions = listed.entries.compactMap { ($0["payload"] as? [String: Any])?["action"] as? String }
            #expect(actions == ["logout", "user_modified", "token_refreshed", "login", "login", "user_signedup"], "\(actions)")
            #expect(listed.headers.first(name: "X-Total-Count") == "6")
            let userID = try #require((signUp.json["user"] as? [String: Any])?["id"] as? String)
            for entry in listed.entries {
                let payload = try #require(entry["payload"] as? [String: Any])
                #expect(payload["actor_id"] as? String == userID && payload["actor_username"] as? String == address && payload["actor_via_sso"] as? Bool == false)
                #expect(entry["id"] is String && entry["created_at"] is String && entry["ip_address"] is String)
                // Never a token or a code.
                let text = String(decoding: try JSONSerialization.data(withJSONObject: entry), as: UTF8.self)
                #expect(!text.contains(refreshToken) && !text.contains(access) && !text.contains(password))
            }
            let login = try #require(listed.entries.first { ($0["payload"] as? [String: Any])?["action"] as? String == "login" })
            #expect((login["payload"] as? [String: Any])?["log_type"] as? String == "account")
            #expect(((login["payload"] as? [String: Any])?["traits"] as? [String: Any])?["provider"] as? String == "email")
            // The display name set by the update names the actor from then on (GoTrue's actor_name).
            #expect((listed.entries.first?["payload"] as? [String: Any])?["actor_name"] as? String == "Ada")

            // Filters as GoTrue's: action, type, author (a substring, any case).
            #expect(try await audit(auth, "?query=action:login&per_page=1000").entries.allSatisfy { ($0["payload"] as? [String: Any])?["action"] as? String == "login" })
            let tokens = try await audit(auth, "?query=type:token")
            #expect(tokens.status == 200 && !tokens.entries.isEmpty && tokens.entries.allSatisfy { ($0["payload"] as? [String: Any])?["log_type"] as? String == "token" })
            #expect(try await audit(auth, "?query=author:\(address.uppercased())").entries.count == 6)

            // An operator's deletion: by service_role, the account in the traits.
            let key = try #require(auth.serviceKeys[.mycirclee])
            #expect(try await auth.request(.DELETE, "/admin/users/\(userID)", bearer: key, apiKey: key).status == 200)
            let deleted = try await audit(auth, "?query=action:user_deleted")
            let entry = try #require(deleted.entries.first?["payload"] as? [String: Any])
            #expect(entry["actor_username"] as? String == "service_role" && entry["log_type"] as? String == "team")
            #expect((entry["traits"] as? [String: Any])?["user_email"] as? String == address)
        }
    }

    @Test("an entry lives in its action's transaction: rolled back with it")
    func sameTransaction() async throws {
        try await withRunningAuth { auth in
            struct Abort: Error {}
            let store = AuditLogStore(logger: TestEnvironment.logger)
            let name = "rolled-back-\(UUID().uuidString)"
            let payload = AuditActor(id: UUID(), username: name, name: nil).payload(.login, traits: nil)
            try await auth.withDatabase { database in
                await #expect(throws: Abort.self) {
                    try await database.transaction { connection in
                        try await store.insert(app: .mycirclee, payload: payload, ip: "", on: connection)
                        throw Abort()
                    }
                }
                let query = try AuditQuery.parse("author:\(name)")
                let (entries, total) = try await database.withConnection { try await store.list(app: .mycirclee, query: query, page: AuditPage(page: 1, perPage: 50), on: $0) }
                #expect(entries.isEmpty && total == 0)
                // Committed, it is there; older than the retention, it goes.
                try await database.transaction { try await store.insert(app: .mycirclee, payload: payload, ip: "", on: $0) }
                #expect(try await database.withConnection { try await store.list(app: .mycirclee, query: query, page: AuditPage(page: 1, perPage: 50), on: $0) }.total == 1)
                #expect(try await database.transaction { try await store.deleteOlder(thanDays: 90, on: $0) } == 0)
                try await database.withConnection { connection in
                    _ = try await connection.query("UPDATE audit_log_entries SET created_at = now() - interval '91 days' WHERE payload->>'actor_username' = \(name)", logger: TestEnvironment.logger)
                }
                #expect(try await database.transaction { try await store.deleteOlder(thanDays: 90, on: $0) } == 1)
                // Per app: another app's days do not touch this app's entries.
                try await database.transaction { try await store.insert(app: .mycirclee, payload: payload, ip: "", on: $0) }
                try await database.withConnection { connection in
                    _ = try await connection.query("UPDATE audit_log_entries SET created_at = now() - interval '40 days' WHERE payload->>'actor_username' = \(name)", logger: TestEnvironment.logger)
                }
                #expect(try await database.transaction { try await store.deleteOlder(thanDays: 30, app: .unify, on: $0) } == 0)
                #expect(try await database.transaction { try await store.deleteOlder(thanDays: 30, app: .mycirclee, on: $0) } == 1)
            }
        }
    }

    @Test("per app: another app's service key sees none of it; anon keys, user tokens and no key are refused")
    func isolation() async throws {
        try await withRunningAuth { auth in
            let address = email("isolated")
            let signUp = try await auth.request(.POST, "/signup", json: ["email": address, "password": password])
            let access = try #require(signUp.json["access_token"] as? String)
            #expect(try await audit(auth, "?query=author:\(address)").entries.count == 2)
            let unify = try await audit(auth, "?query=author:\(address)", key: auth.serviceKeys[.unify])
            #expect(unify.status == 200 && unify.entries.isEmpty && unify.headers.first(name: "X-Total-Count") == "0")
            for (key, bearer) in [(auth.anonKeys[.mycirclee], nil), (auth.anonKeys[.mycirclee], access), (nil, access), (auth.anonKeys[.mycirclee], auth.anonKeys[.mycirclee])] as [(String?, String?)] {
                let refused = try await audit(auth, "", key: key, bearer: bearer, useServiceKey: false)
                #expect(refused.status == 401 || refused.status == 403, "\(refused.status) \(refused.json)")
                #expect(refused.json["code"] is String && refused.entries.isEmpty)
            }
        }
    }

    @Test("pagination: Link and X-Total-Count as GoTrue's; hostile page, per_page and query are 400 or empty, never 500")
    func pagination() async throws {
        try await withRunningAuth { auth in
            let address = email("pages")
            #expect(try await auth.request(.POST, "/signup", json: ["email": address, "password": password]).status == 200)
            for _ in 0..<3 { #expect(try await auth.signIn(email: address, password: password).status == 200) }
            // 5 entries: user_signedup and 4 logins.
            let first = try await audit(auth, "?query=author:\(address)&per_page=2")
            #expect(first.entries.count == 2 && first.headers.first(name: "X-Total-Count") == "5")
            let link = try #require(first.headers.first(name: "Link"))
            #expect(link.contains("page=2") && link.contains("rel=\"next\"") && link.contains("page=3&per_page=2&query=author%3A") && link.hasSuffix("rel=\"last\"") && link.contains("/auth/v1/admin/audit?"), "\(link)")
            let last = try await audit(auth, "?query=author:\(address)&per_page=2&page=3")
            #expect(last.entries.count == 1 && last.headers.first(name: "Link")?.contains("rel=\"next\"") == false)
            #expect(((last.entries.first?["payload"] as? [String: Any])?["action"] as? String) == "user_signedup")
            let firstIDs = Set(first.entries.compactMap { $0["id"] as? String })
            let second = try await audit(auth, "?query=author:\(address)&per_page=2&page=2")
            #expect(second.entries.count == 2 && firstIDs.isDisjoint(with: second.entries.compactMap { $0["id"] as? String }))

            let hostile = [
                "?page=-1", "?per_page=-5", "?page=abc", "?per_page=1.5", "?page=99999999999999999999999999999", "?per_page=99999999999999999999999",
                "?page=9223372036854775807&per_page=1000", "?page=0&per_page=0", "?query=bogus:x", "?query=action", "?query=%00", "?query=author:%00", "?query=author:%C3%28", "?query=%FF:%FE", "?query=author:%25%5F%5C",
                "?query=author:%27%3B%20DROP%20TABLE%20users%3B--", "?page=%F0%9F%92%A5", "?query=type:" + String(repeating: "x", count: 4000), "?page=&per_page=",
            ]
            for query in hostile {
                let answer = try await audit(auth, query)
                // NUL never reaches auth: the platform refuses it first (422).
                #expect(answer.status == 200 || answer.status == 400 || (query.contains("%00") && answer.status == 422), "\(query): \(answer.status) \(answer.json)")
                if answer.status != 200 { #expect(answer.json["code"] as? String == "validation_failed", "\(query): \(answer.json)") }
            }
            #expect(try await audit(auth, "?page=99999999999999999999").entries.isEmpty)
            #expect(try await audit(auth, "?query=author:%25").entries.isEmpty)
            #expect(try await auth.signIn(email: address, password: password).status == 200)
        }
    }

    @Test("invitations: invited_at set by POST /invite and generate_link; user_invited by service_role, invite_accepted by the invitee")
    func invitations() async throws {
        try await withRunningAuth { auth in
            let key = try #require(auth.serviceKeys[.mycirclee])
            let invitee = email("invitee")
            let invited = try await auth.request(.POST, "/invite", bearer: key, apiKey: key, json: ["email": invitee])
            #expect(invited.status == 200 && invited.json["invited_at"] is String, "\(invited.json)")
            let id = try #require(invited.json["id"] as? String)
            #expect(try await auth.request(.GET, "/admin/users/\(id)", bearer: key, apiKey: key).json["invited_at"] is String)
            let linked = try await auth.request(.POST, "/admin/generate_link", bearer: key, apiKey: key, json: ["type": "invite", "email": email("linked")])
            #expect(linked.status == 200 && linked.json["invited_at"] is String, "\(linked.json)")
            // Others have none.
            let plain = try await auth.request(.POST, "/signup", json: ["email": email("plain"), "password": password])
            #expect((plain.json["user"] as? [String: Any])?["invited_at"] == nil || (plain.json["user"] as? [String: Any])?["invited_at"] is NSNull)

            let entries = try await audit(auth, "?query=action:user_invited").entries.compactMap { $0["payload"] as? [String: Any] }
            #expect(entries.count == 2 && entries.allSatisfy { $0["actor_username"] as? String == "service_role" && $0["log_type"] as? String == "team" })
            #expect(entries.contains { ($0["traits"] as? [String: Any])?["user_email"] as? String == invitee })

            let code = try #require(try await auth.waitForMessage(to: invitee, kind: "invite").code)
            #expect(try await auth.request(.POST, "/verify", json: ["type": "invite", "email": invitee, "token": code]).status == 200)
            let accepted = try await audit(auth, "?query=author:\(invitee)").entries.compactMap { ($0["payload"] as? [String: Any])?["action"] as? String }
            #expect(accepted == ["login", "invite_accepted"], "\(accepted)")
        }
    }

    @Test("recovery: recorded by the dispatcher for a known address only")
    func recovery() async throws {
        try await withRunningAuth { auth in
            let (known, unknown) = (email("known"), email("unknown"))
            #expect(try await auth.request(.POST, "/signup", json: ["email": known, "password": password]).status == 200)
            #expect(try await auth.request(.POST, "/recover", json: ["email": known]).status == 200)
            #expect(try await auth.request(.POST, "/recover", json: ["email": unknown]).status == 200)
            try await auth.drainAddressRequests()
            _ = try await auth.waitForMessage(to: known, kind: "recovery")
            let recorded = try await audit(auth, "?query=action:user_recovery_requested").entries.compactMap { $0["payload"] as? [String: Any] }
            #expect(recorded.count == 1 && recorded.first?["actor_username"] as? String == known && recorded.first?["log_type"] as? String == "user")
            #expect(try await audit(auth, "?query=author:\(unknown)").entries.isEmpty)
        }
    }

    // MARK: helpers

    func email(_ tag: String) -> String { "\(uniqueName(tag))@example.com" }

    /// `GET /admin/audit` with the app's service key (or the given credentials); the body as a
    /// list of entries, or as an error object.
    func audit(_ auth: RunningAuth, _ query: String, app: App = .mycirclee, key: String? = nil, bearer: String? = nil, useServiceKey: Bool = true) async throws
        -> (status: Int, entries: [[String: Any]], json: [String: Any], headers: HTTPHeaders) {
        var request = HTTPClientRequest(url: "\(auth.authURL)/admin/audit\(query)")
        let serviceKey = useServiceKey ? (key ?? auth.serviceKeys[app]) : key
        if let serviceKey { request.headers.add(name: "apikey", value: serviceKey) }
        if let authorization = bearer ?? serviceKey { request.headers.add(name: "Authorization", value: "Bearer \(authorization)") }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
        let body = try JSONSerialization.jsonObject(with: Data(buffer: try await response.body.collect(upTo: 8 << 20)), options: [.fragmentsAllowed])
        return (Int(response.status.code), body as? [[String: Any]] ?? [], body as? [String: Any] ?? [:], response.headers)
    }
}
