import ColonyPlatform
import Foundation
import Logging
import PostgresNIO

/// `blocks`: who blocked whom. A block hides the pair from each other both ways.
struct BlockStore: Sendable {
    let logger: Logger

    func block(_ blocker: UUID, _ blocked: UUID, on connection: PostgresConnection) async throws {
        try await connection.query("INSERT INTO blocks (blocker_id, blocked_id) VALUES (\(blocker), \(blocked)) ON CONFLICT DO NOTHING", logger: logger)
    }

    func unblock(_ blocker: UUID, _ blocked: UUID, on connection: PostgresConnection) async throws {
        try await connection.query("DELETE FROM blocks WHERE blocker_id = \(blocker) AND blocked_id = \(blocked)", logger: logger)
    }

    func list(_ blocker: UUID, on connection: PostgresConnection) async throws -> [BlockEntry] {
        try await connection.query("SELECT blocked_id, created_at FROM blocks WHERE blocker_id = \(blocker) ORDER BY created_at DESC, blocked_id", logger: logger)
            .read { c in
                let id: UUID = try c.next()
                return BlockEntry(userId: id.lowercased, createdAt: try c.next())
            }
    }
}
