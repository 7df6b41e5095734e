import AsyncHTTPClient
import ColonyModels
import ColonyPlatform
import ColonyTesting
import ConsoleService
import Foundation
import PostgresNIO
import Testing

@Suite("Console: operators sign in with a password and TOTP, act on users through auth, and every step is audited")
struct ConsoleTests {
    @Test("an owner adds a support operator; support enrolls TOTP, signs in, finds a user by email and bans them; the user's next sign-in is refused; the audit log lists it all")
    func supportBansAUser() async throws {
        try await withRunningConsole { console in
            let (owner, _) = try await console.operatorSignedIn("owner@example.com", role: .owner)
            let operatorsPage = try await owner.get("/console/operators")
            #expect(operatorsPage.status == 200, "\(operatorsPage)")
            let invited = try await owner.submit("/console/operators", from: operatorsPage, ["email": "support@example.com", "role": "support", "app_mycirclee": "on"])
            let link = try #require(invited.find(#"id="invitation-link">([^<]+)<"#), "\(invited)")

            let support = Browser(base: console.console)
            let totp = try await support.acceptInvitation(link, password: "support password 1")
            // Signing in again later: password, then a new code.
            let signOut = try await support.submit("/console/sign-out", from: try await support.get("/console/users"))
            #expect(signOut.status == 303)
            let signedIn = try await support.signIn("support@example.com", password: "support password 1", totp: totp)
            #expect(signedIn.status == 303 && signedIn.location == "/console/", "\(signedIn)")

            let userID = try await console.user("ban.me@example.com", app: .mycirclee)
            #expect(try await console.userSignIn("ban.me@example.com", app: .mycirclee).status == 200)
            let found = try await support.get("/console/users?q=ban.me%40example")
            #expect(found.status == 200 && found.body.contains("/console/users/mycirclee/\(userID.lowercased)"), "\(found)")
            let userPage = try await support.get("/console/users/mycirclee/\(userID.lowercased)")
            #expect(userPage.body.contains("ban.me@example.com") && userPage.body.contains("not banned"), "\(userPage)")
            let banned = try await support.submit("/console/users/mycirclee/\(userID.lowercased)/ban", from: userPage, ["duration": "24h"])
            #expect(banned.status == 303, "\(banned)")
            #expect(try await support.get(try #require(banned.location)).body.contains("banned until"))
            let refused = try await console.userSignIn("ban.me@example.com", app: .mycirclee)
            #expect(refused.status == 400 && "\(refused.json)".contains("user_banned"), "\(refused)")

            let audit = try await owner.get("/console/audit")
            #expect(audit.status == 200)
            for action in ["add_operator", "accept_invitation", "enroll_totp", "sign_in", "sign_out", "ban_user"] {
                #expect(audit.body.contains("<td>\(action)</td>"), "the audit log lists \(action)")
            }
            #expect(audit.body.contains(userID.lowercased))
            let csv = try await owner.get("/console/audit.csv?action=ban_user")
            #expect(csv.status == 200 && csv.body.contains("support@example.com") && csv.body.contains(",ban_user,mycirclee,\(userID.lowercased),ok,"), "\(csv)")

            // Each entry is an operator_action event too.
            let events = try await collectEvents(brokers: TestEnvironment.current().kafkaBrokers, topic: EventTopics.topic(for: .console, prefix: console.topicPrefix),
                                                 timeout: .seconds(60)) { events in events.contains { $0.header.type == .operatorAction && String(decoding: $0.bytes, as: UTF8.self).contains("ban_user") } }
            #expect(events.contains { $0.header.type == .operatorAction })
        }
    }

