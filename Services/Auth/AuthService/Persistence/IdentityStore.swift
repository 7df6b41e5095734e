import ColonyModels
import ColonyPlatform
import Foundation
import Logging
import PostgresNIO

/// Identities as account linking reads them; every query is scoped to one app.
struct IdentityStore {
    let logger: Logger

    /// The account holding the identity (provider, subject), and the identity's id.
    func owner(provider: String, subject: String, app: App, on connection: PostgresConnection) async throws -> (identityID: UUID, userID: UUID)? {
        let rows = try await connection.query("""
            SELECT id, user_id FROM identities WHERE app = \(app.rawValue) AND provider = \(provider) AND provider_id = \(subject)
            """, logger: logger)
        for try await row in rows { return try row.read { c in try (c.next(UUID.self), c.next(UUID.self)) } }
        return nil
    }

    /// Accounts whose email is one of `emails`.
    func accounts(withEmails emails: [String], app: App, on connection: PostgresConnection) async throws -> [UUID] {
        guard !emails.isEmpty else { return [] }
        let rows = try await connection.query("SELECT id FROM users WHERE app = \(app.rawValue) AND email = ANY(\(emails))", logger: logger)
        return try await rows.values(UUID.self)
    }

    /// Accounts holding an identity of another provider whose provider verified one of `emails`.
    func accounts(withVerifiedIdentityEmails emails: [String], app: App, on connection: PostgresConnection) async throws -> [UUID] {
        guard !emails.isEmpty else { return [] }
        let rows = try await connection.query("""
            SELECT DISTINCT user_id FROM identities
            WHERE app = \(app.rawValue) AND identity_data ? 'email' AND lower(identity_data->>'email') = ANY(\(emails))
              AND provider NOT IN ('email', 'phone') AND identity_data->>'email_verified' = 'true'
            """, logger: logger)
        return try await rows.values(UUID.self)
    }

    /// Adds the identity; false when (app, provider, subject) is already someone's.
    func insert(userID: UUID, app: App, provider: String, subject: String, data: [String: JSONValue], signedIn: Bool, on connection: PostgresConnection) async throws -> Bool {
        let rows = try await connection.query("""
            INSERT INTO identities (id, user_id, app, provider, provider_id, identity_data, last_sign_in_at)
            VALUES (\(UUID.timeOrdered()), \(userID), \(app.rawValue), \(provider), \(subject), \(try json(data))::jsonb, \(signedIn ? Date() : nil))
            ON CONFLICT (app, provider, provider_id) DO NOTHING RETURNING id
            """, logger: logger)
        return try await rows.firstValue(UUID.self) != nil
    }

    /// A sign-in through the identity: its data replaced by the provider's latest (as GoTrue).
    func signedIn(identityID: UUID, data: [String: JSONValue], on connection: PostgresConnection) async throws {
        try await connection.query("""
            UPDATE identities SET identity_data = \(try json(data))::jsonb, last_sign_in_at = now(), updated_at = now() WHERE id = \(identityID)
            """, logger: logger)
    }

    func delete(identityIDs: [UUID], userID: UUID, on connection: PostgresConnection) async throws {
        guard !identityIDs.isEmpty else { return }
        try await connection.query("DELETE FROM identities WHERE user_id = \(userID) AND id = ANY(\(identityIDs))", logger: logger)
    }
}
