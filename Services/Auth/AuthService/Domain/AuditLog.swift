import ColonyModels
import ColonyPlatform
import Foundation
import PostgresNIO

/// GoTrue's audit actions (`models.AuditAction`) and the log type each belongs to.
public enum AuditAction: String, Sendable, CaseIterable {
    case login, logout
    case inviteAccepted = "invite_accepted"
    case userSignedUp = "user_signedup"
    case userInvited = "user_invited"
    case userDeleted = "user_deleted"
    case userModified = "user_modified"
    case userRecoveryRequested = "user_recovery_requested"
    case userReauthenticateRequested = "user_reauthenticate_requested"
    case userConfirmationRequested = "user_confirmation_requested"
    case userRepeatedSignUp = "user_repeated_signup"
    case userUpdatedPassword = "user_updated_password"
    case tokenRevoked = "token_revoked"
    case tokenRefreshed = "token_refreshed"
    case factorInProgress = "factor_in_progress"
    case factorUnenrolled = "factor_unenrolled"
    case challengeCreated = "challenge_created"
    case verificationAttempted = "verification_attempted"
    case factorDeleted = "factor_deleted"
    case factorUpdated = "factor_updated"
    case identityLinked = "identity_linked"
    case identityUnlinked = "identity_unlinked"
    /// Colony's: a copy of the person's data was asked for (by them, or by an operator).
    case userExportRequested = "user_export_requested"

    /// GoTrue's `ActionLogTypeMap`.
    public var logType: String {
        switch self {
        case .login, .logout, .inviteAccepted: "account"
        case .userSignedUp, .userInvited, .userDeleted: "team"
        case .tokenRevoked, .tokenRefreshed: "token"
        case .userModified, .userRecoveryRequested, .userReauthenticateRequested, .userConfirmationRequested,
             .userRepeatedSignUp, .userUpdatedPassword, .identityLinked, .identityUnlinked, .userExportRequested: "user"
        case .factorInProgress, .factorUnenrolled, .challengeCreated, .verificationAttempted, .factorDeleted, .factorUpdated: "factor"
        }
    }
}

/// Who did it: a user (username = phone if it has one, else email, as GoTrue), the app's
/// operator through its service-role key (GoTrue names the admin by its role, id nil), or an
/// operator by name (the console's).
public struct AuditActor: Sendable, Equatable {
    public var id: UUID
    public var username: String
    public var name: JSONValue?

    public static func user(_ user: UserRecord) -> AuditActor {
        let phone = user.phone.flatMap { $0.isEmpty ? nil : $0 }
        return AuditActor(id: user.id, username: phone ?? user.email ?? "", name: user.userMetadata["full_name"])
    }

    /// An operator acting by name: outside the API (`colony-auth export`), or through the
    /// console's credential on the admin routes (their email, `X-Colony-Operator`). The admin's
    /// nil id, as for the service-role key, with the operator's name as the username.
    public static func `operator`(_ name: String) -> AuditActor {
        AuditActor(id: serviceRole.id, username: name, name: nil)
    }

    public static let serviceRole = AuditActor(id: UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)), username: "service_role", name: nil)

    /// The entry's payload, GoTrue's shape. Traits never carry tokens or codes.
    public func payload(_ action: AuditAction, traits: [String: JSONValue]?) -> [String: JSONValue] {
        var payload: [String: JSONValue] = [
            "actor_id": .string(id.uuidString.lowercased()), "actor_username": .string(username), "actor_via_sso": .bool(false),
            "action": .string(action.rawValue), "log_type": .string(action.logType),
        ]
        if let name { payload["actor_name"] = name }
        if let traits { payload["traits"] = .object(traits) }
        return payload
    }
}

/// The traits GoTrue gives entries about another account (admin actions).
func auditTraits(of user: UserRecord) -> [String: JSONValue] {
    ["user_id": .string(user.id.uuidString.lowercased()), "user_email": .string(user.email ?? ""), "user_phone": .string(user.phone ?? "")]
}

/// GoTrue answers bad audit parameters 400 `validation_failed`.
private func auditBadRequest(_ message: String) -> APIError {
    APIError(.badRequest, code: "validation_failed", message: message)
}

/// `GET /admin/audit`'s `query`: `author:…`, `action:…` or `type:…`, matched as a substring
/// (GoTrue's ILIKE), case-insensitively.
public struct AuditQuery: Sendable, Equatable {
    public var fields: [String]
    public var value: String

