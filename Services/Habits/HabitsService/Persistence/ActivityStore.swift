import ColonyModels
import ColonyPlatform
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
        let data = try entries.map { String(decoding: try ColonyJSON.encode($0.row.data), as: UTF8.self) }
        // Arrays cannot carry NULLs here: empty strings and the nil UUID stand for them.
        let statement = RecordActivity(
            ids: entries.map(\.row.id), actors: entries.map { $0.row.actorId ?? .nilUUID }, hives: entries.map { $0.row.hiveId ?? .nilUUID },
            habits: entries.map { $0.row.habitId ?? .nilUUID }, types: entries.map(\.row.type.rawValue), data: data,
            dedupeKeys: entries.map { $0.dedupeKey ?? "" }, times: entries.map(\.row.createdAt)
        )
        var written = Set<UUID>()
        for try await id in try await connection.execute(statement, logger: logger) { written.insert(id) }
        return entries.map(\.row).filter { written.contains($0.id) }
    }

    /// A hive's feed as `viewer` sees it, newest first, before the cursor (`created_at`, `id`)
    /// when given. The cursor's time is compared in exact microseconds: a `Date` bound back can
    /// lose one to rounding and skip a row that shares its time (one transaction's lines do).
    /// The lines of a member the viewer blocked (their logged days, joining, leaving) are left
    /// out; the hive's own (`hive_advanced`, which names who completed the day, `hive_broken`,
    /// milestones) stay: collective state every member sees.
    func feed(hiveID: UUID, viewer: UUID, before: KeysetCursor?, limit: Int, on connection: PostgresConnection) async throws -> [ActivityEventRow] {
        try await connection.query("""
            SELECT \(unescaped: ActivityEventRow.columns) FROM activity_events a
            WHERE hive_id = \(hiveID)
              AND (\(before == nil) OR (created_at, id) < ('epoch'::timestamptz + \(before?.micros ?? 0) * interval '1 microsecond', \(before?.id ?? .nilUUID)))
              AND NOT (a.type <> 'hive_advanced' AND EXISTS (SELECT 1 FROM user_blocks b WHERE b.blocker_id = \(viewer) AND b.blocked_id = a.actor_id))
            ORDER BY created_at DESC, id DESC
            LIMIT \(limit)
            """, logger: logger).collect().map(ActivityEventRow.init(row:))
    }
}

extension UUID {
    static let nilUUID = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
}
