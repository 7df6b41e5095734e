import ColonyModels
import Foundation
import Logging
import Metrics
import PostgresNIO

/// Data kept no longer than it should be (issue 40.2). Every retention job counts what it
/// deleted in `colony_retention_deleted_total{kind}` through `Retention.deleted`, so an operator
/// sees each rule at work. The platform's own part runs in every service (`platformJob`): dead
/// letters and import-ledger entries past their days.
public enum Retention {
    public static func deleted(_ count: Int, kind: String) {
        guard count > 0 else { return }
        Counter(label: "colony_retention_deleted_total", dimensions: [("kind", kind)]).increment(by: count)
    }

    /// Rows per statement: a long backlog is deleted in short transactions.
    static let batchSize = 1000

    /// `platform.retention`, hourly, in every service.
    public static func platformJob(_ settings: PipelineSettings) -> ScheduledJob {
        ScheduledJob(name: "platform.retention", interval: .seconds(3600)) { database, logger in
            try await sweepPlatform(database: database, settings: settings, now: Date(), logger: logger)
        }
    }

    /// Deletes dead letters last failed more than `deadLetterRetention` before `now` and import
    /// ledger entries older than their app's `importLedgerRetention(of:)` (zero keeps either).
    /// Returns the counts.
    @discardableResult
    public static func sweepPlatform(database: Database, settings: PipelineSettings, now: Date, logger: Logger) async throws -> (deadLetters: Int, ledger: Int) {
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
        deleted(deadLetters, kind: "dead_letters")
        deleted(ledger, kind: "import_ledger")
        if deadLetters + ledger > 0 {
            logger.notice("retention: old rows deleted", metadata: ["dead_letters": "\(deadLetters)", "import_ledger": "\(ledger)"])
        }
        return (deadLetters, ledger)
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
