import AsyncHTTPClient
import ColonyModels
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// Read-your-writes beyond realtime (issue 33.5): a service that answers from another's
/// projection asks the owner, over the same internal routes and credential as
/// `InternalMembershipRoute`, when its projection has not seen a committed write yet.
public enum InternalRoute {
    /// A GET route for the service credential only (401 `invalid_service_credential` for anything
    /// else: users' tokens, the apps' keys, no credential). The gateway never routes `/internal/`.
    public static func get(_ path: String, on router: Router<ColonyRequestContext>, key: InternalKey?,
                           _ handler: @escaping @Sendable (Request, ColonyRequestContext) async throws -> Response) {
        router.on(RouterPath(path), method: .get) { request, context in
            try InternalMembershipRoute.authorize(request, key: key)
            return try await handler(request, context)
        }
    }
}

/// `GET /internal/v1/event-posts/{post}/members/{user}` (circles): whether `post` is a live event
/// post of a circle `user` is a member of now. Notifications asks it before registering a Live
/// Activity its projection cannot vouch for yet. Answers `InternalMembershipRoute.Answer`.
public enum InternalEventPostRoute {
    public static let path = "/internal/v1/event-posts"
}

/// `GET /internal/v1/users/by-email?app=<app>&email=<a>&email=<b>…` (auth): the accounts of the
/// app with these addresses (case-insensitive), at most `maxEmails` per call. Chat asks it, in one
/// call, for the addresses its projection does not know yet.
public enum InternalUsersByEmailRoute {
    public static let path = "/internal/v1/users/by-email"
    public static let maxEmails = 100

    public struct Account: Codable, Sendable, Equatable {
        public var id: UUID
        /// Lower case, as asked.
        public var email: String
        /// The sign-up name (`user_metadata`), as `SignUpMetadata` reads it.
        public var displayName: String?

        public init(id: UUID, email: String, displayName: String?) {
            self.id = id
            self.email = email
            self.displayName = displayName
        }

        enum CodingKeys: String, CodingKey {
            case id, email
            case displayName = "display_name"
        }
    }

    public struct Answer: Codable, Sendable, Equatable {
        public var users: [Account]
        public init(users: [Account]) { self.users = users }
    }
}

extension InternalMembershipClient {
    /// An internal route of another service (`base` its root URL, `pathAndQuery` percent-encoded),
    /// with the service credential; throws unless it answers 200 with a body of `Answer` (read by
    /// `decoder`: `ColonyJSON.decoder()` for answers with times).
    public func get<Answer: Decodable>(_ pathAndQuery: String, base: String, as type: Answer.Type, limit: Int = 1 << 20,
                                       decoder: JSONDecoder = JSONDecoder()) async throws -> Answer {
        let root = base.hasSuffix("/") ? String(base.dropLast()) : base
        var request = HTTPClientRequest(url: root + pathAndQuery)
        request.method = .GET
        request.headers.add(name: "Authorization", value: key.authorization)
        let response: HTTPClientResponse
        do {
            response = try await httpClient.execute(request, timeout: timeout)
        } catch where (error as? HTTPClientError) != .deadlineExceeded {
            // Once more on a fresh connection: a pooled one may be to a process that has since
            // restarted. GETs only, so asking twice changes nothing.
            response = try await httpClient.execute(request, timeout: timeout)
        }
        let body = try await response.body.collect(upTo: limit)
        guard response.status == .ok else {
            throw Failure(description: "\(pathAndQuery.split(separator: "?").first ?? "") answered \(response.status.code)")
        }
        return try decoder.decode(Answer.self, from: Data(buffer: body))
    }

    /// Circles' answer: whether `post` is a live event post of a circle `user` is in.
    public func canSeeEventPost(_ post: UUID, user: UUID, base: String) async throws -> Bool {
        try await get("\(InternalEventPostRoute.path)/\(post.lowercased)/members/\(user.lowercased)", base: base,
                      as: InternalMembershipRoute.Answer.self).member
    }

    /// Auth's accounts of `app` with these addresses, by lower-cased address (one call, at most
    /// `InternalUsersByEmailRoute.maxEmails` addresses).
    public func usersByEmail(_ emails: [String], app: App, base: String) async throws -> [String: InternalUsersByEmailRoute.Account] {
        guard !emails.isEmpty else { return [:] }
        var allowed = CharacterSet.urlQueryAllowed
        allowed.remove(charactersIn: "&=+?#")
        let query = emails.prefix(InternalUsersByEmailRoute.maxEmails)
            .map { "email=\($0.lowercased().addingPercentEncoding(withAllowedCharacters: allowed) ?? "")" }.joined(separator: "&")
        let answer = try await get("\(InternalUsersByEmailRoute.path)?app=\(app.rawValue)&\(query)", base: base, as: InternalUsersByEmailRoute.Answer.self)
        return Dictionary(answer.users.map { ($0.email.lowercased(), $0) }, uniquingKeysWith: { first, _ in first })
    }
}

/// The name a user signed up with, from their access token's `user_metadata`, for the profile a
/// service creates on their first request when auth's `user_registered` has not arrived yet.
/// Only ever used to create a profile (never to change one): the event decides when it arrives.
/// The caller is the request's (`RequestCaller`, which the token middleware sets).
public enum SignUpProfile {
    /// The sign-up name of the request's caller (`SignUpMetadata.displayName`), if it is `user`.
    public static func name(of user: UUID, maxLength: Int = 60) -> String? {
        guard let caller = RequestCaller.user, caller.id == user else { return nil }
        return SignUpMetadata.displayName(caller.userMetadata, maxLength: maxLength)
    }
}

/// `GET /internal/v1/suspended-accounts` (auth): the accounts whose suspension is in force and
/// began within an access token's lifetime, so a token issued before it may still be live.
/// Every other service polls it (`SuspensionWatcher`) and refuses those accounts' tokens; an
/// older suspension needs no listing: no token issued before it is live, and auth issues none.
public enum SuspendedAccountsRoute {
    public static let path = "/internal/v1/suspended-accounts"

    public struct Account: Codable, Sendable, Equatable {
        public var userId: UUID
        public var app: App
        public var until: Date

        public init(userId: UUID, app: App, until: Date) {
            self.userId = userId
            self.app = app
            self.until = until
        }
    }

    public struct Answer: Codable, Sendable, Equatable {
        public var accounts: [Account]
        public init(accounts: [Account]) { self.accounts = accounts }
    }
}
