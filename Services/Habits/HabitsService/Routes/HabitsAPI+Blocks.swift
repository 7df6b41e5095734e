import ColonyModels
import ColonyPlatform
import Foundation
import OpenAPIRuntime

/// Blocks (`/blocks`): the caller's list, block, unblock. What a block does in HabitHive is the
/// domain's (`HabitsBlocks`): invitations refused and hidden, the blocked user's feed lines hidden.
extension HabitsAPI {
    var blocks: HabitsBlocks { HabitsBlocks(logger: hives.logger) }

    func listBlocks(_ input: Operations.ListBlocks.Input) async throws -> Operations.ListBlocks.Output {
        .ok(.init(body: .json(try await database.callerRead { caller, connection in try await blocks.list(by: caller.id, on: connection) })))
    }

    func blockUser(_ input: Operations.BlockUser.Input) async throws -> Operations.BlockUser.Output {
        guard case .json(let body) = input.body else { throw APIError.unprocessable("body: expected JSON") }
        guard let blocked = UUID(canonical: body.userId) else { throw HabitsErrors.validation("user_id must be a UUID") }
        let (list, replayed) = try await writes.answer(status: 201) { caller, connection in try await blocks.block(blocked, by: caller.id, on: connection) }
        return .created(.init(headers: .init(idempotentReplayed: replayed), body: .json(list)))
    }

    func unblockUser(_ input: Operations.UnblockUser.Input) async throws -> Operations.UnblockUser.Output {
        let blocked = try Self.id(input.path.userId, HabitsErrors.userNotFound)
        let replayed = try await writes.noContent { caller, connection in try await blocks.unblock(blocked, by: caller.id, on: connection) }
        return .noContent(.init(headers: .init(idempotentReplayed: replayed)))
    }
}
