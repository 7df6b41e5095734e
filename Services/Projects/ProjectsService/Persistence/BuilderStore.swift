import ColonyModels
import ColonyPlatform
import Foundation
import Logging
import PostgresNIO

/// `builders` and `karma`: profiles from auth's events, karma points and levels, a supporter's
/// stats and activity, and the erasure of a whole account.
struct BuilderStore: Sendable {
    let logger: Logger

    /// A new builder's name when sign-up gave none: the email's local part, else "Supporter".
    static func defaultName(email: String?) -> String {
        if let local = email?.split(separator: "@").first?.trimmingCharacters(in: .whitespaces), !local.isEmpty { return String(local.prefix(60)) }
        return "Supporter"
    }

    /// The user's builder, created with its karma row when the registration event has not
    /// arrived yet (one prepared statement); nil when the account was deleted.
    func ensure(_ userID: UUID, email: String?, on connection: PostgresConnection) async throws -> StoredBuilder? {
        try await AccountLock.findOrCreate(userID, on: connection, logger: logger, find: { try await find(userID: userID, on: connection) }, create: {
            let statement = EnsureBuilder(userID: userID, builderID: .timeOrdered(), karmaID: .timeOrdered(), name: SignUpProfile.name(of: userID, maxLength: ProjectsRules.maxName) ?? Self.defaultName(email: email))
            var found: StoredBuilder?
            for try await builder in try await connection.execute(statement, logger: logger) where found == nil { found = builder }
            if let found { return found }
            // Another request created it a moment ago, after this statement's snapshot: read again.
            return try await find(userID: userID, on: connection)
        })
    }

    func find(userID: UUID, on connection: PostgresConnection) async throws -> StoredBuilder? {
        for try await builder in try await connection.execute(FindBuilder(userID: userID), logger: logger) { return builder }
        return nil
    }

    func find(id: UUID, on connection: PostgresConnection) async throws -> StoredBuilder? {
        try await connection.query("SELECT \(unescaped: StoredBuilder.columns) FROM builders WHERE id = \(id)", logger: logger)
            .collect().first.map(StoredBuilder.init(row:))
    }

    /// From `user_registered`: creates the builder and karma with the sign-up name, or puts that
    /// name in place of one made from the email (a name the user chose is kept).
    func upsertFromAuth(_ userID: UUID, name: String?, email: String?, on connection: PostgresConnection) async throws {
        try await connection.query("""
            WITH b AS (
                INSERT INTO builders (id, user_id, name, name_is_default)
                SELECT \(UUID.timeOrdered()), \(userID), \(name ?? Self.defaultName(email: email)), \(name == nil)
                WHERE NOT EXISTS (SELECT 1 FROM deleted_users WHERE user_id = \(userID))
                ON CONFLICT (user_id) DO UPDATE SET name = EXCLUDED.name, name_is_default = false, updated_at = now()
                    WHERE builders.name_is_default AND NOT EXCLUDED.name_is_default
                RETURNING user_id
            )
            INSERT INTO karma (id, user_id) SELECT \(UUID.timeOrdered()), user_id FROM b
            ON CONFLICT (user_id) DO NOTHING
            """, logger: logger)
    }

    struct Changes: Sendable {
        var name: String?
        var bio: String??
        var websiteUrl: String??
        var twitterHandle: String??
        var isCreator: Bool?
        var avatarVersion: Int64??

        var isEmpty: Bool { name == nil && bio == nil && websiteUrl == nil && twitterHandle == nil && isCreator == nil && avatarVersion == nil }
    }

    func update(_ userID: UUID, _ changes: Changes, on connection: PostgresConnection) async throws -> StoredBuilder? {
        try await connection.query("""
            UPDATE builders SET
                name = coalesce(\(changes.name), name),
                name_is_default = name_is_default AND \(changes.name == nil),
                bio = CASE WHEN \(changes.bio != nil) THEN \(changes.bio ?? nil) ELSE bio END,
                website_url = CASE WHEN \(changes.websiteUrl != nil) THEN \(changes.websiteUrl ?? nil) ELSE website_url END,
                twitter_handle = CASE WHEN \(changes.twitterHandle != nil) THEN \(changes.twitterHandle ?? nil) ELSE twitter_handle END,
                is_creator = coalesce(\(changes.isCreator), is_creator),
                avatar_version = CASE WHEN \(changes.avatarVersion != nil) THEN \(changes.avatarVersion ?? nil) ELSE avatar_version END,
                updated_at = now()
            WHERE user_id = \(userID)
            RETURNING \(unescaped: StoredBuilder.columns)
            """, logger: logger).collect().first.map(StoredBuilder.init(row:))
    }

