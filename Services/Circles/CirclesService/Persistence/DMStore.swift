import ColonyModels
import ColonyPlatform
import Foundation
import Logging
import PostgresNIO

/// `dm_threads`, `dm_messages` and `dm_reactions`.
struct DMStore: Sendable {
    let logger: Logger

    struct Thread: Sendable {
        var id: UUID
        var circleId: UUID
        var userA: UUID
        var userB: UUID
        var lastMessageAt: Date?
        var notifyA: Bool
        var notifyB: Bool

        func other(than userID: UUID) -> UUID { userA == userID ? userB : userA }
        func notify(_ userID: UUID) -> Bool { userA == userID ? notifyA : notifyB }
        var participants: [UUID] { [userA, userB] }
        var row: DMThreadRow { DMThreadRow(id: id, circleId: circleId, userA: userA, userB: userB, lastMessageAt: lastMessageAt, notifyA: notifyA, notifyB: notifyB) }
    }

    static let threadColumns = "t.id, t.circle_id, t.user_a, t.user_b, t.last_message_at, t.notify_a, t.notify_b"

    static func thread(_ row: PostgresRow) throws -> Thread {
        var cells = RowCells(row)
        return try thread(&cells)
    }

    /// The thread's columns (`threadColumns`), read in order from where `cells` stands.
    static func thread(_ cells: inout RowCells) throws -> Thread {
        try Thread(id: cells.next(UUID.self), circleId: cells.next(UUID.self), userA: cells.next(UUID.self), userB: cells.next(UUID.self),
                   lastMessageAt: cells.next(Date?.self), notifyA: cells.next(Bool.self), notifyB: cells.next(Bool.self))
    }

    static let messageColumns = "m.id, m.thread_id, m.sender_id, m.body, m.reply_to_id, m.created_at, m.read_at"

    static func message(_ row: PostgresRow) throws -> DMMessageRow {
        try row.read { c in
            try DMMessageRow(id: c.next(UUID.self), threadId: c.next(UUID.self), senderId: c.next(UUID.self), body: c.next(String.self),
                             replyToId: c.next(UUID?.self), createdAt: c.next(Date.self), readAt: c.next(Date?.self))
        }
    }

    /// The thread for the pair in the circle, made when missing.
    func open(circleID: UUID, _ first: UUID, _ second: UUID, on connection: PostgresConnection) async throws -> Thread {
        let (a, b) = first.uuidString.lowercased() < second.uuidString.lowercased() ? (first, second) : (second, first)
        try await connection.query("""
            INSERT INTO dm_threads (id, circle_id, user_a, user_b) VALUES (\(UUID.timeOrdered()), \(circleID), \(a), \(b)) ON CONFLICT DO NOTHING
            """, logger: logger)
        return try await connection.query("""
            SELECT \(unescaped: Self.threadColumns) FROM dm_threads t WHERE t.circle_id = \(circleID) AND t.user_a = \(a) AND t.user_b = \(b)
            """, logger: logger).collect().map(Self.thread)[0]
    }

    /// A thread I am a party of, in a circle we are both still in; nil otherwise.
    func thread(_ id: UUID, for userID: UUID, lock: Bool = false, on connection: PostgresConnection) async throws -> Thread? {
        try await connection.query("""
            SELECT \(unescaped: Self.threadColumns) FROM dm_threads t
            WHERE t.id = \(id) AND (t.user_a = \(userID) OR t.user_b = \(userID))
              AND (SELECT count(*) FROM circle_members m WHERE m.circle_id = t.circle_id AND m.user_id IN (t.user_a, t.user_b)) = 2
            \(unescaped: lock ? "FOR UPDATE OF t" : "")
            """, logger: logger).collect().first.map(Self.thread)
    }

    /// My threads (with both parties still in the circle, and not with someone I blocked), latest
    /// activity first, each with its last message and my unread count.
    func threads(for userID: UUID, on connection: PostgresConnection) async throws -> [(Thread, DMMessageRow?, Int)] {
        try await connection.query("""
            SELECT \(unescaped: Self.threadColumns), l.id, l.thread_id, l.sender_id, l.body, l.reply_to_id, l.created_at, l.read_at,
                   (SELECT count(*)::int FROM dm_messages u WHERE u.thread_id = t.id AND u.sender_id <> \(userID) AND u.read_at IS NULL)
            FROM dm_threads t
            LEFT JOIN LATERAL (SELECT * FROM dm_messages m WHERE m.thread_id = t.id ORDER BY m.created_at DESC, m.id DESC LIMIT 1) l ON true
            WHERE (t.user_a = \(userID) OR t.user_b = \(userID))
              AND (SELECT count(*) FROM circle_members m WHERE m.circle_id = t.circle_id AND m.user_id IN (t.user_a, t.user_b)) = 2
              AND NOT EXISTS (SELECT 1 FROM user_blocks b WHERE b.blocker_id = \(userID) AND b.blocked_id IN (t.user_a, t.user_b))
            ORDER BY coalesce(t.last_message_at, t.created_at) DESC, t.id
            """, logger: logger).read { c in
            let thread = try Self.thread(&c)
            // The last message's columns are all NULL when the thread has none yet.
            var last: DMMessageRow?
            if let id = try c.next(UUID?.self) {
                last = try DMMessageRow(id: id, threadId: c.next(UUID.self), senderId: c.next(UUID.self), body: c.next(String.self),
                                        replyToId: c.next(UUID?.self), createdAt: c.next(Date.self), readAt: c.next(Date?.self))
            } else {
                for _ in 0..<6 { c.skip() }
            }
            return (thread, last, try c.next(Int.self))
        }
    }

