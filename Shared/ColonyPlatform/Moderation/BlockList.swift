import ColonyModels
import Foundation
import Logging
import PostgresNIO

/// One user the caller has blocked, as `GET /<service>/v1/blocks` lists it.
public struct BlockedUser: Sendable, Equatable {
    public var userId: UUID
    public var createdAt: Date
}

/// Who blocked whom in one app, kept in the service's own schema (the platform's `user_blocks`
/// table): a block is personal and per app. What a block means is each service's rule:
/// SocialSpot hides the pair from each other both ways; elsewhere the blocked user cannot DM,
/// invite, add or send support messages to the blocker (`refuse`), and their content is hidden
/// from the blocker's reads (each read's SQL: `hiddenByBlock`) and from realtime and pushes
/// (`EventEnvelope.withheldFrom`, from `blockers(of:among:)`). Both stay in what they share.
public struct BlockList: Sendable {
    /// The most users one user may block: a bound on what one account can make the table hold.
    public static let limit = 1000

    public static let refused = APIError.forbidden("this user does not accept this from you", code: "blocked")
    public static let cannotBlockSelf = APIError.conflict("you cannot block yourself", code: "cannot_block_self")
    public static let overLimit = APIError.conflict("you have blocked as many users as one account may (\(limit)); unblock someone first", code: "block_limit")

    public let logger: Logger

    public init(logger: Logger) {
        self.logger = logger
    }

    /// Blocks `blocked` for `blocker` (again: nothing changes). Answers the blocker's list.
    public func block(_ blocked: UUID, by blocker: UUID, on connection: PostgresConnection) async throws -> [BlockedUser] {
        guard blocked != blocker else { throw Self.cannotBlockSelf }
        // Serializes one blocker's blocks, so two at once cannot pass the limit together.
        try await connection.query("SELECT pg_advisory_xact_lock(hashtext('user_blocks'), hashtext(\(blocker.lowercased)))", logger: logger)
        let inserted = try await connection.query("""
            INSERT INTO user_blocks (blocker_id, blocked_id)
            SELECT \(blocker), \(blocked) WHERE (SELECT count(*) FROM user_blocks WHERE blocker_id = \(blocker)) < \(Self.limit)
            ON CONFLICT DO NOTHING RETURNING 1
            """, logger: logger).collect().count
        if inserted == 0, try await !hasBlocked(blocked, by: blocker, on: connection) { throw Self.overLimit }
        return try await list(by: blocker, on: connection)
    }

    /// Removes `blocker`'s block of `blocked` (fine when there is none; theirs of the caller stays).
    public func unblock(_ blocked: UUID, by blocker: UUID, on connection: PostgresConnection) async throws {
        try await connection.query("DELETE FROM user_blocks WHERE blocker_id = \(blocker) AND blocked_id = \(blocked)", logger: logger)
    }

    /// The users `blocker` has blocked, most recent first.
    public func list(by blocker: UUID, on connection: PostgresConnection) async throws -> [BlockedUser] {
        try await connection.query("SELECT blocked_id, created_at FROM user_blocks WHERE blocker_id = \(blocker) ORDER BY created_at DESC, blocked_id", logger: logger)
            .read { cells in BlockedUser(userId: try cells.next(), createdAt: try cells.next()) }
    }

    public func hasBlocked(_ blocked: UUID, by blocker: UUID, on connection: PostgresConnection) async throws -> Bool {
        try await connection.query("SELECT 1 FROM user_blocks WHERE blocker_id = \(blocker) AND blocked_id = \(blocked)", logger: logger)
            .collect().isEmpty == false
    }

    /// Refuses what `sender` would send or do to `recipient` (a DM, an invitation, an add, a
    /// support message) when `recipient` has blocked them: 403 `blocked`.
    public func refuse(_ sender: UUID, reaching recipient: UUID, on connection: PostgresConnection) async throws {
        if sender != recipient, try await hasBlocked(sender, by: recipient, on: connection) { throw Self.refused }
    }

    /// Those of `recipients` who blocked `sender` (the ones an add or invitation of many refuses).
    public func blockers(of sender: UUID, among recipients: [UUID], on connection: PostgresConnection) async throws -> [UUID] {
        guard !recipients.isEmpty else { return [] }
        return try await connection.query(
            "SELECT blocker_id FROM user_blocks WHERE blocked_id = \(sender) AND blocker_id = ANY(\(recipients)) ORDER BY blocker_id", logger: logger
        ).values(UUID.self)
    }

    /// Those who blocked `author` among the members of a scope, given as the SQL of its member
    /// ids (`SELECT user_id FROM circle_members WHERE circle_id = $1`-like, with its bindings):
    /// the `withheldFrom` of an event that shows the author's content to the scope.
    public func blockers(of author: UUID, amongMembers members: PostgresQuery, on connection: PostgresConnection) async throws -> [UUID] {
        var bindings = members.binds
        bindings.append(author)
        let sql = "SELECT blocker_id FROM user_blocks WHERE blocked_id = $\(bindings.count) AND blocker_id IN (\(members.sql)) ORDER BY blocker_id"
        return try await connection.query(PostgresQuery(unsafeSQL: sql, binds: bindings), logger: logger).values(UUID.self)
    }

    /// A SQL condition true when `viewer` blocked `author` (both SQL expressions): a read shows
    /// another user's content with `AND NOT <hiddenByBlock>`.
    public static func hiddenByBlock(viewer: String, author: String) -> String {
        "EXISTS (SELECT 1 FROM user_blocks WHERE blocker_id = \(viewer) AND blocked_id = \(author))"
    }

    /// A deleted account's blocks go with it, both ways.
    public static func erase(_ user: UUID, on connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query("DELETE FROM user_blocks WHERE blocker_id = \(user) OR blocked_id = \(user)", logger: logger)
    }
}
