import ColonyModels
import Foundation
import Synchronization

/// What an import run did, per table: rows read from the source, written now, already there
/// from an earlier run (the ledger), left out by a rule of Colony's (expired, deleted), and
/// skipped because they broke a rule (with their ids and why), plus the files copied, the rows
/// that came over without something (a file missing or refused, a value left out), and the rows
/// that came over changed to fit Colony's rules (a text cut to its limit, a blank one given a
/// default, a password hash Colony cannot verify left out), each with its id and why. Printed at
/// the end; a run with skipped or incomplete rows exits non-zero (changed rows alone do not: they
/// and everything hanging off them are in Colony).
public final class ImportReport: Sendable {
    public struct Table: Sendable, Equatable, Encodable {
        public var name: String
        public var read = 0
        public var imported = 0
        public var already = 0
        /// Reason → rows.
        public var notImported: [String: Int] = [:]
        public var skipped: [Issue] = []
        /// Imported rows changed to fit Colony's rules: reason → rows (the rows are in `adjustedRows`).
        public var adjusted: [String: Int] = [:]
        public var notImportedCount: Int { notImported.values.reduce(0, +) }
        public var adjustedCount: Int { adjusted.values.reduce(0, +) }
    }

    public struct Issue: Sendable, Equatable, Codable {
        public var table: String
        public var id: String
        public var reason: String
    }

    struct State {
        var tables: [Table] = []
        var filesCopied = 0
        /// Rows that came over without something: a file missing or refused, a value left out.
        var incompleteRows: [Issue] = []
        /// Rows that came over changed to fit Colony's rules.
        var adjustedRows: [Issue] = []
        var notes: [String] = []
    }

    private let state = Mutex(State())
    public let title: String

    public init(title: String) {
        self.title = title
    }

    private func update(_ table: String, _ body: (inout Table) -> Void) {
        state.withLock { state in Self.update(&state, table, body) }
    }

    private static func update(_ state: inout State, _ table: String, _ body: (inout Table) -> Void) {
        if let index = state.tables.firstIndex(where: { $0.name == table }) {
            body(&state.tables[index])
        } else {
            var entry = Table(name: table)
            body(&entry)
            state.tables.append(entry)
        }
    }

    public func begin(_ table: String) { update(table) { _ in } }
    public func read(_ table: String, _ count: Int = 1) { update(table) { $0.read += count } }
    public func imported(_ table: String) { update(table) { $0.imported += 1 } }
    public func already(_ table: String) { update(table) { $0.already += 1 } }
    public func notImported(_ table: String, reason: String) { update(table) { $0.notImported[reason, default: 0] += 1 } }
    public func skipped(_ table: String, id: String, reason: String) {
        update(table) { $0.skipped.append(Issue(table: table, id: id, reason: reason)) }
    }
    public func fileCopied() { state.withLock { $0.filesCopied += 1 } }
    public func incomplete(_ table: String, id: String, reason: String) {
        state.withLock { $0.incompleteRows.append(Issue(table: table, id: id, reason: reason)) }
    }
    /// A row that came over changed to fit Colony's rules; `reason` is the same for every row changed the same way (it is counted per table).
    public func adjusted(_ table: String, id: String, reason: String) {
        state.withLock { state in
            Self.update(&state, table) { $0.adjusted[reason, default: 0] += 1 }
            state.adjustedRows.append(Issue(table: table, id: id, reason: reason))
        }
    }
    /// Forgets the changes reported for a row that did not come over after all (skipped, left out).
    public func discardAdjustments(_ table: String, id: String) {
        state.withLock { state in
            let dropped = state.adjustedRows.filter { $0.table == table && $0.id == id }
            guard !dropped.isEmpty else { return }
            state.adjustedRows.removeAll { $0.table == table && $0.id == id }
            Self.update(&state, table) { entry in
                for issue in dropped {
                    entry.adjusted[issue.reason, default: 1] -= 1
                    if entry.adjusted[issue.reason] == 0 { entry.adjusted[issue.reason] = nil }
                }
            }
        }
    }
    public func note(_ text: String) { state.withLock { $0.notes.append(text) } }

    public var tables: [Table] { state.withLock { $0.tables } }
    public var filesCopied: Int { state.withLock { $0.filesCopied } }
    public var incompleteRows: [Issue] { state.withLock { $0.incompleteRows } }
    public var adjustedRows: [Issue] { state.withLock { $0.adjustedRows } }
    public var skippedCount: Int { state.withLock { $0.tables.reduce(0) { $0 + $1.skipped.count } } }
    /// Something did not come over that should have: the run exits non-zero.
    public var isIncomplete: Bool { skippedCount > 0 || !incompleteRows.isEmpty }

