import ColonyModels
import ColonyPlatform
import Foundation
import Logging
import PostgresNIO

/// `projects` and `follows`: creation with unique slugs, edits, discovery lists, follows with
/// their counter and karma in one statement each.
struct ProjectStore: Sendable {
    let logger: Logger

    enum Sort: String, Sendable, CaseIterable {
        /// `created_at` desc.
        case new
        /// `follower_count` desc.
        case trending
    }

    /// The project with its owner and whether `viewer` follows it, visible or not (the domain
    /// applies `ProjectPolicy`); none when `viewer` blocked its builder, as if it were not there.
    /// One prepared statement: most requests start here.
    func find(_ projectID: UUID, viewer: UUID, on connection: PostgresConnection) async throws -> StoredProject? {
        var found: StoredProject?
        for try await project in try await connection.execute(ProjectByID(projectID: projectID, viewer: viewer), logger: logger) where found == nil {
            found = project
        }
        return found
    }

    func find(slug: String, viewer: UUID, on connection: PostgresConnection) async throws -> StoredProject? {
        try await connection.query("""
            SELECT \(projectColumnsFor: viewer) FROM \(unescaped: StoredProject.from)
            WHERE p.public_slug = \(slug) AND NOT \(blockedBy: viewer, author: "b.user_id")
            """, logger: logger).collect().first.map { try StoredProject(row: $0) }
    }

    func slugExists(_ slug: String, excluding projectID: UUID? = nil, on connection: PostgresConnection) async throws -> Bool {
        try await !connection.query("""
            SELECT 1 FROM projects WHERE public_slug = \(slug) AND id IS DISTINCT FROM \(projectID)
            """, logger: logger).collect().isEmpty
    }

    struct Draft: Sendable {
        var title: String
        var tagline: String?
        var description: String?
        var mood: ProjectMood?
        var isPublished: Bool
    }

    /// Inserts the project under `slug`; nil when the slug is taken (nothing written).
    func insert(id: UUID, builderID: UUID, draft: Draft, slug: String, on connection: PostgresConnection) async throws -> StoredProject? {
        try await connection.query("""
            WITH p AS (
                INSERT INTO projects (id, builder_id, title, tagline, description, public_slug, mood, is_published)
                VALUES (\(id), \(builderID), \(draft.title), \(draft.tagline), \(draft.description), \(slug), \(draft.mood?.rawValue)::project_mood, \(draft.isPublished))
                ON CONFLICT (public_slug) DO NOTHING
                RETURNING *
            )
            SELECT \(unescaped: StoredProject.columns), false FROM p JOIN builders b ON b.id = p.builder_id
            """, logger: logger).collect().first.map { try StoredProject(row: $0) }
    }

    struct Changes: Sendable {
        var title: String?
        var tagline: String??
        var description: String??
        var publicSlug: String?
        var mood: ProjectMood??
        var isPublished: Bool?
        var coverVersion: Int64??
    }

    /// Applies the changes; a slug another project took meanwhile is 409 `slug_taken`.
    func update(_ projectID: UUID, _ changes: Changes, viewer: UUID, on connection: PostgresConnection) async throws -> StoredProject? {
        let mood: String?? = changes.mood.map { $0?.rawValue }
        do {
            return try await connection.query("""
                WITH p AS (
                    UPDATE projects SET
                        title = coalesce(\(changes.title), title),
                        tagline = CASE WHEN \(changes.tagline != nil) THEN \(changes.tagline ?? nil) ELSE tagline END,
                        description = CASE WHEN \(changes.description != nil) THEN \(changes.description ?? nil) ELSE description END,
                        public_slug = coalesce(\(changes.publicSlug), public_slug),
                        mood = CASE WHEN \(mood != nil) THEN \(mood ?? nil)::project_mood ELSE mood END,
                        is_published = coalesce(\(changes.isPublished), is_published),
                        cover_version = CASE WHEN \(changes.coverVersion != nil) THEN \(changes.coverVersion ?? nil) ELSE cover_version END,
                        updated_at = now()
                    WHERE id = \(projectID)
                    RETURNING *
                )
                SELECT \(projectColumnsFor: viewer) FROM p JOIN builders b ON b.id = p.builder_id
                """, logger: logger).collect().first.map { try StoredProject(row: $0) }
        } catch let error as PSQLError where error.serverInfo?[.sqlState] == "23505" {
            throw ProjectsErrors.slugTaken
        }
    }

    /// Deletes the project (posts, follows, milestones, messages, likes cascade). Returns who
    /// followed it and the storage keys of its post pictures, used or only uploaded.
    func delete(_ projectID: UUID, on connection: PostgresConnection) async throws -> (followerIDs: [UUID], imageKeys: [String]) {
        let followers = try await connection.query("SELECT user_id FROM follows WHERE project_id = \(projectID) ORDER BY created_at, id", logger: logger)
            .values(UUID.self)
        let keys = try await connection.query("""
            SELECT unnest(images) FROM posts WHERE project_id = \(projectID)
            UNION ALL
            SELECT key FROM post_uploads WHERE project_id = \(projectID)
            """, logger: logger).values(String.self)
        try await connection.query("DELETE FROM projects WHERE id = \(projectID)", logger: logger)
        return (followers, keys)
    }