    @Test("a viewer sees a user but the server refuses their ban, even sent straight to the route with a good CSRF token; the refusal is audited")
    func viewerCannotBan() async throws {
        try await withRunningConsole { console in
            let (viewer, _) = try await console.operatorSignedIn("viewer@example.com", role: .viewer)
            let userID = try await console.user("viewed@example.com", app: .mycirclee)
            let page = try await viewer.get("/console/users/mycirclee/\(userID.lowercased)")
            #expect(page.status == 200 && !page.body.contains("ban-form") && !page.body.contains("viewed@example.com"), "no ban form, no address: \(page)")
            let attempt = try await viewer.submit("/console/users/mycirclee/\(userID.lowercased)/ban", from: page, ["duration": "24h"])
            #expect(attempt.status == 403, "\(attempt)")
            #expect(try await console.userSignIn("viewed@example.com", app: .mycirclee).status == 200, "not banned")
            let refusals = try await console.withConsoleDatabase { database in
                try await database.withConnection { try await $0.query("SELECT count(*)::int FROM audit_log WHERE action = 'ban_user' AND outcome = 'refused'", logger: TestEnvironment.logger).firstValue(Int.self) }
            }
            #expect(refusals == 1)
        }
    }

    @Test("attacks are refused: a form without the CSRF token, with another session's, from another site; a cookie kept after sign-out; an operator of one app on another app's user")
    func attacksRefused() async throws {
        try await withRunningConsole { console in
            let (support, _) = try await console.operatorSignedIn("support@example.com", role: .support, apps: [.unify])
            let (other, _) = try await console.operatorSignedIn("other@example.com", role: .support, apps: [.mycirclee])
            let unifyUser = try await console.user("u@example.com", app: .unify)
            let path = "/console/users/unify/\(unifyUser.lowercased)/ban"
            let page = try await support.get("/console/users/unify/\(unifyUser.lowercased)")
            #expect(page.status == 200, "\(page)")

            #expect(try await support.post(path, ["duration": "24h"]).status == 403, "no CSRF token")
            let otherPage = try await other.get("/console/users")
            #expect(try await support.post(path, ["duration": "24h", "csrf": try #require(otherPage.csrf)]).status == 403, "another session's token")
            #expect(try await support.post(path, ["duration": "24h", "csrf": try #require(page.csrf)], headers: [("Origin", "https://evil.example")]).status == 403, "another site")
            #expect(try await support.post(path, ["duration": "24h", "csrf": try #require(page.csrf)], headers: [("Sec-Fetch-Site", "cross-site")]).status == 403)
            #expect(try await console.userSignIn("u@example.com", app: .unify).status == 200, "none of these banned the user")

            // Another app's user: not shown, not banned.
            let mycircleeUser = try await console.user("m@example.com", app: .mycirclee)
            #expect(try await support.get("/console/users/mycirclee/\(mycircleeUser.lowercased)").status == 403)
            #expect(try await support.submit("/console/users/mycirclee/\(mycircleeUser.lowercased)/ban", from: page, ["duration": "24h"]).status == 403)
            #expect(try await console.userSignIn("m@example.com", app: .mycirclee).status == 200)
            let search = try await support.get("/console/users?q=m%40example.com")
            #expect(!search.body.contains(mycircleeUser.lowercased), "search covers the operator's apps only")

            // A stolen cookie, replayed after its owner signed out.
            let stolen = support.cookies
            #expect(try await support.submit("/console/sign-out", from: page).status == 303)
            let thief = Browser(base: console.console)
            thief.cookies = stolen
            let replay = try await thief.get("/console/users/unify/\(unifyUser.lowercased)")
            #expect(replay.status == 303 && replay.location == "/console/sign-in", "\(replay)")
            #expect(try await thief.post(path, ["duration": "24h", "csrf": try #require(page.csrf)]).status == 303, "sent to sign in, nothing done")
            #expect(try await console.userSignIn("u@example.com", app: .unify).status == 200)
        }
    }