    /// The summary as JSON (`--summary-json`), for scripts that check an import.
    public func json(dryRun: Bool) throws -> String {
        struct Summary: Encodable {
            var title: String
            var dryRun: Bool
            var tables: [Table]
            var filesCopied: Int
            var incompleteRows: [Issue]
            var adjustedRows: [Issue]
            var complete: Bool
        }
        let snapshot = state.withLock { $0 }
        let summary = Summary(title: title, dryRun: dryRun, tables: snapshot.tables, filesCopied: snapshot.filesCopied,
                              incompleteRows: snapshot.incompleteRows, adjustedRows: snapshot.adjustedRows, complete: !isIncomplete)
        return String(decoding: try ColonyJSON.encoder().encode(summary), as: UTF8.self)
    }

    /// The summary a run's record keeps (`ImportRunSummary`, in auth's `import_runs`).
    public func runSummary(dryRun: Bool) -> ImportRunSummary {
        let snapshot = state.withLock { $0 }
        var issues = Array(snapshot.tables.lazy.flatMap(\.skipped).prefix(ImportRunSummary.maximumIssues))
        issues += snapshot.incompleteRows.prefix(ImportRunSummary.maximumIssues - issues.count)
        // Stored as jsonb, which holds no NUL; ids and reasons come from the source and from errors.
        func storable(_ text: String, max: Int) -> String { String(text.filter { $0 != "\u{0}" }.prefix(max)) }
        let skipped = snapshot.tables.reduce(0) { $0 + $1.skipped.count }
        return ImportRunSummary(
            tables: snapshot.tables.map {
                ImportRunSummary.Table(name: $0.name, read: $0.read, imported: $0.imported, already: $0.already, notImported: $0.notImported,
                                 skipped: $0.skipped.count, changed: $0.adjustedCount)
            },
            filesCopied: snapshot.filesCopied, incompleteRows: snapshot.incompleteRows.count, adjustedRows: snapshot.adjustedRows.count,
            complete: skipped == 0 && snapshot.incompleteRows.isEmpty, dryRun: dryRun,
            issues: issues.map { ImportRunSummary.Issue(table: $0.table, id: storable($0.id, max: ImportRunSummary.maximumReasonLength),
                                                        reason: storable($0.reason, max: ImportRunSummary.maximumReasonLength)) }
        )
    }

    /// The summary: one line per table, then every skipped row and missing file.
    public func render(dryRun: Bool) -> String {
        let snapshot = state.withLock { $0 }
        var lines = ["\(title)\(dryRun ? " (dry run: nothing was written)" : "")"]
        let header = ["TABLE", "SOURCE", dryRun ? "WOULD IMPORT" : "IMPORTED", "ALREADY", "NOT IMPORTED", "SKIPPED", "CHANGED"]
        var rows = [header]
        for table in snapshot.tables {
            let reasons = table.notImported.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")
            rows.append([table.name, String(table.read), String(table.imported), String(table.already),
                         table.notImportedCount == 0 ? "0" : "\(table.notImportedCount) (\(reasons))", String(table.skipped.count), String(table.adjustedCount)])
        }
        let widths = header.indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
        for row in rows {
            lines.append(zip(row, widths).map { $0.padding(toLength: $1, withPad: " ", startingAt: 0) }.joined(separator: "  ").trimmingCharacters(in: .whitespaces))
        }
        lines.append("files: \(dryRun ? "would copy" : "copied") \(snapshot.filesCopied); rows that came over incomplete: \(snapshot.incompleteRows.count); changed to fit: \(snapshot.adjustedRows.count)")
        let skipped = snapshot.tables.flatMap(\.skipped)
        if !skipped.isEmpty {
            lines.append("skipped rows (\(skipped.count)):")
            lines += skipped.map { "  \($0.table) \($0.id): \($0.reason)" }
        }
        if !snapshot.incompleteRows.isEmpty {
            lines.append("rows that came over without something (\(snapshot.incompleteRows.count)):")
            lines += snapshot.incompleteRows.map { "  \($0.table) \($0.id): \($0.reason)" }
        }
        if !snapshot.adjustedRows.isEmpty {
            lines.append("rows that came over changed to fit Colony's rules (\(snapshot.adjustedRows.count)):")
            for table in snapshot.tables where table.adjustedCount > 0 {
                lines += table.adjusted.sorted { $0.key < $1.key }.map { "  \(table.name): \($0.value) \($0.key)" }
            }
            lines += snapshot.adjustedRows.map { "  \($0.table) \($0.id): \($0.reason)" }
        }
        lines += snapshot.notes.map { "note: \($0)" }
        return lines.joined(separator: "\n")
    }
}
