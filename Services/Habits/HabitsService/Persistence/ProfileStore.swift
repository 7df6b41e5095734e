import ColonyModels
import ColonyPlatform
import Foundation
import Logging
import PostgresNIO

/// `profiles` and the erasure of a whole account.
struct ProfileStore: Sendable {
    let logger: Logger

    /// The seed's default name for a new user: "Bee " and the first six characters of the id.
    static func defaultName(for userID: UUID) -> String {
        "Bee " + String(userID.uuidString.lowercased().prefix(6))
    }

    /// The user's profile, created with defaults when the registration event has not arrived
    /// yet. nil when the account was deleted.
    func ensure(_ userID: UUID, on connection: PostgresConnection) async throws -> ProfileRow? {
        try await AccountLock.findOrCreate(userID, on: connection, logger: logger, find: { try await find(userID, on: connection) },
                                           create: { try await create(userID, on: connection) })
    }

    private func create(_ userID: UUID, on connection: PostgresConnection) async throws -> ProfileRow? {
        let rows = try await connection.query("""
            WITH inserted AS (
                INSERT INTO profiles (id, display_name)
                SELECT \(userID), \(SignUpProfile.name(of: userID) ?? Self.defaultName(for: userID))
                WHERE NOT EXISTS (SELECT 1 FROM deleted_users WHERE user_id = \(userID))
                ON CONFLICT (id) DO NOTHING
                RETURNING \(unescaped: ProfileRow.columns)
            )
            SELECT \(unescaped: ProfileRow.columns) FROM inserted
            UNION ALL
            SELECT \(unescaped: ProfileRow.columns) FROM profiles WHERE id = \(userID)
            LIMIT 1
            """, logger: logger)
        if let profile = try await rows.collect().first.map(ProfileRow.init(row:)) { return profile }
        // Auth's event (or another request) created it a moment ago, after this statement's
        // snapshot, so the conflict left nothing to return: read again.
        return try await find(userID, on: connection)
    }

    /// `ensure`, with a deleted account answered as 401 `account_deleted`.
    func require(_ userID: UUID, on connection: PostgresConnection) async throws -> ProfileRow {
        guard let profile = try await ensure(userID, on: connection) else { throw HabitsErrors.profileGone }
        return profile
    }

    func find(_ userID: UUID, on connection: PostgresConnection) async throws -> ProfileRow? {
        try await connection.query("SELECT \(unescaped: ProfileRow.columns) FROM profiles WHERE id = \(userID)", logger: logger)
            .collect().first.map(ProfileRow.init(row:))
    }

    struct Changes: Sendable {
        var displayName: String?
        var avatarUrl: String??
        var timezone: String?
        var dayStartHour: Int?
        var theme: String?
    }

    func update(_ userID: UUID, _ changes: Changes, on connection: PostgresConnection) async throws -> ProfileRow? {
        let setAvatar = changes.avatarUrl != nil
        let avatar: String? = changes.avatarUrl ?? nil
        return try await connection.query("""
            UPDATE profiles SET
                display_name = coalesce(\(changes.displayName), display_name),
                avatar_url = CASE WHEN \(setAvatar) THEN \(avatar) ELSE avatar_url END,
                timezone = coalesce(\(changes.timezone), timezone),
                day_start_hour = coalesce(\(changes.dayStartHour), day_start_hour),
                theme = coalesce(\(changes.theme), theme),
                updated_at = now()
            WHERE id = \(userID)
            RETURNING \(unescaped: ProfileRow.columns)
            """, logger: logger).collect().first.map(ProfileRow.init(row:))
    }

    /// From auth's `user_registered`/`user_updated`: creates the profile or refreshes the phone
    /// hash; a name from the sign-up metadata replaces the default name only.
    func upsertFromAuth(_ userID: UUID, displayName: String?, phoneHash: String?, on connection: PostgresConnection) async throws {
        let defaultName = Self.defaultName(for: userID)
        try await connection.query("""
            INSERT INTO profiles (id, display_name, phone_hash)
            SELECT \(userID), \(displayName ?? defaultName), \(phoneHash)
            WHERE NOT EXISTS (SELECT 1 FROM deleted_users WHERE user_id = \(userID))
            ON CONFLICT (id) DO UPDATE SET
                phone_hash = EXCLUDED.phone_hash,
                display_name = CASE WHEN profiles.display_name = \(defaultName) THEN EXCLUDED.display_name ELSE profiles.display_name END
            """, logger: logger)
    }

    /// Remembers the deletion (so late requests do not recreate the profile) and deletes the
    /// profile; the foreign keys take habits, logs, memberships, days, contacts, invitations and
    /// activity. The answers saved for its idempotent requests (they hold its data) go too.
    func erase(_ userID: UUID, on connection: PostgresConnection) async throws {
        try await connection.query("INSERT INTO deleted_users (user_id) VALUES (\(userID)) ON CONFLICT DO NOTHING", logger: logger)
        try await connection.query("DELETE FROM idempotency_keys WHERE user_id = \(userID)", logger: logger)
        try await connection.query("DELETE FROM profiles WHERE id = \(userID)", logger: logger)
    }
}
