import ColonyModels
import ColonyPlatform
import Foundation
import Logging
import NIOCore
import PostgresNIO

/// A person's data export (GDPR articles 15 and 20): auth publishes `user_export_requested`,
/// every service holding something of the user writes its part to the private `exports` bucket
/// (its rows as JSON, a README of what each field means, the files the user uploaded), and auth
/// assembles the parts into one archive once each has its manifest.
///
/// Layout of the bucket, per export:
/// - `{export}/parts/{service}/data.json`, `README.md`, `files/{bucket}/{key}`: a service's part;
/// - `{export}/parts/{service}/entries.json`: written first, every object the part may write (so a
///   part that failed halfway is deleted whole);
/// - `{export}/parts/{service}/manifest.json`: written last, so its presence says the part is whole;
/// - `{export}/colony-export.zip`: the archive the user's signed link downloads.
public enum UserExport {
    /// Private: nothing in it is served except through a signed URL auth makes for the archive.
    public static let bucket = StorageBucket(name: "exports", isPublic: false, allowedContentTypes: ["application/zip"], maxBytes: Int(Int32.max))

    /// The services that write a part of an export from `app`: the app's own domain service and
    /// notifications (push devices, preferences, what was sent). Auth writes its own too.
    public static func contributors(for app: App) -> [ColonyService] {
        [.auth, app.domainService, .notifications]
    }

    public static func partPrefix(_ exportID: UUID, _ service: ColonyService) -> String {
        "\(exportID.lowercased)/parts/\(service.rawValue)"
    }

    public static func manifestKey(_ exportID: UUID, _ service: ColonyService) -> String {
        partPrefix(exportID, service) + "/manifest.json"
    }

    /// Every object a part may write, written before them (see `UserExportWriter.write`).
    public static func entriesKey(_ exportID: UUID, _ service: ColonyService) -> String {
        partPrefix(exportID, service) + "/entries.json"
    }

    public static func archiveKey(_ exportID: UUID) -> String {
        "\(exportID.lowercased)/colony-export.zip"
    }

    /// What a part holds, written last; `entries` are paths inside the part (and the archive's
    /// `{service}/` folder).
    public struct Manifest: Codable, Sendable, Equatable {
        public var service: ColonyService
        public var entries: [String]
        /// Rows per table, for the archive's overview.
        public var rows: [String: Int]

        public init(service: ColonyService, entries: [String], rows: [String: Int]) {
            self.service = service
            self.entries = entries
            self.rows = rows
        }
    }
}

/// One field of an exported row and what it means, for the part's README.
public struct ExportField: Sendable {
    public let name: String
    public let meaning: String
}

/// Rows of one kind the service holds about the user: `sql` selects them with `$1` the user's
/// id, its column names the fields; `sources` are the schema's tables they come from (so a test
/// can check that every table is exported or says why not).
public struct ExportTable: Sendable {
    public let name: String
    public let about: String
    public let sql: String
    public let sources: [String]
    public let fields: [ExportField]

    public init(_ name: String, about: String, sources: [String]? = nil, sql: String, fields: KeyValuePairs<String, String>) {
        self.name = name
        self.about = about
        self.sql = sql
        self.sources = sources ?? [name]
        self.fields = fields.map { ExportField(name: $0.key, meaning: $0.value) }
    }

    /// The reports the user filed (the platform's `reports`), in every app that takes reports. Its
    /// source is left unnamed: the table stays among the platform's not exported, for the reports
    /// others filed about the user's content, whose reporters stay private.
    public static let reportsFiled = ExportTable("reports_filed", about: "The reports you filed to the app's moderators, and what became of them.", sources: [], sql: """
        SELECT id, object_type, object_id, category, words, status, created_at, resolved_at
        FROM reports WHERE reporter_id = $1 ORDER BY created_at, id
        """, fields: [
            "id": "The report's id.",
            "object_type": "What you reported: a post, a message, a profile...",
            "object_id": "The id of what you reported.",
            "category": "The category you chose (spam, harassment, hate, sexual, violence, self_harm, illegal, other).",
            "words": "What you wrote with it, if anything.",
            "status": "open, or the moderators' decision: dismissed, removed, warned, suspended.",
            "created_at": "When you filed it.",
            "resolved_at": "When a moderator decided, if one has.",
        ])

    /// The people the user blocked (the platform's `user_blocks`), in every app that has blocks.
    public static let blocks = ExportTable("blocks", about: "The people you blocked in the app, by id.", sources: ["user_blocks"], sql: """
        SELECT blocked_id, created_at FROM user_blocks WHERE blocker_id = $1 ORDER BY created_at, blocked_id
        """, fields: [
            "blocked_id": "The id of the person you blocked.",
            "created_at": "When you blocked them.",
        ])
}

/// Files the user uploaded: `sql` selects their keys (one text column) in `bucket`, with `$1`
/// the user's id.
public struct ExportFiles: Sendable {
    public let bucket: StorageBucket
    public let about: String
    public let sql: String

    public init(_ bucket: StorageBucket, about: String, sql: String) {
        self.bucket = bucket
        self.about = about
        self.sql = sql
    }
}

