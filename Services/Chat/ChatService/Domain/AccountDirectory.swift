import ColonyModels
import ColonyPlatform
import Foundation
import Logging
import Metrics
import PostgresNIO

/// Read-your-writes for adding members by email: an address whose sign-up committed in auth but
/// whose `user_registered` has not reached chat yet is asked of auth (one call for all the
/// addresses chat does not know, `InternalUsersByEmailRoute`) instead of answered `unknown_emails`.
/// The caller's `MemberLookupBudget` has counted every address before this runs.
struct AccountDirectory: Sendable {
    let client: InternalMembershipClient
    /// Auth's root URL (`COLONY_AUTH_URL`).
    let authURL: String

    /// Unify's accounts among `emails`, by lower-cased address, each now a user row here (with the
    /// sign-up name, as the event will bring it; the event still refreshes it). Auth unreachable:
    /// none (the addresses stay unknown, as before).
    func accounts(_ emails: [String], on connection: PostgresConnection, logger: Logger) async throws -> [String: UUID] {
        let answered: [String: InternalUsersByEmailRoute.Account]
        do {
            answered = try await client.usersByEmail(emails, app: .unify, base: authURL)
        } catch {
            logger.warning("auth's account lookup failed; the addresses stay unknown", metadata: ["error": "\(error)"])
            Self.count("failed")
            return [:]
        }
        Self.count(answered.isEmpty ? "none" : "found")
        guard !answered.isEmpty else { return [:] }
        let store = UserStore(logger: logger)
        for account in answered.values.sorted(by: { $0.id.uuidString < $1.id.uuidString }) {
            try await store.createFromAuth(account, on: connection)
        }
        return try await store.byEmail(Array(answered.keys), on: connection)
    }
}

extension UserStore {
    /// A user row from auth's answer, unless it exists (by id or address) or the account was deleted.
    func createFromAuth(_ account: InternalUsersByEmailRoute.Account, on connection: PostgresConnection) async throws {
        let name = account.displayName.map { String($0.prefix(ChatRules.maxDisplayName)) }
        try await connection.query("""
            INSERT INTO users (id, display_name, email, auth_name)
            SELECT \(account.id), \(name ?? Self.defaultName(email: account.email)), \(account.email), \(name)
            WHERE NOT EXISTS (SELECT 1 FROM deleted_users WHERE user_id = \(account.id))
            ON CONFLICT DO NOTHING
            """, logger: logger)
    }
}

extension AccountDirectory {
    /// `colony_chat_account_lookups_total{answer}`: how often chat's projection was behind an add
    /// (`found`), the addresses had no account (`none`), or auth could not be asked (`failed`).
    static func count(_ answer: String) {
        Counter(label: "colony_chat_account_lookups_total", dimensions: [("answer", answer)]).increment()
    }

    /// nil unless the deployment has both the service credential and auth's URL.
    static func make(key: InternalKey?, authURL: String?) -> AccountDirectory? {
        guard let key, let authURL else { return nil }
        return AccountDirectory(client: InternalMembershipClient(key: key), authURL: authURL)
    }
}
