import ColonyModels
import ColonyPlatform
import Foundation
import Logging
import PostgresNIO

/// `posts`, `likes` and `post_uploads`: a project's updates, the feed, likes with their counter
/// and karma, and pictures uploaded before the post that uses them.
struct PostStore: Sendable {
    let logger: Logger

    static let rowColumns = "id, project_id, content, images, like_count, created_at, updated_at"

    static func row(_ row: PostgresRow) throws -> ProjectPostRow {
        try row.read { c in
            ProjectPostRow(id: try c.next(UUID.self), projectId: try c.next(UUID.self), content: try c.next(String.self), images: try c.next([String].self),
                           likeCount: try c.next(Int.self), createdAt: try c.next(Date.self), updatedAt: try c.next(Date.self))
        }
    }

    /// The post with its project, owner, and whether `viewer` liked it (visible or not: the
    /// domain applies `ProjectPolicy` to the project); none when `viewer` blocked its builder.
    func find(_ postID: UUID, viewer: UUID, on connection: PostgresConnection) async throws -> StoredPost? {
        try await connection.query("""
            SELECT \(postColumnsFor: viewer) FROM \(unescaped: StoredPost.from)
            WHERE po.id = \(postID) AND NOT \(blockedBy: viewer, author: "b.user_id")
            """, logger: logger).collect().first.map(StoredPost.init(row:))
    }

    /// A project's posts, newest first, after `cursor`; one more than `limit`.
    func page(projectID: UUID, after cursor: Cursor, limit: Int, viewer: UUID, on connection: PostgresConnection) async throws -> [StoredPost] {
        try await connection.query("""
            SELECT \(postColumnsFor: viewer) FROM \(unescaped: StoredPost.from)
            WHERE po.project_id = \(projectID)
              AND (po.created_at, po.id) < ('epoch'::timestamptz + \(cursor.value) * interval '1 microsecond', \(cursor.id))
            ORDER BY po.created_at DESC, po.id DESC LIMIT \(limit + 1)
            """, logger: logger).collect().map(StoredPost.init(row:))
    }

    /// The feed: posts of the projects `userID` follows and can see (not those of builders they
    /// blocked), newest first, after
    /// `cursor`, with project, owner and `liked_by_me`, in one prepared statement; one more
    /// than `limit`.
    func feed(userID: UUID, after cursor: Cursor, limit: Int, on connection: PostgresConnection) async throws -> [StoredPost] {
        var posts: [StoredPost] = []
        if limit == FeedPage.pageSize {
            for try await post in try await connection.execute(FeedPage(userID: userID, cursor: cursor), logger: logger) { posts.append(post) }
        } else {
            for try await post in try await connection.execute(FeedPageOfSize(userID: userID, cursor: cursor, limit: limit + 1), logger: logger) { posts.append(post) }
        }
        return posts
    }

    func insert(id: UUID, projectID: UUID, content: String, images: [String], on connection: PostgresConnection) async throws -> ProjectPostRow {
        let row = try await connection.query("""
            INSERT INTO posts (id, project_id, content, images) VALUES (\(id), \(projectID), \(content), \(images))
            RETURNING \(unescaped: Self.rowColumns)
            """, logger: logger).collect().first
        return try Self.row(row!)
    }

    func update(_ postID: UUID, content: String?, images: [String]?, on connection: PostgresConnection) async throws -> ProjectPostRow? {
        try await connection.query("""
            UPDATE posts SET content = coalesce(\(content), content), images = coalesce(\(images), images), updated_at = now()
            WHERE id = \(postID)
            RETURNING \(unescaped: Self.rowColumns)
            """, logger: logger).collect().first.map(Self.row)
    }

    func delete(_ postID: UUID, on connection: PostgresConnection) async throws {
        try await connection.query("DELETE FROM posts WHERE id = \(postID)", logger: logger)
    }

    // MARK: uploads

