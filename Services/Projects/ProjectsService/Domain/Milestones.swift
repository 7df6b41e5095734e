import ColonyModels
import ColonyPlatform
import Foundation
import Logging
import PostgresNIO

/// Milestones: a project's goals, which its owner creates, edits, completes and deletes.
struct Milestones: Sendable {
    let outbox: Outbox
    let media: ProjectsMedia
    let logger: Logger
    var store: MilestoneStore { MilestoneStore(logger: logger) }
    var projects: Projects { Projects(outbox: outbox, media: media, logger: logger) }

    /// The milestone and its project if `userID` may do `action` on the project.
    func access(_ milestoneID: UUID, userID: UUID, _ action: ProjectPolicy.Action, on connection: PostgresConnection) async throws -> (MilestoneRow, StoredProject) {
        guard let milestone = try await store.find(milestoneID, on: connection) else { throw ProjectsErrors.milestoneNotFound }
        do {
            return (milestone, try await projects.access(milestone.projectId, userID: userID, action, on: connection))
        } catch let error as APIError where error == ProjectsErrors.projectNotFound {
            throw ProjectsErrors.milestoneNotFound
        }
    }

    func list(_ projectID: UUID, userID: UUID, on connection: PostgresConnection) async throws -> [Milestone] {
        _ = try await projects.access(projectID, userID: userID, .view, on: connection)
        return try await store.list(projectID: projectID, on: connection).map(Milestone.init)
    }

    struct Input: Sendable {
        var title: String
        var description: String?
        var targetDate: LocalDate?
    }

    func create(_ projectID: UUID, _ input: Input, userID: UUID, on connection: PostgresConnection) async throws -> Milestone {
        var errors = ValidationErrors()
        let title = Self.title(input.title, errors: &errors)
        let description = ProjectsRules.text(input.description, field: "description", max: ProjectsRules.maxMilestoneDescription, errors: &errors)
        try errors.throwIfAny()
        _ = try await projects.access(projectID, userID: userID, .manage, on: connection)
        return Milestone(try await store.insert(id: .timeOrdered(), projectID: projectID, title: title, description: description, targetDate: input.targetDate,
                                                on: connection))
    }

    /// An edit: absent fields stay; null clears description and target date; `is_completed`
    /// sets or clears `completed_at`.
    struct Patch: Sendable {
        var title: String?
        var description: String??
        var targetDate: LocalDate??
        var isCompleted: Bool?
    }

    func update(_ milestoneID: UUID, _ patch: Patch, userID: UUID, on connection: PostgresConnection) async throws -> Milestone {
        var errors = ValidationErrors()
        var changes = MilestoneStore.Changes(targetDate: patch.targetDate, isCompleted: patch.isCompleted)
        if let title = patch.title { changes.title = Self.title(title, errors: &errors) }
        if let description = patch.description {
            changes.description = .some(ProjectsRules.text(description, field: "description", max: ProjectsRules.maxMilestoneDescription, errors: &errors))
        }
        try errors.throwIfAny()
        let (milestone, project) = try await access(milestoneID, userID: userID, .manage, on: connection)
        return Milestone(try await apply(milestone, project: project, changes, userID: userID, on: connection))
    }

    /// Completes or reopens (`is_completed`), or flips the milestone when that is not given.
    func toggle(_ milestoneID: UUID, isCompleted: Bool?, userID: UUID, on connection: PostgresConnection) async throws -> Milestone {
        let (milestone, project) = try await access(milestoneID, userID: userID, .manage, on: connection)
        return Milestone(try await apply(milestone, project: project, .init(isCompleted: isCompleted ?? !milestone.isCompleted), userID: userID, on: connection))
    }

    func delete(_ milestoneID: UUID, userID: UUID, on connection: PostgresConnection) async throws {
        _ = try await access(milestoneID, userID: userID, .manage, on: connection)
        try await store.delete(milestoneID, on: connection)
    }

    /// Saves the changes; a milestone that became complete publishes `milestone_completed`.
    func apply(_ milestone: MilestoneRow, project: StoredProject, _ changes: MilestoneStore.Changes, userID: UUID, on connection: PostgresConnection) async throws -> MilestoneRow {
        guard let updated = try await store.update(milestone.id, changes, on: connection) else { throw ProjectsErrors.milestoneNotFound }
        if updated.isCompleted && !milestone.isCompleted {
            try await outbox.publish(MilestoneCompleted(milestone: updated, projectTitle: project.title), key: project.id, actor: userID, on: connection, logger: logger)
        }
        return updated
    }

    static func title(_ title: String, errors: inout ValidationErrors) -> String {
        errors.check(TextRules.fits(title, 1...ProjectsRules.maxMilestoneTitle), "title must be 1–\(ProjectsRules.maxMilestoneTitle) characters, not blank")
        return ProjectsRules.trimmed(title)
    }
}
