import ColonyModels
import ColonyPlatform
import ColonyStorage
import Foundation
import Logging
import PostgresNIO

/// Colony's database as the import writes it: one dedicated connection as the database admin,
/// which for each service's work takes on the service's own role (`SET LOCAL ROLE`) with the
/// service's schema on the search path, so an importer can touch only what its service could.
///
/// Applying, every page of source rows is one transaction, every row a savepoint in it: a row
/// that breaks a rule is rolled back alone (never half-written), the rest of the page commits
/// with its ledger entries. A dry run does the same inside one transaction that is rolled back
/// at the end, so its counts are what a real run would do, constraints included.
public final class ImportTarget: Sendable {
    public let connection: PostgresConnection
    public let logger: Logger
    public let app: App
    public let dryRun: Bool
    public let topicPrefix: String
    public let report: ImportReport
    public let files: ImportFiles
    public let now: Date

    public init(connection: PostgresConnection, app: App, dryRun: Bool, topicPrefix: String, report: ImportReport, files: ImportFiles, logger: Logger, now: Date = Date()) {
        self.connection = connection
        self.app = app
        self.dryRun = dryRun
        self.topicPrefix = topicPrefix
        self.report = report
        self.files = files
        self.logger = logger
        self.now = now
    }

    /// Takes the app's import lock (one import per app at a time: two would both find a row
    /// missing from the ledger and write it twice) and, for a dry run, opens its transaction.
    /// The advisory lock's name for `app`'s imports (`ImportRunLog` checks it too).
    public static func lockName(_ app: App) -> String { "colony_import:" + app.rawValue }

    public func begin() async throws {
        let locked = try await connection.query("SELECT pg_try_advisory_lock(hashtext(\(Self.lockName(app))))", logger: logger)
            .firstValue(Bool.self) ?? false
        guard locked else { throw ImportFailure("another import of \(app.rawValue) is running (it holds the import lock); wait for it to finish") }
        if dryRun { try await connection.query("BEGIN", logger: logger) }
    }

    /// Ends a dry run's transaction by rolling everything back.
    public func end() async throws {
        if dryRun { try await connection.query("ROLLBACK", logger: logger) }
        _ = try? await connection.query("SELECT pg_advisory_unlock(hashtext(\(Self.lockName(app))))", logger: logger)
    }

    /// The work on one service's schema. Fails when the service has not applied its migrations
    /// (start it once, or run it with this build, before importing).
    public func service(_ service: ColonyService, schema: String? = nil, role: String? = nil) async throws -> ServiceImport {
        let schema = schema ?? service.rawValue
        let ledger = try await connection.query("SELECT to_regclass(\(quoteIdentifier(schema) + ".import_ledger")) IS NOT NULL", logger: logger)
            .firstValue(Bool.self) ?? false
        guard ledger else {
            throw ImportFailure("schema \(schema) has no import_ledger: start colony-\(service.rawValue) of this build once (it applies its migrations), then import")
        }
        return ServiceImport(target: self, service: service, schema: schema, role: role ?? DatabaseProvisioner.roleName(for: service.rawValue))
    }
}

/// One service's part of an import: its ledger, its transactions, its outbox.
public struct ServiceImport: Sendable {
    public let target: ImportTarget
    public let service: ColonyService
    public let schema: String
    public let role: String

    public var app: App { target.app }
    public var logger: Logger { target.logger }
    public var report: ImportReport { target.report }
    public var files: ImportFiles { target.files }
    public var dryRun: Bool { target.dryRun }
    public var now: Date { target.now }
    public var outbox: Outbox { Outbox(schema: schema, topicPrefix: target.topicPrefix) }
    var connection: PostgresConnection { target.connection }

