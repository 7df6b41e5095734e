import ColonyModels
import ColonyPlatform
import Foundation
import Logging
import PostgresNIO

/// `posts` with their reactions, poll options and votes, RSVPs and kept marks.
struct PostStore: Sendable {
    let logger: Logger

    static let columns = "p.id, p.circle_id, p.author_id, p.type::text, p.body, p.mood, p.category, p.urgency::text, p.location, p.latitude, p.longitude, p.starts_at, p.photo_version, p.expires_at, p.created_at, p.updated_at"

    /// A post as stored: the row, with the photo as its storage version.
    struct Stored: Sendable {
        var row: PostRow
        var photoVersion: Int64?
    }

    static func stored(_ row: PostgresRow) throws -> Stored {
        let c = try row.decode((UUID, UUID, UUID, String, String, String?, String?, String?, String?, Double?, Double?, Date?, Int64?, Date, Date, Date).self)
        return Stored(row: PostRow(id: c.0, circleId: c.1, authorId: c.2, type: PostType(rawValue: c.3) ?? .note, body: c.4, mood: c.5, category: c.6,
                                   urgency: c.7.flatMap(AskUrgency.init(rawValue:)), location: c.8, latitude: c.9, longitude: c.10, startsAt: c.11,
                                   photoUrl: nil, expiresAt: c.13, createdAt: c.14, updatedAt: c.15), photoVersion: c.12)
    }

    func insert(_ draft: CirclesRules.PostDraft, circleID: UUID, authorID: UUID, lifetime: TimeInterval, on connection: PostgresConnection) async throws -> Stored {
        let id = UUID.timeOrdered()
        let post = try await connection.query("""
            INSERT INTO posts AS p (id, circle_id, author_id, type, body, mood, category, urgency, location, latitude, longitude, starts_at, expires_at)
            VALUES (\(id), \(circleID), \(authorID), \(draft.type.rawValue)::post_type, \(draft.body), \(draft.mood), \(draft.category),
                    \(draft.urgency?.rawValue)::ask_urgency, \(draft.location), \(draft.latitude), \(draft.longitude), \(draft.startsAt),
                    now() + make_interval(secs => \(lifetime)))
            RETURNING \(unescaped: Self.columns)
            """, logger: logger).collect().map(Self.stored)[0]
        for (position, label) in draft.pollOptions.enumerated() {
            try await connection.query("INSERT INTO poll_options (id, post_id, label, position) VALUES (\(UUID.timeOrdered()), \(id), \(label), \(position))", logger: logger)
        }
        return post
    }

    /// A live post in a circle `userID` belongs to; nil otherwise (expired counts as gone).
    func visible(_ postID: UUID, to userID: UUID, lock: Bool = false, on connection: PostgresConnection) async throws -> Stored? {
        try await connection.query("""
            SELECT \(unescaped: Self.columns) FROM posts p
            WHERE p.id = \(postID) AND p.expires_at > now()
              AND EXISTS (SELECT 1 FROM circle_members m WHERE m.circle_id = p.circle_id AND m.user_id = \(userID))
            \(unescaped: lock ? "FOR UPDATE OF p" : "")
            """, logger: logger).collect().first.map(Self.stored)
    }

    func update(_ postID: UUID, _ draft: CirclesRules.PostDraft, on connection: PostgresConnection) async throws -> Stored {
        try await connection.query("""
            UPDATE posts p SET body = \(draft.body), mood = \(draft.mood), category = \(draft.category), urgency = \(draft.urgency?.rawValue)::ask_urgency,
                location = \(draft.location), latitude = \(draft.latitude), longitude = \(draft.longitude), starts_at = \(draft.startsAt), updated_at = now()
            WHERE id = \(postID) RETURNING \(unescaped: Self.columns)
            """, logger: logger).collect().map(Self.stored)[0]
    }

