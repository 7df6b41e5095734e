import ColonyModels
import ColonyPlatform
import Foundation
import Logging
import PostgresNIO

/// An operator as the console keeps them (`operators`).
public struct OperatorRecord: Sendable, Equatable {
    public var id: UUID
    public var email: String
    public var rights: OperatorRights
    public var passwordHash: String?
    public var totpSecret: String?
    public var totpConfirmedAt: Date?
    public var totpLastStep: Int64?
    public var failedAttempts: Int
    public var lockedUntil: Date?
    public var disabledAt: Date?
    public var invitationExpiresAt: Date?
    public var createdBy: String
    public var createdAt: Date
    public var lastSignInAt: Date?

    public var role: OperatorRole { rights.role }
}

/// Plain SQL over `operators`.
struct OperatorStore {
    let logger: Logger

    private static let columns = """
        id, email, role, apps, password_hash, totp_secret, totp_confirmed_at, totp_last_step, failed_attempts, locked_until,
        disabled_at, invitation_expires_at, created_by, created_at, last_sign_in_at
        """

    private func records(_ rows: PostgresRowSequence) async throws -> [OperatorRecord] {
        var records: [OperatorRecord] = []
        for try await row in rows {
            let record = try row.read { c -> OperatorRecord? in
                let (id, email, role, apps, password, secret, confirmed, step) = try (
                    c.next(UUID.self), c.next(String.self), c.next(String.self), c.next([String].self), c.next(String?.self), c.next(String?.self),
                    c.next(Date?.self), c.next(Int64?.self))
                let (failed, locked, disabled, invitation, by, created, lastSignIn) = try (
                    c.next(Int.self), c.next(Date?.self), c.next(Date?.self), c.next(Date?.self), c.next(String.self), c.next(Date.self), c.next(Date?.self))
                // The role is CHECKed; apps this build does not know are left out of the rights.
                guard let role = OperatorRole(rawValue: role) else { return nil }
                return OperatorRecord(id: id, email: email, rights: OperatorRights(role: role, apps: apps.compactMap(App.init(rawValue:))),
                                      passwordHash: password, totpSecret: secret, totpConfirmedAt: confirmed, totpLastStep: step, failedAttempts: failed,
                                      lockedUntil: locked, disabledAt: disabled, invitationExpiresAt: invitation, createdBy: by, createdAt: created, lastSignInAt: lastSignIn)
            }
            if let record { records.append(record) }
        }
        return records
    }

    func find(email: String, on connection: PostgresConnection) async throws -> OperatorRecord? {
        try await records(connection.query("SELECT \(unescaped: Self.columns) FROM operators WHERE email = \(email.lowercased())", logger: logger)).first
    }

    func find(id: UUID, on connection: PostgresConnection) async throws -> OperatorRecord? {
        try await records(connection.query("SELECT \(unescaped: Self.columns) FROM operators WHERE id = \(id)", logger: logger)).first
    }

    /// Locks the row for a sign-in step (counts of failures must not race).
    func lock(id: UUID, on connection: PostgresConnection) async throws -> OperatorRecord? {
        try await records(connection.query("SELECT \(unescaped: Self.columns) FROM operators WHERE id = \(id) FOR UPDATE", logger: logger)).first
    }

    func find(invitationHash: String, on connection: PostgresConnection) async throws -> OperatorRecord? {
        try await records(connection.query("SELECT \(unescaped: Self.columns) FROM operators WHERE invitation_hash = \(invitationHash) FOR UPDATE", logger: logger)).first
    }

    func all(on connection: PostgresConnection) async throws -> [OperatorRecord] {
        try await records(connection.query("SELECT \(unescaped: Self.columns) FROM operators ORDER BY email", logger: logger))
    }

    /// Inserts an operator with an open invitation; false when the address has one already.
    func insert(id: UUID, email: String, rights: OperatorRights, invitationHash: String, invitationExpiresAt: Date, createdBy: String,
                on connection: PostgresConnection) async throws -> Bool {
        let rows = try await connection.query("""
            INSERT INTO operators (id, email, role, apps, invitation_hash, invitation_expires_at, created_by)
            VALUES (\(id), \(email.lowercased()), \(rights.role.rawValue), \(rights.apps.map(\.rawValue)), \(invitationHash), \(invitationExpiresAt), \(createdBy))
            ON CONFLICT (email) DO NOTHING RETURNING id
            """, logger: logger)
        return try await rows.values(UUID.self).count == 1
    }

    /// A new invitation (and no password, no factor): the operator sets both up again.
    func reinvite(id: UUID, invitationHash: String, invitationExpiresAt: Date, on connection: PostgresConnection) async throws {
        try await connection.query("""
            UPDATE operators SET invitation_hash = \(invitationHash), invitation_expires_at = \(invitationExpiresAt), password_hash = NULL,
                totp_secret = NULL, totp_confirmed_at = NULL, totp_last_step = NULL, failed_attempts = 0, locked_until = NULL,
                disabled_at = NULL, updated_at = now()
            WHERE id = \(id)
            """, logger: logger)
    }

    func acceptInvitation(id: UUID, passwordHash: String, on connection: PostgresConnection) async throws {
        try await connection.query("""
            UPDATE operators SET password_hash = \(passwordHash), invitation_hash = NULL, invitation_expires_at = NULL, updated_at = now() WHERE id = \(id)
            """, logger: logger)
    }

    func setRights(id: UUID, rights: OperatorRights, on connection: PostgresConnection) async throws {
        try await connection.query("""
            UPDATE operators SET role = \(rights.role.rawValue), apps = \(rights.apps.map(\.rawValue)), updated_at = now() WHERE id = \(id)
            """, logger: logger)
    }

    func setDisabled(id: UUID, _ disabled: Bool, on connection: PostgresConnection) async throws {
        try await connection.query("""
            UPDATE operators SET disabled_at = CASE WHEN \(disabled) THEN now() ELSE NULL END, updated_at = now() WHERE id = \(id)
            """, logger: logger)
    }

    func recordFailure(id: UUID, failures: Int, lockedUntil: Date?, on connection: PostgresConnection) async throws {
        try await connection.query("""
            UPDATE operators SET failed_attempts = \(failures), locked_until = COALESCE(\(lockedUntil), locked_until) WHERE id = \(id)
            """, logger: logger)
    }

    func clearFailures(id: UUID, on connection: PostgresConnection) async throws {
        try await connection.query("UPDATE operators SET failed_attempts = 0, locked_until = NULL WHERE id = \(id)", logger: logger)
    }

    func setPendingSecret(id: UUID, secret: String, on connection: PostgresConnection) async throws {
        try await connection.query("UPDATE operators SET totp_secret = \(secret), totp_confirmed_at = NULL, updated_at = now() WHERE id = \(id)", logger: logger)
    }

    func confirmTOTP(id: UUID, step: Int64, on connection: PostgresConnection) async throws {
        try await connection.query("""
            UPDATE operators SET totp_confirmed_at = now(), totp_last_step = \(step), failed_attempts = 0, locked_until = NULL, updated_at = now() WHERE id = \(id)
            """, logger: logger)
    }

    func signedIn(id: UUID, step: Int64, on connection: PostgresConnection) async throws {
        try await connection.query("""
            UPDATE operators SET totp_last_step = \(step), failed_attempts = 0, locked_until = NULL, last_sign_in_at = now() WHERE id = \(id)
            """, logger: logger)
    }

    func count(on connection: PostgresConnection) async throws -> Int {
        try await connection.query("SELECT count(*)::int FROM operators", logger: logger).firstValue(Int.self) ?? 0
    }
}