    func addUpload(key: String, projectID: UUID, on connection: PostgresConnection) async throws {
        try await connection.query("INSERT INTO post_uploads (key, project_id) VALUES (\(key), \(projectID))", logger: logger)
    }

    /// Takes these uploads of the project for a post; returns the keys that were waiting.
    func claimUploads(_ keys: [String], projectID: UUID, on connection: PostgresConnection) async throws -> Set<String> {
        guard !keys.isEmpty else { return [] }
        return Set(try await connection.query("""
            DELETE FROM post_uploads WHERE project_id = \(projectID) AND key = ANY(\(keys)) RETURNING key
            """, logger: logger).values(String.self))
    }

    /// Forgets up to `limit` uploads older than `ttlSeconds` that no post took; returns their keys.
    func expireUploads(ttlSeconds: Int, limit: Int, on connection: PostgresConnection) async throws -> [String] {
        try await connection.query("""
            DELETE FROM post_uploads WHERE key IN (
                SELECT key FROM post_uploads WHERE uploaded_at < now() - make_interval(secs => \(Double(ttlSeconds)))
                ORDER BY uploaded_at LIMIT \(limit) FOR UPDATE SKIP LOCKED
            )
            RETURNING key
            """, logger: logger).values(String.self)
    }

    // MARK: likes

    struct Liked: Sendable {
        var like: PostLikeRow
        var likeCount: Int
        var karma: KarmaRow?
    }

    /// Likes the post: the like, its counter and (when `points` > 0 and never given before for
    /// this post) the support action and karma, in one statement. nil when already liked.
    func like(_ postID: UUID, projectID: UUID, userID: UUID, points: Int, on connection: PostgresConnection) async throws -> Liked? {
        try await connection.query("""
            WITH liked AS (
                INSERT INTO likes (id, user_id, post_id) VALUES (\(UUID.timeOrdered()), \(userID), \(postID))
                ON CONFLICT (user_id, post_id) DO NOTHING
                RETURNING id, post_id, created_at
            ), counted AS (
                UPDATE posts po SET like_count = po.like_count + 1 FROM liked WHERE po.id = liked.post_id RETURNING po.like_count
            ), awarded AS (
                INSERT INTO karma_awards (user_id, kind, subject_id)
                SELECT \(userID), 'like', post_id FROM liked WHERE \(Int32(points)) > 0
                ON CONFLICT DO NOTHING
                RETURNING subject_id
            ), action AS (
                INSERT INTO support_actions (id, user_id, project_id, action_type, points_earned, metadata)
                SELECT \(UUID.timeOrdered()), \(userID), \(projectID), 'like', \(Int32(points)), jsonb_build_object('post_id', subject_id) FROM awarded
            ), karma AS (
                UPDATE karma k SET total_points = k.total_points + \(Int32(points)), level = karma_level(k.total_points + \(Int32(points))), updated_at = now()
                FROM awarded WHERE k.user_id = \(userID)
                RETURNING k.id, k.total_points, k.level, k.created_at, k.updated_at
            )
            SELECT liked.id, liked.created_at, counted.like_count, karma.id, karma.total_points, karma.level, karma.created_at, karma.updated_at
            FROM liked CROSS JOIN counted LEFT JOIN karma ON true
            """, logger: logger).read { c in
            let like = PostLikeRow(id: try c.next(), userId: userID, postId: postID, createdAt: try c.next())
            let likeCount: Int = try c.next()
            var karma: KarmaRow?
            if let id = try c.next(UUID?.self) {
                karma = KarmaRow(id: id, userId: userID, totalPoints: try c.next(), level: try c.next(), createdAt: try c.next(), updatedAt: try c.next())
            }
            return Liked(like: like, likeCount: likeCount, karma: karma)
        }.first
    }