    /// nil for no filter; a scope GoTrue does not know is 400 `validation_failed`.
    public static func parse(_ text: String?) throws -> AuditQuery? {
        guard let text, !text.isEmpty else { return nil }
        let parts = text.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        let fields: [String]? = switch parts.first.map(String.init) {
        case "author": ["actor_username", "actor_name"]
        case "action": ["action"]
        case "type": ["log_type"]
        default: nil
        }
        guard let fields, parts.count == 2 else { throw auditBadRequest("Invalid query scope: \(text.prefix(100))") }
        let value = String(parts[1])
        // Postgres text holds no NUL: refused here rather than failing the query.
        guard !value.unicodeScalars.contains("\u{0}") else { throw auditBadRequest("Invalid query value") }
        // GoTrue filters only on a non-empty value.
        return value.isEmpty ? nil : AuditQuery(fields: fields, value: value)
    }

    /// The value as a LIKE pattern matching it literally anywhere.
    var likePattern: String {
        var escaped = ""
        for character in value {
            if character == "\\" || character == "%" || character == "_" { escaped.append("\\") }
            escaped.append(character)
        }
        return "%" + escaped + "%"
    }
}

/// `page` and `per_page`: GoTrue's unsigned numbers (anything else 400), bounded so the offset
/// can never overflow: 1...1000 per page, pages past 10^9 read nothing.
public struct AuditPage: Sendable, Equatable {
    public static let defaultPerPage = 50
    public static let maximumPerPage = 1000
    public static let maximumPage = 1_000_000_000
    public var page: Int
    public var perPage: Int

    public init(page: Int, perPage: Int) {
        self.page = page
        self.perPage = perPage
    }

    public static func parse(page rawPage: String?, perPage rawPerPage: String?) throws -> AuditPage {
        func number(_ text: String?, default value: Int) throws -> Int {
            guard let text, !text.isEmpty else { return value }
            guard text.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) else { throw auditBadRequest("Bad Pagination Parameters: \(text.prefix(40)) is not a number") }
            // Digits only: a value too large for Int is past every bound anyway.
            return Int(text) ?? Int.max
        }
        let page = try number(rawPage, default: 1)
        let perPage = try number(rawPerPage, default: defaultPerPage)
        return AuditPage(page: min(max(page, 1), maximumPage), perPage: perPage == 0 ? defaultPerPage : min(perPage, maximumPerPage))
    }

    var offset: Int { (page - 1) * perPage }

    /// GoTrue's `Link` (next if there is one, last) and `X-Total-Count`, from the request's path
    /// and query with `page` replaced.
    public func linkHeader(path: String, query: [(String, String)], total: Int) -> String {
        let totalPages = total / perPage + (total % perPage > 0 ? 1 : 0)
        func url(_ page: Int) -> String {
            var items = query.filter { $0.0 != "page" }
            items.append(("page", String(page)))
            items.sort { $0.0 < $1.0 }
            return path + "?" + items.map { "\(Accounts.percentEncoded($0.0))=\(Accounts.percentEncoded($0.1))" }.joined(separator: "&")
        }
        var header = ""
        if totalPages > page { header += "<\(url(page + 1))>; rel=\"next\", " }
        return header + "<\(url(totalPages))>; rel=\"last\""
    }
}

/// One entry as `GET /admin/audit` lists it.
public struct AuditLogEntryResource: Codable, Sendable, Equatable {
    public var id: String
    public var payload: [String: JSONValue]
    public var createdAt: Date
    public var ipAddress: String
}

extension Accounts {
    /// Records `action` in the transaction of the change it describes: rolled back with it.
    func audit(_ action: AuditAction, actor: AuditActor, traits: [String: JSONValue]? = nil, ip: String? = nil, app: App, on connection: PostgresConnection) async throws {
        try await AuditLogStore(logger: logger).insert(app: app, payload: actor.payload(action, traits: traits), ip: ip ?? "", on: connection)
    }

    /// `GET /admin/audit`: a page of the app's entries, newest first, and how many match.
    public func auditLog(app: App, query: AuditQuery?, page: AuditPage) async throws -> (entries: [AuditLogEntryResource], total: Int) {
        try await database.withConnection { connection in
            try await AuditLogStore(logger: logger).list(app: app, query: query, page: page, on: connection)
        }
    }
}
