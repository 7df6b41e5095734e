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
        var cells = RowCells(row)
        return try stored(&cells)
    }

    /// The post's columns (`columns`), read in order from where `cells` stands.
    static func stored(_ cells: inout some ColumnReader) throws -> Stored {
        let id = try cells.uuid(), circleId = try cells.uuid(), authorId = try cells.uuid()
        let type = PostType(rawValue: try cells.text()) ?? .note
        let body = try cells.text(), mood = try cells.optionalText(), category = try cells.optionalText()
        let urgency = try cells.optionalText().flatMap(AskUrgency.init(rawValue:))
        let location = try cells.optionalText(), latitude = try cells.optionalDouble(), longitude = try cells.optionalDouble()
        let startsAt = try cells.optionalDate(), photoVersion = try cells.optionalInt64()
        let expiresAt = try cells.date(), createdAt = try cells.date(), updatedAt = try cells.date()
        return Stored(row: PostRow(id: id, circleId: circleId, authorId: authorId, type: type, body: body, mood: mood, category: category,
                                   urgency: urgency, location: location, latitude: latitude, longitude: longitude, startsAt: startsAt,
                                   photoUrl: nil, expiresAt: expiresAt, createdAt: createdAt, updatedAt: updatedAt), photoVersion: photoVersion)
    }

    /// A card: the post and the viewer's aggregates (`columns`, then `aggregatesSQL`).
    static func card(_ row: PostgresRow) throws -> (Stored, Aggregates) {
        var cells = RowCells(row)
        return (try stored(&cells), try aggregates(&cells))
    }

    /// Inserts a post by a member of the circle, with its poll options; nil, and nothing written,
    /// when `authorID` is not a member (checked in the insert itself).
    func insert(_ draft: CirclesRules.PostDraft, circleID: UUID, authorID: UUID, lifetime: TimeInterval, on connection: PostgresConnection) async throws -> Stored? {
        let id = UUID.timeOrdered()
        var inserted: Stored?
        for try await post in try await connection.execute(InsertPost(id: id, circleID: circleID, authorID: authorID, draft: draft, lifetime: lifetime), logger: logger) {
            inserted = post
        }
        guard let post = inserted else { return nil }
        for (position, label) in draft.pollOptions.enumerated() {
            try await connection.query("INSERT INTO poll_options (id, post_id, label, position) VALUES (\(UUID.timeOrdered()), \(id), \(label), \(position))", logger: logger)
        }
        return post
    }

    /// A live post in a circle `userID` belongs to; nil otherwise (expired counts as gone).
    /// `hidingBlocked`: nil too when `userID` blocked its author (what the app's reads show;
    /// a report may still name such a post).
    func visible(_ postID: UUID, to userID: UUID, hidingBlocked: Bool = false, lock: Bool = false, on connection: PostgresConnection) async throws -> Stored? {
        try await connection.query("""
            SELECT \(unescaped: Self.columns) FROM posts p
            WHERE p.id = \(postID) AND p.expires_at > now()
              AND EXISTS (SELECT 1 FROM circle_members m WHERE m.circle_id = p.circle_id AND m.user_id = \(userID))
              AND NOT (\(hidingBlocked) AND EXISTS (SELECT 1 FROM user_blocks b WHERE b.blocker_id = \(userID) AND b.blocked_id = p.author_id))
            \(unescaped: lock ? "FOR UPDATE OF p" : "")
            """, logger: logger).collect().first.map(Self.stored)
    }

    /// A live post whoever asks (a moderator); nil once deleted or expired.
    func live(_ postID: UUID, lock: Bool = false, on connection: PostgresConnection) async throws -> Stored? {
        try await connection.query("""
            SELECT \(unescaped: Self.columns) FROM posts p WHERE p.id = \(postID) AND p.expires_at > now()
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
        try await connection.query("SELECT label FROM poll_options WHERE post_id = \(postID) ORDER BY position", logger: logger).values(String.self)
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
        struct Reaction: Sendable { var emoji: String; var count: Int; var mine: Bool }
        struct Option: Sendable { var id: UUID; var label: String; var votes: Int; var mine: Bool }
        struct RSVPs: Sendable { var going: Int; var maybe: Int; var declined: Int; var mine: String? }
        var authorName: String
        var authorHandle: String
        var reactions: [Reaction]
        var options: [Option]?
        var rsvps: RSVPs?
        var kept: Bool
    }

    /// The viewer's id is inlined as a uuid literal (a parsed UUID: hex digits and dashes only),
    /// since it appears several times in the select list; prepared statements pass a parameter.
    static func aggregatesSQL(viewer id: UUID) -> String {
        aggregatesSQL(viewer: "'\(id.uuidString.lowercased())'::uuid")
    }

    /// A card's aggregates as text whose items lead with their numbers and end with their free
    /// text (`count:mine:emoji`, `votes:mine:id:label`; RSVPs `going:maybe:declined:mine`): read
    /// with a few splits (`AggregateText`), where JSON objects took Foundation's decoder per card,
    /// about a tenth of a feed page's CPU in the service. A list is its items one after another,
    /// each after its length in bytes and a colon (`7:2:0:abc`): one text, which a feed page can
    /// aggregate into a column (`MemberPage`; an array of arrays must be rectangular). The items
    /// are joined in the order their subquery sorts them, as `MemberPage` aggregates its page: an
    /// `ORDER BY` inside `string_agg` sorted again per card, 0.06 ms more of Postgres a page.
    static func aggregatesSQL(viewer: String) -> String {
        """
        a.display_name, a.handle,
        (SELECT coalesce(string_agg(octet_length(r.item) || ':' || r.item, ''), '')
         FROM (SELECT count(*) || ':' || bool_or(user_id = \(viewer))::int || ':' || emoji AS item
               FROM post_reactions WHERE post_id = p.id GROUP BY emoji ORDER BY count(*) DESC, emoji) r) AS reactions,
        CASE WHEN p.type = 'poll' THEN
          (SELECT coalesce(string_agg(octet_length(l.item) || ':' || l.item, ''), '')
           FROM (SELECT (SELECT count(*) FROM poll_votes v WHERE v.option_id = o.id) || ':'
                        || (EXISTS (SELECT 1 FROM poll_votes v WHERE v.option_id = o.id AND v.user_id = \(viewer)))::int || ':' || o.id || ':' || o.label AS item
                 FROM poll_options o WHERE o.post_id = p.id ORDER BY o.position) l) END AS options,
        CASE WHEN p.type = 'event' THEN
          (SELECT count(*) FILTER (WHERE status = 'going') || ':' || count(*) FILTER (WHERE status = 'maybe') || ':'
                  || count(*) FILTER (WHERE status = 'declined') || ':' || coalesce(max(status::text) FILTER (WHERE user_id = \(viewer)), '')
             FROM event_rsvps WHERE post_id = p.id) END AS rsvps,
        EXISTS (SELECT 1 FROM kept_posts k WHERE k.post_id = p.id AND k.user_id = \(viewer)) AS kept
        """
    }

    /// The aggregates' columns, read in order after the post's.
    static func aggregates(_ cells: inout some ColumnReader) throws -> Aggregates {
        let authorName = try cells.text(), authorHandle = try cells.text()
        let reactions = try AggregateText.list(cells.text()), options = try cells.optionalText().map(AggregateText.list), rsvps = try cells.optionalText()
        let kept = try cells.bool()
        return Aggregates(authorName: authorName, authorHandle: authorHandle,
                          reactions: try reactions.map(AggregateText.reaction),
                          options: try options.map { try $0.map(AggregateText.option) },
                          rsvps: try rsvps.map(AggregateText.rsvps),
                          kept: kept)
    }

    /// One page of a circle's live posts, newest first, but those by authors the viewer blocked,
    /// with the viewer's marks and each card's cursor; nil when the viewer is not a member (checked by the page's own statement,
    /// `MemberPage`).
    func feed(_ circleID: UUID, viewer: UUID, before cursor: KeysetCursor?, limit: Int, on connection: PostgresConnection) async throws
        -> [(Stored, Aggregates, KeysetCursor)]? {
        if let cursor {
            return try await MemberPage.rows(FeedPageStatement<FeedSQL.Before>(scope: circleID, reader: viewer, cursor: cursor, limit: limit), newestFirst: true,
                                             on: connection, logger: logger)
        }
        return try await MemberPage.rows(FeedPageStatement<FeedSQL.Latest>(scope: circleID, reader: viewer, cursor: nil, limit: limit), newestFirst: true,
                                         on: connection, logger: logger)
    }

    /// One post with the viewer's aggregates.
    func detail(_ postID: UUID, viewer: UUID, on connection: PostgresConnection) async throws -> (Stored, Aggregates)? {
        for try await card in try await connection.execute(PostCard(postID: postID, viewer: viewer), logger: logger) { return card }
        return nil
    }

    /// My kept posts that are still live, in circles I am still in, by authors I have not
    /// blocked, most recently kept first.
    func kept(by viewer: UUID, on connection: PostgresConnection) async throws -> [(Stored, Aggregates)] {
        try await connection.query("""
            SELECT \(unescaped: Self.columns), \(unescaped: Self.aggregatesSQL(viewer: viewer))
            FROM kept_posts k JOIN posts p ON p.id = k.post_id JOIN profiles a ON a.user_id = p.author_id
            WHERE k.user_id = \(viewer) AND p.expires_at > now()
              AND EXISTS (SELECT 1 FROM circle_members m WHERE m.circle_id = p.circle_id AND m.user_id = \(viewer))
              AND NOT EXISTS (SELECT 1 FROM user_blocks b WHERE b.blocker_id = \(viewer) AND b.blocked_id = p.author_id)
            ORDER BY k.kept_at DESC, p.id
            """, logger: logger).collect().map(Self.card)
    }

    // MARK: marks (set and unset: a retried request changes nothing)

    static let reactionColumns = "post_id, user_id, emoji, created_at"
    static let voteColumns = "option_id, user_id, post_id, created_at"
    static let rsvpColumns = "post_id, user_id, status::text, created_at"

    static func reaction(_ row: PostgresRow) throws -> PostReactionRow {
        try row.read { c in try PostReactionRow(postId: c.next(UUID.self), userId: c.next(UUID.self), emoji: c.next(String.self), createdAt: c.next(Date.self)) }
    }

    static func vote(_ row: PostgresRow) throws -> PollVoteRow {
        try row.read { c in try PollVoteRow(optionId: c.next(UUID.self), userId: c.next(UUID.self), postId: c.next(UUID.self), createdAt: c.next(Date.self)) }
    }

    static func rsvp(_ row: PostgresRow) throws -> EventRSVPRow {
        try row.read { c in
            try EventRSVPRow(postId: c.next(UUID.self), userId: c.next(UUID.self), status: RSVPStatus(rawValue: c.next(String.self)) ?? .going, createdAt: c.next(Date.self))
        }
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
        let counts = try await connection.query("""
            SELECT count(*) FILTER (WHERE status = 'going')::int, count(*) FILTER (WHERE status = 'maybe')::int,
                   count(*) FILTER (WHERE status = 'declined')::int
            FROM event_rsvps WHERE post_id = \(postID)
            """, logger: logger).read { c in try (c.next(Int.self), c.next(Int.self), c.next(Int.self)) }
        guard let (going, maybe, declined) = counts.first else { return RSVPCounts(going: 0, maybe: 0, declined: 0) }
        return RSVPCounts(going: going, maybe: maybe, declined: declined)
    }

    func keep(_ postID: UUID, userID: UUID, on connection: PostgresConnection) async throws {
        try await connection.query("INSERT INTO kept_posts (user_id, post_id) VALUES (\(userID), \(postID)) ON CONFLICT DO NOTHING", logger: logger)
    }

    func unkeep(_ postID: UUID, userID: UUID, on connection: PostgresConnection) async throws {
        try await connection.query("DELETE FROM kept_posts WHERE user_id = \(userID) AND post_id = \(postID)", logger: logger)
    }
}

/// The statements of a circle's feed page, newest first (`MemberPage`). Public so the benchmark
/// runs exactly this SQL under pgbench.
public enum FeedSQL {
    /// The largest page a request may ask for.
    public static let maxPage = 100

    static func sql(_ direction: MemberPage.Direction) -> String {
        MemberPage.sql(direction: direction, membership: "circle_members cm", member: "cm.circle_id = $1 AND cm.user_id = $2",
                       select: "\(PostStore.columns), \(PostStore.aggregatesSQL(viewer: "$2")), \(KeysetCursor.microsSQL("p.created_at")) AS cursor_micros", columns: 23,
                       from: "posts p JOIN profiles a ON a.user_id = p.author_id",
                       filter: "p.circle_id = $1 AND p.expires_at > now() AND NOT \(BlockList.hiddenByBlock(viewer: "$2", author: "p.author_id"))",
                       time: "p.created_at", id: "p.id", sort: ("created_at", "id"), maxPage: maxPage)
    }

    public enum Latest: StatementSQL { public static let sql = FeedSQL.sql(.latest) }
    public enum Before: StatementSQL { public static let sql = FeedSQL.sql(.before) }

    /// A new post, written only when the author is a member of the circle: `$1` the id, `$2` the
    /// circle, `$3` the author, `$4`…`$12` the draft's type, body, mood, category, urgency,
    /// location, latitude, longitude and start, `$13` its lifetime in seconds.
    public static let insert = """
        INSERT INTO posts AS p (id, circle_id, author_id, type, body, mood, category, urgency, location, latitude, longitude, starts_at, expires_at)
        SELECT $1, $2, $3, $4::post_type, $5, $6::text, $7::text, $8::ask_urgency, $9::text, $10::float8, $11::float8, $12::timestamptz,
               now() + make_interval(secs => $13::float8)
        WHERE EXISTS (SELECT 1 FROM circle_members m WHERE m.circle_id = $2 AND m.user_id = $3)
        RETURNING \(PostStore.columns)
        """

    /// One post as a card for a viewer: `$1` the post, `$2` the viewer.
    public static let card = """
        SELECT \(PostStore.columns), \(PostStore.aggregatesSQL(viewer: "$2::uuid"))
        FROM posts p JOIN profiles a ON a.user_id = p.author_id WHERE p.id = $1
        """
}

struct InsertPost: PostgresPreparedStatement {
    static var sql: String { FeedSQL.insert }
    // Declared, not taken from the first call's values: a null there would leave a type unknown.
    static let bindingDataTypes: [PostgresDataType] = [.uuid, .uuid, .uuid, .text, .text, .text, .text, .text, .text, .float8, .float8, .timestamptz, .float8]
    typealias Row = PostStore.Stored

    var id: UUID
    var circleID: UUID
    var authorID: UUID
    var draft: CirclesRules.PostDraft
    var lifetime: TimeInterval

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 13)
        bindings.append(id)
        bindings.append(circleID)
        bindings.append(authorID)
        bindings.append(draft.type.rawValue)
        bindings.append(draft.body)
        bindings.append(draft.mood)
        bindings.append(draft.category)
        bindings.append(draft.urgency?.rawValue)
        bindings.append(draft.location)
        bindings.append(draft.latitude)
        bindings.append(draft.longitude)
        bindings.append(draft.startsAt)
        bindings.append(lifetime)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> PostStore.Stored { try PostStore.stored(row) }
}

struct PostCard: PostgresPreparedStatement {
    static var sql: String { FeedSQL.card }
    typealias Row = (PostStore.Stored, PostStore.Aggregates)

    var postID: UUID
    var viewer: UUID

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 2)
        bindings.append(postID)
        bindings.append(viewer)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row { try PostStore.card(row) }
}

/// A feed page as a prepared statement (`MemberPageStatement`), one per paging direction.
typealias FeedPageStatement<Shape: StatementSQL> = MemberPageStatement<Shape, FeedRow>

/// A feed page's row: the post, the viewer's aggregates and the card's cursor.
enum FeedRow: MemberPageRow {
    static func decode(_ columns: inout PageRow) throws -> (PostStore.Stored, PostStore.Aggregates, KeysetCursor) {
        let stored = try PostStore.stored(&columns)
        let aggregates = try PostStore.aggregates(&columns)
        return (stored, aggregates, KeysetCursor(micros: try columns.int64(), id: stored.row.id))
    }

    static func cursor(of element: (PostStore.Stored, PostStore.Aggregates, KeysetCursor)) -> KeysetCursor { element.2 }
}

/// The text of a card's aggregates (`PostStore.aggregatesSQL`), read back: numbers first, each
/// ended by `:`, then the free text whole (it may hold colons itself). Read as bytes: splitting
/// `String`s and Foundation's UUID parser were about a tenth of a feed page.
enum AggregateText {
    struct Malformed: Error, CustomStringConvertible {
        let text: String
        var description: String { "a card aggregate the statement did not write: \(text)" }
    }

    /// A list's items: each its length in bytes, a colon, then that many bytes.
    static func list(_ text: String) throws -> [String] {
        var text = text
        return try text.withUTF8 { bytes in
            var items: [String] = []
            var index = 0
            while index < bytes.count {
                var length = 0
                let digits = index
                while index < bytes.count, bytes[index] != UInt8(ascii: ":") {
                    let digit = Int(bytes[index]) - 48
                    guard (0...9).contains(digit), length < 1 << 40 else { throw Malformed(text: String(decoding: bytes, as: UTF8.self)) }
                    length = length * 10 + digit
                    index += 1
                }
                // Past the colon; the item must fit in what is left.
                index += 1
                guard index > digits + 1, index <= bytes.count, bytes.count - index >= length else { throw Malformed(text: String(decoding: bytes, as: UTF8.self)) }
                items.append(String(decoding: UnsafeBufferPointer(rebasing: bytes[index..<index + length]), as: UTF8.self))
                index += length
            }
            return items
        }
    }

    /// `count:mine:emoji`.
    static func reaction(_ text: String) throws -> PostStore.Aggregates.Reaction {
        guard let fields = fields(text, leading: 2), let count = Int(fields[0]), let mine = flag(fields[1]) else { throw Malformed(text: text) }
        return .init(emoji: fields[2], count: count, mine: mine)
    }

    /// `votes:mine:id:label`.
    static func option(_ text: String) throws -> PostStore.Aggregates.Option {
        guard let fields = fields(text, leading: 3), let votes = Int(fields[0]), let mine = flag(fields[1]), let id = UUID(canonical: fields[2]) else {
            throw Malformed(text: text)
        }
        return .init(id: id, label: fields[3], votes: votes, mine: mine)
    }

    /// `going:maybe:declined:mine`, `mine` empty when the viewer has not answered.
    static func rsvps(_ text: String) throws -> PostStore.Aggregates.RSVPs {
        guard let fields = fields(text, leading: 3), let going = Int(fields[0]), let maybe = Int(fields[1]), let declined = Int(fields[2]) else {
            throw Malformed(text: text)
        }
        return .init(going: going, maybe: maybe, declined: declined, mine: fields[3].isEmpty ? nil : fields[3])
    }

    /// The `leading` fields each ended by a colon, then the rest whole; nil with fewer colons.
    private static func fields(_ text: String, leading: Int) -> [String]? {
        var text = text
        return text.withUTF8 { bytes -> [String]? in
            var fields: [String] = []
            fields.reserveCapacity(leading + 1)
            var start = 0
            var index = 0
            while fields.count < leading {
                guard index < bytes.count else { return nil }
                if bytes[index] == UInt8(ascii: ":") {
                    fields.append(String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self))
                    start = index + 1
                }
                index += 1
            }
            fields.append(String(decoding: UnsafeBufferPointer(rebasing: bytes[start...]), as: UTF8.self))
            return fields
        }
    }

    private static func flag(_ text: String) -> Bool? {
        switch text {
        case "1": true
        case "0": false
        default: nil
        }
    }
}
