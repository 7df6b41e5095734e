import ColonyModels
import ColonyPlatform
import Foundation

// Blocks (`BlockList`, the platform's `user_blocks`): what they refuse and hide is each area's
// rule (DMs, add requests, posts, presence); these routes only keep the caller's list.
extension CirclesAPI {
    var blocks: BlockList { BlockList(logger: database.logger) }

    func listBlocks(_ input: Operations.ListBlocks.Input) async throws -> Operations.ListBlocks.Output {
        .ok(.init(body: .json(try await database.callerRead { caller, connection in
            _ = try await profiles.require(caller.id, on: connection)
            return try await blocks.list(by: caller.id, on: connection).map(Components.Schemas.Block.init)
        })))
    }

    func blockUser(_ input: Operations.BlockUser.Input) async throws -> Operations.BlockUser.Output {
        guard case .json(let json) = input.body else { throw CirclesErrors.validation("body: expected JSON") }
        let other = try Self.bodyID(json.userId, "user_id")
        return .created(.init(body: .json(try await database.callerWrite { caller, connection in
            _ = try await profiles.require(caller.id, on: connection)
            return try await blocks.block(other, by: caller.id, on: connection).map(Components.Schemas.Block.init)
        })))
    }

    func unblockUser(_ input: Operations.UnblockUser.Input) async throws -> Operations.UnblockUser.Output {
        guard let other = UUID(canonical: input.path.userId) else { throw CirclesErrors.userNotFound }
        try await database.callerWrite { caller, connection in
            _ = try await profiles.require(caller.id, on: connection)
            try await blocks.unblock(other, by: caller.id, on: connection)
        }
        return .noContent(.init())
    }
}

extension Components.Schemas.Block {
    init(_ blocked: BlockedUser) {
        self.init(userId: blocked.userId.lowercased, createdAt: blocked.createdAt)
    }
}