    /// `body` in the service's role and schema: its own transaction when applying, a savepoint
    /// of the dry run's when not. Committed when it returns, rolled back when it throws.
    public func transaction<Result: Sendable>(_ body: (PostgresConnection) async throws -> Result) async throws -> Result {
        try await connection.query(PostgresQuery(unsafeSQL: dryRun ? "SAVEPOINT import_batch" : "BEGIN"), logger: logger)
        do {
            try await connection.query(PostgresQuery(unsafeSQL: "SET LOCAL ROLE \(quoteIdentifier(role))"), logger: logger)
            try await connection.query(PostgresQuery(unsafeSQL: "SET LOCAL search_path TO \(quoteIdentifier(schema)), public"), logger: logger)
            let result = try await body(connection)
            try await connection.query(PostgresQuery(unsafeSQL: dryRun ? "RELEASE SAVEPOINT import_batch" : "COMMIT"), logger: logger)
            // A released savepoint keeps its SET LOCALs: the dry run's next step starts as the admin again.
            if dryRun { try await connection.query("RESET ROLE", logger: logger) }
            return result
        } catch {
            _ = try? await connection.query(PostgresQuery(unsafeSQL: dryRun ? "ROLLBACK TO SAVEPOINT import_batch" : "ROLLBACK"), logger: logger)
            throw error
        }
    }

    /// What the ledger holds for `table` of this app: source id → target id (nil when the
    /// target keeps the source's id).
    public func ledger(_ table: String) async throws -> [String: String?] {
        try await transaction { connection in
            var entries: [String: String?] = [:]
            for try await row in try await connection.query(
                "SELECT source_id, target_id FROM import_ledger WHERE app = \(app.rawValue) AND source_table = \(table)", logger: logger
            ) {
                var cells = RowCells(row)
                let source: String = try cells.next()
                entries[source] = try cells.next(String?.self)
            }
            return entries
        }
    }

    /// Imports a source table, page by page. For each row: `id` names it (the report's id and
    /// the ledger's key); a row the ledger has is counted as already imported and not touched;
    /// otherwise `write` runs in a savepoint and says whether it imported the row (the ledger
    /// entry is written with it) or left it out by a rule. A `RowProblem` it throws, or a
    /// constraint the database refuses, rolls that row back alone and reports it as skipped.
    @discardableResult
    public func importRows(
        _ table: String, from pages: some AsyncSequence<[SourceRow], any Error>,
        id: (SourceRow) throws -> String,
        write: (SourceRow, RowWriter) async throws -> RowResult
    ) async throws -> [String: String?] {
        var ledger = try await ledger(table)
        report.begin(table)
        for try await page in pages {
            report.read(table, page.count)
            var work: [(SourceRow, String)] = []
            for (index, row) in page.enumerated() {
                do {
                    let key = try id(row)
                    if ledger[key] != nil { report.already(table) } else { work.append((row, key)) }
                } catch {
                    report.skipped(table, id: "row \(index + 1) of a page", reason: "\(error)")
                }
            }
            guard !work.isEmpty else { continue }
            let written = try await transaction { connection in
                var written: [(String, String?)] = []
                for (row, key) in work {
                    let writer = RowWriter(service: self, connection: connection, table: table, sourceID: key)
                    if let target = try await writeRow(row, key: key, table: table, writer: writer, write: write) {
                        written.append((key, target))
                    }
                }
                return written
            }
            for (key, target) in written { ledger[key] = .some(target) }
        }
        return ledger
    }

    /// Runs `body` once per key for a step that is not a source table (a counter recomputed
    /// for an imported aggregate, events announced): the ledger marks each key done in the same
    /// transaction, so a resumed run does what an interrupted one did not, and nothing twice.
    public func once(_ step: String, keys: [String], _ body: (String, RowWriter) async throws -> Void) async throws {
        let done = try await ledger(step)
        let pending = keys.filter { done[$0] == nil }
        for chunk in stride(from: 0, to: pending.count, by: 500).map({ Array(pending[$0..<min($0 + 500, pending.count)]) }) {
            try await transaction { connection in
                for key in chunk {
                    let writer = RowWriter(service: self, connection: connection, table: step, sourceID: key)
                    try await body(key, writer)
                    try await recordLedger(step, key: key, target: nil, on: connection)
                }
            }
        }
    }

