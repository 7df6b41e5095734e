import ColonyModels
import Foundation
import Logging
import PostgresNIO

/// `activity_events`: the hive feeds.
struct ActivityStore: Sendable {
    let logger: Logger

    /// A feed line to write; `dedupeKey` makes a second write of the same fact a no-op.
    struct Entry: Sendable {
        var row: ActivityEventRow
        var dedupeKey: String?

        init(actor: UUID?, hive: UUID?, habit: UUID? = nil, type: ActivityType, data: [String: JSONValue] = [:], dedupeKey: String? = nil, at: Date = Date()) {
            self.row = ActivityEventRow(id: .timeOrdered(at: at), actorId: actor, hiveId: hive, habitId: habit, type: type, data: data, createdAt: ISO8601.wholeMilliseconds(at))
            self.dedupeKey = dedupeKey
        }
    }

    /// Writes the entries; returns the rows actually written (duplicates by key are skipped).
    @discardableResult
    func record(_ entries: [Entry], on connection: PostgresConnection) async throws -> [ActivityEventRow] {
        guard !entries.isEmpty else { return [] }
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let data = try entries.map { String(decoding: try encoder.encode($0.row.data), as: UTF8.self) }
        // Arrays cannot carry NULLs here: empty strings and the nil UUID stand for them.
        let rows = try await connection.query("""
            INSERT INTO activity_events (id, actor_id, hive_id, habit_id, type, data, dedupe_key, created_at)
            SELECT id, nullif(actor, \(UUID.nilUUID)), nullif(hive, \(UUID.nilUUID)), nullif(habit, \(UUID.nilUUID)), type::activity_type, data::jsonb, nullif(dedupe, ''), at
            FROM unnest(\(entries.map(\.row.id))::uuid[], \(entries.map { $0.row.actorId ?? .nilUUID })::uuid[], \(entries.map { $0.row.hiveId ?? .nilUUID })::uuid[],
                        \(entries.map { $0.row.habitId ?? .nilUUID })::uuid[], \(entries.map(\.row.type.rawValue))::text[], \(data)::text[],
                        \(entries.map { $0.dedupeKey ?? "" })::text[], \(entries.map(\.row.createdAt))::timestamptz[])
                AS e(id, actor, hive, habit, type, data, dedupe, at)
            ON CONFLICT (dedupe_key) DO NOTHING
            RETURNING id
            """, logger: logger)
        var written = Set<UUID>()
        for try await id in rows.decode(UUID.self) { written.insert(id) }
        return entries.map(\.row).filter { written.contains($0.id) }
    }

    /// A hive's feed, newest first, before the cursor (`created_at`, `id`) when given.
    func feed(hiveID: UUID, before: (Date, UUID)?, limit: Int, on connection: PostgresConnection) async throws -> [ActivityEventRow] {
        try await connection.query("""
            SELECT \(unescaped: ActivityEventRow.columns) FROM activity_events
            WHERE hive_id = \(hiveID) AND (\(before == nil) OR (created_at, id) < (\(before?.0 ?? Date()), \(before?.1 ?? .nilUUID)))
            ORDER BY created_at DESC, id DESC
            LIMIT \(limit)
            """, logger: logger).collect().map(ActivityEventRow.init(row:))
    }
}

extension UUID {
    static let nilUUID = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
}
