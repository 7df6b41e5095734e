import ColonyModels
import ColonyPlatform
import Foundation
import Logging
import PostgresNIO

/// `users`: profiles from auth's events, and the erasure of a whole account.
struct UserStore: Sendable {
    let logger: Logger

    /// A new user's name when sign-up gave none: the email's local part, else "Unify user".
    static func defaultName(email: String?) -> String {
        if let local = email?.split(separator: "@").first, !local.isEmpty { return String(local.prefix(60)) }
        return "Unify user"
    }

    /// The user, created from the token when the registration event has not arrived yet. nil
    /// when the account was deleted.
    func ensure(_ userID: UUID, email: String?, on connection: PostgresConnection) async throws -> StoredUser? {
        try await AccountLock.findOrCreate(userID, on: connection, logger: logger, find: { try await find(userID, on: connection) },
                                           create: { try await create(userID, email: email, on: connection) })
    }

    private func create(_ userID: UUID, email: String?, on connection: PostgresConnection) async throws -> StoredUser? {
        let user = try await connection.query("""
            WITH inserted AS (
                INSERT INTO users (id, display_name, email, auth_name)
                SELECT \(userID), \(SignUpProfile.name(of: userID, maxLength: ChatRules.maxDisplayName) ?? Self.defaultName(email: email)), \(email), \(SignUpProfile.name(of: userID, maxLength: ChatRules.maxDisplayName))
                WHERE NOT EXISTS (SELECT 1 FROM deleted_users WHERE user_id = \(userID))
                ON CONFLICT (id) DO NOTHING
                RETURNING \(unescaped: StoredUser.columns)
            )
            SELECT \(unescaped: StoredUser.columns) FROM inserted
            UNION ALL
            SELECT \(unescaped: StoredUser.columns) FROM users WHERE id = \(userID)
            LIMIT 1
            """, logger: logger).collect().first.map(StoredUser.init(row:))
        if let user { return user }
        // Auth's event (or another request) created it a moment ago, after this statement's
        // snapshot, so the conflict left nothing to return: read again.
        return try await find(userID, on: connection)
    }

    /// `lock` takes the row's lock (a moderator's reset against the user's own changes).
    func find(_ userID: UUID, lock: Bool = false, on connection: PostgresConnection) async throws -> StoredUser? {
        try await connection.query("""
            SELECT \(unescaped: StoredUser.columns) FROM users WHERE id = \(userID) \(unescaped: lock ? "FOR UPDATE" : "")
            """, logger: logger).collect().first.map(StoredUser.init(row:))
    }

    /// From `user_registered`/`user_updated`: creates the user or refreshes the email. The
    /// name from the event replaces the display name only when it is not the name auth sent last
    /// (a sign-up name replaces the placeholder of an early request, a name changed through
    /// auth follows); an event for anything else never reverts a rename made here.
    func upsertFromAuth(_ userID: UUID, displayName: String?, email: String?, on connection: PostgresConnection) async throws {
        try await connection.query("""
            INSERT INTO users (id, display_name, email, auth_name)
            SELECT \(userID), \(displayName ?? Self.defaultName(email: email)), \(email), \(displayName)
            WHERE NOT EXISTS (SELECT 1 FROM deleted_users WHERE user_id = \(userID))
            ON CONFLICT (id) DO UPDATE SET
                email = EXCLUDED.email,
                display_name = CASE WHEN EXCLUDED.auth_name IS NOT NULL AND EXCLUDED.auth_name IS DISTINCT FROM users.auth_name
                                    THEN EXCLUDED.auth_name ELSE users.display_name END,
                auth_name = coalesce(EXCLUDED.auth_name, users.auth_name),
                updated_at = now()
            """, logger: logger)
    }

    /// Another user's public row, for the caller's user cache: someone they share a group with,
    /// or who sent a message in one of their groups (also after leaving it). nil otherwise.
    func visible(_ userID: UUID, to viewer: UUID, on connection: PostgresConnection) async throws -> StoredUser? {
        try await connection.query("""
            SELECT \(unescaped: StoredUser.columns.split(separator: ", ").map { "u.\($0)" }.joined(separator: ", ")) FROM users u
            WHERE u.id = \(userID) AND (u.id = \(viewer)
                OR EXISTS (SELECT 1 FROM group_members a JOIN group_members b ON b.group_id = a.group_id WHERE a.user_id = \(viewer) AND b.user_id = u.id)
                OR EXISTS (SELECT 1 FROM group_members a JOIN messages m ON m.group_id = a.group_id WHERE a.user_id = \(viewer) AND m.sent_by = u.id))
            """, logger: logger).collect().first.map(StoredUser.init(row:))
    }

    /// Everyone who shares a group with the user now.
    func sharingGroups(with userID: UUID, on connection: PostgresConnection) async throws -> [UUID] {
        try await connection.query("""
            SELECT DISTINCT b.user_id FROM group_members a JOIN group_members b ON b.group_id = a.group_id
            WHERE a.user_id = \(userID) AND b.user_id <> \(userID) ORDER BY b.user_id
            """, logger: logger).values(UUID.self)
    }

    func update(_ userID: UUID, displayName: String?, avatarVersion: Int64??, on connection: PostgresConnection) async throws -> StoredUser? {
        let setAvatar = avatarVersion != nil
        let version: Int64? = avatarVersion ?? nil
        return try await connection.query("""
            UPDATE users SET
                display_name = coalesce(\(displayName), display_name),
                avatar_version = CASE WHEN \(setAvatar) THEN \(version) ELSE avatar_version END,
                updated_at = now()
            WHERE id = \(userID)
            RETURNING \(unescaped: StoredUser.columns)
            """, logger: logger).collect().first.map(StoredUser.init(row:))
    }

    /// Users of these addresses (case-insensitive), by lowercased address.
    func byEmail(_ emails: [String], on connection: PostgresConnection) async throws -> [String: UUID] {
        let lowered = emails.map { $0.lowercased() }
        var found: [String: UUID] = [:]
        let rows = try await connection.query("""
            SELECT lower(email), id FROM users WHERE lower(email) = ANY(\(lowered))
            """, logger: logger).read { c in try (c.next(String.self), c.next(UUID.self)) }
        for (email, id) in rows {
            found[email] = id
        }
        return found
    }

    /// Deletes the user row (memberships, messages and events cascade) and remembers the id.
    func erase(_ userID: UUID, on connection: PostgresConnection) async throws {
        try await connection.query("INSERT INTO deleted_users (user_id) VALUES (\(userID)) ON CONFLICT DO NOTHING", logger: logger)
        try await connection.query("DELETE FROM users WHERE id = \(userID)", logger: logger)
    }
}