    // MARK: karma

    func karma(_ userID: UUID, lock: Bool = false, on connection: PostgresConnection) async throws -> KarmaRow? {
        try await connection.query("""
            SELECT \(unescaped: KarmaRow.columns) FROM karma WHERE user_id = \(userID) \(unescaped: lock ? "FOR UPDATE" : "")
            """, logger: logger).collect().first.map(KarmaRow.init(row:))
    }

    /// Adds points and sets the level from the new total, atomically; the row after.
    func addKarma(_ userID: UUID, points: Int, on connection: PostgresConnection) async throws -> KarmaRow? {
        try await connection.query("""
            UPDATE karma SET total_points = total_points + \(Int32(points)), level = karma_level(total_points + \(Int32(points))), updated_at = now()
            WHERE user_id = \(userID)
            RETURNING \(unescaped: KarmaRow.columns)
            """, logger: logger).collect().first.map(KarmaRow.init(row:))
    }

    /// Logs a support action (what earned the karma).
    func logAction(id: UUID, userID: UUID, projectID: UUID, type: SupportActionType, points: Int, metadata: [String: JSONValue]?,
                   on connection: PostgresConnection) async throws {
        let json = try metadata.map { String(decoding: try ColonyJSON.encode($0), as: UTF8.self) }
        try await connection.query("""
            INSERT INTO support_actions (id, user_id, project_id, action_type, points_earned, metadata)
            VALUES (\(id), \(userID), \(projectID), \(type.rawValue)::support_action_type, \(points), \(json)::jsonb)
            """, logger: logger)
    }

    /// Projects followed now, support messages sent, posts liked now. Follows and likes count
    /// what the user can see, as the lists do (a project unpublished since drops out of both).
    func stats(_ userID: UUID, on connection: PostgresConnection) async throws -> SupportStats {
        let counts = try await connection.query("""
            SELECT (SELECT count(*) FROM follows f JOIN projects p ON p.id = f.project_id JOIN builders o ON o.id = p.builder_id
                     WHERE f.user_id = \(userID) AND (p.is_published OR o.user_id = \(userID)))::int8,
                   (SELECT count(*) FROM support_messages m JOIN builders b ON b.id = m.sender_id WHERE b.user_id = \(userID))::int8,
                   (SELECT count(*) FROM likes l JOIN posts po ON po.id = l.post_id JOIN projects p ON p.id = po.project_id JOIN builders o ON o.id = p.builder_id
                     WHERE l.user_id = \(userID) AND (p.is_published OR o.user_id = \(userID)))::int8
            """, logger: logger).read { c in (try c.next(Int.self), try c.next(Int.self), try c.next(Int.self)) }.first
        let (projects, messages, likes) = counts ?? (0, 0, 0)
        return SupportStats(projectsSupported: projects, messagesSent: messages, postsLiked: likes)
    }

    /// The user's support actions, newest first, with each project's title and slug.
    func actions(_ userID: UUID, limit: Int, on connection: PostgresConnection) async throws -> [(SupportActionRow, SupportAction.ProjectPayload)] {
        try await connection.query("""
            SELECT \(unescaped: SupportActionRow.columns), p.title, p.public_slug
            FROM support_actions a JOIN projects p ON p.id = a.project_id
            WHERE a.user_id = \(userID)
            ORDER BY a.created_at DESC, a.id DESC LIMIT \(limit)
            """, logger: logger).read { c in
            let action = try SupportActionRow(cells: &c)
            return (action, SupportAction.ProjectPayload(id: action.projectId.lowercased, title: try c.next(), publicSlug: try c.next()))
        }
    }