    func setPhoto(_ postID: UUID, version: Int64?, on connection: PostgresConnection) async throws -> Stored {
        try await connection.query("UPDATE posts p SET photo_version = \(version), updated_at = now() WHERE id = \(postID) RETURNING \(unescaped: Self.columns)", logger: logger)
            .collect().map(Self.stored)[0]
    }

    func delete(_ postID: UUID, on connection: PostgresConnection) async throws {
        try await connection.query("DELETE FROM posts WHERE id = \(postID)", logger: logger)
    }

    func pollOptionLabels(_ postID: UUID, on connection: PostgresConnection) async throws -> [String] {
        try await connection.query("SELECT label FROM poll_options WHERE post_id = \(postID) ORDER BY position", logger: logger).collect().map { try $0.decode(String.self) }
    }

    /// Deletes up to `limit` expired posts (their reactions, votes, RSVPs and kept marks
    /// cascade) and returns them, for their events and photos.
    func deleteExpired(limit: Int, on connection: PostgresConnection) async throws -> [Stored] {
        try await connection.query("""
            DELETE FROM posts p WHERE p.id IN (
                SELECT id FROM posts WHERE expires_at <= now() ORDER BY expires_at LIMIT \(limit) FOR UPDATE SKIP LOCKED)
            RETURNING \(unescaped: Self.columns)
            """, logger: logger).collect().map(Self.stored)
    }

    /// Posts an account wrote (for their photos when it is erased).
    func authored(by userID: UUID, on connection: PostgresConnection) async throws -> [Stored] {
        try await connection.query("SELECT \(unescaped: Self.columns) FROM posts p WHERE p.author_id = \(userID)", logger: logger).collect().map(Self.stored)
    }

    func inCircle(_ circleID: UUID, on connection: PostgresConnection) async throws -> [Stored] {
        try await connection.query("SELECT \(unescaped: Self.columns) FROM posts p WHERE p.circle_id = \(circleID)", logger: logger).collect().map(Self.stored)
    }

    // MARK: the feed, with everything a card shows, in one query

    struct Aggregates: Sendable {
        struct Reaction: Decodable { var emoji: String; var count: Int; var mine: Bool }
        struct Option: Decodable { var id: UUID; var label: String; var votes: Int; var mine: Bool }
        struct RSVPs: Decodable { var going: Int; var maybe: Int; var declined: Int; var mine: String? }
        var authorName: String
        var authorHandle: String
        var reactions: [Reaction]
        var options: [Option]?
        var rsvps: RSVPs?
        var kept: Bool
    }

    /// The viewer's id is inlined as a uuid literal (a parsed UUID: hex digits and dashes only),
    /// since it appears several times in the select list.
    static func aggregatesSQL(viewer id: UUID) -> String {
        let viewer = "'\(id.uuidString.lowercased())'::uuid"
        return """
        a.display_name, a.handle,
        (SELECT coalesce(json_agg(json_build_object('emoji', r.emoji, 'count', r.n, 'mine', r.mine) ORDER BY r.n DESC, r.emoji), '[]')::text
           FROM (SELECT emoji, count(*)::int AS n, bool_or(user_id = \(viewer)) AS mine FROM post_reactions WHERE post_id = p.id GROUP BY emoji) r),
        CASE WHEN p.type = 'poll' THEN
          (SELECT json_agg(json_build_object('id', o.id, 'label', o.label,
                  'votes', (SELECT count(*) FROM poll_votes v WHERE v.option_id = o.id),
                  'mine', EXISTS (SELECT 1 FROM poll_votes v WHERE v.option_id = o.id AND v.user_id = \(viewer))) ORDER BY o.position)::text
             FROM poll_options o WHERE o.post_id = p.id) END,
        CASE WHEN p.type = 'event' THEN
          (SELECT json_build_object('going', count(*) FILTER (WHERE status = 'going'), 'maybe', count(*) FILTER (WHERE status = 'maybe'),
                  'declined', count(*) FILTER (WHERE status = 'declined'), 'mine', max(status::text) FILTER (WHERE user_id = \(viewer)))::text
             FROM event_rsvps WHERE post_id = p.id) END,
        EXISTS (SELECT 1 FROM kept_posts k WHERE k.post_id = p.id AND k.user_id = \(viewer))
        """
    }

