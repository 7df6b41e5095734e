import ColonyModels
import ColonyPlatform
import Foundation
import OpenAPIRuntime

// Groups and their members.
extension ChatAPI {
    func listGroups(_ input: Operations.ListGroups.Input) async throws -> Operations.ListGroups.Output {
        .ok(.init(body: .json(try await database.callerRead { caller, connection in try await groups.list(userID: caller.id, on: connection) })))
    }

    func createGroup(_ input: Operations.CreateGroup.Input) async throws -> Operations.CreateGroup.Output {
        guard case .json(let create) = input.body else { throw APIError.unprocessable("body: expected JSON") }
        let emails = create.memberEmails ?? []
        return .created(.init(body: .json(try await database.callerWrite { caller, connection in
            try await lookups.spend(try ChatRules.emails(emails).count, user: caller.id)
            return try await groups.create(name: create.name, memberEmails: emails, userID: caller.id, on: connection)
        })))
    }

    func listUnreadCounts(_ input: Operations.ListUnreadCounts.Input) async throws -> Operations.ListUnreadCounts.Output {
        .ok(.init(body: .json(try await database.callerRead { caller, connection in try await groups.unreadCounts(userID: caller.id, on: connection) })))
    }

    func getGroup(_ input: Operations.GetGroup.Input) async throws -> Operations.GetGroup.Output {
        let id = try Self.id(input.path.groupId, ChatErrors.groupNotFound)
        return .ok(.init(body: .json(try await database.callerRead { caller, connection in try await groups.get(id, userID: caller.id, on: connection) })))
    }

    func renameGroup(_ input: Operations.RenameGroup.Input) async throws -> Operations.RenameGroup.Output {
        let id = try Self.id(input.path.groupId, ChatErrors.groupNotFound)
        guard case .json(let rename) = input.body else { throw APIError.unprocessable("body: expected JSON") }
        return .ok(.init(body: .json(try await database.callerWrite { caller, connection in
            try await groups.rename(id, name: rename.name, userID: caller.id, on: connection)
        })))
    }

    func deleteGroup(_ input: Operations.DeleteGroup.Input) async throws -> Operations.DeleteGroup.Output {
        let id = try Self.id(input.path.groupId, ChatErrors.groupNotFound)
        try await database.callerWrite { caller, connection in try await groups.delete(id, userID: caller.id, on: connection) }
        return .noContent(.init())
    }

    func setGroupPicture(_ input: Operations.SetGroupPicture.Input) async throws -> Operations.SetGroupPicture.Output {
        let id = try Self.id(input.path.groupId, ChatErrors.groupNotFound)
        let (image, contentType): (HTTPBody, String) = switch input.body {
        case .jpeg(let body): (body, "image/jpeg")
        case .png(let body): (body, "image/png")
        }
        let bytes = try await Self.buffer(image)
        return .ok(.init(body: .json(try await database.callerWrite { caller, connection in
            try await groups.setPicture(id, image: bytes, contentType: contentType, userID: caller.id, on: connection)
        })))
    }

    func removeGroupPicture(_ input: Operations.RemoveGroupPicture.Input) async throws -> Operations.RemoveGroupPicture.Output {
        let id = try Self.id(input.path.groupId, ChatErrors.groupNotFound)
        return .ok(.init(body: .json(try await database.callerWrite { caller, connection in try await groups.removePicture(id, userID: caller.id, on: connection) })))
    }

    func markGroupRead(_ input: Operations.MarkGroupRead.Input) async throws -> Operations.MarkGroupRead.Output {
        let id = try Self.id(input.path.groupId, ChatErrors.groupNotFound)
        // No body: read up to now.
        let at: Date? = switch input.body {
        case .json(let request): request.at
        case nil: nil
        }
        return .ok(.init(body: .json(try await database.callerWrite { caller, connection in
            try await groups.markRead(id, at: at, userID: caller.id, on: connection)
        })))
    }

    func leaveGroup(_ input: Operations.LeaveGroup.Input) async throws -> Operations.LeaveGroup.Output {
        let id = try Self.id(input.path.groupId, ChatErrors.groupNotFound)
        let successor: UUID? = switch input.body {
        case .json(let request): try request.successorId.map { try Self.bodyID($0, "successor_id") }
        case nil: nil
        }
        try await database.callerWrite { caller, connection in try await groups.leave(id, successor: successor, userID: caller.id, on: connection) }
        return .noContent(.init())
    }

    func transferGroupOwnership(_ input: Operations.TransferGroupOwnership.Input) async throws -> Operations.TransferGroupOwnership.Output {
        let id = try Self.id(input.path.groupId, ChatErrors.groupNotFound)
        guard case .json(let transfer) = input.body else { throw APIError.unprocessable("body: expected JSON") }
        let newOwner = try Self.bodyID(transfer.newOwnerId, "new_owner_id")
        return .ok(.init(body: .json(try await database.callerWrite { caller, connection in
            try await groups.transferOwnership(id, to: newOwner, userID: caller.id, on: connection)
        })))
    }

    // MARK: members

    func listMembers(_ input: Operations.ListMembers.Input) async throws -> Operations.ListMembers.Output {
        let id = try Self.id(input.path.groupId, ChatErrors.groupNotFound)
        return .ok(.init(body: .json(try await database.callerRead { caller, connection in try await groups.members(id, userID: caller.id, on: connection) })))
    }

    func addMembers(_ input: Operations.AddMembers.Input) async throws -> Operations.AddMembers.Output {
        let id = try Self.id(input.path.groupId, ChatErrors.groupNotFound)
        guard case .json(let add) = input.body else { throw APIError.unprocessable("body: expected JSON") }
        return .ok(.init(body: .json(try await database.callerWrite { caller, connection in
            try await lookups.spend(try ChatRules.emails(add.emails).count, user: caller.id)
            return try await groups.addMembers(id, emails: add.emails, userID: caller.id, on: connection)
        })))
    }

    func setMemberRole(_ input: Operations.SetMemberRole.Input) async throws -> Operations.SetMemberRole.Output {
        let id = try Self.id(input.path.groupId, ChatErrors.groupNotFound)
        let member = try Self.id(input.path.userId, ChatErrors.memberNotFound)
        guard case .json(let change) = input.body else { throw APIError.unprocessable("body: expected JSON") }
        return .ok(.init(body: .json(try await database.callerWrite { caller, connection in
            try await groups.setRole(id, member: member, role: GroupRole(change.role), userID: caller.id, on: connection)
        })))
    }

    func removeMember(_ input: Operations.RemoveMember.Input) async throws -> Operations.RemoveMember.Output {
        let id = try Self.id(input.path.groupId, ChatErrors.groupNotFound)
        let member = try Self.id(input.path.userId, ChatErrors.memberNotFound)
        try await database.callerWrite { caller, connection in try await groups.removeMember(id, member: member, userID: caller.id, on: connection) }
        return .noContent(.init())
    }
}
