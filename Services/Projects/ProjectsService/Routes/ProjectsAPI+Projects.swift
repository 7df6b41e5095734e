import ColonyModels
import ColonyPlatform
import Foundation

// Projects: discovery, creation and edits, the cover, follows and supporters.
extension ProjectsAPI {
    func listProjects(_ input: Operations.ListProjects.Input) async throws -> Operations.ListProjects.Output {
        let limit = try Self.limit(input.query.limit, default: 20, range: 1...100)
        let sort: ProjectStore.Sort = switch input.query.sort {
        case .new, nil: .new
        case .trending: .trending
        }
        return .ok(.init(body: .json(try await database.callerRead { caller, connection in
            try await projects.list(sort: sort, query: input.query.q, cursor: input.query.cursor, limit: limit, userID: caller.id, on: connection)
        })))
    }

    func createProject(_ input: Operations.CreateProject.Input) async throws -> Operations.CreateProject.Output {
        guard case .json(let create) = input.body else { throw APIError.unprocessable("body: expected JSON") }
        let project = Projects.Input(title: create.title, tagline: create.tagline, description: create.description, publicSlug: create.publicSlug,
                                     mood: create.mood?.mood, isPublished: create.isPublished)
        return .created(.init(body: .json(try await database.callerWrite { caller, connection in try await projects.create(project, userID: caller.id, on: connection) })))
    }

    func getProjectBySlug(_ input: Operations.GetProjectBySlug.Input) async throws -> Operations.GetProjectBySlug.Output {
        .ok(.init(body: .json(try await database.callerRead { caller, connection in try await projects.get(slug: input.path.slug, userID: caller.id, on: connection) })))
    }

    func checkSlug(_ input: Operations.CheckSlug.Input) async throws -> Operations.CheckSlug.Output {
        .ok(.init(body: .json(try await database.callerRead { _, connection in try await projects.slugExists(input.path.slug, on: connection) })))
    }

    func getProject(_ input: Operations.GetProject.Input) async throws -> Operations.GetProject.Output {
        let id = try Self.id(input.path.projectId, or: ProjectsErrors.projectNotFound)
        return .ok(.init(body: .json(try await database.callerRead { caller, connection in try await projects.get(id, userID: caller.id, on: connection) })))
    }

    func updateProject(_ input: Operations.UpdateProject.Input) async throws -> Operations.UpdateProject.Output {
        let id = try Self.id(input.path.projectId, or: ProjectsErrors.projectNotFound)
        guard case .json(let patch) = input.body else { throw APIError.unprocessable("body: expected JSON") }
        // Absent leaves a field; null (or "") clears tagline and description, null clears mood.
        let edit = Projects.Patch(title: patch.title, tagline: RequestBodyNulls.field(patch.tagline, "tagline"),
                                  description: RequestBodyNulls.field(patch.description, "description"), publicSlug: patch.publicSlug,
                                  mood: RequestBodyNulls.field(patch.mood, "mood").map { $0.map(\.mood) }, isPublished: patch.isPublished)
        return .ok(.init(body: .json(try await database.callerWrite { caller, connection in try await projects.update(id, edit, userID: caller.id, on: connection) })))
    }

    func deleteProject(_ input: Operations.DeleteProject.Input) async throws -> Operations.DeleteProject.Output {
        let id = try Self.id(input.path.projectId, or: ProjectsErrors.projectNotFound)
        try await database.callerWrite { caller, connection in try await projects.delete(id, userID: caller.id, on: connection) }
        return .noContent(.init())
    }

    func setCover(_ input: Operations.SetCover.Input) async throws -> Operations.SetCover.Output {
        let id = try Self.id(input.path.projectId, or: ProjectsErrors.projectNotFound)
        let (image, contentType) = switch input.body {
        case .jpeg(let body): try await Self.picture(body, "image/jpeg")
        case .png(let body): try await Self.picture(body, "image/png")
        }
        return .ok(.init(body: .json(try await database.callerWrite { caller, connection in
            try await projects.setCover(id, image: image, contentType: contentType, userID: caller.id, on: connection)
        })))
    }

    func removeCover(_ input: Operations.RemoveCover.Input) async throws -> Operations.RemoveCover.Output {
        let id = try Self.id(input.path.projectId, or: ProjectsErrors.projectNotFound)
        return .ok(.init(body: .json(try await database.callerWrite { caller, connection in try await projects.removeCover(id, userID: caller.id, on: connection) })))
    }

    func followProject(_ input: Operations.FollowProject.Input) async throws -> Operations.FollowProject.Output {
        let id = try Self.id(input.path.projectId, or: ProjectsErrors.projectNotFound)
        return .ok(.init(body: .json(try await database.callerWrite { caller, connection in try await projects.follow(id, userID: caller.id, on: connection) })))
    }

