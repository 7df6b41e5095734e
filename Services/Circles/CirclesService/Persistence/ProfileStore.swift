import ColonyModels
import ColonyPlatform
import Foundation
import Logging
import PostgresNIO

/// `profiles` and the erasure of a whole account.
struct ProfileStore: Sendable {
    let logger: Logger

    static let columns = "user_id, display_name, handle, bio, dm_privacy::text, is_pro, full_name, location, address, email, phone, birthday, created_at, updated_at"

    static func decode(_ row: PostgresRow) throws -> MyProfile {
        try row.read { c in
            try MyProfile(userId: c.next(UUID.self).lowercased, displayName: c.next(String.self), handle: c.next(String.self), bio: c.next(String?.self),
                          dmPrivacy: Components.Schemas.DMPrivacy(rawValue: c.next(String.self)) ?? .anyone, isPro: c.next(Bool.self),
                          fullName: c.next(String?.self), location: c.next(String?.self), address: c.next(String?.self), email: c.next(String?.self),
                          phone: c.next(String?.self), birthday: c.next(LocalDate?.self)?.description, createdAt: c.next(Date.self), updatedAt: c.next(Date.self))
        }
    }

    /// The profile, created (name and handle from the email) when the registration event is
    /// late; nil once the account was deleted.
    func ensure(_ userID: UUID, email: String?, on connection: PostgresConnection) async throws -> MyProfile? {
        try await AccountLock.findOrCreate(userID, on: connection, logger: logger, find: { try await find(userID, on: connection) }, create: {
            // The token's sign-up name, as the event will bring it (the event still decides).
            let signUpName = SignUpProfile.name(of: userID)
            try await insert(userID, name: signUpName ?? email?.split(separator: "@").first.map(String.init) ?? "New member", authName: signUpName,
                             email: email, phone: nil, on: connection)
            return try await find(userID, on: connection)
        })
    }

    func find(_ userID: UUID, on connection: PostgresConnection) async throws -> MyProfile? {
        try await connection.query("SELECT \(unescaped: Self.columns) FROM profiles WHERE user_id = \(userID)", logger: logger)
            .collect().first.map(Self.decode)
    }

    /// The profile when `viewer` is its owner or shares a circle with them (a circle's members
    /// see each other's public profiles, and nobody else's); nil otherwise.
    func visible(_ userID: UUID, to viewer: UUID, on connection: PostgresConnection) async throws -> MyProfile? {
        try await connection.query("""
            SELECT \(unescaped: Self.columns) FROM profiles
            WHERE user_id = \(userID)
              AND (user_id = \(viewer) OR EXISTS (
                SELECT 1 FROM circle_members mine JOIN circle_members theirs ON theirs.circle_id = mine.circle_id
                WHERE mine.user_id = \(viewer) AND theirs.user_id = \(userID)))
            """, logger: logger).collect().first.map(Self.decode)
    }

    /// Whose handle this is (case does not matter).
    func byHandle(_ handle: String, on connection: PostgresConnection) async throws -> UUID? {
        try await connection.query("SELECT user_id FROM profiles WHERE lower(handle) = lower(\(handle))", logger: logger)
            .firstValue(UUID.self)
    }

    /// Creates the profile unless it exists or the account was deleted. `authName` is the name
    /// auth's event brought (nil for a placeholder made by a first request).
    func insert(_ userID: UUID, name: String, authName: String? = nil, email: String?, phone: String?, on connection: PostgresConnection) async throws {
        try await connection.query("""
            INSERT INTO profiles (user_id, display_name, auth_name, handle, email, phone)
            SELECT \(userID), \(String(name.prefix(60))), \(authName), \(CirclesRules.suggestedHandle(from: name, userID: userID)), \(email), \(phone)
            WHERE NOT EXISTS (SELECT 1 FROM deleted_users WHERE user_id = \(userID))
              AND NOT EXISTS (SELECT 1 FROM profiles WHERE user_id = \(userID))
            ON CONFLICT DO NOTHING
            """, logger: logger)
    }