    /// Published projects (optionally matching `pattern` in title or tagline), newest or most
    /// followed first, after `cursor`, but those of builders `viewer` blocked; one more than
    /// `limit`, to tell whether a page follows.
    func list(sort: Sort, pattern: String?, after cursor: Cursor, limit: Int, viewer: UUID, on connection: PostgresConnection) async throws -> [StoredProject] {
        let query: PostgresQuery
        switch sort {
        case .new:
            query = """
                SELECT \(projectColumnsFor: viewer) FROM \(unescaped: StoredProject.from)
                WHERE p.is_published AND (\(pattern)::text IS NULL OR p.title ILIKE \(pattern) ESCAPE '\\' OR p.tagline ILIKE \(pattern) ESCAPE '\\')
                  AND NOT \(blockedBy: viewer, author: "b.user_id")
                  AND (p.created_at, p.id) < ('epoch'::timestamptz + \(cursor.value) * interval '1 microsecond', \(cursor.id))
                ORDER BY p.created_at DESC, p.id DESC LIMIT \(limit + 1)
                """
        case .trending:
            query = """
                SELECT \(projectColumnsFor: viewer) FROM \(unescaped: StoredProject.from)
                WHERE p.is_published AND (\(pattern)::text IS NULL OR p.title ILIKE \(pattern) ESCAPE '\\' OR p.tagline ILIKE \(pattern) ESCAPE '\\')
                  AND NOT \(blockedBy: viewer, author: "b.user_id")
                  AND (p.follower_count, p.id) < (\(Int32(clamping: cursor.value)), \(cursor.id))
                ORDER BY p.follower_count DESC, p.id DESC LIMIT \(limit + 1)
                """
        }
        return try await connection.query(query, logger: logger).collect().map { try StoredProject(row: $0) }
    }

    /// A builder's projects, newest first: the published ones, and the rest too for their owner;
    /// none for a viewer who blocked the builder.
    func byBuilder(_ builderID: UUID, viewer: UUID, limit: Int, on connection: PostgresConnection) async throws -> [StoredProject] {
        try await connection.query("""
            SELECT \(projectColumnsFor: viewer) FROM \(unescaped: StoredProject.from)
            WHERE p.builder_id = \(builderID) AND (p.is_published OR b.user_id = \(viewer)) AND NOT \(blockedBy: viewer, author: "b.user_id")
            ORDER BY p.created_at DESC, p.id DESC LIMIT \(limit)
            """, logger: logger).collect().map { try StoredProject(row: $0) }
    }

    /// Projects the user follows that they can see (not those of builders they blocked: the
    /// follow stays, out of sight), latest follow first, after `cursor` (a follow's time and id);
    /// with each follow's cursor.
    func followed(by userID: UUID, after cursor: Cursor, limit: Int, on connection: PostgresConnection) async throws -> [(StoredProject, Cursor)] {
        try await connection.query("""
            SELECT \(unescaped: StoredProject.columns), true, \(unescaped: Cursor.micros("f.created_at")), f.id
            FROM follows f JOIN projects p ON p.id = f.project_id JOIN builders b ON b.id = p.builder_id
            WHERE f.user_id = \(userID) AND (p.is_published OR b.user_id = \(userID)) AND NOT \(blockedBy: userID, author: "b.user_id")
              AND (f.created_at, f.id) < ('epoch'::timestamptz + \(cursor.value) * interval '1 microsecond', \(cursor.id))
            ORDER BY f.created_at DESC, f.id DESC LIMIT \(limit + 1)
            """, logger: logger).read { c in
            (try StoredProject(cells: &c), Cursor(value: try c.next(Int64.self), id: try c.next(UUID.self)))
        }
    }

    func owned(by builderID: UUID, on connection: PostgresConnection) async throws -> [UUID] {
        try await connection.query("SELECT id FROM projects WHERE builder_id = \(builderID) ORDER BY created_at, id", logger: logger)
            .values(UUID.self)
    }

    // MARK: follows

    struct Followed: Sendable {
        var follow: FollowRow
        var followerCount: Int
        /// The karma row after the award; nil when none was given.
        var karma: KarmaRow?
    }