    static func aggregates(_ row: PostgresRow) throws -> Aggregates {
        let c = try row.decode((UUID, UUID, UUID, String, String, String?, String?, String?, String?, Double?, Double?, Date?, Int64?, Date, Date, Date,
                                String, String, String, String?, String?, Bool).self)
        let decoder = JSONDecoder()
        return Aggregates(authorName: c.16, authorHandle: c.17,
                          reactions: try decoder.decode([Aggregates.Reaction].self, from: Data(c.18.utf8)),
                          options: try c.19.map { try decoder.decode([Aggregates.Option].self, from: Data($0.utf8)) },
                          rsvps: try c.20.map { try decoder.decode(Aggregates.RSVPs.self, from: Data($0.utf8)) },
                          kept: c.21)
    }

    /// One page of a circle's live posts, newest first, with the viewer's marks. The viewer's
    /// membership is checked by the caller.
    func feed(_ circleID: UUID, viewer: UUID, before cursor: KeysetCursor?, limit: Int, on connection: PostgresConnection) async throws -> [(Stored, Aggregates, KeysetCursor)] {
        let rows = try await connection.query("""
            SELECT \(unescaped: Self.columns), \(unescaped: Self.aggregatesSQL(viewer: viewer)), \(unescaped: KeysetCursor.microsSQL("p.created_at"))
            FROM posts p JOIN profiles a ON a.user_id = p.author_id
            WHERE p.circle_id = \(circleID) AND p.expires_at > now()
              AND (\(cursor?.micros)::int8 IS NULL OR (p.created_at, p.id) < ('epoch'::timestamptz + \(cursor?.micros ?? 0) * interval '1 microsecond', \(cursor?.id ?? UUID())))
            ORDER BY p.created_at DESC, p.id DESC
            LIMIT \(limit)
            """, logger: logger).collect()
        return try rows.map { row in
            let micros = try row.decode((UUID, UUID, UUID, String, String, String?, String?, String?, String?, Double?, Double?, Date?, Int64?, Date, Date, Date,
                                         String, String, String, String?, String?, Bool, Int64).self).22
            let stored = try Self.stored(row)
            return (stored, try Self.aggregates(row), KeysetCursor(micros: micros, id: stored.row.id))
        }
    }

    /// One post with the viewer's aggregates.
    func detail(_ postID: UUID, viewer: UUID, on connection: PostgresConnection) async throws -> (Stored, Aggregates)? {
        try await connection.query("""
            SELECT \(unescaped: Self.columns), \(unescaped: Self.aggregatesSQL(viewer: viewer))
            FROM posts p JOIN profiles a ON a.user_id = p.author_id WHERE p.id = \(postID)
            """, logger: logger).collect().first.map { (try Self.stored($0), try Self.aggregates($0)) }
    }

    /// My kept posts that are still live, in circles I am still in, most recently kept first.
    func kept(by viewer: UUID, on connection: PostgresConnection) async throws -> [(Stored, Aggregates)] {
        try await connection.query("""
            SELECT \(unescaped: Self.columns), \(unescaped: Self.aggregatesSQL(viewer: viewer))
            FROM kept_posts k JOIN posts p ON p.id = k.post_id JOIN profiles a ON a.user_id = p.author_id
            WHERE k.user_id = \(viewer) AND p.expires_at > now()
              AND EXISTS (SELECT 1 FROM circle_members m WHERE m.circle_id = p.circle_id AND m.user_id = \(viewer))
            ORDER BY k.kept_at DESC, p.id
            """, logger: logger).collect().map { (try Self.stored($0), try Self.aggregates($0)) }
    }

    // MARK: marks (set and unset: a retried request changes nothing)

    static let reactionColumns = "post_id, user_id, emoji, created_at"
    static let voteColumns = "option_id, user_id, post_id, created_at"
    static let rsvpColumns = "post_id, user_id, status::text, created_at"