    /// From `user_registered`/`user_updated`: creates the profile, or refreshes email and phone.
    /// A name from the event replaces the display name only when it is not the name auth sent
    /// last: a placeholder made before the event takes the sign-up name, a name changed through
    /// auth's metadata follows, and an event for another change (email) keeps the user's rename.
    func upsertFromAuth(_ userID: UUID, name: String?, email: String?, phone: String?, on connection: PostgresConnection) async throws {
        let name = name.map { String($0.prefix(60)) }
        try await insert(userID, name: name ?? email?.split(separator: "@").first.map(String.init) ?? "New member", authName: name, email: email, phone: phone, on: connection)
        try await connection.query("""
            UPDATE profiles SET email = \(email), phone = coalesce(\(phone), phone),
                display_name = CASE WHEN \(name)::text IS NOT NULL AND \(name)::text IS DISTINCT FROM auth_name THEN \(name) ELSE display_name END,
                auth_name = coalesce(\(name), auth_name),
                updated_at = now()
            WHERE user_id = \(userID)
            """, logger: logger)
    }

    /// Sets the Pro flag (the admin route); nil when there is no such profile.
    func setPro(_ userID: UUID, isPro: Bool, on connection: PostgresConnection) async throws -> MyProfile? {
        try await connection.query("UPDATE profiles SET is_pro = \(isPro), updated_at = now() WHERE user_id = \(userID) RETURNING \(unescaped: Self.columns)", logger: logger)
            .collect().first.map(Self.decode)
    }

    struct Changes: Sendable {
        var displayName: String?
        var handle: String?
        var bio: String??
        var dmPrivacy: DMPrivacy?
        var fullName: String??
        var location: String??
        var address: String??
        var phone: String??
        var birthday: LocalDate??
    }

    func update(_ userID: UUID, _ changes: Changes, on connection: PostgresConnection) async throws -> MyProfile? {
        try await connection.query("""
            UPDATE profiles SET
                display_name = coalesce(\(changes.displayName), display_name),
                handle = coalesce(\(changes.handle), handle),
                bio = CASE WHEN \(changes.bio != nil) THEN \(changes.bio ?? nil) ELSE bio END,
                dm_privacy = coalesce(\(changes.dmPrivacy?.rawValue)::dm_privacy, dm_privacy),
                full_name = CASE WHEN \(changes.fullName != nil) THEN \(changes.fullName ?? nil) ELSE full_name END,
                location = CASE WHEN \(changes.location != nil) THEN \(changes.location ?? nil) ELSE location END,
                address = CASE WHEN \(changes.address != nil) THEN \(changes.address ?? nil) ELSE address END,
                phone = CASE WHEN \(changes.phone != nil) THEN \(changes.phone ?? nil) ELSE phone END,
                birthday = CASE WHEN \(changes.birthday != nil) THEN \(changes.birthday ?? nil) ELSE birthday END,
                updated_at = now()
            WHERE user_id = \(userID)
            RETURNING \(unescaped: Self.columns)
            """, logger: logger).collect().first.map(Self.decode)
    }

    func handleTaken(_ handle: String, by userID: UUID, on connection: PostgresConnection) async throws -> Bool {
        try await !connection.query("SELECT 1 FROM profiles WHERE lower(handle) = lower(\(handle)) AND user_id <> \(userID)", logger: logger).collect().isEmpty
    }

    /// Deletes the profile; everything the user wrote cascades (posts, reactions, votes, RSVPs,
    /// DMs, presence, memberships). Remembers the id.
    func erase(_ userID: UUID, on connection: PostgresConnection) async throws {
        try await connection.query("INSERT INTO deleted_users (user_id) VALUES (\(userID)) ON CONFLICT DO NOTHING", logger: logger)
        try await connection.query("DELETE FROM profiles WHERE user_id = \(userID)", logger: logger)
    }
}

