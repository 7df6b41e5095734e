import ColonyModels
import ColonyPlatform
import Foundation
import Logging
import PostgresNIO

/// The record of `colony-admin import supabase` runs that the console's Imports page shows
/// (auth's `GET /admin/imports`): a row of auth's `import_runs` per run, written `running` when
/// the run starts, then finished `complete`, `incomplete` (rows skipped or incomplete) or `failed`
/// (with its error) with the summary's counts (`ImportRunSummary`).
///
/// Written on the import's own admin connection as auth's role, each write its own committed
/// transaction: never inside a dry run's transaction, which would roll it back. So the start is
/// written before `ImportTarget.begin` and the end after `ImportTarget.end`, or, for a run that
/// failed, once whatever transaction it left open is rolled back (`finish` does that).
public struct ImportRunLog: Sendable {
    public enum Status: String, Sendable {
        case running, complete, incomplete, failed
    }

    /// An error is kept as one line of at most this many characters.
    public static let maximumErrorLength = 2000
    public let connection: PostgresConnection
    /// Auth's schema and role (a test's scratch schema and its role).
    public let schema: String
    public let role: String
    public let logger: Logger

    public init(connection: PostgresConnection, schema: String = ColonyService.auth.rawValue,
                role: String = DatabaseProvisioner.roleName(for: ColonyService.auth.rawValue), logger: Logger) {
        self.connection = connection
        self.schema = schema
        self.role = role
        self.logger = logger
    }

    var table: String { quoteIdentifier(schema) + ".import_runs" }

    /// Records a run's start; returns its id. Fails when auth has not applied its migrations.
    public func start(app: App, source: String, storage: String?, dryRun: Bool, runBy: String) async throws -> UUID {
        let recorded = try await connection.query("SELECT to_regclass(\(table)) IS NOT NULL", logger: logger).firstValue(Bool.self) ?? false
        guard recorded else {
            throw ImportFailure("schema \(schema) has no import_runs: start colony-auth of this build once (it applies its migrations), then import")
        }
        // Whether an import of the app runs now: the lock `ImportTarget.begin` takes is held.
        let lock = ImportTarget.lockName(app)
        let idle = try await connection.query("SELECT pg_try_advisory_lock(hashtext(\(lock)))", logger: logger).firstValue(Bool.self) ?? false
        let id = UUID()
        let (sourceLine, storageLine, runByLine) = (Self.oneLine(source), storage.map { Self.oneLine($0) }, Self.oneLine(runBy))
        do {
            try await asAuth { connection in
                if idle {
                    // A run still `running` then was stopped before it could record its end (killed,
                    // its machine lost). Ten minutes cover a run that has recorded its start but not
                    // yet taken the lock (it opens the source and reads its Storage metadata first).
                    try await connection.query("""
                        UPDATE \(unescaped: table) SET status = 'failed', finished_at = now(),
                            error = 'the run was stopped before it recorded its end (the process ended or its connection was lost)'
                        WHERE app = \(app.rawValue) AND status = 'running' AND started_at < now() - interval '10 minutes'
                        """, logger: logger)
                }
                try await connection.query("""
                    INSERT INTO \(unescaped: table) (id, app, source, storage, dry_run, run_by, status)
                    VALUES (\(id), \(app.rawValue), \(sourceLine), \(storageLine), \(dryRun), \(runByLine), 'running')
                    """, logger: logger)
            }
        } catch {
            if idle { _ = try? await connection.query("SELECT pg_advisory_unlock(hashtext(\(lock)))", logger: logger) }
            throw error
        }
        if idle { try await connection.query("SELECT pg_advisory_unlock(hashtext(\(lock)))", logger: logger) }
        return id
    }

