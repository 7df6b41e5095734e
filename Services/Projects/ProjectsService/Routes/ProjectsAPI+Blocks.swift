import ColonyModels
import ColonyPlatform
import Foundation

// Blocks: the users the caller blocked in I Believe In You (the platform's `BlockList`). A
// blocked user cannot send the blocker support messages (`SupportMessages.send`), and their
// projects, posts, named messages and follows are hidden from the blocker's reads (the stores'
// `blockedBy` conditions); nothing they did is removed.
extension ProjectsAPI {
    static let userNotFound = APIError.notFound("user not found", code: "user_not_found")

    var blocks: BlockList { BlockList(logger: builders.logger) }

    func listBlocks(_ input: Operations.ListBlocks.Input) async throws -> Operations.ListBlocks.Output {
        .ok(.init(body: .json(try await database.callerRead { caller, connection in
            _ = try await builders.require(caller.id, on: connection)
            return try await blocks.list(by: caller.id, on: connection).map(Components.Schemas.Block.init)
        })))
    }

    func blockUser(_ input: Operations.BlockUser.Input) async throws -> Operations.BlockUser.Output {
        guard case .json(let block) = input.body else { throw APIError.unprocessable("body: expected JSON") }
        guard let other = UUID(canonical: block.userId) else { throw APIError.unprocessable("user_id must be a UUID") }
        return .created(.init(body: .json(try await database.callerWrite { caller, connection in
            _ = try await builders.require(caller.id, on: connection)
            return try await blocks.block(other, by: caller.id, on: connection).map(Components.Schemas.Block.init)
        })))
    }

    func unblockUser(_ input: Operations.UnblockUser.Input) async throws -> Operations.UnblockUser.Output {
        // Anything that is not a UUID names nobody.
        guard let other = UUID(canonical: input.path.userId) else { throw Self.userNotFound }
        try await database.callerWrite { caller, connection in
            _ = try await builders.require(caller.id, on: connection)
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