/// What one service exports of a user, declared beside its schema.
public struct ExportPlan: Sendable {
    public let service: ColonyService
    public let about: String
    public let tables: [ExportTable]
    public let files: [ExportFiles]
    /// The schema's tables that are not exported, each with the reason (nothing of a person's in
    /// them, or it is exported through another table).
    public let notExported: [String: String]

    public init(service: ColonyService, about: String, tables: [ExportTable], files: [ExportFiles] = [], notExported: [String: String]) {
        self.service = service
        self.about = about
        self.tables = tables
        self.files = files
        self.notExported = notExported
    }

    /// The part's README: what the service is, then each table's fields and what they mean.
    public func readme(app: App) -> String {
        var text = "# \(service.rawValue): what Colony's \(service.rawValue) service holds about you (\(app.rawValue))\n\n\(about)\n\n"
        text += "`data.json` holds `service`, `app`, `user_id`, `exported_at`, `tables` (each table below is a list of rows) and `not_exported` (what the service keeps that is not in this copy, and why). "
        text += "Times are ISO 8601 in UTC; ids are UUIDs. Another person appears only by their id, except in messages of conversations you took part in.\n"
        for table in tables {
            text += "\n## \(table.name)\n\n\(table.about)\n\n"
            for field in table.fields { text += "- `\(field.name)`: \(field.meaning)\n" }
        }
        if !files.isEmpty {
            text += "\n## files\n\nThe files you uploaded, under `files/{bucket}/{key}`:\n\n"
            for group in files { text += "- `\(group.bucket.name)`: \(group.about)\n" }
        }
        text += "\n## not in this copy\n\nWhat the service keeps that this copy leaves out, and why:\n\n"
        for (table, reason) in notExportedReasons.sorted(by: { $0.key < $1.key }) {
            text += "- `\(table)`: \(reason)\n"
        }
        return text
    }
}

/// Writes a service's part of an export. Runs in the consumer's inbox transaction: the rows are
/// one snapshot, and a redelivered request writes the same objects again.
public struct UserExportWriter: Sendable {
    public let backend: any StorageBackend
    public let logger: Logger

    public init(backend: any StorageBackend, logger: Logger) {
        self.backend = backend
        self.logger = logger
    }

    /// The part for `request`, when `app` is the request's app (notifications passes nil: it
    /// holds every app's).
    public func handle(_ event: ReceivedEvent, plan: ExportPlan, app: App?, on connection: PostgresConnection) async throws {
        guard event.type == .userExportRequested, app == nil || event.header.app == app else { return }
        let request = try event.decode(UserExportRequested.self).payload
        try await write(plan, request: request, on: connection)
    }

    public func write(_ plan: ExportPlan, request: UserExportRequested, on connection: PostgresConnection) async throws {
        let prefix = UserExport.partPrefix(request.exportId, plan.service)
        let bucket = UserExport.bucket.name
        // Postgres writes timestamptz in the session's zone: UTC, as everywhere in Colony.
        try await connection.query("SET LOCAL TimeZone = 'UTC'", logger: logger)
        var rows: [String: Int] = [:]
        var data = ByteBuffer()
        data.writeString("{\"service\":\"\(plan.service.rawValue)\",\"app\":\"\(request.app.rawValue)\",\"user_id\":\"\(request.userId.lowercased)\",")
        data.writeString("\"exported_at\":\"\(ISO8601.format(Date()))\",\"tables\":{")
        for (index, table) in plan.tables.enumerated() {
            let (json, count) = try await Self.rows(table, userID: request.userId, on: connection, logger: logger)
            rows[table.name] = count
            data.writeString((index == 0 ? "" : ",") + "\"\(table.name)\":")
            data.writeString(json)
        }
        data.writeString("},\"not_exported\":")
        data.writeBytes(try ColonyJSON.encode(plan.notExportedReasons))
        data.writeString("}\n")
        // Every object the part may write is named first (`entries.json`), so a part that fails
        // halfway can still be deleted whole: backends are not listed.
        var files: [(bucket: StorageBucket, key: String)] = []
        for group in plan.files {
            var binds = PostgresBindings()
            binds.append(request.userId)
            for key in try await connection.query(PostgresQuery(unsafeSQL: group.sql, binds: binds), logger: logger).values(String.self) where StorageKey.isValid(key) {
                files.append((group.bucket, key))
            }
        }
        let planned = ["data.json", "README.md"] + files.map { "files/\($0.bucket.name)/\($0.key)" }
        try await backend.put(bucket: bucket, key: UserExport.entriesKey(request.exportId, plan.service), body: ByteBuffer(bytes: try ColonyJSON.encode(planned)), contentType: "application/json")
        try await backend.put(bucket: bucket, key: prefix + "/data.json", body: data, contentType: "application/json")
        try await backend.put(bucket: bucket, key: prefix + "/README.md", body: ByteBuffer(string: plan.readme(app: request.app)), contentType: "text/markdown")
        var entries = ["data.json", "README.md"]
        for file in files {
            // A row whose file is gone (removed, never finished) has nothing to copy.
            guard let object = try await backend.get(bucket: file.bucket.name, key: file.key) else { continue }
            let path = "files/\(file.bucket.name)/\(file.key)"
            try await backend.put(bucket: bucket, key: prefix + "/" + path, body: object.body, contentType: object.contentType)
            entries.append(path)
        }
        let manifest = UserExport.Manifest(service: plan.service, entries: entries, rows: rows)
        try await backend.put(bucket: bucket, key: UserExport.manifestKey(request.exportId, plan.service), body: ByteBuffer(bytes: try ColonyJSON.encode(manifest)), contentType: "application/json")
        logger.info("export part written", metadata: ["export_id": "\(request.exportId)", "service": "\(plan.service.rawValue)", "files": "\(entries.count - 2)"])
    }

