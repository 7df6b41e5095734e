import ColonyModels
import ColonyPlatform
import Foundation
import Hummingbird
import PostgresNIO

/// A session as an operator sees it: when and where it started, when it was last used, how
/// strongly it signed in. Never a token.
public struct SessionSummary: Sendable, Equatable {
    public var id: UUID
    public var userId: UUID
    public var createdAt: Date
    public var updatedAt: Date
    public var refreshedAt: Date?
    public var lastUsedAt: Date
    public var userAgent: String?
    public var ip: String?
    public var aal: String
    public var factorId: UUID?
    public var notAfter: Date?
}

/// `GET /admin/users/{id}/sessions`'s entries: GoTrue's session fields (its `sessions` table has
/// no admin route) and `last_used_at`.
public struct AdminSessionResource: ResponseCodable, Equatable, Sendable {
    public var id: String
    public var userId: String
    public var createdAt: Date
    public var updatedAt: Date
    public var refreshedAt: Date?
    public var lastUsedAt: Date
    public var userAgent: String?
    public var ip: String?
    public var aal: String
    public var factorId: String?
    public var notAfter: Date?

    public init(_ session: SessionSummary) {
        id = session.id.uuidString.lowercased()
        userId = session.userId.uuidString.lowercased()
        (createdAt, updatedAt, refreshedAt, lastUsedAt) = (session.createdAt, session.updatedAt, session.refreshedAt, session.lastUsedAt)
        (userAgent, ip, aal, notAfter) = (session.userAgent, session.ip, session.aal, session.notAfter)
        factorId = session.factorId?.uuidString.lowercased()
    }
}

struct AdminSessionList: ResponseCodable {
    var sessions: [AdminSessionResource]
}

/// The operator's calls the console makes (and an app's service-role key may make): search,
/// a user's sessions, signing them out, sending them a link. The actor is who the audit log names.
extension Accounts {
    /// `GET /admin/users?filter=`: a page of the search's matches and their number (at most
    /// `UserSearch.maximumMatches`).
    public func adminSearch(app: App, search: UserSearch, page: Int, perPage: Int) async throws -> (users: [UserResource], total: Int) {
        let (records, total) = try await database.withConnection { connection in
            try await users.search(app: app, search, page: page, perPage: perPage, on: connection)
        }
        return (records.map(UserResource.init), total)
    }

    /// `GET /admin/users/{id}/sessions`: newest first; 404 for an account of another app.
    public func adminSessions(app: App, userID: UUID) async throws -> [AdminSessionResource] {
        try await database.withConnection { connection in
            guard try await users.find(id: userID, app: app, on: connection) != nil else { throw AuthErrors.userNotFound }
            return try await sessions.list(userID: userID, on: connection).map(AdminSessionResource.init)
        }
    }

    /// `POST /admin/users/{id}/logout`: every session ends, their refresh tokens with them, as the
    /// user's own `logout` with scope `global`; recorded as `logout` by `actor`.
    public func adminLogout(app: App, userID: UUID, actor: AuditActor) async throws {
        try await database.transaction { connection in
            guard let user = try await users.find(id: userID, app: app, on: connection, forUpdate: true) else { throw AuthErrors.userNotFound }
            try await sessions.deleteAll(userID: userID, on: connection)
            try await audit(.logout, actor: actor, traits: auditTraits(of: user), app: app, on: connection)
        }
    }

    /// `POST /admin/users/{id}/recover`: the recovery mail `POST /recover` sends the account's
    /// address (its code and link, the recipient's send budget spent alike), or, for an account
    /// with a phone only, the sign-in code `POST /otp` texts (phones have no recovery of their own;
    /// the number's and the app's SMS budgets count). Sent now rather than queued: the operator
    /// knows the account, so the answer may say what happened. A banned account gets nothing (400
    /// `user_banned`). Recorded as `user_recovery_requested` by `actor`.
    public func adminRecover(app: App, userID: UUID, actor: AuditActor, redirectTo: String?) async throws {
        let message: OutgoingMessage = try await database.transaction { connection in
            guard var user = try await users.find(id: userID, app: app, on: connection, forUpdate: true) else { throw AuthErrors.userNotFound }
            guard !user.isBanned else { throw AuthErrors.userBanned }
            let message: OutgoingMessage
            if let email = user.email {
                message = try await prepareMessage(user: &user, kind: .recovery, recipient: email, redirectTo: redirectTo, pkce: nil, on: connection)
            } else if let phone = user.phone {
                guard settings.app(app).phoneEnabled else { throw AuthErrors.phoneProviderDisabled }
                message = try await prepareMessage(user: &user, kind: .sms, recipient: phone, redirectTo: nil, pkce: nil, on: connection)
            } else {
                throw Self.noAddress
            }
            try await users.update(user, on: connection)
            try await audit(.userRecoveryRequested, actor: actor, traits: auditTraits(of: user), app: app, on: connection)
            return message
        }
        try await deliver(message)
    }

    /// An anonymous account: nothing to send a link or code to.
    static let noAddress = APIError(.unprocessableContent, code: "validation_failed", message: "The account has no email address or phone number")
}