    /// Follows the project: the follow, its counter and (when `points` > 0 and never given
    /// before for this project) the support action and karma, in one statement. nil when the
    /// user already follows it (nothing changes).
    func follow(_ projectID: UUID, userID: UUID, points: Int, on connection: PostgresConnection) async throws -> Followed? {
        let statement = FollowProject(userID: userID, projectID: projectID, followID: .timeOrdered(), actionID: .timeOrdered(), points: points)
        var result: Followed?
        for try await row in try await connection.execute(statement, logger: logger) where result == nil {
            var c = RowCells(row)
            let follow = FollowRow(id: try c.next(), userId: userID, projectId: projectID, createdAt: try c.next())
            let followerCount: Int = try c.next()
            var karma: KarmaRow?
            if let id = try c.next(UUID?.self) {
                karma = KarmaRow(id: id, userId: userID, totalPoints: try c.next(), level: try c.next(), createdAt: try c.next(), updatedAt: try c.next())
            }
            result = Followed(follow: follow, followerCount: followerCount, karma: karma)
        }
        return result
    }

    /// Whether the owner should hear of this follow: not when the same user's follow of the
    /// project was announced less than a day ago (an unfollow and re-follow); records it if so.
    func announceFollow(_ projectID: UUID, userID: UUID, on connection: PostgresConnection) async throws -> Bool {
        try await !connection.query("""
            INSERT INTO follow_notices AS n (user_id, project_id) VALUES (\(userID), \(projectID))
            ON CONFLICT (user_id, project_id) DO UPDATE SET notified_at = now() WHERE n.notified_at < now() - interval '1 day'
            RETURNING 1
            """, logger: logger).collect().isEmpty
    }

    /// Ends the follow and lowers the counter; nil when there was none.
    func unfollow(_ projectID: UUID, userID: UUID, on connection: PostgresConnection) async throws -> (FollowRow, Int)? {
        try await connection.query("""
            WITH gone AS (
                DELETE FROM follows WHERE user_id = \(userID) AND project_id = \(projectID) RETURNING id, user_id, project_id, created_at
            ), counted AS (
                UPDATE projects p SET follower_count = p.follower_count - 1 FROM gone WHERE p.id = gone.project_id RETURNING p.follower_count
            )
            SELECT gone.id, gone.user_id, gone.project_id, gone.created_at, counted.follower_count FROM gone, counted
            """, logger: logger).read { c in
            (FollowRow(id: try c.next(UUID.self), userId: try c.next(UUID.self), projectId: try c.next(UUID.self), createdAt: try c.next(Date.self)), try c.next(Int.self))
        }.first
    }
}

/// A project with its owner's card and whether `$2` follows it; none when `$2` blocked its owner.
struct ProjectByID: PostgresPreparedStatement {
    static let sql = """
        SELECT \(StoredProject.columns), EXISTS (SELECT 1 FROM follows f WHERE f.project_id = p.id AND f.user_id = $2)
        FROM \(StoredProject.from)
        WHERE p.id = $1 AND NOT \(BlockList.hiddenByBlock(viewer: "$2", author: "b.user_id"))
        """
    typealias Row = StoredProject

    var projectID: UUID
    var viewer: UUID

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 2)
        bindings.append(projectID)
        bindings.append(viewer)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> StoredProject { try StoredProject(row: row) }
}

/// A follow with everything it changes, atomically: the `follows` row (nothing when it exists:
/// a repeated follow changes nothing), `follower_count + 1` on the project row (so concurrent
/// follows all count), and, when `$5` points are due and this user was never given karma for
/// this project (`karma_awards`), the support action and the karma with its level. No row when
/// the user already follows the project.
struct FollowProject: PostgresPreparedStatement {
    static let sql = """
        WITH followed AS (
            INSERT INTO follows (id, user_id, project_id) VALUES ($3, $1, $2)
            ON CONFLICT (user_id, project_id) DO NOTHING
            RETURNING id, project_id, created_at
        ), counted AS (
            UPDATE projects p SET follower_count = p.follower_count + 1 FROM followed WHERE p.id = followed.project_id
            RETURNING p.follower_count
        ), awarded AS (
            INSERT INTO karma_awards (user_id, kind, subject_id)
            SELECT $1, 'follow', project_id FROM followed WHERE $5::int4 > 0
            ON CONFLICT DO NOTHING
            RETURNING subject_id
        ), action AS (
            INSERT INTO support_actions (id, user_id, project_id, action_type, points_earned)
            SELECT $4, $1, subject_id, 'follow', $5::int4 FROM awarded
        ), karma AS (
            UPDATE karma k SET total_points = k.total_points + $5::int4, level = karma_level(k.total_points + $5::int4), updated_at = now()
            FROM awarded WHERE k.user_id = $1
            RETURNING k.id, k.total_points, k.level, k.created_at, k.updated_at
        )
        SELECT followed.id, followed.created_at, counted.follower_count, karma.id, karma.total_points, karma.level, karma.created_at, karma.updated_at
        FROM followed CROSS JOIN counted LEFT JOIN karma ON true
        """
    typealias Row = PostgresRow

    var userID: UUID
    var projectID: UUID
    var followID: UUID
    var actionID: UUID
    var points: Int

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 5)
        bindings.append(userID)
        bindings.append(projectID)
        bindings.append(followID)
        bindings.append(actionID)
        bindings.append(Int32(points))
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> PostgresRow { row }
}
