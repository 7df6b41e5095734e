import ColonyModels
import ColonyPlatform
import Foundation
import Logging
import PostgresNIO

/// `profiles`, and the erasure of a whole account.
struct ProfileStore: Sendable {
    let logger: Logger

    /// The profile, created when the registration event has not arrived yet; nil when deleted.
    func ensure(_ userID: UUID, on connection: PostgresConnection) async throws -> StoredProfile? {
        try await AccountLock.findOrCreate(userID, on: connection, logger: logger, find: { try await find(userID, on: connection) },
                                           create: { try await create(userID, on: connection) })
    }

    private func create(_ userID: UUID, on connection: PostgresConnection) async throws -> StoredProfile? {
        let created = try await connection.query("""
            WITH inserted AS (
                INSERT INTO profiles (id, name) SELECT \(userID), \(SignUpProfile.name(of: userID, maxLength: NearbyRules.maxName) ?? "")
                WHERE NOT EXISTS (SELECT 1 FROM deleted_users WHERE user_id = \(userID))
                ON CONFLICT (id) DO NOTHING
                RETURNING \(unescaped: StoredProfile.columns)
            )
            SELECT \(unescaped: StoredProfile.columns) FROM inserted
            UNION ALL
            SELECT \(unescaped: StoredProfile.columns) FROM profiles WHERE id = \(userID)
            LIMIT 1
            """, logger: logger).collect().first.map(StoredProfile.init(row:))
        if let created { return created }
        // Auth's event (or another request) created it a moment ago, after this statement's
        // snapshot, so the conflict left nothing to return: read again.
        return try await find(userID, on: connection)
    }

    func find(_ userID: UUID, on connection: PostgresConnection) async throws -> StoredProfile? {
        for try await profile in try await connection.execute(FindProfile(userID: userID), logger: logger) { return profile }
        return nil
    }

    /// From `user_registered`: creates the profile with the sign-up name (kept if already set).
    func upsertFromAuth(_ userID: UUID, name: String?, on connection: PostgresConnection) async throws {
        try await connection.query("""
            INSERT INTO profiles (id, name)
            SELECT \(userID), \(name ?? "")
            WHERE NOT EXISTS (SELECT 1 FROM deleted_users WHERE user_id = \(userID))
            ON CONFLICT (id) DO UPDATE SET name = CASE WHEN profiles.name = '' THEN EXCLUDED.name ELSE profiles.name END
            """, logger: logger)
    }

    struct Changes: Sendable {
        var name: String?
        var bio: String??
        var school: String??
        var birthday: LocalDate??
        var socialLinks: SocialLinks?
        var photoVersion: Int64??
        var darkMode: Bool?
        var satelliteMap: Bool?
        var shareLocation: Bool?
    }

    func update(_ userID: UUID, _ changes: Changes, on connection: PostgresConnection) async throws -> StoredProfile? {
        let links = try changes.socialLinks.map { String(decoding: try ColonyJSON.encoder().encode($0), as: UTF8.self) }
        return try await connection.query("""
            UPDATE profiles SET
                name = coalesce(\(changes.name), name),
                bio = CASE WHEN \(changes.bio != nil) THEN \(changes.bio ?? nil) ELSE bio END,
                school = CASE WHEN \(changes.school != nil) THEN \(changes.school ?? nil) ELSE school END,
                birthday = CASE WHEN \(changes.birthday != nil) THEN \(changes.birthday ?? nil) ELSE birthday END,
                social_links = coalesce(\(links)::jsonb, social_links),
                photo_version = CASE WHEN \(changes.photoVersion != nil) THEN \(changes.photoVersion ?? nil) ELSE photo_version END,
                dark_mode = coalesce(\(changes.darkMode), dark_mode),
                satellite_map = coalesce(\(changes.satelliteMap), satellite_map),
                share_location = coalesce(\(changes.shareLocation), share_location),
                updated_at = now()
            WHERE id = \(userID)
            RETURNING \(unescaped: StoredProfile.columns)
            """, logger: logger).collect().first.map(StoredProfile.init(row:))
    }

    /// Deletes the profile (its location cascades) and its blocks both ways, and remembers the id.
    func erase(_ userID: UUID, on connection: PostgresConnection) async throws {
        try await connection.query("INSERT INTO deleted_users (user_id) VALUES (\(userID)) ON CONFLICT DO NOTHING", logger: logger)
        // `user_blocks` has no key to `profiles` (it is the platform's): erased here, not cascaded.
        try await BlockList.erase(userID, on: connection, logger: logger)
        try await connection.query("DELETE FROM profiles WHERE id = \(userID)", logger: logger)
    }
}

/// A profile by id, prepared once per connection: every request reads it first. `$1` the user.
struct FindProfile: PostgresPreparedStatement {
    static var sql: String { LocationSQL.profile }
    typealias Row = StoredProfile

    var userID: UUID

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 1)
        bindings.append(userID)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> StoredProfile { try StoredProfile(row: row) }
}