    func send(_ thread: Thread, senderID: UUID, body: String, replyTo: UUID?, on connection: PostgresConnection) async throws -> DMMessageRow {
        if let replyTo, try await connection.query("SELECT 1 FROM dm_messages WHERE id = \(replyTo) AND thread_id = \(thread.id)", logger: logger).collect().isEmpty {
            throw CirclesErrors.replyNotFound
        }
        let message = try await connection.query("""
            INSERT INTO dm_messages AS m (id, thread_id, sender_id, body, reply_to_id) VALUES (\(UUID.timeOrdered()), \(thread.id), \(senderID), \(body), \(replyTo))
            RETURNING \(unescaped: Self.messageColumns)
            """, logger: logger).collect().map(Self.message)[0]
        try await connection.query("UPDATE dm_threads SET last_message_at = \(message.createdAt) WHERE id = \(thread.id)", logger: logger)
        return message
    }

    /// Marks the other party's unread messages read (none when the reader blocked them: what the
    /// reader is not shown stays unread); their rows now, oldest first.
    func markRead(_ thread: Thread, readerID: UUID, on connection: PostgresConnection) async throws -> [DMMessageRow] {
        try await connection.query("""
            UPDATE dm_messages AS m SET read_at = now() WHERE m.thread_id = \(thread.id) AND m.sender_id <> \(readerID) AND m.read_at IS NULL
              AND NOT EXISTS (SELECT 1 FROM user_blocks b WHERE b.blocker_id = \(readerID) AND b.blocked_id = m.sender_id)
            RETURNING \(unescaped: Self.messageColumns)
            """, logger: logger).collect().map(Self.message).sorted { ($0.createdAt, $0.id.uuidString) < ($1.createdAt, $1.id.uuidString) }
    }

    /// A page of the thread's messages as `viewer` sees them: without the messages and reactions
    /// of a user they blocked.
    func page(_ threadID: UUID, viewer: UUID, before cursor: KeysetCursor?, limit: Int, on connection: PostgresConnection) async throws -> [(DMMessageView, KeysetCursor)] {
        try await connection.query("""
            SELECT \(unescaped: Self.messageColumns), \(unescaped: KeysetCursor.microsSQL("m.created_at")),
                   (SELECT coalesce(json_agg(json_build_object('emoji', r.emoji, 'user_id', r.user_id) ORDER BY r.created_at), '[]')::text FROM dm_reactions r
                    WHERE r.message_id = m.id AND NOT EXISTS (SELECT 1 FROM user_blocks b WHERE b.blocker_id = \(viewer) AND b.blocked_id = r.user_id))
            FROM dm_messages m WHERE m.thread_id = \(threadID)
              AND NOT EXISTS (SELECT 1 FROM user_blocks b WHERE b.blocker_id = \(viewer) AND b.blocked_id = m.sender_id)
              AND (\(cursor?.micros)::int8 IS NULL OR (m.created_at, m.id) < ('epoch'::timestamptz + \(cursor?.micros ?? 0) * interval '1 microsecond', \(cursor?.id ?? UUID())))
            ORDER BY m.created_at DESC, m.id DESC LIMIT \(limit)
            """, logger: logger).read { c in
            let id = try c.next(UUID.self)
            let message = try Components.Schemas.Message(id: id.lowercased, threadId: c.next(UUID.self).lowercased, senderId: c.next(UUID.self).lowercased,
                                                         body: c.next(String.self), replyToId: c.next(UUID?.self)?.lowercased, createdAt: c.next(Date.self),
                                                         readAt: c.next(Date?.self))
            let micros = try c.next(Int64.self), reactionsJSON = try c.next(String.self)
            struct Reaction: Decodable { var emoji: String; var user_id: UUID }
            let reactions = try JSONDecoder().decode([Reaction].self, from: Data(reactionsJSON.utf8)).map { Components.Schemas.MessageReaction(emoji: $0.emoji, userId: $0.user_id.lowercased) }
            return (DMMessageView(value1: message, value2: .init(reactions: reactions)), KeysetCursor(micros: micros, id: id))
        }
    }

    func message(_ id: UUID, in threadID: UUID, on connection: PostgresConnection) async throws -> DMMessageRow? {
        try await connection.query("SELECT \(unescaped: Self.messageColumns) FROM dm_messages m WHERE m.id = \(id) AND m.thread_id = \(threadID)", logger: logger)
            .collect().first.map(Self.message)
    }

