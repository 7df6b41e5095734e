import ColonyModels
import ColonyPlatform
import Foundation
import NIOCore
import NIOHTTP1

/// A run of `colony-admin import supabase` as auth's `GET /admin/imports` lists it (auth's
/// `import_runs`, written by the import itself), for the Imports page.
public struct ImportRun: Decodable, Sendable {
    public var id: UUID
    public var app: App
    /// The source database's URL without its password.
    public var source: String
    /// `--storage` (a folder, or an S3 endpoint without credentials); nil when none was given.
    public var storage: String?
    public var dryRun: Bool
    /// The OS user and host that ran it, `user@host`.
    public var runBy: String?
    public var startedAt: Date
    /// nil while it runs.
    public var finishedAt: Date?
    /// `running`, `complete`, `incomplete` (rows skipped or incomplete) or `failed`.
    public var status: String
    /// Why it failed, one line.
    public var error: String?
    public var summary: ImportRunSummary?

    enum CodingKeys: String, CodingKey {
        case id, app, source, storage, status, error, summary
        case dryRun = "dry_run", runBy = "run_by", startedAt = "started_at", finishedAt = "finished_at"
    }
}

extension AuthAdminClient {
    /// The app's import runs, newest first, at most `limit` (1–100).
    public func imports(app: App, limit: Int, operatorEmail: String) async throws -> [ImportRun] {
        struct Runs: Decodable { var imports: [ImportRun] }
        let body = try await http.send(.GET, "/auth/v1/admin/imports?per_page=\(min(max(limit, 1), 100))", body: nil, app: app, operatorEmail: operatorEmail)
        // The reasons keyed in `not_imported` are texts (some with underscores), which a
        // snake-case-converting decoder would rewrite: the plain decoder reads the keys spelled out
        // (here and in `ImportRunSummary`).
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = ColonyJSON.decoder().dateDecodingStrategy
        return try decoder.decode(Runs.self, from: Data(body.readableBytesView)).imports
    }
}