    static func reaction(_ row: PostgresRow) throws -> PostReactionRow {
        let (post, user, emoji, at) = try row.decode((UUID, UUID, String, Date).self)
        return PostReactionRow(postId: post, userId: user, emoji: emoji, createdAt: at)
    }

    static func vote(_ row: PostgresRow) throws -> PollVoteRow {
        let (option, user, post, at) = try row.decode((UUID, UUID, UUID, Date).self)
        return PollVoteRow(optionId: option, userId: user, postId: post, createdAt: at)
    }

    static func rsvp(_ row: PostgresRow) throws -> EventRSVPRow {
        let (post, user, status, at) = try row.decode((UUID, UUID, String, Date).self)
        return EventRSVPRow(postId: post, userId: user, status: RSVPStatus(rawValue: status) ?? .going, createdAt: at)
    }

    /// Adds the reaction; the new row, nil when it was there already.
    func addReaction(_ postID: UUID, userID: UUID, emoji: String, on connection: PostgresConnection) async throws -> PostReactionRow? {
        try await connection.query("""
            INSERT INTO post_reactions (post_id, user_id, emoji) VALUES (\(postID), \(userID), \(emoji)) ON CONFLICT DO NOTHING
            RETURNING \(unescaped: Self.reactionColumns)
            """, logger: logger).collect().first.map(Self.reaction)
    }

    /// Removes the reaction; the removed row, nil when there was none.
    func removeReaction(_ postID: UUID, userID: UUID, emoji: String, on connection: PostgresConnection) async throws -> PostReactionRow? {
        try await connection.query("""
            DELETE FROM post_reactions WHERE post_id = \(postID) AND user_id = \(userID) AND emoji = \(emoji) RETURNING \(unescaped: Self.reactionColumns)
            """, logger: logger).collect().first.map(Self.reaction)
    }

    func optionExists(_ optionID: UUID, postID: UUID, on connection: PostgresConnection) async throws -> Bool {
        try await !connection.query("SELECT 1 FROM poll_options WHERE id = \(optionID) AND post_id = \(postID)", logger: logger).collect().isEmpty
    }

    /// The user's vote in the poll, if any.
    func vote(_ postID: UUID, userID: UUID, on connection: PostgresConnection) async throws -> PollVoteRow? {
        try await connection.query("SELECT \(unescaped: Self.voteColumns) FROM poll_votes WHERE post_id = \(postID) AND user_id = \(userID)", logger: logger)
            .collect().first.map(Self.vote)
    }

    /// Puts the user's one vote on `optionID` (cast or moved); the row now.
    func setVote(_ postID: UUID, optionID: UUID, userID: UUID, on connection: PostgresConnection) async throws -> PollVoteRow {
        try await connection.query("""
            INSERT INTO poll_votes (option_id, user_id, post_id) VALUES (\(optionID), \(userID), \(postID))
            ON CONFLICT (post_id, user_id) DO UPDATE SET option_id = EXCLUDED.option_id, created_at = now()
            RETURNING \(unescaped: Self.voteColumns)
            """, logger: logger).collect().map(Self.vote)[0]
    }

    /// Withdraws the user's vote; the removed row, nil when there was none.
    func removeVote(_ postID: UUID, userID: UUID, on connection: PostgresConnection) async throws -> PollVoteRow? {
        try await connection.query("DELETE FROM poll_votes WHERE post_id = \(postID) AND user_id = \(userID) RETURNING \(unescaped: Self.voteColumns)", logger: logger)
            .collect().first.map(Self.vote)
    }

    func rsvp(_ postID: UUID, userID: UUID, on connection: PostgresConnection) async throws -> EventRSVPRow? {
        try await connection.query("SELECT \(unescaped: Self.rsvpColumns) FROM event_rsvps WHERE post_id = \(postID) AND user_id = \(userID)", logger: logger)
            .collect().first.map(Self.rsvp)
    }

