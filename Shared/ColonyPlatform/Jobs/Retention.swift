import ColonyModels
import Foundation
import Logging
import Metrics
import PostgresNIO

/// Data kept no longer than it should be (issue 40.2). Every retention job counts what it
/// deleted in `colony_retention_deleted_total{kind}` through `Retention.deleted`, so an operator
/// sees each rule at work. The platform's own part runs in every service (`platformJob`): dead
/// letters and import-ledger entries past their days, reports a year after a moderator decided.
public enum Retention {
    public static func deleted(_ count: Int, kind: String) {
        guard count > 0 else { return }
        Counter(label: "colony_retention_deleted_total", dimensions: [("kind", kind)]).increment(by: count)
    }

    /// A decided report is kept this long (the reported user's history a moderator reads); an
    /// open one stays until decided.
    public static let decidedReportRetention: TimeInterval = 365 * 86_400

    /// Rows per statement: a long backlog is deleted in short transactions.
    static let batchSize = 1000

    /// `platform.retention`, hourly, in every service.
    public static func platformJob(_ settings: PipelineSettings) -> ScheduledJob {
        ScheduledJob(name: "platform.retention", interval: .seconds(3600)) { database, logger in
            try await sweepPlatform(database: database, settings: settings, now: Date(), logger: logger)
        }
    }

    /// Deletes dead letters last failed more than `deadLetterRetention` before `now` and import
    /// ledger entries older than their app's `importLedgerRetention(of:)` (zero keeps either), and
    /// reports decided more than `decidedReportRetention` ago. Returns the counts.
    @discardableResult
    public static func sweepPlatform(database: Database, settings: PipelineSettings, now: Date, logger: Logger) async throws -> (deadLetters: Int, ledger: Int, reports: Int) {
        var deadLetters = 0
        var ledger = 0
        if settings.deadLetterRetention > .zero {
            let cutoff = now.addingTimeInterval(-Double(settings.deadLetterRetention.components.seconds))
            deadLetters = try await deleteInBatches(database, logger) { connection in
                try await connection.query("""
                    DELETE FROM dead_letters WHERE id IN (SELECT id FROM dead_letters WHERE last_failed_at < \(cutoff) LIMIT \(batchSize)) RETURNING id
                    """, logger: logger)
            }
        }
        // Each app's entries against its own days (the key begins with the app).
        for app in App.allCases {
            let retention = settings.importLedgerRetention(of: app)
            guard retention > .zero else { continue }
            let cutoff = now.addingTimeInterval(-Double(retention.components.seconds))
            ledger += try await deleteInBatches(database, logger) { connection in
                try await connection.query("""
                    DELETE FROM import_ledger WHERE ctid IN (
                        SELECT ctid FROM import_ledger WHERE app = \(app.rawValue) AND imported_at < \(cutoff) LIMIT \(batchSize)) RETURNING app
                    """, logger: logger)
            }
        }
        let decidedBefore = now.addingTimeInterval(-decidedReportRetention)
        let reports = try await deleteInBatches(database, logger) { connection in
            try await connection.query("""
                DELETE FROM reports WHERE id IN (SELECT id FROM reports WHERE status <> 'open' AND resolved_at < \(decidedBefore) LIMIT \(batchSize)) RETURNING id
                """, logger: logger)
        }
        deleted(deadLetters, kind: "dead_letters")
        deleted(ledger, kind: "import_ledger")
        deleted(reports, kind: "reports")
        if deadLetters + ledger + reports > 0 {
            logger.notice("retention: old rows deleted", metadata: ["dead_letters": "\(deadLetters)", "import_ledger": "\(ledger)", "reports": "\(reports)"])
        }
        return (deadLetters, ledger, reports)
    }

    /// Runs `delete` (one batch, returning a row per deleted row) until a batch comes back short.
    static func deleteInBatches(_ database: Database, _ logger: Logger, _ delete: @escaping @Sendable (PostgresConnection) async throws -> PostgresRowSequence) async throws -> Int {
        var total = 0
        while true {
            let batch = try await database.withConnection { connection in
                try await delete(connection).collect().count
            }
            total += batch
            if batch < batchSize { return total }
        }
    }
}
