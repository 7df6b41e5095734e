import AuthService
import ColonyImport
import ColonyModels
import ColonyPlatform
import ColonyTesting
import Foundation
import NIOHTTP1
import PostgresNIO
import Testing

/// Issue 38's Imports page: `colony-admin import supabase` records each run in auth's
/// `import_runs` (`ImportRunLog`), and auth serves an app's runs to the console
/// (`GET /admin/imports`). The whole command's records are checked by the import journeys
/// (Tests/EndToEnd/test_import.py).
@Suite("Import runs: recorded by the import, served to the console")
struct ImportRunLogTests {
    static let source = "postgres://postgres@db.example.supabase.co:5432/postgres?sslmode=require"

    @Test("what is recorded: the storage without credentials, who ran it, the database's own words for what it refused")
    func recordedTexts() {
        #expect(ImportRunLog.redactedStorage(nil) == nil)
        #expect(ImportRunLog.redactedStorage("/srv/supabase-export") == "/srv/supabase-export")
        #expect(ImportRunLog.redactedStorage("s3://AKIAKEY:very-secret@abc.supabase.co/storage/v1/s3?X-Amz-Signature=f00d#top") == "s3://abc.supabase.co/storage/v1/s3")
        #expect(ImportRunLog.redactedStorage("s3+http://127.0.0.1:9000") == "s3+http://127.0.0.1:9000")
        #expect(ImportRunLog.runner(environment: ["USER": "alice", "LOGNAME": "root"], host: "box") == "alice@box")
        #expect(ImportRunLog.runner(environment: ["USER": "", "LOGNAME": "ops"], host: "box") == "ops@box")
        #expect(ImportRunLog.runner(environment: [:], host: "box") == "unknown@box")
        #expect(ImportRunLog.describe(ImportFailure("--storage /nope is neither a folder nor an s3:// endpoint")) == "--storage /nope is neither a folder nor an s3:// endpoint")
    }

    @Test("a run's summary keeps the counts, reasons as written, and at most the first 100 skipped or incomplete rows")
    func summaryIsCapped() throws {
        let report = ImportReport(title: "test import")
        report.read("public.things", 250)
        for _ in 0..<90 { report.imported("public.things") }
        report.notImported("public.things", reason: "recomputed from support_actions")
        report.adjusted("public.things", id: "1", reason: "name blank: given a default")
        for row in 0..<150 { report.skipped("public.things", id: "\(row)", reason: "bad value\u{0}") }
        report.incomplete("public.things", id: "7", reason: "things/7.png is not in the storage source")

        let summary = report.runSummary(dryRun: true)
        let table = try #require(summary.tables.first)
        let counts: [Int] = [table.read, table.imported, table.already, table.skipped, table.changed]
        #expect(counts == [250, 90, 0, 150, 1])
        #expect(table.notImported == ["recomputed from support_actions": 1])
        #expect(summary.issues.count == ImportRunSummary.maximumIssues)
        #expect(summary.issues.first?.id == "0" && summary.issues.last?.id == "99" && summary.issues.allSatisfy { $0.reason == "bad value" })
        #expect(summary.incompleteRows == 1 && summary.adjustedRows == 1 && !summary.complete && summary.dryRun)

        // Stored snake case, a reason's underscores kept.
        let stored = try #require(try JSONSerialization.jsonObject(with: ColonyJSON.encoder().encode(summary)) as? [String: Any])
        #expect(Set(stored.keys) == ["tables", "files_copied", "incomplete_rows", "adjusted_rows", "complete", "dry_run", "issues"])
        let storedTable = try #require((stored["tables"] as? [[String: Any]])?.first)
        #expect((storedTable["not_imported"] as? [String: Any])?["recomputed from support_actions"] as? Int == 1)
    }

