import ColonyPlatform
import ColonyTesting
import Foundation
import NIOCore
import PostgresNIO
import Testing

/// The platform's retention (issue 40.2) on a real schema, with the clock the test sets: dead
/// letters and import-ledger entries past their days go, younger ones stay, zero keeps all.
@Suite("Platform retention")
struct RetentionTests {
    func seed(_ database: Database, now: Date) async throws {
        try await database.withConnection { connection in
            for (index, daysAgo) in [40, 31, 29, 1].enumerated() {
                let at = now.addingTimeInterval(-Double(daysAgo) * 86_400)
                try await connection.query("""
                    INSERT INTO dead_letters (stage, event_id, event_type, topic, payload, error, first_failed_at, last_failed_at)
                    VALUES ('consume', \(UUID()), 'user_registered', 'colony.auth', \(ByteBuffer(string: "{\"email\":\"\(index)@example.com\"}")), 'failed', \(at), \(at))
                    """, logger: TestEnvironment.logger)
            }
            for (index, daysAgo) in [400, 366, 364, 10].enumerated() {
                try await connection.query("""
                    INSERT INTO import_ledger (app, source_table, source_id, imported_at) VALUES ('mycirclee', 'public.posts', \("row-\(index)"), \(now.addingTimeInterval(-Double(daysAgo) * 86_400)))
                    """, logger: TestEnvironment.logger)
            }
        }
    }

    func counts(_ database: Database) async throws -> (Int, Int) {
        try await database.withConnection { connection in
            (try await connection.query("SELECT count(*)::int FROM dead_letters", logger: TestEnvironment.logger).firstValue(Int.self) ?? -1,
             try await connection.query("SELECT count(*)::int FROM import_ledger", logger: TestEnvironment.logger).firstValue(Int.self) ?? -1)
        }
    }

    @Test("dead letters past 30 days and ledger entries past 365 go; younger ones stay; a second run deletes nothing")
    func defaults() async throws {
        try await withTestDatabase { database in
            let now = Date()
            try await seed(database, now: now)
            let settings = PipelineSettings()
            let first = try await Retention.sweepPlatform(database: database, settings: settings, now: now, logger: TestEnvironment.logger)
            #expect(first.deadLetters == 2 && first.ledger == 2, "\(first)")
            #expect(try await counts(database) == (2, 2))
            let again = try await Retention.sweepPlatform(database: database, settings: settings, now: now, logger: TestEnvironment.logger)
            #expect(again.deadLetters == 0 && again.ledger == 0)
            // A month later, the rest of the dead letters and the 364-day-old entry are past their days too.
            let later = try await Retention.sweepPlatform(database: database, settings: settings, now: now.addingTimeInterval(30 * 86_400), logger: TestEnvironment.logger)
            #expect(later.deadLetters == 2 && later.ledger == 1)
        }
    }

    @Test("zero days keeps everything")
    func zeroKeeps() async throws {
        try await withTestDatabase { database in
            let now = Date()
            try await seed(database, now: now)
            var settings = PipelineSettings()
            settings.deadLetterRetention = .zero
            settings.importLedgerRetention = .zero
            let outcome = try await Retention.sweepPlatform(database: database, settings: settings, now: now.addingTimeInterval(3650 * 86_400), logger: TestEnvironment.logger)
            #expect(outcome.deadLetters == 0 && outcome.ledger == 0)
            #expect(try await counts(database) == (4, 4))
        }
    }

    @Test("an app's import_ledger_retention_days in the apps file rules its ledger: Unify's 30 days, HabitHive's 0 (kept), MyCirclee the deployment's 365")
    func ledgerPerApp() async throws {
        try await withTestDatabase { database in
            let now = Date()
            try await database.withConnection { connection in
                for app in ["unify", "habithive", "mycirclee"] {
                    for (index, daysAgo) in [400, 40, 10].enumerated() {
                        try await connection.query("""
                            INSERT INTO import_ledger (app, source_table, source_id, imported_at) VALUES (\(app), 'public.rows', \("row-\(index)"), \(now.addingTimeInterval(-Double(daysAgo) * 86_400)))
                            """, logger: TestEnvironment.logger)
                    }
                }
            }
            var settings = PipelineSettings()
            settings.appImportLedgerRetention = try PipelineSettings.appImportLedgerRetention(
                AppsFile.parse(Data(#"{"unify": {"import_ledger_retention_days": 30}, "habithive": {"import_ledger_retention_days": 0}}"#.utf8)))
            let outcome = try await Retention.sweepPlatform(database: database, settings: settings, now: now, logger: TestEnvironment.logger)
            #expect(outcome.ledger == 3, "\(outcome)")  // Unify's 400- and 40-day-old entries, MyCirclee's 400
            let left = try await database.withConnection { connection in
                try await connection.query("SELECT app, count(*)::int FROM import_ledger GROUP BY app ORDER BY app", logger: TestEnvironment.logger)
                    .read { c in
                        let app: String = try c.next()
                        let count: Int = try c.next()
                        return "\(app)=\(count)"
                    }
            }
            #expect(left == ["habithive=3", "mycirclee=2", "unify=1"])
            #expect(throws: ConfigurationError.self) {
                try PipelineSettings.appImportLedgerRetention(AppsFile.parse(Data(#"{"unify": {"import_ledger_retention_days": -1}}"#.utf8)))
            }
        }
    }

    @Test("a backlog larger than a batch goes in batches")
    func batches() async throws {
        try await withTestDatabase { database in
            let now = Date()
            try await database.withConnection { connection in
                try await connection.query("""
                    INSERT INTO import_ledger (app, source_table, source_id, imported_at)
                    SELECT 'unify', 'public.messages', 'm' || n, \(now.addingTimeInterval(-400 * 86_400)) FROM generate_series(1, 2500) n
                    """, logger: TestEnvironment.logger)
            }
            let outcome = try await Retention.sweepPlatform(database: database, settings: PipelineSettings(), now: now, logger: TestEnvironment.logger)
            #expect(outcome.ledger == 2500)
        }
    }
}

/// Reports a moderator decided are kept a year (the reported user's history), then go; open ones stay.
@Suite("Platform retention of reports")
struct ReportRetentionTests {
    @Test("reports decided over 365 days ago go; younger decided ones and open ones of any age stay")
    func decidedReports() async throws {
        try await withTestDatabase { database in
            let now = Date()
            try await database.withConnection { connection in
                for (status, daysAgo) in [("removed", 400), ("dismissed", 366), ("warned", 364), ("open", 800)] {
                    let at = now.addingTimeInterval(-Double(daysAgo) * 86_400)
                    try await connection.query("""
                        INSERT INTO reports (id, app, object_type, object_id, reported_user_id, reporter_id, category, status, created_at, resolved_at)
                        VALUES (\(UUID()), 'mycirclee', 'post', \(UUID()), \(UUID()), \(UUID()), 'spam', \(status), \(at), \(status == "open" ? nil : at))
                        """, logger: TestEnvironment.logger)
                }
            }
            let swept = try await Retention.sweepPlatform(database: database, settings: PipelineSettings(), now: now, logger: TestEnvironment.logger)
            #expect(swept.reports == 2, "\(swept)")
            let left = try await database.withConnection { connection in
                try await connection.query("SELECT status FROM reports ORDER BY status", logger: TestEnvironment.logger).values(String.self)
            }
            #expect(left == ["open", "warned"])
        }
    }
}
