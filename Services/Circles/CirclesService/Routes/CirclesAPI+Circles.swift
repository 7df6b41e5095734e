import ColonyModels
import ColonyPlatform
import Foundation

// Circles, membership, invites, add requests and presence.
extension CirclesAPI {
    func listCircles(_ input: Operations.ListCircles.Input) async throws -> Operations.ListCircles.Output {
        .ok(.init(body: .json(try await database.callerRead { caller, connection in try await circles.list(userID: caller.id, on: connection) })))
    }

    func createCircle(_ input: Operations.CreateCircle.Input) async throws -> Operations.CreateCircle.Output {
        guard case .json(let json) = input.body else { throw CirclesErrors.validation("body: expected JSON") }
        let name = json.name
        return .created(.init(body: .json(try await database.callerWrite { caller, connection in try await circles.create(name: name, userID: caller.id, on: connection) })))
    }

    func getCircle(_ input: Operations.GetCircle.Input) async throws -> Operations.GetCircle.Output {
        let id = try Self.circleID(input.path.circleId)
        return .ok(.init(body: .json(try await database.callerRead { caller, connection in try await circles.get(id, userID: caller.id, on: connection) })))
    }

    func renameCircle(_ input: Operations.RenameCircle.Input) async throws -> Operations.RenameCircle.Output {
        let id = try Self.circleID(input.path.circleId)
        guard case .json(let json) = input.body else { throw CirclesErrors.validation("body: expected JSON") }
        let name = json.name
        return .ok(.init(body: .json(try await database.callerWrite { caller, connection in try await circles.rename(id, name: name, userID: caller.id, on: connection) })))
    }

    func deleteCircle(_ input: Operations.DeleteCircle.Input) async throws -> Operations.DeleteCircle.Output {
        let id = try Self.circleID(input.path.circleId)
        try await database.callerWrite { caller, connection in try await circles.delete(id, userID: caller.id, on: connection) }
        return .noContent(.init())
    }

    func listMembers(_ input: Operations.ListMembers.Input) async throws -> Operations.ListMembers.Output {
        let id = try Self.circleID(input.path.circleId)
        return .ok(.init(body: .json(try await database.callerRead { caller, connection in try await circles.members(id, userID: caller.id, on: connection) })))
    }

    func removeMember(_ input: Operations.RemoveMember.Input) async throws -> Operations.RemoveMember.Output {
        let id = try Self.circleID(input.path.circleId)
        guard let member = UUID(canonical: input.path.userId) else { throw CirclesErrors.memberNotFound }
        try await database.callerWrite { caller, connection in try await circles.removeMember(id, member: member, userID: caller.id, on: connection) }
        return .noContent(.init())
    }

    func leaveCircle(_ input: Operations.LeaveCircle.Input) async throws -> Operations.LeaveCircle.Output {
        let id = try Self.circleID(input.path.circleId)
        try await database.callerWrite { caller, connection in try await circles.leave(id, userID: caller.id, on: connection) }
        return .noContent(.init())
    }

    // MARK: invites and add requests

    func createInvite(_ input: Operations.CreateInvite.Input) async throws -> Operations.CreateInvite.Output {
        let id = try Self.circleID(input.path.circleId)
        return .created(.init(body: .json(try await database.callerWrite { caller, connection in try await circles.invite(id, userID: caller.id, on: connection) })))
    }

    func claimInvite(_ input: Operations.ClaimInvite.Input) async throws -> Operations.ClaimInvite.Output {
        guard case .json(let json) = input.body else { throw CirclesErrors.validation("body: expected JSON") }
        let code = json.code
        return .ok(.init(body: .json(try await database.callerWrite { caller, connection in try await circles.claim(code: code, userID: caller.id, on: connection) })))
    }

    func requestAdd(_ input: Operations.RequestAdd.Input) async throws -> Operations.RequestAdd.Output {
        let id = try Self.circleID(input.path.circleId)
        guard case .json(let json) = input.body else { throw CirclesErrors.validation("body: expected JSON") }
        let handle = json.handle
        return .created(.init(body: .json(try await database.callerWrite { caller, connection in
            try await circles.requestAdd(id, handle: handle, userID: caller.id, on: connection)
        })))
    }

    func listAddRequests(_ input: Operations.ListAddRequests.Input) async throws -> Operations.ListAddRequests.Output {
        .ok(.init(body: .json(try await database.callerRead { caller, connection in try await circles.pendingRequests(userID: caller.id, on: connection) })))
    }

    func acceptAddRequest(_ input: Operations.AcceptAddRequest.Input) async throws -> Operations.AcceptAddRequest.Output {
        .ok(.init(body: .json(try await answer(input.path.requestId, .accept))))
    }

    func approveAddRequest(_ input: Operations.ApproveAddRequest.Input) async throws -> Operations.ApproveAddRequest.Output {
        .ok(.init(body: .json(try await answer(input.path.requestId, .approve))))
    }

    func declineAddRequest(_ input: Operations.DeclineAddRequest.Input) async throws -> Operations.DeclineAddRequest.Output {
        .ok(.init(body: .json(try await answer(input.path.requestId, .decline))))
    }

    private func answer(_ requestID: String, _ answer: Circles.Answer) async throws -> AddRequestView {
        guard let id = UUID(canonical: requestID) else { throw CirclesErrors.requestNotFound }
        return try await database.callerWrite { caller, connection in try await circles.answer(id, answer, userID: caller.id, on: connection) }
    }

    // MARK: presence

    func listPresence(_ input: Operations.ListPresence.Input) async throws -> Operations.ListPresence.Output {
        let id = try Self.circleID(input.path.circleId)
        return .ok(.init(body: .json(try await database.callerRead { caller, connection in
            try await presence.list(id, userID: caller.id, on: connection).map(PresenceView.init)
        })))
    }

    func setPresence(_ input: Operations.SetPresence.Input) async throws -> Operations.SetPresence.Output {
        let id = try Self.circleID(input.path.circleId)
        guard case .json(let json) = input.body else { throw CirclesErrors.validation("body: expected JSON") }
        let sent = json.status
        guard let status = PresenceStatus(rawValue: sent.rawValue) else { throw CirclesErrors.validation("status is not a presence status") }
        return .ok(.init(body: .json(PresenceView(try await database.callerWrite { caller, connection in
            try await presence.set(id, status: status, userID: caller.id, on: connection)
        }))))
    }
}
