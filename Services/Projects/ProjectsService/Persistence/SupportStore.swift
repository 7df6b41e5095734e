import ColonyModels
import ColonyPlatform
import Foundation
import Logging
import PostgresNIO

/// `support_messages`: messages to a project, with the sender's card for those not anonymous.
struct SupportStore: Sendable {
    let logger: Logger

    /// The project's latest messages, newest first, but the named ones of senders `viewer`
    /// blocked. Anonymous ones stay whoever sent them: were they hidden too, blocking someone
    /// would tell which anonymous messages were theirs.
    func recent(projectID: UUID, viewer: UUID, limit: Int, on connection: PostgresConnection) async throws -> [StoredSupportMessage] {
        try await connection.query("""
            SELECT \(unescaped: StoredSupportMessage.columns)
            FROM support_messages m LEFT JOIN builders s ON s.id = m.sender_id AND NOT m.is_anonymous
            WHERE m.project_id = \(projectID) AND NOT \(blockedBy: viewer, author: "s.user_id")
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

    // MARK: reports

    /// A message as reports need it: its text, whether it is anonymous, its sender's account (nil
    /// once erased) and the project owner's.
    struct Reported: Sendable {
        var message: String
        var isAnonymous: Bool
        var senderUserId: UUID?
        var ownerUserId: UUID
    }

    func reported(_ messageID: UUID, on connection: PostgresConnection) async throws -> Reported? {
        try await connection.query("""
            SELECT m.message, m.is_anonymous, s.user_id, o.user_id
            FROM support_messages m JOIN projects p ON p.id = m.project_id JOIN builders o ON o.id = p.builder_id
            LEFT JOIN builders s ON s.id = m.sender_id
            WHERE m.id = \(messageID)
            """, logger: logger).read { c in
            Reported(message: try c.next(String.self), isAnonymous: try c.next(Bool.self), senderUserId: try c.next(UUID?.self), ownerUserId: try c.next(UUID.self))
        }.first
    }

    /// Deletes the message with the support action its sending logged, and takes back the karma
    /// that action earned (the level follows the total, `karma_level`). false when it was gone.
    func delete(_ messageID: UUID, on connection: PostgresConnection) async throws -> Bool {
        let deleted = try await connection.query("""
            WITH gone AS (
                DELETE FROM support_messages WHERE id = \(messageID) RETURNING id, project_id, sender_id
            ), action AS (
                DELETE FROM support_actions a USING gone JOIN builders s ON s.id = gone.sender_id
                WHERE a.user_id = s.user_id AND a.project_id = gone.project_id AND a.action_type = 'message'
                  AND a.metadata ->> 'message_id' = gone.id::text
                RETURNING a.user_id, a.points_earned
            ), taken AS (
                UPDATE karma k SET total_points = greatest(k.total_points - action.points_earned, 0),
                                   level = karma_level(greatest(k.total_points - action.points_earned, 0)), updated_at = now()
                FROM action WHERE k.user_id = action.user_id
                RETURNING k.user_id
            )
            SELECT count(*)::int8 FROM gone
            """, logger: logger).read { c in try c.next(Int.self) }.first ?? 0
        return deleted > 0
    }
}