    /// Sets or changes the user's RSVP; the row now.
    func setRSVP(_ postID: UUID, userID: UUID, status: RSVPStatus, on connection: PostgresConnection) async throws -> EventRSVPRow {
        try await connection.query("""
            INSERT INTO event_rsvps (post_id, user_id, status) VALUES (\(postID), \(userID), \(status.rawValue)::rsvp_status)
            ON CONFLICT (post_id, user_id) DO UPDATE SET status = EXCLUDED.status, created_at = now()
            RETURNING \(unescaped: Self.rsvpColumns)
            """, logger: logger).collect().map(Self.rsvp)[0]
    }

    func removeRSVP(_ postID: UUID, userID: UUID, on connection: PostgresConnection) async throws -> EventRSVPRow? {
        try await connection.query("DELETE FROM event_rsvps WHERE post_id = \(postID) AND user_id = \(userID) RETURNING \(unescaped: Self.rsvpColumns)", logger: logger)
            .collect().first.map(Self.rsvp)
    }

    // MARK: what goes with a member or a circle

    /// Live posts in the circle (by `author`, when given).
    func live(inCircle circleID: UUID, author: UUID? = nil, on connection: PostgresConnection) async throws -> [Stored] {
        try await connection.query("""
            SELECT \(unescaped: Self.columns) FROM posts p
            WHERE p.circle_id = \(circleID) AND p.expires_at > now() AND (\(author)::uuid IS NULL OR p.author_id = \(author))
            ORDER BY p.created_at, p.id
            """, logger: logger).collect().map(Self.stored)
    }

    /// The user's reactions, votes and RSVPs on others' live posts in the circle.
    func marks(by userID: UUID, inCircle circleID: UUID, on connection: PostgresConnection) async throws -> ([PostReactionRow], [PollVoteRow], [EventRSVPRow]) {
        let onOthers = "JOIN posts p ON p.id = x.post_id WHERE p.circle_id = $1 AND x.user_id = $2 AND p.author_id <> $2 AND p.expires_at > now()"
        func select<Row>(_ columns: String, _ table: String, _ decode: (PostgresRow) throws -> Row) async throws -> [Row] {
            let qualified = columns.split(separator: ", ").map { "x.\($0)" }.joined(separator: ", ")
            var bindings = PostgresBindings()
            bindings.append(circleID)
            bindings.append(userID)
            return try await connection.query(PostgresQuery(unsafeSQL: "SELECT \(qualified) FROM \(table) x \(onOthers) ORDER BY x.created_at", binds: bindings), logger: logger)
                .collect().map(decode)
        }
        return (try await select(Self.reactionColumns, "post_reactions", Self.reaction),
                try await select(Self.voteColumns, "poll_votes", Self.vote),
                try await select(Self.rsvpColumns, "event_rsvps", Self.rsvp))
    }

    /// The post's RSVPs by status.
    func rsvpCounts(_ postID: UUID, on connection: PostgresConnection) async throws -> RSVPCounts {
        let rows = try await connection.query("""
            SELECT count(*) FILTER (WHERE status = 'going')::int, count(*) FILTER (WHERE status = 'maybe')::int,
                   count(*) FILTER (WHERE status = 'declined')::int
            FROM event_rsvps WHERE post_id = \(postID)
            """, logger: logger).collect()
        guard let (going, maybe, declined) = try rows.first?.decode((Int, Int, Int).self) else { return RSVPCounts(going: 0, maybe: 0, declined: 0) }
        return RSVPCounts(going: going, maybe: maybe, declined: declined)
    }

    func keep(_ postID: UUID, userID: UUID, on connection: PostgresConnection) async throws {
        try await connection.query("INSERT INTO kept_posts (user_id, post_id) VALUES (\(userID), \(postID)) ON CONFLICT DO NOTHING", logger: logger)
    }

    func unkeep(_ postID: UUID, userID: UUID, on connection: PostgresConnection) async throws {
        try await connection.query("DELETE FROM kept_posts WHERE user_id = \(userID) AND post_id = \(postID)", logger: logger)
    }
}
