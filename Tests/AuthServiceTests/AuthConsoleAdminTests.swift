import AsyncHTTPClient
@testable import AuthService
import ColonyModels
import ColonyPlatform
import ColonyTesting
import Foundation
import NIOCore
import NIOHTTP1
import PostgresNIO
import Testing

/// Issue 38: auth's admin routes for the Colony Console. The console's credential acts in the app
/// `X-Colony-App` names for the operator `X-Colony-Operator` names, who is the actor of the audit
/// entries; search, a user's sessions, signing them out and sending them links; anything else
/// is refused as before.
@Suite("Auth's admin surface for the console", .serialized)
struct AuthConsoleAdminTests {
    static let operatorEmail = "ops@colony.test"
    let password = "correct-horse-1"
    let consoleKey = InternalKey(Self.randomKey())
    let internalKey = InternalKey(Self.randomKey())

    static func randomKey() -> String {
        (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
    }

    /// Runs auth with the console's credential (and the internal key, to show it is not it).
    func withConsoleAuth(configure: @escaping @Sendable (inout AuthSettings) -> Void = { _ in }, _ body: @Sendable (RunningAuth) async throws -> Void) async throws {
        let (consoleKey, internalKey) = (consoleKey, internalKey)
        try await withRunningAuth(configure: configure, service: { $0.consoleKey = consoleKey; $0.internalKey = internalKey }, body)
    }

    // MARK: rules, without HTTP

    @Test("the rules: what a search text matches, its LIKE patterns escaped, texts refused")
    func searchRules() throws {
        #expect(try UserSearch.parse(nil) == nil && UserSearch.parse("") == nil && UserSearch.parse("  \n") == nil)
        let id = UUID()
        let byID = try #require(try UserSearch.parse(" \(id.uuidString) "))
        #expect(byID.id == id && byID.phoneDigits == nil && byID.text == id.uuidString)
        #expect(try UserSearch.parse("+49 151-2")?.phoneDigits == "491512")
        #expect(try UserSearch.parse("4915")?.phoneDigits == "4915")
        for notPhone in ["49a", "+", "- -", "++49", "49+1", "٤٩"] {
            #expect(try UserSearch.parse(notPhone)?.phoneDigits == nil, "\(notPhone)")
        }
        #expect(try UserSearch.parse("Ann")?.prefixPattern == "Ann%")
        // Wildcards and the escape character match themselves only.
        #expect(try UserSearch.parse("a_c%\\")?.prefixPattern == "a\\_c\\%\\\\%")
        #expect(try UserSearch.parse("+49 151")?.phonePattern == "49151%")
        #expect(try UserSearch.parse(String(repeating: "a", count: UserSearch.maximumLength))?.text.count == UserSearch.maximumLength)
        for bad in [String(repeating: "a", count: UserSearch.maximumLength + 1), "a\u{0}b"] {
            #expect(throws: APIError.self) { try UserSearch.parse(bad) }
        }
    }

    // MARK: through HTTP

    @Test("the console lists and searches an app's users by id, email, phone and display name; wildcards match literally; another app's users never appear")
    func listsAndSearches() async throws {
        try await withConsoleAuth { auth in
            func create(_ app: String, _ body: [String: Any]) async throws -> String {
                let created = try await auth.console(.POST, "/admin/users", app: app, json: body)
                #expect(created.status == 200, "\(created.json)")
                return try #require(created.json["id"] as? String)
            }
            let ann = try await create("mycirclee", ["email": "Ann.Smith@example.com", "phone": "+49 1512 3456789", "user_metadata": ["display_name": "Zoe Display"]])
            let bob = try await create("mycirclee", ["email": "bob@example.com", "phone": "+4915199887766", "user_metadata": ["full_name": "Anna Full"]])
            let carl = try await create("mycirclee", ["email": "carl@example.com", "user_metadata": ["name": "Annabel Name"]])
            let underscore = try await create("mycirclee", ["email": "a_c@example.com"])
            let abc = try await create("mycirclee", ["email": "abc@example.com"])
            // An empty display_name falls back to full_name.
            let dora = try await create("mycirclee", ["email": "dora@example.com", "user_metadata": ["display_name": "", "full_name": "Dora Fallback"]])
            let other = try await create("unify", ["email": "ann.other@example.com", "phone": "+4915123456789", "user_metadata": ["display_name": "Anna Other"]])

            func search(_ filter: String, app: String = "mycirclee", query: String = "") async throws -> (ids: [String], total: String?, status: Int) {
                let encoded = filter.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? filter
                let response = try await auth.console(.GET, "/admin/users?filter=\(encoded)\(query)", app: app)
                let users = response.json["users"] as? [[String: Any]] ?? []
                return (users.compactMap { $0["id"] as? String }, response.headers.first(name: "X-Total-Count"), response.status)
            }
            let all = try await auth.console(.GET, "/admin/users")
            #expect(all.status == 200 && (all.json["users"] as? [Any])?.count == 6 && all.headers.first(name: "X-Total-Count") == "6", "\(all.json)")
            #expect(all.json["aud"] as? String == "mycirclee")

            // Emails first (byte order), then phones, then display names; each account once.
            let anns = try await search("ANN")
            #expect(anns.ids == [ann, bob, carl] && anns.total == "3", "\(anns)")
            #expect(try await search(ann).ids == [ann])
            #expect(try await search(other).ids.isEmpty)
            #expect(try await search("+49 151-2").ids == [ann])
            #expect(try await search("+49 151").ids == [ann, bob])
            #expect(try await search("4915199").ids == [bob])
            #expect(try await search("zoe disp").ids == [ann])
            #expect(try await search("dora f").ids == [dora])
            // `_` and `%` are no wildcards: a_c, not abc.
            #expect(try await search("a_c").ids == [underscore])
            #expect(try await search("a%").ids.isEmpty)
            #expect(try await search("ab").ids == [abc])
            // Paging as the list: page 2 of 2 per page, the total all matches.
            let second = try await search("ann", query: "&per_page=2&page=2")
            #expect(second.ids == [carl] && second.total == "3", "\(second)")
            #expect(try await search("ann", query: "&per_page=2&page=3").ids.isEmpty)
            // Another app's users: only through that app.
            #expect(try await search("ann", app: "unify").ids == [other])
            #expect(try await search("+49", app: "unify").ids == [other])
            // The same search with an app's own service-role key.
            let key = try #require(auth.serviceKeys[.mycirclee])
            let byKey = try await auth.request(.GET, "/admin/users?filter=ann", bearer: key, apiKey: key)
            #expect((byKey.json["users"] as? [[String: Any]])?.compactMap { $0["id"] as? String } == [ann, bob, carl])
            // Texts nothing can match are refused, never a 500: a NUL by the platform (422, as
            // everywhere), a text longer than any address or name by the search (400).
            for (bad, status) in [("a\u{0}b", 422), (String(repeating: "x", count: 300), 400)] {
                let refused = try await search(bad)
                #expect(refused.status == status, "\(refused)")
            }

            let got = try await auth.console(.GET, "/admin/users/\(carl)")
            #expect(got.status == 200 && got.json["email"] as? String == "carl@example.com")
        }
    }

    @Test("the console bans, signs out everywhere, lists sessions, deletes a factor and a user; the audit log names the operator")
    func actsAndAudits() async throws {
        try await withConsoleAuth { auth in
            let address = email("acted")
            let created = try await auth.console(.POST, "/admin/users", json: ["email": address, "password": password, "email_confirm": true])
            let id = try #require(created.json["id"] as? String, "\(created.json)")

            // Two sessions from two devices; the first refreshes once.
            let first = try await auth.signIn(email: address, password: password, headers: [("User-Agent", "ConsoleTest/1")])
            let second = try await auth.signIn(email: address, password: password, headers: [("User-Agent", "ConsoleTest/2")])
            let refreshed = try await auth.refresh(try #require(first.json["refresh_token"] as? String))
            #expect(refreshed.status == 200)
            let sessions = try await auth.console(.GET, "/admin/users/\(id)/sessions")
            let listed = try #require(sessions.json["sessions"] as? [[String: Any]], "\(sessions.json)")
            #expect(listed.compactMap { $0["user_agent"] as? String } == ["ConsoleTest/2", "ConsoleTest/1"], "\(listed)")
            for session in listed {
                #expect(session["id"] is String && session["user_id"] as? String == id && session["aal"] as? String == "aal1" && session["ip"] is String)
                #expect(session["created_at"] is String && session["updated_at"] is String && session["last_used_at"] is String)
                let text = String(decoding: try JSONSerialization.data(withJSONObject: session), as: UTF8.self)
                #expect(!text.contains("token"), "\(text)")
            }
            #expect(listed.last?["refreshed_at"] is String && !(listed.first?["refreshed_at"] is String))

            // A factor the user enrolled, deleted by the operator.
            let access = try #require(second.json["access_token"] as? String)
            let enrolled = try await auth.request(.POST, "/factors", bearer: access, json: ["factor_type": "totp", "friendly_name": "phone app"])
            let factorID = try #require(enrolled.json["id"] as? String, "\(enrolled.json)")
            #expect(try await auth.consoleList(.GET, "/admin/users/\(id)/factors").count == 1)
            let deleted = try await auth.console(.DELETE, "/admin/users/\(id)/factors/\(factorID)")
            #expect(deleted.status == 200 && deleted.json["id"] as? String == factorID, "\(deleted.json)")
            #expect(try await auth.consoleList(.GET, "/admin/users/\(id)/factors").isEmpty)

            // Signed out everywhere: no refresh token of the user works any more.
            #expect(try await auth.console(.POST, "/admin/users/\(id)/logout").status == 204)
            #expect(try await auth.refresh(try #require(second.json["refresh_token"] as? String)).status == 400)
            #expect(try await auth.refresh(try #require(refreshed.json["refresh_token"] as? String)).status == 400)
            #expect(try await auth.request(.GET, "/user", bearer: access).status == 403)
            #expect((try await auth.console(.GET, "/admin/users/\(id)/sessions").json["sessions"] as? [Any])?.isEmpty == true)

            // Banned: the sign-in is refused.
            #expect(try await auth.signIn(email: address, password: password).status == 200)
            let banned = try await auth.console(.PUT, "/admin/users/\(id)", json: ["ban_duration": "24h"])
            #expect(banned.status == 200 && banned.json["banned_until"] is String, "\(banned.json)")
            let refused = try await auth.signIn(email: address, password: password)
            #expect(refused.status == 400 && refused.json["code"] as? String == "user_banned", "\(refused.json)")
            #expect((try await auth.console(.GET, "/admin/users/\(id)/sessions").json["sessions"] as? [Any])?.isEmpty == true)

            // The app's service-role key works as before, and is recorded as the service role.
            let key = try #require(auth.serviceKeys[.mycirclee])
            #expect(try await auth.request(.PUT, "/admin/users/\(id)", bearer: key, apiKey: key, json: ["user_metadata": ["note": "by key"]]).status == 200)

            #expect(try await auth.console(.DELETE, "/admin/users/\(id)").status == 200)
            #expect(try await auth.console(.GET, "/admin/users/\(id)").status == 404)

            // The audit log, read by the console: each action by the operator, the account in its traits.
            let entries = try await auth.consoleList(.GET, "/admin/audit?query=author:\(Self.operatorEmail)")
            let payloads = entries.compactMap { $0["payload"] as? [String: Any] }
            #expect(payloads.compactMap { $0["action"] as? String } == ["user_deleted", "user_modified", "logout", "factor_deleted", "user_signedup"], "\(payloads)")
            for payload in payloads {
                #expect(payload["actor_username"] as? String == Self.operatorEmail && payload["actor_id"] as? String == "00000000-0000-0000-0000-000000000000")
                #expect((payload["traits"] as? [String: Any])?["user_id"] as? String == id, "\(payload)")
            }
            let modified = try await auth.consoleList(.GET, "/admin/audit?query=action:user_modified").compactMap { ($0["payload"] as? [String: Any])?["actor_username"] as? String }
            #expect(modified == ["service_role", Self.operatorEmail], "\(modified)")
        }
    }

    @Test("the console sends a recovery mail (through SMTP, rate limits included), a phone's code, and a sign-up's confirmation again; 422 once confirmed")
    func sendsLinks() async throws {
        let server = try SMTPServerProcess()
        try await server.start(security: .none)
        defer { server.stop() }
        let smtp = server.settings(security: .none)
        // Budgets count in fixed windows aligned to the clock: a day's, and never in its last two
        // minutes, so the two sends below share one (a minute's straddled its end in a CI run).
        let secondsLeftToday = 86_400 - Int(Date().timeIntervalSince1970) % 86_400
        if secondsLeftToday < 120 { try await Task.sleep(for: .seconds(secondsLeftToday + 1)) }
        try await withConsoleAuth(configure: { settings in
            settings.sender.mail = .smtp(smtp)
            settings.rateLimits.sendPerRecipient = RateLimitRule.perRun(1)
            settings.apps[.habithive]?.phoneEnabled = true
        }) { auth in
            let (confirmed, pending) = (email("confirmed"), email("pending"))
            let confirmedID = try #require(try await auth.console(.POST, "/admin/users", json: ["email": confirmed, "password": password, "email_confirm": true]).json["id"] as? String)
            let pendingID = try #require(try await auth.console(.POST, "/admin/users", json: ["email": pending, "password": password]).json["id"] as? String)

            // The mail POST /recover sends: its code signs in (type recovery).
            #expect(try await auth.console(.POST, "/admin/users/\(confirmedID)/recover").status == 204)
            let mail = try await server.waitForMessage(1)
            #expect(mail.headers["To"] == confirmed)
            let text = try #require(mail.parts["text/plain"]?.content)
            #expect(text.contains("\(auth.authURL)/verify?") && text.contains("type=recovery"), "\(text)")
            let code = try #require(text.split(whereSeparator: \.isWhitespace).first { $0.count == 6 && $0.allSatisfy(\.isNumber) }.map(String.init))
            let verified = try await auth.request(.POST, "/verify", json: ["type": "recovery", "email": confirmed, "token": code])
            #expect(verified.status == 200 && verified.json["access_token"] is String, "\(verified.json)")
            // The recipient's budget counts as for POST /recover.
            let again = try await auth.console(.POST, "/admin/users/\(confirmedID)/recover")
            #expect(again.status == 429 && again.json["code"] as? String == "over_email_send_rate_limit", "\(again.json)")

            // The sign-up's confirmation again; a confirmed address has none.
            #expect(try await auth.console(.POST, "/admin/users/\(pendingID)/resend").status == 204)
            let confirmation = try await server.waitForMessage(2)
            #expect(confirmation.headers["To"] == pending)
            #expect(confirmation.parts["text/plain"]?.content.contains("type=signup") == true)
            let already = try await auth.console(.POST, "/admin/users/\(confirmedID)/resend")
            #expect(already.status == 422 && already.json["code"] as? String == "already_confirmed", "\(already.json)")

            // An account with a phone only gets the sign-in code POST /otp texts.
            let number = "+1555" + String(Int.random(in: 1_000_000...9_999_999))
            let phoneID = try #require(try await auth.console(.POST, "/admin/users", app: "habithive", json: ["phone": number, "phone_confirm": true]).json["id"] as? String)
            #expect(try await auth.console(.POST, "/admin/users/\(phoneID)/recover", app: "habithive").status == 204)
            #expect(try await auth.waitForMessage(to: number, kind: "sms").code?.count == 6)

            let actions = try await auth.consoleList(.GET, "/admin/audit?query=author:\(Self.operatorEmail)").compactMap { ($0["payload"] as? [String: Any])?["action"] as? String }
            #expect(actions == ["user_confirmation_requested", "user_recovery_requested", "user_signedup", "user_signedup"], "\(actions)")
            let texted = try await auth.consoleList(.GET, "/admin/audit?query=action:user_recovery_requested", app: "habithive")
            #expect(texted.count == 1 && (texted.first?["payload"] as? [String: Any])?["actor_username"] as? String == Self.operatorEmail)
            #expect(server.received().count == 2)
        }
    }

    @Test("refused: no operator, no or an unknown app, a user's token, the anon key, the internal key, a wrong console key, no credential; another app's key or app gets 404")
    func attacksRefused() async throws {
        try await withConsoleAuth { auth in
            let address = email("target")
            let created = try await auth.console(.POST, "/admin/users", json: ["email": address, "password": password, "email_confirm": true])
            let id = try #require(created.json["id"] as? String, "\(created.json)")
            let signedIn = try await auth.signIn(email: address, password: password)
            let access = try #require(signedIn.json["access_token"] as? String)
            let refreshToken = try #require(signedIn.json["refresh_token"] as? String)
            let key = try #require(auth.consoleKey)
            let operatorHeader = ("X-Colony-Operator", Self.operatorEmail)
            let appHeader = ("X-Colony-App", "mycirclee")
            let anon = try #require(auth.anonKeys[.mycirclee])
            let wrong = InternalKey(Self.randomKey())

            let cases: [(String, [(String, String)], Int, String?)] = [
                ("the console without its operator", [("Authorization", key.authorization), appHeader], 400, "operator_required"),
                ("the console with a malformed operator", [("Authorization", key.authorization), ("X-Colony-Operator", "not an address"), appHeader], 400, "operator_required"),
                ("the console without an app", [("Authorization", key.authorization), operatorHeader], 400, "app_required"),
                ("the console with an unknown app", [("Authorization", key.authorization), operatorHeader, ("X-Colony-App", "nope")], 400, "unknown_app"),
                ("a user's token with the console's headers", [("Authorization", "Bearer \(access)"), ("apikey", anon), operatorHeader, appHeader], 403, "not_admin"),
                ("the anon key", [("Authorization", "Bearer \(anon)"), ("apikey", anon), operatorHeader, appHeader], 403, "not_admin"),
                ("the internal key", [("Authorization", internalKey.authorization), operatorHeader, appHeader], 403, "not_admin"),
                ("a wrong console key", [("Authorization", wrong.authorization), operatorHeader, appHeader], 403, "not_admin"),
                ("the console key in another scheme", [("Authorization", key.authorization.replacingOccurrences(of: "Bearer", with: "Basic")), operatorHeader, appHeader], 401, "no_authorization"),
                ("the console's headers alone", [operatorHeader, appHeader], 401, "no_authorization"),
            ]
            let routes: [(HTTPMethod, String, [String: Any]?)] = [
                (.GET, "/admin/users", nil), (.GET, "/admin/users?filter=target", nil), (.GET, "/admin/users/\(id)", nil),
                (.PUT, "/admin/users/\(id)", ["ban_duration": "24h"]), (.GET, "/admin/users/\(id)/sessions", nil), (.POST, "/admin/users/\(id)/logout", nil),
                (.POST, "/admin/users/\(id)/recover", nil), (.POST, "/admin/users/\(id)/resend", nil), (.GET, "/admin/users/\(id)/factors", nil),
                (.GET, "/admin/audit", nil), (.GET, "/admin/imports", nil), (.DELETE, "/admin/users/\(id)", nil),
            ]
            for (name, headers, status, code) in cases {
                for (method, path, body) in routes {
                    let response = try await auth.raw(method, path, headers: headers, json: body)
                    #expect(response.status == status && response.json["code"] as? String == code, "\(name) \(method) \(path): \(response.status) \(response.json)")
                }
            }
            // Acting in another app: that app has no such user, as with its own service-role key.
            let unifyKey = try #require(auth.serviceKeys[.unify])
            for (method, path, body) in routes where path.contains(id) {
                let console = try await auth.console(method, path, app: "unify", json: body)
                #expect(console.status == 404 && console.json["code"] as? String == "user_not_found", "console for unify \(method) \(path): \(console.json)")
                let byKey = try await auth.raw(method, path, headers: [("Authorization", "Bearer \(unifyKey)"), ("apikey", unifyKey)], json: body)
                #expect(byKey.status == 404 && byKey.json["code"] as? String == "user_not_found", "unify's key \(method) \(path): \(byKey.json)")
            }
            #expect(try await auth.console(.GET, "/admin/users", app: "unify").json["users"] as? [Any] != nil)
            #expect((try await auth.console(.GET, "/admin/users?filter=target", app: "unify").json["users"] as? [Any])?.isEmpty == true)

            // Nothing happened: the user signs in, its session lives, the log holds only its creation by the operator.
            #expect(try await auth.refresh(refreshToken).status == 200)
            let user = try await auth.console(.GET, "/admin/users/\(id)")
            #expect(user.status == 200 && !(user.json["banned_until"] is String), "\(user.json)")
            let actions = try await auth.consoleList(.GET, "/admin/audit?query=author:\(Self.operatorEmail)").compactMap { ($0["payload"] as? [String: Any])?["action"] as? String }
            #expect(actions == ["user_signedup"], "\(actions)")
            #expect(try auth.messages(to: address).isEmpty)
        }
    }

    @Test("a deployment without COLONY_CONSOLE_KEY refuses the console as any other bearer; the service-role key still works")
    func unsetKeyRefuses() async throws {
        try await withRunningAuth { auth in
            #expect(auth.consoleKey == nil)
            let headers = [("Authorization", consoleKey.authorization), ("X-Colony-Operator", Self.operatorEmail), ("X-Colony-App", "mycirclee")]
            let refused = try await auth.raw(.GET, "/admin/users", headers: headers)
            #expect(refused.status == 403 && refused.json["code"] as? String == "not_admin", "\(refused.json)")
            let key = try #require(auth.serviceKeys[.mycirclee])
            #expect(try await auth.raw(.GET, "/admin/users", headers: [("Authorization", "Bearer \(key)"), ("apikey", key)]).status == 200)
        }
    }

    @Test("each of the search's four queries reads an index on the migrated schema (a few thousand accounts, analyzed), never the table")
    func searchUsesIndexes() async throws {
        try await withRunningAuth { auth in
            try await auth.withDatabase { database in
                // Three apps' accounts: emails, phones for half, each kind of name.
                try await database.query("""
                    INSERT INTO users (id, app, email, phone, raw_user_meta_data)
                    SELECT gen_random_uuid(), (ARRAY['mycirclee', 'unify', 'habithive'])[1 + g % 3], 'user' || g || '@example.com',
                           CASE WHEN g % 2 = 0 THEN (4915000000000 + g)::text END,
                           CASE g % 3 WHEN 0 THEN jsonb_build_object('display_name', 'Name ' || g)
                                      WHEN 1 THEN jsonb_build_object('full_name', 'Name ' || g) ELSE jsonb_build_object('name', 'Name ' || g) END
                    FROM generate_series(1, 6000) g
                    """)
                try await database.query("ANALYZE users")
                let someone = try #require(try await database.withConnection { connection in
                    try await connection.query("SELECT id FROM users WHERE app = 'unify' ORDER BY email LIMIT 1", logger: TestEnvironment.logger).firstValue(UUID.self)
                })
                let searches: [(String, String, String)] = [
                    ("id", someone.uuidString, "users_pkey"),
                    ("email", "USER123", "users_app_email_prefix"),
                    ("phone", "+49 1500 0000 012", "users_app_phone_prefix"),
                    ("display name", "name 42", "users_app_name_prefix"),
                ]
                for (kind, text, index) in searches {
                    let search = try #require(try UserSearch.parse(text))
                    let query = try UserStore.searchQuery(app: .unify, search)
                    let plan = try await database.withConnection { connection in
                        try await connection.query(PostgresQuery(unsafeSQL: "EXPLAIN " + query.sql, binds: query.binds), logger: TestEnvironment.logger).values(String.self)
                    }.joined(separator: "\n")
                    #expect(plan.contains(index), "the \(kind) search does not use \(index):\n\(plan)")
                    #expect(!plan.contains("Seq Scan"), "the \(kind) search reads the table:\n\(plan)")
                }
                // And they find what they look for.
                let found = try await database.withConnection { connection in
                    try await UserStore(logger: TestEnvironment.logger).search(app: .unify, try #require(try UserSearch.parse("name 42")), page: 1, perPage: 1000, on: connection)
                }
                #expect(found.total > 0 && found.users.allSatisfy { $0.app == .unify })
            }
        }
    }

    // MARK: helpers

    func email(_ tag: String) -> String { "\(uniqueName(tag))@example.com" }
}

extension RunningAuth {
    /// A request as the console sends it: its credential, the operator, the app (no `apikey`).
    func console(_ method: HTTPMethod, _ path: String, app: String? = "mycirclee", json body: [String: Any]? = nil) async throws -> (status: Int, json: [String: Any], headers: HTTPHeaders) {
        var headers = [("Authorization", try #require(consoleKey).authorization), ("X-Colony-Operator", AuthConsoleAdminTests.operatorEmail)]
        if let app { headers.append(("X-Colony-App", app)) }
        return try await raw(method, path, headers: headers, json: body)
    }

    /// A console request answered with a JSON array (factors, the audit log).
    func consoleList(_ method: HTTPMethod, _ path: String, app: String = "mycirclee") async throws -> [[String: Any]] {
        var request = HTTPClientRequest(url: "\(authURL)\(path)")
        request.method = method
        for (name, value) in [("Authorization", try #require(consoleKey).authorization), ("X-Colony-Operator", AuthConsoleAdminTests.operatorEmail), ("X-Colony-App", app)] {
            request.headers.add(name: name, value: value)
        }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(60))
        let bytes = try await response.body.collect(upTo: 8 << 20)
        #expect(response.status == .ok, "\(path): \(String(buffer: bytes))")
        return try #require(try JSONSerialization.jsonObject(with: Data(buffer: bytes)) as? [[String: Any]])
    }

    /// A request with exactly these headers (no `apikey` unless given).
    func raw(_ method: HTTPMethod, _ path: String, headers: [(String, String)], json body: [String: Any]? = nil) async throws -> (status: Int, json: [String: Any], headers: HTTPHeaders) {
        var request = HTTPClientRequest(url: "\(authURL)\(path)")
        request.method = method
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(data: try JSONSerialization.data(withJSONObject: body)))
        }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(60))
        let bytes = try await response.body.collect(upTo: 1 << 20)
        let object = (try? JSONSerialization.jsonObject(with: Data(buffer: bytes))) as? [String: Any] ?? [:]
        return (Int(response.status.code), object, response.headers)
    }
}