    private func writeRow(_ row: SourceRow, key: String, table: String, writer: RowWriter,
                          write: (SourceRow, RowWriter) async throws -> RowResult) async throws -> String?? {
        try await connection.query("SAVEPOINT import_row", logger: logger)
        do {
            switch try await write(row, writer) {
            case .imported(let target):
                try await recordLedger(table, key: key, target: target, on: connection)
                try await connection.query("RELEASE SAVEPOINT import_row", logger: logger)
                report.imported(table)
                return .some(target)
            case .notImported(let reason):
                try await connection.query("ROLLBACK TO SAVEPOINT import_row", logger: logger)
                report.discardAdjustments(table, id: key)
                report.notImported(table, reason: reason)
                return nil
            }
        } catch let problem as RowProblem {
            try await connection.query("ROLLBACK TO SAVEPOINT import_row", logger: logger)
            report.discardAdjustments(table, id: key)
            report.skipped(table, id: key, reason: problem.description)
            return nil
        } catch let error as PSQLError where error.serverInfo?[.sqlState] != nil {
            // The database refused the row (a constraint, a bad value): it alone is rolled back.
            try await connection.query("ROLLBACK TO SAVEPOINT import_row", logger: logger)
            report.discardAdjustments(table, id: key)
            report.skipped(table, id: key, reason: Self.describe(error))
            return nil
        }
    }

    private func recordLedger(_ table: String, key: String, target: String?, on connection: PostgresConnection) async throws {
        try await connection.query("""
            INSERT INTO import_ledger (app, source_table, source_id, target_id) VALUES (\(app.rawValue), \(table), \(key), \(target))
            """, logger: logger)
    }

    /// A refused statement in the operator's terms.
    static func describe(_ error: PSQLError) -> String {
        let info = error.serverInfo
        let constraint = info?[.constraintName].map { " (\($0))" } ?? ""
        let detail = info?[.detail].map { ": \($0)" } ?? ""
        switch info?[.sqlState] {
        case "23503": return "dangling reference\(constraint)\(detail)"
        case "23505": return "conflicts with a row Colony already has\(constraint)\(detail)"
        case "23514", "23502": return "bad value\(constraint)\(detail)"
        case "22P02", "22007", "22008", "22003", "22001": return "bad value: \(info?[.message] ?? "")"
        default: return "refused by the database: \(info?[.message] ?? "\(error)")\(constraint)"
        }
    }
}

/// Whether `write` brought a row over (`target`: the id Colony gave it, when not the
/// source's), or left it out by one of Colony's rules (counted, not an error).
public enum RowResult: Sendable {
    case imported(target: String? = nil)
    case notImported(String)

    public static var imported: RowResult { .imported(target: nil) }
}

/// What a row's `write` works with: the transaction's connection (in the service's role and
/// schema), the outbox, and the files.
public struct RowWriter: Sendable {
    public let service: ServiceImport
    public let connection: PostgresConnection
    public let table: String
    public let sourceID: String

    public var logger: Logger { service.logger }

    /// Records an event in the service's outbox, in this row's transaction.
    public func publish<Payload: EventPayload>(_ event: EventEnvelope<Payload>) async throws {
        try await service.outbox.publish(event, on: connection, logger: logger)
    }

    /// Copies the file a source row refers to (a Supabase Storage URL or object path) into a
    /// Colony bucket under `key`. nil when the row refers to none; when the file is missing or
    /// refused, nil too, reported against this row (the row comes over without it).
    public func copyFile(_ reference: String?, defaultBucket: String, into bucket: StorageBucket, key: String) async throws -> StoredObject? {
        try await service.files.copy(reference, defaultBucket: defaultBucket, into: bucket, key: key, dryRun: service.dryRun,
                                     table: table, rowID: sourceID, report: service.report)
    }

    /// Copies `{bucket}/{name}` when the source has it: a file the app names by convention
    /// (Unify's group pictures are `{group_id}`), which no row refers to, so none is missing.
    public func copyFileIfPresent(bucket sourceBucket: String, name: String, into bucket: StorageBucket, key: String) async throws -> StoredObject? {
        try await service.files.copy(name, defaultBucket: sourceBucket, into: bucket, key: key, dryRun: service.dryRun,
                                     table: table, rowID: sourceID, report: service.report, reportMissing: false)
    }
}