    /// A message of a thread `userID` is a party of, in a circle both parties are still in (what
    /// the thread's page shows them), with its thread; nil otherwise.
    func message(_ id: UUID, visibleTo userID: UUID, on connection: PostgresConnection) async throws -> (Thread, DMMessageRow)? {
        try await connection.query("""
            SELECT \(unescaped: Self.threadColumns), \(unescaped: Self.messageColumns)
            FROM dm_messages m JOIN dm_threads t ON t.id = m.thread_id
            WHERE m.id = \(id) AND (t.user_a = \(userID) OR t.user_b = \(userID))
              AND (SELECT count(*) FROM circle_members c WHERE c.circle_id = t.circle_id AND c.user_id IN (t.user_a, t.user_b)) = 2
            """, logger: logger).read(Self.threadMessage).first
    }

    /// A message with its thread, whoever asks (a moderator); nil once deleted. `lock` locks the
    /// thread, as sending does.
    func message(_ id: UUID, lock: Bool = false, on connection: PostgresConnection) async throws -> (Thread, DMMessageRow)? {
        try await connection.query("""
            SELECT \(unescaped: Self.threadColumns), \(unescaped: Self.messageColumns)
            FROM dm_messages m JOIN dm_threads t ON t.id = m.thread_id WHERE m.id = \(id)
            \(unescaped: lock ? "FOR UPDATE OF t" : "")
            """, logger: logger).read(Self.threadMessage).first
    }

    static func threadMessage(_ c: inout RowCells) throws -> (Thread, DMMessageRow) {
        let thread = try Self.thread(&c)
        return (thread, try DMMessageRow(id: c.next(UUID.self), threadId: c.next(UUID.self), senderId: c.next(UUID.self), body: c.next(String.self),
                                         replyToId: c.next(UUID?.self), createdAt: c.next(Date.self), readAt: c.next(Date?.self)))
    }

    /// Deletes a message: its reactions go with it, replies to it stay (their `reply_to_id`
    /// null), and the thread's `last_message_at` is its latest remaining message's. The deleted
    /// row; nil when it was gone.
    func deleteMessage(_ id: UUID, in thread: Thread, on connection: PostgresConnection) async throws -> DMMessageRow? {
        guard let deleted = try await connection.query("""
            DELETE FROM dm_messages AS m WHERE m.id = \(id) AND m.thread_id = \(thread.id) RETURNING \(unescaped: Self.messageColumns)
            """, logger: logger).collect().first.map(Self.message) else { return nil }
        try await connection.query("""
            UPDATE dm_threads SET last_message_at = (SELECT max(created_at) FROM dm_messages WHERE thread_id = \(thread.id)) WHERE id = \(thread.id)
            """, logger: logger)
        return deleted
    }

    static func reaction(_ row: PostgresRow) throws -> DMReactionRow {
        try row.read { c in try DMReactionRow(messageId: c.next(UUID.self), userId: c.next(UUID.self), emoji: c.next(String.self), createdAt: c.next(Date.self)) }
    }

    /// Adds the reaction; the new row, nil when it was there already.
    func addReaction(_ messageID: UUID, userID: UUID, emoji: String, on connection: PostgresConnection) async throws -> DMReactionRow? {
        try await connection.query("""
            INSERT INTO dm_reactions (message_id, user_id, emoji) VALUES (\(messageID), \(userID), \(emoji)) ON CONFLICT DO NOTHING
            RETURNING message_id, user_id, emoji, created_at
            """, logger: logger).collect().first.map(Self.reaction)
    }

    /// Removes the reaction; the removed row, nil when there was none.
    func removeReaction(_ messageID: UUID, userID: UUID, emoji: String, on connection: PostgresConnection) async throws -> DMReactionRow? {
        try await connection.query("""
            DELETE FROM dm_reactions WHERE message_id = \(messageID) AND user_id = \(userID) AND emoji = \(emoji) RETURNING message_id, user_id, emoji, created_at
            """, logger: logger).collect().first.map(Self.reaction)
    }

    /// Threads in the circle (those `userID` is a party of, when given).
    func threads(inCircle circleID: UUID, involving userID: UUID? = nil, on connection: PostgresConnection) async throws -> [Thread] {
        try await connection.query("""
            SELECT \(unescaped: Self.threadColumns) FROM dm_threads t
            WHERE t.circle_id = \(circleID) AND (\(userID)::uuid IS NULL OR \(userID) IN (t.user_a, t.user_b)) ORDER BY t.created_at, t.id
            """, logger: logger).collect().map(Self.thread)
    }

    func deleteThreads(_ ids: [UUID], on connection: PostgresConnection) async throws {
        guard !ids.isEmpty else { return }
        try await connection.query("DELETE FROM dm_threads WHERE id = ANY(\(ids))", logger: logger)
    }

    func setNotify(_ thread: Thread, userID: UUID, notify: Bool, on connection: PostgresConnection) async throws {
        if thread.userA == userID {
            try await connection.query("UPDATE dm_threads SET notify_a = \(notify) WHERE id = \(thread.id)", logger: logger)
        } else {
            try await connection.query("UPDATE dm_threads SET notify_b = \(notify) WHERE id = \(thread.id)", logger: logger)
        }
    }
}
