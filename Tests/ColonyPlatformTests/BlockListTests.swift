import ColonyModels
import ColonyTesting
import Foundation
import PostgresNIO
import Testing

@testable import ColonyPlatform

/// The blocks every app shares (`BlockList`, the platform's `user_blocks`): block, list and
/// unblock; refusals; the blockers among an audience; the SQL condition reads use; the limit
/// held under concurrent blocks; an account's blocks erased with it.
@Suite("Block list")
struct BlockListTests {
    let members = [Migration(version: 1, name: "members", sql: "CREATE TABLE members (scope uuid NOT NULL, user_id uuid NOT NULL, PRIMARY KEY (scope, user_id));")]

    @Test("block, list most recent first, unblock; again changes nothing; oneself is 409")
    func blockAndUnblock() async throws {
        try await withTestDatabase { database in
            let blocks = BlockList(logger: database.logger)
            let (me, first, second) = (UUID(), UUID(), UUID())
            let afterFirst = try await database.transaction { try await blocks.block(first, by: me, on: $0) }
            #expect(afterFirst.map(\.userId) == [first])
            try await Task.sleep(for: .milliseconds(5))  // distinct created_at, for the order
            _ = try await database.transaction { try await blocks.block(second, by: me, on: $0) }
            let again = try await database.transaction { try await blocks.block(second, by: me, on: $0) }
            #expect(again.map(\.userId) == [second, first])
            await #expect(throws: APIError.self) { try await database.transaction { try await blocks.block(me, by: me, on: $0) } }

            try await database.transaction { try await blocks.unblock(second, by: me, on: $0) }
            try await database.transaction { try await blocks.unblock(second, by: me, on: $0) }
            let left = try await database.withConnection { try await blocks.list(by: me, on: $0) }
            #expect(left.map(\.userId) == [first])
            // A block is one way: the blocked user's list is empty, and only they are refused.
            let theirs = try await database.withConnection { try await blocks.list(by: first, on: $0) }
            #expect(theirs.isEmpty)
        }
    }

    @Test("a blocked sender is refused 403 blocked; the blocker, and others, are not")
    func refusals() async throws {
        try await withTestDatabase { database in
            let blocks = BlockList(logger: database.logger)
            let (blocker, blocked, other) = (UUID(), UUID(), UUID())
            _ = try await database.transaction { try await blocks.block(blocked, by: blocker, on: $0) }
            try await database.withConnection { connection in
                do {
                    try await blocks.refuse(blocked, reaching: blocker, on: connection)
                    Issue.record("the blocked sender was not refused")
                } catch let error as APIError {
                    #expect(error.status == .forbidden)
                    #expect(error.code == "blocked")
                }
                try await blocks.refuse(blocker, reaching: blocked, on: connection)
                try await blocks.refuse(other, reaching: blocker, on: connection)
                #expect(try await blocks.blockers(of: blocked, among: [blocker, other], on: connection) == [blocker])
                #expect(try await blocks.blockers(of: other, among: [blocker, blocked], on: connection).isEmpty)
            }
        }
    }

    @Test("blockers among a scope's members (an event's withheld_from) and the condition reads use")
    func blockersAmongMembers() async throws {
        try await withTestDatabase(migrations: members) { database in
            let blocks = BlockList(logger: database.logger)
            let (scope, elsewhere) = (UUID(), UUID())
            let (author, memberBlocker, memberFine, outsiderBlocker) = (UUID(), UUID(), UUID(), UUID())
            try await database.transaction { connection in
                for (scopeID, user) in [(scope, author), (scope, memberBlocker), (scope, memberFine), (elsewhere, outsiderBlocker)] {
                    try await connection.query("INSERT INTO members (scope, user_id) VALUES (\(scopeID), \(user))", logger: database.logger)
                }
                _ = try await blocks.block(author, by: memberBlocker, on: connection)
                _ = try await blocks.block(author, by: outsiderBlocker, on: connection)
            }
            let withheld = try await database.withConnection { connection in
                try await blocks.blockers(of: author, amongMembers: "SELECT user_id FROM members WHERE scope = \(scope)", on: connection)
            }
            #expect(withheld == [memberBlocker])

            // What a read of the scope's members shows each viewer, authors they blocked left out.
            func shown(to viewer: UUID) async throws -> Set<UUID> {
                let sql = "SELECT user_id FROM members m WHERE scope = $1 AND NOT \(BlockList.hiddenByBlock(viewer: "$2", author: "m.user_id"))"
                var binds = PostgresBindings()
                binds.append(scope)
                binds.append(viewer)
                return Set(try await database.query(PostgresQuery(unsafeSQL: sql, binds: binds)).values(UUID.self))
            }
            #expect(try await shown(to: memberBlocker) == [memberBlocker, memberFine])
            #expect(try await shown(to: memberFine) == [author, memberBlocker, memberFine])
        }
    }

    @Test("past the limit a block is 409 block_limit, also when blocks race; unblocking makes room")
    func limit() async throws {
        try await withTestDatabase { database in
            let blocks = BlockList(logger: database.logger)
            let me = UUID()
            try await database.transaction { connection in
                try await connection.query("""
                    INSERT INTO user_blocks (blocker_id, blocked_id) SELECT \(me), gen_random_uuid() FROM generate_series(1, \(BlockList.limit - 2))
                    """, logger: database.logger)
            }
            // Five at once where two fit: two pass, three are refused, the limit holds.
            let outcomes = await withTaskGroup(of: Bool.self) { group in
                for _ in 0..<5 {
                    group.addTask { (try? await database.transaction { try await blocks.block(UUID(), by: me, on: $0) }) != nil }
                }
                return await group.reduce(into: [Bool]()) { $0.append($1) }
            }
            #expect(outcomes.filter { $0 }.count == 2)
            let listed = try await database.withConnection { try await blocks.list(by: me, on: $0) }
            #expect(listed.count == BlockList.limit)
            do {
                _ = try await database.transaction { try await blocks.block(UUID(), by: me, on: $0) }
                Issue.record("a block past the limit was taken")
            } catch let error as APIError {
                #expect(error.status == .conflict)
                #expect(error.code == "block_limit")
            }
            // Blocking someone already blocked is still fine at the limit.
            let already = try #require(listed.first).userId
            _ = try await database.transaction { try await blocks.block(already, by: me, on: $0) }
            try await database.transaction { try await blocks.unblock(already, by: me, on: $0) }
            _ = try await database.transaction { try await blocks.block(UUID(), by: me, on: $0) }
        }
    }

    @Test("an account's blocks go with it, both ways")
    func erase() async throws {
        try await withTestDatabase { database in
            let blocks = BlockList(logger: database.logger)
            let (gone, other, third) = (UUID(), UUID(), UUID())
            try await database.transaction { connection in
                _ = try await blocks.block(other, by: gone, on: connection)
                _ = try await blocks.block(gone, by: other, on: connection)
                _ = try await blocks.block(third, by: other, on: connection)
                try await BlockList.erase(gone, on: connection, logger: database.logger)
            }
            let rows = try await database.query("SELECT blocker_id, blocked_id FROM user_blocks").read { cells -> [UUID] in [try cells.next(), try cells.next()] }
            #expect(rows == [[other, third]])
        }
    }
}
