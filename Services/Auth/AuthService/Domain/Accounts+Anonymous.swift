import ColonyModels
import ColonyPlatform
import Foundation
import Logging
import PostgresNIO

/// Anonymous users, as Supabase Auth has them: `POST /signup` with neither email nor phone gives
/// a session for an account with no address (`is_anonymous` in the token and the user), made
/// permanent, its id kept, once an address is confirmed (`PUT /user`, then the code or link) or
/// an identity is linked. Off for every app unless its settings say `anonymous_sign_ins`.
extension Accounts {
    static let anonymousProviderDisabled = APIError(.unprocessableContent, code: "anonymous_provider_disabled", message: "Anonymous sign-ins are disabled")
    static let anonymousPasswordWithoutAddress = AuthErrors.validation("Updating password of an anonymous user without an email or phone is not allowed")

    /// `POST /signup` without an address: a new anonymous account and its session. `data` is its
    /// user metadata. Counted per address in Postgres (each call makes an account, on any replica).
    public func signInAnonymously(app: App, data: [String: JSONValue], client: ClientInfo) async throws -> SessionResponse {
        let appSettings = settings.app(app)
        guard !appSettings.disableSignup else { throw AuthErrors.signupDisabled }
        guard appSettings.anonymousSignIns else { throw Self.anonymousProviderDisabled }
        // GoTrue gives anonymous users no provider in app_metadata.
        try MetadataLimits.check(user: data, app: [:])
        try await limiter.check("anonymous:ip:\(client.ip)", rule: settings.rateLimits.anonymousPerIP)
        let now = Date()
        let user = UserRecord(id: UUID(), app: app, email: nil, phone: nil, encryptedPassword: nil, emailConfirmedAt: nil, phoneConfirmedAt: nil,
                              appMetadata: [:], userMetadata: data, createdAt: now, updatedAt: now, isAnonymous: true)
        return try await database.transaction { connection in
            try await users.insert(user, on: connection)
            try await publishRegistered(user, on: connection)
            return try await issueSession(userID: user.id, app: app, method: "anonymous", client: client, on: connection)
        }
    }

    /// Whether the account is anonymous now (`PUT /user` decides before its transaction whether a
    /// password needs a reauthentication code: an anonymous account has no address to send one to).
    func isAnonymous(app: App, userID: UUID) async throws -> Bool {
        try await database.withConnection { connection in
            try await users.find(id: userID, app: app, on: connection)?.isAnonymous ?? false
        }
    }

    /// `PUT /user` of an anonymous account with an email, in an app that autoconfirms: the address
    /// is the account's at once and the account permanent, as an autoconfirmed sign-up (GoTrue
    /// does the same). Like that sign-up, it proves nothing: a password set with it stays unproven,
    /// so the address's owner can still take the account back (`AccountProof`).
    func adoptAutoconfirmedEmail(_ email: String, for user: inout UserRecord, on connection: PostgresConnection) async throws {
        if let holder = try await users.find(email: email, app: user.app, on: connection), holder.id != user.id { throw AuthErrors.emailOrPhoneTaken }
        let now = Date()
        (user.email, user.newEmail, user.emailConfirmedAt, user.emailChangeConfirmStatus) = (email, nil, now, 0)
        if user.encryptedPassword != nil { user.passwordUnproven = true }
        try await oneTimeTokens.delete(userID: user.id, kinds: [.emailChange, .emailChangeCurrent], on: connection)
        addProvider("email", to: &user)
        Self.markPermanent(&user)
        try await users.update(user, on: connection)
        try await addIdentity(for: user, provider: "email", on: connection)
    }

    /// A confirmed address makes an anonymous account permanent: its owner showed the code sent
    /// to it from this account's session, so a password set while anonymous is theirs.
    static func markPermanent(_ user: inout UserRecord) {
        guard user.isAnonymous else { return }
        user.isAnonymous = false
        user.passwordUnproven = false
    }

    /// For identity linking (OAuth web flow, `linkIdentity`, `grant_type=id_token` into a signed-in
    /// anonymous session): call in the linking transaction once the identity is saved, on the
    /// record the linking holds (locked `FOR UPDATE`). Makes the account permanent, keeping its
    /// id, saves it and tells the services (`user_updated`). Returns whether it was anonymous.
    /// GoTrue's linking does the same (`linking.go`).
    @discardableResult
    func convertAnonymousByLinking(_ user: inout UserRecord, on connection: PostgresConnection) async throws -> Bool {
        guard user.isAnonymous else { return false }
        user.isAnonymous = false
        try await users.update(user, on: connection)
        try await publishUpdated(user, on: connection)
        return true
    }
}

/// Erasing anonymous accounts nobody converted: per app with `anonymous_cleanup_days`, run by
/// auth's job scheduler. Each goes as an account deletion goes (`user_deleted`, so every service
/// erases what the user made).
public enum AnonymousUserCleanup {
    /// Accounts per transaction: a big backlog is worked off in short transactions.
    static let batchSize = 100

    /// Deletes every app's anonymous accounts made more than its `anonymous_cleanup_days` before
    /// `now`. Returns how many went.
    @discardableResult
    public static func run(settings: AuthSettings, database: Database, outbox: Outbox, logger: Logger, now: Date = Date()) async throws -> Int {
        var deleted = 0
        for app in App.allCases {
            guard let days = settings.app(app).anonymousCleanupDays else { continue }
            let cutoff = now.addingTimeInterval(-Double(days) * 86_400)
            while true {
                let batch: Int = try await database.transaction { connection in
                    // SKIP LOCKED: an account converting right now is left for the next run.
                    let rows = try await connection.query("""
                        DELETE FROM users WHERE id IN (
                            SELECT id FROM users WHERE app = \(app.rawValue) AND is_anonymous AND created_at < \(cutoff)
                            ORDER BY created_at LIMIT \(batchSize) FOR UPDATE SKIP LOCKED)
                        RETURNING id
                        """, logger: logger)
                    let ids = try await rows.values(UUID.self)
                    for id in ids {
                        try await outbox.publish(EventEnvelope(app: app, aggregateId: id.uuidString.lowercased(), actor: nil, payload: UserDeleted(userId: id, app: app, deletedAt: now)), on: connection, logger: logger)
                    }
                    return ids.count
                }
                deleted += batch
                if batch < batchSize { break }
            }
        }
        if deleted > 0 { logger.notice("anonymous accounts never converted deleted", metadata: ["count": "\(deleted)"]) }
        Retention.deleted(deleted, kind: "anonymous_accounts")
        return deleted
    }
}