    func unfollowProject(_ input: Operations.UnfollowProject.Input) async throws -> Operations.UnfollowProject.Output {
        let id = try Self.id(input.path.projectId, or: ProjectsErrors.projectNotFound)
        return .ok(.init(body: .json(try await database.callerWrite { caller, connection in try await projects.unfollow(id, userID: caller.id, on: connection) })))
    }

    func listSupporters(_ input: Operations.ListSupporters.Input) async throws -> Operations.ListSupporters.Output {
        let id = try Self.id(input.path.projectId, or: ProjectsErrors.projectNotFound)
        let limit = try Self.limit(input.query.limit, default: 50, range: 1...200)
        return .ok(.init(body: .json(try await database.callerRead { caller, connection in
            try await projects.supporters(id, userID: caller.id, limit: limit, on: connection)
        })))
    }
}

// Milestones and support messages.
extension ProjectsAPI {
    func listMilestones(_ input: Operations.ListMilestones.Input) async throws -> Operations.ListMilestones.Output {
        let id = try Self.id(input.path.projectId, or: ProjectsErrors.projectNotFound)
        return .ok(.init(body: .json(try await database.callerRead { caller, connection in try await milestones.list(id, userID: caller.id, on: connection) })))
    }

    func createMilestone(_ input: Operations.CreateMilestone.Input) async throws -> Operations.CreateMilestone.Output {
        let id = try Self.id(input.path.projectId, or: ProjectsErrors.projectNotFound)
        guard case .json(let create) = input.body else { throw APIError.unprocessable("body: expected JSON") }
        let milestone = Milestones.Input(title: create.title, description: create.description, targetDate: try create.targetDate.map(Self.targetDate))
        return .created(.init(body: .json(try await database.callerWrite { caller, connection in
            try await milestones.create(id, milestone, userID: caller.id, on: connection)
        })))
    }

    func updateMilestone(_ input: Operations.UpdateMilestone.Input) async throws -> Operations.UpdateMilestone.Output {
        let id = try Self.id(input.path.milestoneId, or: ProjectsErrors.milestoneNotFound)
        guard case .json(let patch) = input.body else { throw APIError.unprocessable("body: expected JSON") }
        // Absent leaves a field; null clears description and target date.
        let edit = Milestones.Patch(title: patch.title, description: RequestBodyNulls.field(patch.description, "description"),
                                    targetDate: try RequestBodyNulls.field(patch.targetDate, "target_date").map { try $0.map(Self.targetDate) },
                                    isCompleted: patch.isCompleted)
        return .ok(.init(body: .json(try await database.callerWrite { caller, connection in try await milestones.update(id, edit, userID: caller.id, on: connection) })))
    }

    func deleteMilestone(_ input: Operations.DeleteMilestone.Input) async throws -> Operations.DeleteMilestone.Output {
        let id = try Self.id(input.path.milestoneId, or: ProjectsErrors.milestoneNotFound)
        try await database.callerWrite { caller, connection in try await milestones.delete(id, userID: caller.id, on: connection) }
        return .noContent(.init())
    }

    func toggleMilestone(_ input: Operations.ToggleMilestone.Input) async throws -> Operations.ToggleMilestone.Output {
        let id = try Self.id(input.path.milestoneId, or: ProjectsErrors.milestoneNotFound)
        // No body (or no `is_completed`) flips it.
        let isCompleted: Bool? = switch input.body {
        case .json(let toggle): toggle.isCompleted
        case nil: nil
        }
        return .ok(.init(body: .json(try await database.callerWrite { caller, connection in
            try await milestones.toggle(id, isCompleted: isCompleted, userID: caller.id, on: connection)
        })))
    }

    static func targetDate(_ text: String) throws -> LocalDate {
        guard let date = LocalDate(text) else { throw APIError.unprocessable("target_date must be a YYYY-MM-DD date") }
        return date
    }

    func listSupportMessages(_ input: Operations.ListSupportMessages.Input) async throws -> Operations.ListSupportMessages.Output {
        let id = try Self.id(input.path.projectId, or: ProjectsErrors.projectNotFound)
        let limit = try Self.limit(input.query.limit, default: 5, range: 1...50)
        return .ok(.init(body: .json(try await database.callerRead { caller, connection in try await messages.recent(id, limit: limit, userID: caller.id, on: connection) })))
    }

    func sendSupportMessage(_ input: Operations.SendSupportMessage.Input) async throws -> Operations.SendSupportMessage.Output {
        let id = try Self.id(input.path.projectId, or: ProjectsErrors.projectNotFound)
        guard case .json(let send) = input.body else { throw APIError.unprocessable("body: expected JSON") }
        // Over the limit, `SupportMessages.send` throws the 429 with its `Retry-After`.
        return .created(.init(body: .json(try await database.callerWrite { caller, connection in
            try await messages.send(id, message: send.message, isAnonymous: send.isAnonymous ?? false, userID: caller.id, on: connection)
        })))
    }
}
