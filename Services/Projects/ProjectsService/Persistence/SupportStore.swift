import ColonyModels
import ColonyPlatform
import Foundation
import Logging
import PostgresNIO

/// `support_messages`: messages to a project, with the sender's card for those not anonymous.
struct SupportStore: Sendable {
    let logger: Logger

    /// The project's latest messages, newest first.
    func recent(projectID: UUID, limit: Int, on connection: PostgresConnection) async throws -> [StoredSupportMessage] {
        try await connection.query("""
            SELECT \(unescaped: StoredSupportMessage.columns)
            FROM support_messages m LEFT JOIN builders s ON s.id = m.sender_id AND NOT m.is_anonymous
            WHERE m.project_id = \(projectID)
            ORDER BY m.created_at DESC, m.id DESC LIMIT \(limit)
            """, logger: logger).collect().map(StoredSupportMessage.init(row:))
    }

    /// How many of the sender's messages fall in the last `windowSeconds` (counting at most
    /// `limit`), and when the oldest of those leaves the window, in seconds from now.
    func recentlySent(senderID: UUID, windowSeconds: Int, limit: Int, on connection: PostgresConnection) async throws -> (count: Int, secondsUntilFree: Int) {
        let recent = try await connection.query("""
            SELECT count(*)::int8, coalesce(ceil(extract(epoch FROM min(created_at) + make_interval(secs => \(Double(windowSeconds))) - now())), 0)::int8
            FROM (
                SELECT created_at FROM support_messages
                WHERE sender_id = \(senderID) AND created_at > now() - make_interval(secs => \(Double(windowSeconds)))
                ORDER BY created_at DESC LIMIT \(limit)
            ) recent
            """, logger: logger).read { c in (try c.next(Int.self), try c.next(Int.self)) }.first
        let (count, seconds) = recent ?? (0, 0)
        return (count, seconds)
    }

    func insert(id: UUID, projectID: UUID, senderID: UUID, message: String, isAnonymous: Bool, on connection: PostgresConnection) async throws -> SupportMessageRow {
        let createdAt = try await connection.query("""
            INSERT INTO support_messages (id, project_id, sender_id, message, is_anonymous)
            VALUES (\(id), \(projectID), \(senderID), \(message), \(isAnonymous))
            RETURNING created_at
            """, logger: logger).firstValue(Date.self)
        return SupportMessageRow(id: id, projectId: projectID, senderId: senderID, message: message, isAnonymous: isAnonymous,
                                 createdAt: createdAt!)
    }
}