    /// Removes the like and lowers the counter; the count after, or nil when there was none.
    func unlike(_ postID: UUID, userID: UUID, on connection: PostgresConnection) async throws -> Int? {
        try await connection.query("""
            WITH gone AS (DELETE FROM likes WHERE user_id = \(userID) AND post_id = \(postID) RETURNING post_id)
            UPDATE posts po SET like_count = po.like_count - 1 FROM gone WHERE po.id = gone.post_id RETURNING po.like_count
            """, logger: logger).firstValue(Int.self)
    }
}

/// One feed page. For each followed project the user can see (published, or their own; not of a
/// builder they blocked, one probe of `user_blocks`' key per followed project), its
/// newest posts before the cursor come off the `(project_id, created_at, id)` index, at most a
/// page each; the newest page of those is then joined with project, owner and the user's like.
///
/// How it is written keeps Postgres from planning it again on every call, which cost more than
/// running it: Postgres keeps one generic plan for a prepared statement only when that plan is
/// estimated no worse than plans made for the actual values. So the cursor is compared with a
/// one-row subquery (computed once per call, as an init plan, and hidden from either kind of plan)
/// and the page size is written into the statement (`FeedPage`, the API's default) or also read
/// from a subquery (`FeedPageOfSize`). The lateral scan is keyed on `p.id`, unique, so no cache
/// that could never hit is put in front of it; the like is one probe per row of the page.
enum FeedSQL {
    /// `$1` user, `$2` cursor time in microseconds since 1970, `$3` cursor post id; `limit` the
    /// rows per project and in all (a page and one more).
    static func sql(limit: String) -> String {
        """
        WITH page AS (
            SELECT x.id, x.created_at
            FROM follows f
            JOIN projects p ON p.id = f.project_id
            CROSS JOIN LATERAL (
                SELECT po.id, po.created_at FROM posts po
                WHERE po.project_id = p.id
                  AND (po.created_at, po.id) < (SELECT 'epoch'::timestamptz + $2 * interval '1 microsecond', $3)
                ORDER BY po.created_at DESC, po.id DESC
                LIMIT \(limit)
            ) x
            WHERE f.user_id = $1 AND (p.is_published OR p.builder_id = (SELECT id FROM builders WHERE user_id = $1))
              AND NOT EXISTS (SELECT 1 FROM builders ob JOIN user_blocks ub ON ub.blocked_id = ob.user_id WHERE ob.id = p.builder_id AND ub.blocker_id = $1)
            ORDER BY x.created_at DESC, x.id DESC
            LIMIT \(limit)
        )
        SELECT \(StoredPost.columns), l.liked IS NOT NULL, \(Cursor.micros("po.created_at"))
        FROM page JOIN posts po ON po.id = page.id JOIN projects p ON p.id = po.project_id JOIN builders b ON b.id = p.builder_id
        LEFT JOIN LATERAL (SELECT true AS liked FROM likes WHERE likes.user_id = $1 AND likes.post_id = po.id) l ON true
        ORDER BY po.created_at DESC, po.id DESC
        """
    }
}

/// A feed page of the default size (20 posts, and one more to tell whether a page follows).
struct FeedPage: PostgresPreparedStatement {
    static let pageSize = 20
    static let sql = FeedSQL.sql(limit: "\(pageSize + 1)")
    typealias Row = StoredPost

    var userID: UUID
    var cursor: Cursor

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 3)
        bindings.append(userID)
        bindings.append(cursor.value)
        bindings.append(cursor.id)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> StoredPost { try StoredPost(row: row) }
}

/// A feed page of another size: `$4` rows per project and in all.
struct FeedPageOfSize: PostgresPreparedStatement {
    static let sql = FeedSQL.sql(limit: "(SELECT $4::int8)")
    typealias Row = StoredPost

    var userID: UUID
    var cursor: Cursor
    var limit: Int

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 4)
        bindings.append(userID)
        bindings.append(cursor.value)
        bindings.append(cursor.id)
        bindings.append(limit)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> StoredPost { try StoredPost(row: row) }
}