    @Test("brute force: wrong passwords lock the operator (then the right one is refused too, with the same answer as an unknown address); wrong codes lock them as well")
    func bruteForceLocks() async throws {
        try await withRunningConsole(configure: { $0.lockoutAttempts = 5 }) { console in
            let (first, totp) = try await console.operatorSignedIn("target@example.com", role: .admin)
            _ = first
            let attacker = Browser(base: console.console)
            var answers: Set<Int> = []
            for attempt in 0..<5 {
                let form = try await attacker.get("/console/sign-in")
                let reply = try await attacker.post("/console/sign-in", ["form_token": try #require(form.formToken), "email": "target@example.com", "password": "guess \(attempt) wrong"])
                answers.insert(reply.status)
            }
            #expect(answers == [403])
            let unknown = try await attacker.post("/console/sign-in", ["form_token": try #require(try await attacker.get("/console/sign-in").formToken),
                                                                       "email": "nobody@example.com", "password": "whatever it is"])
            let locked = try await attacker.signIn("target@example.com", password: "correct horse battery", totp: totp)
            #expect(locked.status == 403 && locked.body.contains(Operators.refusedSignIn.prefix(40)), "\(locked)")
            #expect(unknown.status == 403 && unknown.body.contains(Operators.refusedSignIn.prefix(40)), "the same answer for an unknown address")

            // Codes: a second operator, right password, five wrong codes, then the right code is refused.
            let (_, secondTOTP) = try await console.operatorSignedIn("second@example.com", role: .admin)
            let browser = Browser(base: console.console)
            let form = try await browser.get("/console/sign-in")
            let first2 = try await browser.post("/console/sign-in", ["form_token": try #require(form.formToken), "email": "second@example.com", "password": "correct horse battery"])
            #expect(first2.location == "/console/sign-in/code")
            let codePage = try await browser.get("/console/sign-in/code")
            let right = try #require(secondTOTP.code(at: Date().addingTimeInterval(30)))
            for guess in ["000000", "111111", "222222", "333333", "444444"] where guess != right {
                #expect(try await browser.submit("/console/sign-in/code", from: codePage, ["code": guess]).status == 403)
            }
            let late = try await browser.submit("/console/sign-in/code", from: codePage, ["code": right])
            #expect(late.status == 403, "locked after five wrong codes: \(late)")
        }
    }

    @Test("every page carries a strict CSP, no framing and no caching; the session cookie is HttpOnly, SameSite=Strict and Secure; pages need a signed-in operator; sessions end when idle")
    func headersCookiesAndTimeouts() async throws {
        try await withRunningConsole { console in
            let anonymous = Browser(base: console.console)
            let signIn = try await anonymous.get("/console/sign-in")
            #expect(signIn.headers.first(name: "Content-Security-Policy") == ConsolePages.contentSecurityPolicy)
            #expect(!signIn.body.contains("<script"), "no script at all")
            #expect(signIn.headers.first(name: "X-Frame-Options") == "DENY" && signIn.headers.first(name: "Cache-Control") == "no-store")
            for path in ["/console/", "/console/users?q=a", "/console/audit", "/console/operators", "/console/audit.csv"] {
                let page = try await anonymous.get(path)
                #expect(page.status == 303 && page.location == "/console/sign-in", "\(path): \(page)")
            }
            // Password right but no code yet: pages still refuse.
            let invitation = try await console.invite("half@example.com", role: .owner)
            let half = Browser(base: console.console)
            let welcome = try await half.get("/console/welcome?token=\(invitation)")
            let accepted = try await half.post("/console/welcome", ["form_token": try #require(welcome.formToken), "invitation": invitation,
                                                                   "password": "correct horse battery", "repeat": "correct horse battery"])
            let cookie = try #require(accepted.headers[canonicalForm: "Set-Cookie"].first { $0.hasPrefix("colony_console=") })
            #expect(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict") && cookie.contains("Secure") && cookie.contains("Path=/console"), "\(cookie)")
            #expect(try await half.get("/console/users").status == 303, "no second factor yet")

            let (operatorBrowser, _) = try await console.operatorSignedIn("idle@example.com", role: .viewer)
            #expect(try await operatorBrowser.get("/console/users").status == 200)
            try await console.withConsoleDatabase { database in
                try await database.withConnection { connection in
                    try await connection.query("UPDATE operator_sessions SET last_seen_at = now() - interval '31 minutes'", logger: TestEnvironment.logger)
                }
            }
            #expect(try await operatorBrowser.get("/console/users").status == 303, "idle past the timeout")
        }
    }

    @Test("a subject access request: support asks auth for a user's export, which runs in the operator's name (auth's record and both audit logs); a viewer's is refused")
    func subjectAccessRequest() async throws {
        try await withRunningConsole { console in
            let (support, _) = try await console.operatorSignedIn("privacy@example.com", role: .support)
            let (viewer, _) = try await console.operatorSignedIn("reader@example.com", role: .viewer)
            let userID = try await console.user("asks@example.com", app: .mycirclee)
            let viewerPage = try await viewer.get("/console/users/mycirclee/\(userID.lowercased)")
            #expect(!viewerPage.body.contains("export-form"))
            #expect(try await viewer.submit("/console/users/mycirclee/\(userID.lowercased)/export", from: viewerPage).status == 403)

            let page = try await support.get("/console/users/mycirclee/\(userID.lowercased)")
            #expect(page.body.contains("export-form"), "\(page)")
            let asked = try await support.submit("/console/users/mycirclee/\(userID.lowercased)/export", from: page)
            #expect(asked.status == 303, "\(asked)")
            #expect(try await support.get(try #require(asked.location)).body.contains("link goes to their own address"))
            let authDatabase = Database(configuration: console.authDatabase, logger: TestEnvironment.logger)
            let requestedBy = try await withRunning(authDatabase) {
                try await authDatabase.withConnection { connection in
                    try await connection.query("SELECT requested_by FROM exports WHERE user_id = \(userID)", logger: TestEnvironment.logger).values(String.self)
                }
            }
            #expect(requestedBy == ["privacy@example.com"], "one export, in the operator's name")
            let audit = try await console.withConsoleDatabase { database in
                try await database.withConnection { connection in
                    try await connection.query("SELECT operator_email || ' ' || outcome FROM audit_log WHERE action = 'request_export' ORDER BY id", logger: TestEnvironment.logger).values(String.self)
                }
            }
            #expect(audit == ["reader@example.com refused", "privacy@example.com ok"], "\(audit)")
            // Straight to auth with an app's service-role key: no named operator, no subject access request.
            let direct = try await console.authRequest(.POST, "/admin/users/\(userID.lowercased)/export", key: console.serviceKeys[.mycirclee])
            #expect(direct.status == 403 && (direct.json["code"] as? String ?? "\(direct.json)").contains("operator_required"), "\(direct)")
            // A second request while the first runs: auth says so, the page says why.
            let again = try await support.submit("/console/users/mycirclee/\(userID.lowercased)/export", from: page)
            #expect(again.status == 400 || again.status == 409, "\(again)")
        }
    }

    @Test("two replicas share nothing in memory: a session made on one acts on the other with its CSRF token, and a sign-out on either ends it on both")
    func replicasShareSessions() async throws {
        try await withRunningConsole { console in
            try await console.withSecondReplica { second in
                let (first, _) = try await console.operatorSignedIn("replicas@example.com", role: .support)
                let userID = try await console.user("replicated@example.com", app: .mycirclee)
                let page = try await first.get("/console/users/mycirclee/\(userID.lowercased)")
                #expect(page.status == 200, "\(page)")
                // The same browser's next request lands on the other replica.
                let other = Browser(base: second)
                other.cookies = first.cookies
                let banned = try await other.submit("/console/users/mycirclee/\(userID.lowercased)/ban", from: page, ["duration": "1h"])
                #expect(banned.status == 303, "\(banned)")
                #expect(try await console.userSignIn("replicated@example.com", app: .mycirclee).status == 400, "banned through the second replica")
                #expect(try await other.submit("/console/sign-out", from: page).status == 303)
                let after = try await first.get("/console/users")
                #expect(after.status == 303 && after.location == "/console/sign-in", "signed out on the first replica too: \(after)")
            }
        }
    }

    @Test("the audit log is append-only: updates, deletes and truncation are refused by the database itself")
    func auditLogAppendOnly() async throws {
        try await withRunningConsole { console in
            _ = try await console.operatorSignedIn("someone@example.com", role: .viewer)
            try await console.withConsoleDatabase { database in
                for statement in ["UPDATE audit_log SET action = 'nothing'", "DELETE FROM audit_log", "TRUNCATE audit_log"] {
                    await #expect(throws: (any Error).self, "\(statement)") {
                        try await database.withConnection { try await $0.query(PostgresQuery(unsafeSQL: statement), logger: TestEnvironment.logger) }
                    }
                }
                let count = try await database.withConnection { try await $0.query("SELECT count(*)::int FROM audit_log", logger: TestEnvironment.logger).firstValue(Int.self) }
                #expect((count ?? 0) >= 2)
            }
        }
    }
}
