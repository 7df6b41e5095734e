import Foundation

/// What the record of a `colony-admin import supabase` run keeps of its summary (auth's
/// `import_runs.summary`, written by the import's `ImportRunLog`, read by the console's Imports
/// page): the counts per table and at most the first `maximumIssues` skipped and incomplete rows,
/// so a run with a million bad rows stores a page of them, not them all. (`--summary-json` keeps
/// its own shape: scripts read its lists.)
///
/// Its keys are spelled out in snake case: the reasons keyed in `not_imported` are texts (some
/// with underscores), which a snake-case-converting decoder would rewrite, so readers use a plain
/// decoder; the import's snake-case encoder leaves these keys as they are.
public struct ImportRunSummary: Codable, Sendable, Equatable {
    public struct Table: Codable, Sendable, Equatable {
        public var name: String
        public var read: Int
        public var imported: Int
        public var already: Int
        /// Left out by a rule of Colony's: reason → rows.
        public var notImported: [String: Int]
        /// Rows skipped for breaking a rule.
        public var skipped: Int
        /// Rows that came over changed to fit Colony's rules.
        public var changed: Int

        public init(name: String, read: Int, imported: Int, already: Int, notImported: [String: Int], skipped: Int, changed: Int) {
            self.name = name
            self.read = read
            self.imported = imported
            self.already = already
            self.notImported = notImported
            self.skipped = skipped
            self.changed = changed
        }

        enum CodingKeys: String, CodingKey {
            case name, read, imported, already, skipped, changed
            case notImported = "not_imported"
        }
    }

    /// A row skipped or come over incomplete, and why.
    public struct Issue: Codable, Sendable, Equatable {
        public var table: String
        public var id: String
        public var reason: String

        public init(table: String, id: String, reason: String) {
            self.table = table
            self.id = id
            self.reason = reason
        }
    }

    public static let maximumIssues = 100
    /// A reason longer than this (a refused row's detail quotes its values) is cut.
    public static let maximumReasonLength = 1000

    public var tables: [Table]
    public var filesCopied: Int
    public var incompleteRows: Int
    public var adjustedRows: Int
    public var complete: Bool
    public var dryRun: Bool
    /// The first skipped rows, then the first incomplete ones: at most `maximumIssues`.
    public var issues: [Issue]

    public init(tables: [Table], filesCopied: Int, incompleteRows: Int, adjustedRows: Int, complete: Bool, dryRun: Bool, issues: [Issue]) {
        self.tables = tables
        self.filesCopied = filesCopied
        self.incompleteRows = incompleteRows
        self.adjustedRows = adjustedRows
        self.complete = complete
        self.dryRun = dryRun
        self.issues = issues
    }

    enum CodingKeys: String, CodingKey {
        case tables, complete, issues
        case filesCopied = "files_copied", incompleteRows = "incomplete_rows", adjustedRows = "adjusted_rows", dryRun = "dry_run"
    }
}