    /// Builders following a project, latest follower first, but those `viewer` blocked.
    func supporters(_ projectID: UUID, viewer: UUID, limit: Int, on connection: PostgresConnection) async throws -> [StoredBuilder] {
        try await connection.query("""
            SELECT \(unescaped: prefixed(StoredBuilder.columns, "b")) FROM follows f JOIN builders b ON b.user_id = f.user_id
            WHERE f.project_id = \(projectID) AND NOT \(blockedBy: viewer, author: "f.user_id")
            ORDER BY f.created_at DESC, f.id DESC LIMIT \(limit)
            """, logger: logger).collect().map(StoredBuilder.init(row:))
    }

    // MARK: erasure

    /// Ends the user's follows (each project's count goes down); returns the follows and each
    /// project's count after.
    func removeFollows(_ userID: UUID, on connection: PostgresConnection) async throws -> [(FollowRow, Int)] {
        try await connection.query("""
            WITH gone AS (
                DELETE FROM follows WHERE user_id = \(userID) RETURNING id, user_id, project_id, created_at
            ), counted AS (
                UPDATE projects p SET follower_count = p.follower_count - 1 FROM gone WHERE p.id = gone.project_id
                RETURNING p.id, p.follower_count
            )
            SELECT gone.id, gone.user_id, gone.project_id, gone.created_at, counted.follower_count
            FROM gone JOIN counted ON counted.id = gone.project_id ORDER BY gone.created_at
            """, logger: logger).read { c in
            (FollowRow(id: try c.next(UUID.self), userId: try c.next(UUID.self), projectId: try c.next(UUID.self), createdAt: try c.next(Date.self)), try c.next(Int.self))
        }
    }

    /// Removes the user's likes, each post's count going down.
    func removeLikes(_ userID: UUID, on connection: PostgresConnection) async throws {
        try await connection.query("""
            WITH gone AS (DELETE FROM likes WHERE user_id = \(userID) RETURNING post_id)
            UPDATE posts p SET like_count = p.like_count - 1 FROM gone WHERE p.id = gone.post_id
            """, logger: logger)
    }

    /// Deletes the builder (karma, actions and awards cascade) after making their support
    /// messages anonymous, and remembers the id.
    func erase(_ userID: UUID, on connection: PostgresConnection) async throws {
        try await connection.query("INSERT INTO deleted_users (user_id) VALUES (\(userID)) ON CONFLICT DO NOTHING", logger: logger)
        try await connection.query("""
            UPDATE support_messages SET sender_id = NULL, is_anonymous = true
            WHERE sender_id = (SELECT id FROM builders WHERE user_id = \(userID))
            """, logger: logger)
        try await connection.query("DELETE FROM builders WHERE user_id = \(userID)", logger: logger)
    }
}

/// The caller's builder, made (with its karma row) unless it exists or the account was deleted.
struct EnsureBuilder: PostgresPreparedStatement {
    static let sql = """
        WITH inserted AS (
            INSERT INTO builders (id, user_id, name, name_is_default)
            SELECT $2, $1, $4, true
            WHERE NOT EXISTS (SELECT 1 FROM builders WHERE user_id = $1) AND NOT EXISTS (SELECT 1 FROM deleted_users WHERE user_id = $1)
            ON CONFLICT (user_id) DO NOTHING
            RETURNING \(StoredBuilder.columns)
        ), karma AS (
            INSERT INTO karma (id, user_id) SELECT $3, user_id FROM inserted ON CONFLICT (user_id) DO NOTHING
        )
        SELECT \(StoredBuilder.columns) FROM inserted
        UNION ALL
        SELECT \(StoredBuilder.columns) FROM builders WHERE user_id = $1
        LIMIT 1
        """
    typealias Row = StoredBuilder

    var userID: UUID
    var builderID: UUID
    var karmaID: UUID
    var name: String

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 4)
        bindings.append(userID)
        bindings.append(builderID)
        bindings.append(karmaID)
        bindings.append(name)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> StoredBuilder { try StoredBuilder(row: row) }
}

/// The caller's builder (every request reads it first: prepared, as the insert-or-read was).
struct FindBuilder: PostgresPreparedStatement {
    static let sql = "SELECT \(StoredBuilder.columns) FROM builders WHERE user_id = $1"
    typealias Row = StoredBuilder

    var userID: UUID

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 1)
        bindings.append(userID)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> StoredBuilder { try StoredBuilder(row: row) }
}
