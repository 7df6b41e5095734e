import ColonyModels
import ColonyPlatform
import Foundation
import Logging
import PostgresNIO

/// Blocks in HabitHive (the platform's `BlockList`): personal, not a removal. A blocked user
/// cannot invite the blocker to a hive (`HiveInvitations.invite`, 403 `blocked`); their pending
/// invitations to the blocker are hidden (and answered as unknown); their own lines in every
/// hive feed are hidden from the blocker (`ActivityStore.feed`). Both stay in the hives they
/// share, and the hive's collective state (members, days, member days, advancing, breaking)
/// stays the same for everyone.
struct HabitsBlocks: Sendable {
    typealias Block = Components.Schemas.Block

    let logger: Logger
    var list: BlockList { BlockList(logger: logger) }
    var profiles: ProfileStore { ProfileStore(logger: logger) }

    func list(by userID: UUID, on connection: PostgresConnection) async throws -> [Block] {
        _ = try await profiles.require(userID, on: connection)
        return try await list.list(by: userID, on: connection).map(Self.block)
    }

    /// A deleted account (401 `account_deleted`) cannot leave blocks behind by a late request.
    func block(_ blocked: UUID, by userID: UUID, on connection: PostgresConnection) async throws -> [Block] {
        _ = try await profiles.require(userID, on: connection)
        return try await list.block(blocked, by: userID, on: connection).map(Self.block)
    }

    func unblock(_ blocked: UUID, by userID: UUID, on connection: PostgresConnection) async throws {
        _ = try await profiles.require(userID, on: connection)
        try await list.unblock(blocked, by: userID, on: connection)
    }

    /// The hive's members who blocked `member`: the `withheld_from` of the events carrying the
    /// member's own feed line (`hive_day_logged`, `hive_joined`). Realtime withholds only that
    /// line from them; the day's and the members' rows in the same event are the hive's state.
    static func blockers(of member: UUID, inHive hiveID: UUID, on connection: PostgresConnection, logger: Logger) async throws -> [UUID] {
        try await BlockList(logger: logger).blockers(of: member, amongMembers: "SELECT user_id FROM hive_members WHERE hive_id = \(hiveID)", on: connection)
    }

    static func block(_ entry: BlockedUser) -> Block {
        Block(userId: entry.userId.lowercased, createdAt: entry.createdAt)
    }
}
