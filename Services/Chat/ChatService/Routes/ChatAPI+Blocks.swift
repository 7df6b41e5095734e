import ColonyModels
import ColonyPlatform
import Foundation

// Blocks (the platform's `BlockList`). What a block does in Unify: the blocked user cannot create
// a group with the blocker in it or add them to one (`Groups`), and their messages and group
// events are hidden from the blocker's reads (`MessageStore`, `GroupStore`, `CalendarEventStore`)
// and from realtime and pushes (`withheldFrom` on what chat publishes). Both stay members.
extension ChatAPI {
    var blocks: BlockList { BlockList(logger: groups.logger) }

    func listBlocks(_ input: Operations.ListBlocks.Input) async throws -> Operations.ListBlocks.Output {
        .ok(.init(body: .json(try await database.callerRead { caller, connection in
            _ = try await users.require(caller.id, on: connection)
            return try await blocks.list(by: caller.id, on: connection).map(Schemas.Block.init)
        })))
    }

    func blockUser(_ input: Operations.BlockUser.Input) async throws -> Operations.BlockUser.Output {
        guard case .json(let block) = input.body else { throw APIError.unprocessable("body: expected JSON") }
        let other = try Self.bodyID(block.userId, "user_id")
        return .created(.init(body: .json(try await database.callerWrite { caller, connection in
            _ = try await users.require(caller.id, on: connection)
            return try await blocks.block(other, by: caller.id, on: connection).map(Schemas.Block.init)
        })))
    }

    func unblockUser(_ input: Operations.UnblockUser.Input) async throws -> Operations.UnblockUser.Output {
        let other = try Self.id(input.path.userId, ChatErrors.userNotFound)
        try await database.callerWrite { caller, connection in
            _ = try await users.require(caller.id, on: connection)
            try await blocks.unblock(other, by: caller.id, on: connection)
        }
        return .noContent(.init())
    }
}

extension Components.Schemas.Block {
    init(_ block: BlockedUser) {
        self.init(userId: block.userId.lowercased, createdAt: block.createdAt)
    }
}
