import ColonyModels
import ColonyPlatform
import Foundation
import PostgresNIO

/// `GET /admin/imports`'s entries: a run of `colony-admin import supabase` as the import recorded
/// it in `import_runs` (`ImportRunLog`), for the console's Imports page. Absent fields have no
/// value (a run still going has no `finished_at`, a run that did not fail no `error`).
public struct ImportRunResource: Encodable, Sendable, Equatable {
    public var id: UUID
    public var app: String
    /// The source database's URL without its password.
    public var source: String
    /// `--storage`, without credentials.
    public var storage: String?
    public var dryRun: Bool
    /// `user@host`.
    public var runBy: String
    public var startedAt: Date
    public var finishedAt: Date?
    /// `running`, `complete`, `incomplete` (rows skipped or incomplete) or `failed`.
    public var status: String
    public var error: String?
    /// The counts as `ImportRunSummary` wrote them, served as stored.
    public var summary: JSONValue?
}

struct ImportRunList: Encodable, Sendable {
    var imports: [ImportRunResource]
}

/// `GET /admin/imports`'s `per_page`.
enum ImportRunPage {
    static let defaultSize = 50
    static let sizes = 1...100

    /// Absent is the default; anything but a whole number in range is 400.
    static func size(_ text: String?) throws -> Int {
        guard let text else { return defaultSize }
        // Digits only (`Int` would take "+5"); a longer run of them is past the range anyway.
        guard !text.isEmpty, text.utf8.count <= 3, text.utf8.allSatisfy({ (48...57).contains($0) }), let size = Int(text), sizes.contains(size) else {
            throw AuthErrors.badRequest("per_page must be a whole number from \(sizes.lowerBound) to \(sizes.upperBound)")
        }
        return size
    }
}

extension Accounts {
    /// `GET /admin/imports`: the app's import runs, newest first (the index on app and start).
    public func importRuns(app: App, limit: Int) async throws -> [ImportRunResource] {
        try await database.withConnection { connection in
            try await connection.query("""
                SELECT id, app, source, storage, dry_run, run_by, started_at, finished_at, status, error, summary::text
                FROM import_runs WHERE app = \(app.rawValue) ORDER BY started_at DESC LIMIT \(limit)
                """, logger: logger).read { cells in
                let (id, appName, source, storage, dryRun, runBy) = try (cells.next(UUID.self), cells.next(String.self), cells.next(String.self),
                                                                      cells.next(String?.self), cells.next(Bool.self), cells.next(String.self))
                let (startedAt, finishedAt, status, error, summary) = try (cells.next(Date.self), cells.next(Date?.self), cells.next(String.self),
                                                                           cells.next(String?.self), cells.next(String?.self))
                // Keys as written: the reasons of `not_imported` are texts, not names to convert.
                return ImportRunResource(id: id, app: appName, source: source, storage: storage, dryRun: dryRun, runBy: runBy, startedAt: startedAt,
                                         finishedAt: finishedAt, status: status, error: error, summary: summary.flatMap { JSONValue.parse(Data($0.utf8)) })
            }
        }
    }
}
