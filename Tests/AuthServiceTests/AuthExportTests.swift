import AsyncHTTPClient
@testable import AuthService
import ColonyModels
import ColonyPlatform
import ColonyStorage
import ColonyTesting
import Foundation
import NIOCore
import Testing

/// A person's data export as auth runs it (issue 40): the request and its refusals, the
/// assembly once every service's part is in, the mailed signed link, the week it lives.
/// The parts of circles and notifications are written here with the writer they use, from
/// plans over auth's own schema; the journey through every service is Tests/EndToEnd's.
@Suite("Auth data exports", .serialized)
struct AuthExportTests {
    let password = "correct-horse-1"

    func signUp(_ auth: RunningAuth, app: App = .mycirclee) async throws -> (id: UUID, email: String, access: String) {
        let email = "\(uniqueName("export"))@example.com"
        let response = try await auth.request(.POST, "/signup", app: app, json: ["email": email, "password": password, "data": ["full_name": "Ada Export"]])
        #expect(response.status == 200, "\(response.json)")
        let user = try #require(response.json["user"] as? [String: Any])
        return (try #require(UUID(uuidString: user["id"] as? String ?? "")), email, try #require(response.json["access_token"] as? String))
    }

    /// What circles and notifications would write: a part with one table (and, for circles, a file).
    func writeOtherParts(_ auth: RunningAuth, export: UUID, user: UUID, app: App) async throws {
        let database = Database(configuration: auth.database, logger: TestEnvironment.logger)
        try await withRunning(database) {
            try await database.transaction { connection in
                let writer = UserExportWriter(backend: auth.storage.backend, logger: TestEnvironment.logger)
                let request = UserExportRequested(exportId: export, userId: user, app: app, requestedAt: Date())
                for service in [app.domainService, .notifications] {
                    let plan = ExportPlan(service: service, about: "A stand-in part.", tables: [
                        ExportTable("rows", about: "One row.", sources: ["users"], sql: "SELECT $1::uuid AS user_id", fields: ["user_id": "Your id."]),
                    ], notExported: [:])
                    try await writer.write(plan, request: request, on: connection)
                }
            }
        }
    }

    func archive(at link: String) async throws -> (status: Int, body: ByteBuffer) {
        let response = try await HTTPClient.shared.execute(HTTPClientRequest(url: link), timeout: .seconds(30))
        return (Int(response.status.code), try await response.body.collect(upTo: 64 << 20))
    }

    /// The archive's entries, read and CRC-checked by Python's zipfile (an independent reader).
    func zipEntries(_ body: ByteBuffer) async throws -> [String: String] {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent(uniqueName("export") + ".zip")
        defer { try? FileManager.default.removeItem(at: file) }
        try Data(buffer: body).write(to: file)
        let script = """
            import json, sys, zipfile
            with zipfile.ZipFile(sys.argv[1]) as z:
                bad = z.testzip()
                assert bad is None, bad
                print(json.dumps({n: z.read(n).decode('utf-8', 'replace') for n in z.namelist()}))
            """
        let (status, output) = try await PythonClient.run(["-c", script, file.path], environment: [:])
        #expect(status == 0, "\(output)")
        return try JSONDecoder().decode([String: String].self, from: Data(output.utf8))
    }

    @Test("auth's export plan covers its schema: every table exported or said why not, every field explained")
    func planCoversSchema() async throws {
        try await withRunningAuth { auth in
            let problems = try await exportPlanProblems(AuthExport.plan, database: auth.database)
            #expect(problems.isEmpty, "\(problems)")
        }
    }

    @Test("an export: 202, one at a time, user_export_requested out, assembled with every part, mailed as a signed link; expired after its week")
    func exportJourney() async throws {
        try await withRunningAuth { auth in
            let user = try await signUp(auth)
            let started = try await auth.request(.POST, "/user/export", bearer: user.access)
            #expect(started.status == 202, "\(started.json)")
            #expect(started.json["status"] as? String == "running")
            let exportID = try #require(UUID(uuidString: started.json["id"] as? String ?? ""))

            // A second request while it runs is refused.
            let again = try await auth.request(.POST, "/user/export", bearer: user.access)
            #expect(again.status == 409)
            #expect(again.json["code"] as? String == "export_in_progress")
            // Nobody else's token starts one for this person, and no token none at all.
            #expect(try await auth.request(.POST, "/user/export").status == 401)

            let environment = try TestEnvironment.current()
            let events = try await authEvents(brokers: environment.kafkaBrokers, prefix: auth.topicPrefix) { events in
                events.contains { $0.type == .userExportRequested }
            }
            let requested = try #require(events.first { $0.type == .userExportRequested }).decode(UserExportRequested.self).payload
            #expect(requested.exportId == exportID && requested.userId == user.id && requested.app == .mycirclee)

            // Not assembled while a part is missing.
            try await Task.sleep(for: .seconds(6))
            #expect(try auth.messages(to: user.email).allSatisfy { $0.kind != "export_ready" })

            try await writeOtherParts(auth, export: exportID, user: user.id, app: .mycirclee)
            try await waitUntil(timeout: .seconds(60)) { try auth.messages(to: user.email).contains { $0.kind == "export_ready" } }
            let mail = try #require(try auth.messages(to: user.email).first { $0.kind == "export_ready" })
            let link = try #require(mail.link)
            #expect(link.contains("/storage/v1/object/sign/exports/\(exportID.lowercased)/colony-export.zip?token="))
            #expect(mail.text.contains(link))

            let download = try await archive(at: link)
            #expect(download.status == 200)
            let entries = try await zipEntries(download.body)
            for name in ["README.md", "auth/data.json", "auth/README.md", "circles/data.json", "circles/README.md", "notifications/data.json"] {
                #expect(entries[name] != nil, "\(name) missing from \(entries.keys.sorted())")
            }
            let authData = try #require(entries["auth/data.json"])
            #expect(authData.contains(user.email))
            #expect(authData.contains("Ada Export"))
            // No secret leaves: the password hash is bcrypt's $2…$, the refresh tokens are hashes.
            #expect(!authData.contains("$2a$") && !authData.contains("$2b$"))
            #expect(entries["README.md"]?.contains("circles/") == true)

            // The parts go once they are in the archive (just after the row says ready).
            let backend = auth.storage.backend
            try await waitUntil(timeout: .seconds(30)) {
                for key in [UserExport.manifestKey(exportID, .circles), UserExport.manifestKey(exportID, .auth), UserExport.entriesKey(exportID, .circles)] {
                    if try await backend.get(bucket: "exports", key: key) != nil { return false }
                }
                return true
            }

            let listed = try await auth.request(.GET, "/user/export", bearer: user.access)
            let first = try #require((listed.json["exports"] as? [[String: Any]])?.first)
            #expect(first["status"] as? String == "ready")
            #expect(first["expires_at"] is String)

            // Only the signed link reads the bucket: a forged token, another key, the
            // authenticated and public routes all get nothing.
            let forged = link.replacingOccurrences(of: "token=", with: "token=1")
            #expect(try await archive(at: forged).status == 403)
            #expect(try await archive(at: "\(auth.base)/storage/v1/object/public/exports/\(exportID.lowercased)/colony-export.zip").status == 404)
            var authenticated = HTTPClientRequest(url: "\(auth.base)/storage/v1/object/authenticated/exports/\(exportID.lowercased)/colony-export.zip")
            authenticated.headers.add(name: "Authorization", value: "Bearer \(user.access)")
            let viaToken = try await HTTPClient.shared.execute(authenticated, timeout: .seconds(10)).status
            #expect(viaToken == .notFound || viaToken == .unauthorized, "\(viaToken)")

            // A week later the sweep deletes the archive; the link finds nothing.
            try await auth.withDatabase { (database: Database) async throws in
                let accounts = auth.accounts(database)
                #expect(try await accounts.sweepExports(now: Date().addingTimeInterval(6 * 86_400)) == 0)
                #expect(try await accounts.sweepExports(now: Date().addingTimeInterval(7 * 86_400 + 60)) == 1)
            }
            #expect(try await auth.storage.backend.get(bucket: "exports", key: UserExport.archiveKey(exportID)) == nil)
            let expired = try await auth.request(.GET, "/user/export", bearer: user.access)
            #expect((expired.json["exports"] as? [[String: Any]])?.first?["status"] as? String == "expired")
        }
    }

    @Test("an export needs a recent sign-in or the reauthentication nonce, a confirmed address, and stays within its budget")
    func exportRefusals() async throws {
        try await withRunningAuth(configure: { settings in
            settings.apps[.ibelieveinyou]?.reauthenticationWindowSeconds = 0
            settings.rateLimits.exportPerUser = RateLimitRule.perRun(1)
            // A phone account signing in with its password, for the SMS case.
            settings.apps[.mycirclee]?.phoneEnabled = true
            settings.apps[.mycirclee]?.phonePasswordEnabled = true
        }) { auth in
            // A session older than the app's window: the nonce is required, a wrong one refused.
            let stale = try await signUp(auth, app: .ibelieveinyou)
            let bare = try await auth.request(.POST, "/user/export", app: .ibelieveinyou, bearer: stale.access)
            #expect(bare.status == 400 && bare.json["code"] as? String == "reauthentication_needed", "\(bare.json)")
            let wrong = try await auth.request(.POST, "/user/export", app: .ibelieveinyou, bearer: stale.access, json: ["nonce": "000000"])
            #expect(wrong.status == 422, "\(wrong.json)")
            #expect(try await auth.request(.GET, "/reauthenticate", app: .ibelieveinyou, bearer: stale.access).status == 200)
            let code = try #require(try auth.lastMessage(to: stale.email)?.code)
            let proven = try await auth.request(.POST, "/user/export", app: .ibelieveinyou, bearer: stale.access, json: ["nonce": code])
            #expect(proven.status == 202, "\(proven.json)")

            // The budget: one a day here. Once the first is done, the second is 429.
            let user = try await signUp(auth)
            #expect(try await auth.request(.POST, "/user/export", bearer: user.access).status == 202)
            try await auth.withDatabase { database in
                try await database.withConnection { connection in
                    try await connection.query("UPDATE exports SET status = 'failed' WHERE user_id = \(user.id)", logger: TestEnvironment.logger)
                }
            }
            let over = try await auth.request(.POST, "/user/export", bearer: user.access)
            #expect(over.status == 429, "\(over.json)")

            // An account with only a phone gets its link by SMS.
            let phone = "1555\(Int.random(in: 1_000_000...9_999_999))"
            let created = try await auth.request(.POST, "/admin/users", bearer: auth.serviceKeys[.mycirclee], apiKey: auth.serviceKeys[.mycirclee],
                                                 json: ["phone": phone, "password": password, "phone_confirm": true])
            #expect(created.status == 200, "\(created.json)")
            let signedIn = try await auth.signIn(phone: phone, password: password)
            let phoneAccess = try #require(signedIn.json["access_token"] as? String, "\(signedIn.json)")
            #expect(try await auth.request(.POST, "/user/export", bearer: phoneAccess).status == 202)
            try await auth.withDatabase { (database: Database) async throws in
                let accounts = auth.accounts(database)
                let userID = try #require(UUID(uuidString: created.json["id"] as? String ?? ""))
                let export = try await database.withConnection { connection in
                    try await connection.query("SELECT id FROM exports WHERE user_id = \(userID)", logger: TestEnvironment.logger).collect().first?.decode(UUID.self)
                }
                try await writeOtherParts(auth, export: try #require(export), user: userID, app: .mycirclee)
                try await waitUntil(timeout: .seconds(60)) { try await accounts.assembleExports() >= 0 && (try auth.messages(to: phone).contains { $0.kind == "export_ready" }) }
            }
            let text = try #require(try auth.messages(to: phone).first { $0.kind == "export_ready" })
            #expect(text.channel == .sms && text.link != nil && text.text.contains(text.link ?? "-"))
            // Unconfirmed and address-less accounts are refused: nobody to send the link to.
            let unconfirmed = try await auth.request(.POST, "/admin/users", bearer: auth.serviceKeys[.mycirclee], apiKey: auth.serviceKeys[.mycirclee],
                                                     json: ["email": "\(uniqueName("unconfirmed"))@example.com", "password": password])
            #expect(unconfirmed.status == 200)
            try await auth.withDatabase { (database: Database) async throws in
                let accounts = auth.accounts(database)
                let id = try #require(UUID(uuidString: unconfirmed.json["id"] as? String ?? ""))
                await #expect(throws: APIError.self) { try await accounts.requestExport(app: .mycirclee, userID: id, requestedBy: "support", client: nil) }
            }
        }
    }

    @Test("an export whose parts do not all arrive fails at its deadline, its half-written parts are deleted, and the person may ask again")
    func exportTimesOut() async throws {
        try await withRunningAuth { auth in
            let user = try await signUp(auth)
            let started = try await auth.request(.POST, "/user/export", bearer: user.access)
            #expect(started.status == 202)
            let exportID = try #require(UUID(uuidString: started.json["id"] as? String ?? ""))
            // Circles stopped halfway: its entries named, two of three objects written, no manifest.
            let backend = auth.storage.backend
            let prefix = UserExport.partPrefix(exportID, .circles)
            try await backend.put(bucket: "exports", key: UserExport.entriesKey(exportID, .circles),
                                  body: ByteBuffer(string: #"["data.json","README.md","files/post-photos/a/b"]"#), contentType: "application/json")
            try await backend.put(bucket: "exports", key: prefix + "/data.json", body: ByteBuffer(string: "{}"), contentType: "application/json")
            try await backend.put(bucket: "exports", key: prefix + "/files/post-photos/a/b", body: ByteBuffer(string: "photo"), contentType: "image/png")
            try await auth.withDatabase { (database: Database) async throws in
                let accounts = auth.accounts(database)
                #expect(try await accounts.assembleExports(now: Date().addingTimeInterval(7200)) == 0)
            }
            for key in [UserExport.entriesKey(exportID, .circles), prefix + "/data.json", prefix + "/files/post-photos/a/b", UserExport.manifestKey(exportID, .auth)] {
                #expect(try await backend.get(bucket: "exports", key: key) == nil, "\(key) is left behind")
            }
            let listed = try await auth.request(.GET, "/user/export", bearer: user.access)
            #expect((listed.json["exports"] as? [[String: Any]])?.first?["status"] as? String == "failed")
            #expect(try await auth.request(.POST, "/user/export", bearer: user.access).status == 202)
        }
    }

    @Test("an operator's subject access request starts the same export, recorded in the audit log under their name")
    func operatorRequest() async throws {
        try await withRunningAuth { auth in
            let user = try await signUp(auth)
            try await auth.withDatabase { (database: Database) async throws in
                let accounts = auth.accounts(database)
                let id = try #require(try await accounts.findUserID(app: .mycirclee, identifier: user.email.uppercased()))
                #expect(id == user.id)
                #expect(try await accounts.findUserID(app: .unify, identifier: user.email) == nil, "another app's pool")
                let export = try await accounts.requestExport(app: .mycirclee, userID: id, requestedBy: "support@example.com", client: nil)
                #expect(export.status == "running")
            }
            try await auth.withDatabase { database in
                let rows = try await database.withConnection { connection in
                    try await connection.query("SELECT payload->>'actor_username', payload->'traits'->>'user_id' FROM audit_log_entries WHERE payload->>'action' = 'user_export_requested'", logger: TestEnvironment.logger)
                        .collect().map { try $0.decode((String, String).self) }
                }
                #expect(rows.contains { $0.0 == "support@example.com" && $0.1 == user.id.lowercased })
            }
        }
    }
}