    /// Records how run `id` ended: `failed` with `error` when it threw, else `incomplete` or
    /// `complete` as the report says, with the report's summary either way (a failed run's counts
    /// are what it did before it stopped). A failed run's open transaction (a dry run's, one
    /// interrupted) is rolled back first.
    public func finish(_ id: UUID, report: ImportReport, dryRun: Bool, error: (any Error)? = nil) async throws {
        let status: Status = error != nil ? .failed : report.isIncomplete ? .incomplete : .complete
        var counts = report.runSummary(dryRun: dryRun)
        // A run that stopped did not bring everything over, whatever it counted until then.
        if error != nil { counts.complete = false }
        let summary = String(decoding: try ColonyJSON.encoder().encode(counts), as: UTF8.self)
        let message = error.map { Self.oneLine(Self.describe($0)) }
        // Outside a transaction Postgres only warns.
        if error != nil { try await connection.query("ROLLBACK", logger: logger) }
        try await asAuth { connection in
            try await connection.query("""
                UPDATE \(unescaped: table) SET status = \(status.rawValue), finished_at = now(), error = \(message), summary = \(summary)::jsonb
                WHERE id = \(id)
                """, logger: logger)
        }
    }

    /// `body` in a transaction of its own as auth's role: the import writes only what auth could.
    private func asAuth(_ body: (PostgresConnection) async throws -> Void) async throws {
        try await connection.query("BEGIN", logger: logger)
        do {
            try await connection.query(PostgresQuery(unsafeSQL: "SET LOCAL ROLE \(quoteIdentifier(role))"), logger: logger)
            try await body(connection)
            try await connection.query("COMMIT", logger: logger)
        } catch {
            _ = try? await connection.query("ROLLBACK", logger: logger)
            throw error
        }
    }

    // MARK: what is recorded

    /// Who runs the import: the OS user (`USER`, else `LOGNAME`, else "unknown") and the host, `user@host`.
    public static func runner(environment: [String: String] = ProcessInfo.processInfo.environment,
                              host: String = ProcessInfo.processInfo.hostName) -> String {
        let user = [environment["USER"], environment["LOGNAME"]].compactMap { $0 }.first { !$0.isEmpty } ?? "unknown"
        return oneLine(host.isEmpty ? user : "\(user)@\(host)", maximumLength: 300)
    }

    /// `--storage` as recorded: a folder as given; an endpoint URL without what could be a
    /// credential (`user:secret@` before the host, the query of a presigned URL, the fragment).
    public static func redactedStorage(_ storage: String?) -> String? {
        guard let storage else { return nil }
        guard let schemeEnd = storage.range(of: "://") else { return oneLine(storage, maximumLength: maximumErrorLength) }
        var rest = storage[schemeEnd.upperBound...]
        if let end = rest.firstIndex(where: { $0 == "?" || $0 == "#" }) { rest = rest[..<end] }
        let authorityEnd = rest.firstIndex(of: "/") ?? rest.endIndex
        if let at = rest[..<authorityEnd].lastIndex(of: "@") { rest = rest[rest.index(after: at)...] }
        return oneLine(String(storage[..<schemeEnd.upperBound]) + rest, maximumLength: maximumErrorLength)
    }

    /// An error in the operator's terms: the database's own words for what it refused (PostgresNIO's
    /// plain description hides them), else the error's description.
    public static func describe(_ error: any Error) -> String {
        guard let error = error as? PSQLError else { return String(describing: error) }
        if let info = error.serverInfo, let message = info[.message] {
            let detail = info[.detail].map { ": \($0)" } ?? ""
            let state = info[.sqlState].map { " (SQLSTATE \($0))" } ?? ""
            return "the database refused: \(message)\(detail)\(state)"
        }
        return "database connection: \(error.code)" + (error.underlying.map { ": \($0)" } ?? "")
    }

    /// `text` on one line (control characters, NUL among them, as spaces), cut to `maximumLength`.
    static func oneLine(_ text: some StringProtocol, maximumLength: Int = ImportRunLog.maximumErrorLength) -> String {
        let scalars = text.unicodeScalars.map { (scalar: Unicode.Scalar) -> Unicode.Scalar in scalar.value < 0x20 || scalar.value == 0x7F ? " " : scalar }
        let line = String(String.UnicodeScalarView(scalars)).trimmingCharacters(in: .whitespaces)
        return line.count > maximumLength ? String(line.prefix(maximumLength - 1)) + "…" : line
    }
}