    /// The table's rows as a JSON array, and how many.
    static func rows(_ table: ExportTable, userID: UUID, on connection: PostgresConnection, logger: Logger) async throws -> (String, Int) {
        var binds = PostgresBindings()
        binds.append(userID)
        let sql = "SELECT coalesce(json_agg(row_to_json(exported)), '[]'::json)::text, count(*)::int FROM (\(table.sql)) exported"
        let rows = try await connection.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: logger).read { cells in
            (try cells.next(String.self), try cells.next(Int.self))
        }
        return rows.first ?? ("[]", 0)
    }
}

extension ExportPlan {
    /// What the console's user page counts of a user in this service (`HoldingsAdminRoutes`):
    /// the rows of each exported table, so an operator sees what a subject access request would
    /// hand over, and no second list of the service's tables is kept.
    /// The schema's tables left out of the part, with why: the service's own and the platform's
    /// (those of the platform's the plan exports, such as `user_blocks`, left out of the list).
    public var notExportedReasons: [String: String] {
        let exported = Set(tables.flatMap(\.sources))
        return notExported.merging(Self.platformTables.filter { !exported.contains($0.key) }) { own, _ in own }
    }

    public var consoleHoldings: [ConsoleHolding] {
        tables.map { ConsoleHolding(name: $0.name, sql: $0.sql) }
    }
}

extension ExportPlan {
    /// The platform's tables in every service's schema, and why none is exported.
    public static let platformTables: [String: String] = [
        "schema_migrations": "which migrations ran: nothing of a person's",
        "outbox": "events on their way to the broker, seconds long; what they say is in the tables exported",
        "inbox": "ids of events already handled, so none is handled twice",
        "job_runs": "when each scheduled job last ran",
        "dead_letters": "events that could not be handled, kept for operators to retry or drop (the retention job deletes them)",
        "import_ledger": "which rows of an imported Supabase project became which rows here",
        "reports": "reports others filed about your content, for moderators (ids, category, words; who filed them stays private), erased with the reporter's or the reported account; the reports you filed are in `reports_filed` in the apps' services",
        "user_blocks": "blocks between users: exported as `blocks` by the services of apps that have them, unused in the others",
        "quota_hits": "counters of requests per person over hours, for abuse limits",
        "memberships": "a projection of who belongs to which group, exported as the service's own membership rows",
    ]

    /// What is wrong with the plan against the schema it reads (for tests): a table neither
    /// exported nor said why not, a column without a meaning, a meaning without a column.
    public func problems(schema: String, on connection: PostgresConnection, logger: Logger) async throws -> [String] {
        var problems: [String] = []
        let tables = try await connection.query("SELECT table_name::text FROM information_schema.tables WHERE table_schema = \(schema) AND table_type = 'BASE TABLE'", logger: logger)
            .values(String.self)
        let covered = Set(self.tables.flatMap(\.sources)).union(notExported.keys).union(Self.platformTables.keys)
        for name in tables.sorted() where !covered.contains(name) {
            problems.append("\(schema).\(name) is neither exported nor listed with a reason")
        }
        for table in self.tables {
            // The columns the query yields, from a table made of it with no rows ($1 a nil id),
            // in a transaction rolled back (service roles may not create temporary tables).
            let sql = table.sql.replacingOccurrences(of: "$1", with: "'00000000-0000-0000-0000-000000000000'::uuid")
            var columns: [String] = []
            try await connection.query("BEGIN", logger: logger)
            do {
                try await connection.query(PostgresQuery(unsafeSQL: "CREATE TABLE export_probe AS SELECT * FROM (\(sql)) q WITH NO DATA"), logger: logger)
                columns = try await connection.query("SELECT attname::text FROM pg_attribute WHERE attrelid = 'export_probe'::regclass AND attnum > 0 AND NOT attisdropped ORDER BY attnum", logger: logger)
                    .values(String.self)
                try await connection.query("ROLLBACK", logger: logger)
            } catch {
                _ = try? await connection.query("ROLLBACK", logger: logger)
                problems.append("\(table.name): its query fails: \(String(reflecting: error))")
                continue
            }
            let described = table.fields.map(\.name)
            for column in columns where !described.contains(column) { problems.append("\(table.name).\(column) has no meaning in the README") }
            for field in described where !columns.contains(field) { problems.append("\(table.name).\(field) is described but not exported") }
        }
        return problems
    }
}
