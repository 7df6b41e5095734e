import ColonyModels
import Foundation
import Logging
import PostgresNIO

/// `milestones`: a project's goals, by target date.
struct MilestoneStore: Sendable {
    let logger: Logger

    /// The project's milestones: by target date (those without one last), then as created.
    func list(projectID: UUID, on connection: PostgresConnection) async throws -> [MilestoneRow] {
        try await connection.query("""
            SELECT \(unescaped: MilestoneRow.columns) FROM milestones WHERE project_id = \(projectID)
            ORDER BY target_date ASC NULLS LAST, created_at, id
            """, logger: logger).collect().map(MilestoneRow.init(row:))
    }

    func find(_ milestoneID: UUID, on connection: PostgresConnection) async throws -> MilestoneRow? {
        try await connection.query("SELECT \(unescaped: MilestoneRow.columns) FROM milestones WHERE id = \(milestoneID)", logger: logger)
            .collect().first.map(MilestoneRow.init(row:))
    }

    func insert(id: UUID, projectID: UUID, title: String, description: String?, targetDate: LocalDate?, on connection: PostgresConnection) async throws -> MilestoneRow {
        let row = try await connection.query("""
            INSERT INTO milestones (id, project_id, title, description, target_date)
            VALUES (\(id), \(projectID), \(title), \(description), \(targetDate))
            RETURNING \(unescaped: MilestoneRow.columns)
            """, logger: logger).collect().first
        return try MilestoneRow(row: row!)
    }

    struct Changes: Sendable {
        var title: String?
        var description: String??
        var targetDate: LocalDate??
        var isCompleted: Bool?
    }

    /// Applies the changes; completing sets `completed_at` (kept if it was complete already),
    /// reopening clears it.
    func update(_ milestoneID: UUID, _ changes: Changes, on connection: PostgresConnection) async throws -> MilestoneRow? {
        try await connection.query("""
            UPDATE milestones SET
                title = coalesce(\(changes.title), title),
                description = CASE WHEN \(changes.description != nil) THEN \(changes.description ?? nil) ELSE description END,
                target_date = CASE WHEN \(changes.targetDate != nil) THEN \(changes.targetDate ?? nil) ELSE target_date END,
                is_completed = coalesce(\(changes.isCompleted)::boolean, is_completed),
                completed_at = CASE
                    WHEN \(changes.isCompleted)::boolean IS NULL THEN completed_at
                    WHEN \(changes.isCompleted)::boolean THEN coalesce(completed_at, now())
                    ELSE NULL END
            WHERE id = \(milestoneID)
            RETURNING \(unescaped: MilestoneRow.columns)
            """, logger: logger).collect().first.map(MilestoneRow.init(row:))
    }

    func delete(_ milestoneID: UUID, on connection: PostgresConnection) async throws {
        try await connection.query("DELETE FROM milestones WHERE id = \(milestoneID)", logger: logger)
    }
}