    @Test("a run is recorded running, then finished: a failed dry run with its error on one line once its transaction is rolled back; an abandoned run is marked failed by the next; auth serves an app's runs, newest first, to the console or the app's key only")
    func recordsAndServes() async throws {
        let consoleKey = InternalKey(AuthConsoleAdminTests.randomKey())
        try await withRunningAuth(service: { $0.consoleKey = consoleKey }) { auth in
            let environment = try TestEnvironment.current()
            let (failed, running, abandoned, complete) = try await withAdminConnection(database: environment.postgresDatabase) { connection in
                let log = ImportRunLog(connection: connection, schema: auth.database.schema, role: auth.database.user, logger: TestEnvironment.logger)
                let report = ImportReport(title: "test import")
                report.read("auth.users", 3)
                report.imported("auth.users")
                let failed = try await log.start(app: .mycirclee, source: Self.source, storage: ImportRunLog.redactedStorage("s3://key:secret@abc.supabase.co/storage/v1/s3"),
                                                 dryRun: true, runBy: "ops@box")
                // The dry run's transaction, broken by the failure: the end is recorded all the same.
                try await connection.query("BEGIN", logger: TestEnvironment.logger)
                _ = try? await connection.query("SELECT 1 / 0", logger: TestEnvironment.logger)
                try await log.finish(failed, report: report, dryRun: true, error: ImportFailure("the source went away\nwhile reading public.posts"))
                let running = try await log.start(app: .mycirclee, source: Self.source, storage: nil, dryRun: false, runBy: "ops@box")

                // Unify's: one whose process died long ago, then a run that completes.
                let abandoned = UUID()
                try await connection.query(PostgresQuery(unsafeSQL: """
                    INSERT INTO \(quoteIdentifier(auth.database.schema)).import_runs (id, app, source, dry_run, run_by, started_at, status)
                    VALUES ('\(abandoned)', 'unify', 'postgres://old', false, 'ops@box', now() - interval '1 hour', 'running')
                    """), logger: TestEnvironment.logger)
                let complete = try await log.start(app: .unify, source: Self.source, storage: "/srv/export", dryRun: false, runBy: "ops@box")
                try await log.finish(complete, report: ImportReport(title: "empty"), dryRun: false)
                return (failed, running, abandoned, complete)
            }

            let mine = try await auth.console(.GET, "/admin/imports", app: "mycirclee")
            #expect(mine.status == 200, "\(mine.json)")
            let runs = try #require(mine.json["imports"] as? [[String: Any]])
            #expect(runs.map { $0["id"] as? String ?? "" } == [running, failed].map(\.lowercased), "\(runs)")
            let failedRun = try #require(runs.last)
            #expect(failedRun["status"] as? String == "failed" && failedRun["error"] as? String == "the source went away while reading public.posts", "\(failedRun)")
            #expect(failedRun["app"] as? String == "mycirclee" && failedRun["source"] as? String == Self.source && failedRun["dry_run"] as? Bool == true)
            #expect(failedRun["storage"] as? String == "s3://abc.supabase.co/storage/v1/s3" && failedRun["run_by"] as? String == "ops@box")
            #expect(failedRun["started_at"] is String && failedRun["finished_at"] is String)
            let summary = try #require(failedRun["summary"] as? [String: Any])
            #expect(summary["complete"] as? Bool == false && summary["dry_run"] as? Bool == true, "\(summary)")
            let table = try #require((summary["tables"] as? [[String: Any]])?.first)
            #expect(table["name"] as? String == "auth.users" && table["read"] as? Int == 3 && table["imported"] as? Int == 1, "\(table)")
            let runningRun = try #require(runs.first)
            #expect(runningRun["status"] as? String == "running" && runningRun["finished_at"] == nil && runningRun["summary"] == nil && runningRun["storage"] == nil, "\(runningRun)")

            // Another app's runs are its own.
            let theirs = try #require(try await auth.console(.GET, "/admin/imports", app: "unify").json["imports"] as? [[String: Any]])
            #expect(theirs.map { $0["id"] as? String ?? "" } == [complete, abandoned].map(\.lowercased), "\(theirs)")
            #expect(theirs.first?["status"] as? String == "complete" && theirs.first?["error"] == nil)
            #expect(theirs.last?["status"] as? String == "failed" && (theirs.last?["error"] as? String)?.contains("stopped before it recorded its end") == true, "\(theirs)")

            // The app's service-role key reads the same; `per_page` pages.
            let serviceKey = try #require(auth.serviceKeys[.mycirclee])
            let byKey = try await auth.raw(.GET, "/admin/imports", headers: [("Authorization", "Bearer \(serviceKey)"), ("apikey", serviceKey)])
            #expect((byKey.json["imports"] as? [[String: Any]])?.map { $0["id"] as? String ?? "" } == [running, failed].map(\.lowercased), "\(byKey.json)")
            let first = try await auth.console(.GET, "/admin/imports?per_page=1", app: "mycirclee")
            #expect((first.json["imports"] as? [[String: Any]])?.map { $0["id"] as? String ?? "" } == [running.lowercased], "\(first.json)")
            for bad in ["0", "101", "-1", "+5", "ten", "", "99999999999999999999"] {
                let refused = try await auth.console(.GET, "/admin/imports?per_page=\(bad)", app: "mycirclee")
                #expect(refused.status == 400 && refused.json["code"] as? String == "validation_failed", "per_page=\(bad): \(refused.status) \(refused.json)")
            }

            // Nobody else: an app user's token, the anon key, the console's headers without its key.
            let address = "\(uniqueName("imports"))@example.com"
            let created = try await auth.console(.POST, "/admin/users", json: ["email": address, "password": "correct-horse-1", "email_confirm": true])
            #expect(created.status == 200, "\(created.json)")
            let access = try #require(try await auth.signIn(email: address, password: "correct-horse-1").json["access_token"] as? String)
            let anon = try #require(auth.anonKeys[.mycirclee])
            let consoleHeaders = [("X-Colony-Operator", AuthConsoleAdminTests.operatorEmail), ("X-Colony-App", "mycirclee")]
            let strangers: [(String, [(String, String)], Int)] = [
                ("a user's token", [("Authorization", "Bearer \(access)"), ("apikey", anon)] + consoleHeaders, 403),
                ("the anon key", [("Authorization", "Bearer \(anon)"), ("apikey", anon)] + consoleHeaders, 403),
                ("the console's headers alone", consoleHeaders, 401),
            ]
            for (name, headers, status) in strangers {
                let refused = try await auth.raw(.GET, "/admin/imports", headers: headers)
                #expect(refused.status == status && refused.json["imports"] == nil && refused.json["code"] is String, "\(name): \(refused.status) \(refused.json)")
            }
        }
    }
}
