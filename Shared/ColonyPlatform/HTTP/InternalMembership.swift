import AsyncHTTPClient
import ColonyModels
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import PostgresNIO

/// The deployment's service credential (`COLONY_INTERNAL_KEY`): what one Colony service presents
/// on another's internal routes (`Authorization: Bearer <key>`). It is no app's key and no user's
/// token: the gateway never routes `/internal/`, and a route behind it refuses anything else.
public struct InternalKey: Sendable {
    let value: String

    public init(_ value: String) {
        self.value = value
    }

    /// `COLONY_INTERNAL_KEY` (32+ characters, one value for every service), nil when unset: then
    /// internal routes refuse every call and realtime asks no owning service.
    public static func load(environment: EnvironmentReader, variable: String = "COLONY_INTERNAL_KEY") throws(ConfigurationError) -> InternalKey? {
        guard environment.isSet(variable) else {
            _ = environment.optionalString(variable)  // noted for `config check`
            return nil
        }
        return InternalKey(try environment.secret(variable, minimumLength: 32))
    }

    /// Whether `presented` is the key, compared in constant time (no timing hint of a prefix).
    public func matches(_ presented: String) -> Bool {
        let expected = Array(value.utf8), given = Array(presented.utf8)
        var difference = UInt8(expected.count == given.count ? 0 : 1)
        for index in 0..<expected.count {
            difference |= expected[index] ^ (index < given.count ? given[index] : 0)
        }
        return difference == 0
    }

    public var authorization: String { "Bearer \(value)" }
}

/// `GET /internal/v1/members/{scope}/{id}/{user}`: whether `user` is, right now, a member of the
/// owning service's group, circle or hive, read from its own tables (not a projection). Realtime
/// asks it when its projection has not seen a membership yet (the event on its way, the broker
/// down). Only the service credential is accepted; an app's keys and users' tokens get 401.
public enum InternalMembershipRoute {
    public static let path = "/internal/v1/members"

    /// `scope` is the one kind of membership this service owns; `isMember(scope_id, user, connection)` reads it.
    public static func add(to router: Router<ColonyRequestContext>, scope: MembershipScope, key: InternalKey?, database: Database,
                           isMember: @escaping @Sendable (UUID, UUID, PostgresConnection) async throws -> Bool) {
        router.on(RouterPath("\(path)/{scope}/{id}/{user}"), method: .get) { request, context in
            try authorize(request, key: key)
            guard context.parameters.get("scope") == scope.rawValue,
                  let id = context.parameters.get("id").flatMap({ UUID(canonical: $0) }),
                  let user = context.parameters.get("user").flatMap({ UUID(canonical: $0) })
            else { throw APIError.notFound("no such membership scope or id", code: "not_found") }
            let member = try await database.withConnection { connection in try await isMember(id, user, connection) }
            return try RouteSupport.json(Answer(member: member), status: .ok)
        }
    }

    /// A 401 unless the request carries the service credential (and the deployment has one).
    static func authorize(_ request: Request, key: InternalKey?) throws {
        let refusal = APIError.unauthorized("the service credential is required", code: "invalid_service_credential")
        guard let key, let header = request.headers[.authorization], let token = BearerToken.from(authorization: header), key.matches(token) else {
            throw refusal
        }
    }

    public struct Answer: Codable, Sendable, Equatable {
        public var member: Bool
        public init(member: Bool) { self.member = member }
    }
}

/// The calling side of `InternalMembershipRoute`.
public struct InternalMembershipClient: Sendable {
    public let key: InternalKey
    public let timeout: TimeAmount
    let httpClient: HTTPClient

    /// The default deadline is one a busy 2-core machine meets: a request that waits on this
    /// answer is better late than wrong (a 2 s deadline refused a Live Activity in CI).
    public init(key: InternalKey, timeout: TimeAmount = .seconds(10), httpClient: HTTPClient = .shared) {
        self.key = key
        self.timeout = timeout
        self.httpClient = httpClient
    }

    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// The owning service's answer (`base` is its root URL, e.g. `http://circles:8080`); throws
    /// when it cannot be reached or answers anything but 200 with `{"member": bool}`.
    public func isMember(_ user: UUID, of scope: MembershipScope, _ id: UUID, base: String) async throws -> Bool {
        try await get("\(InternalMembershipRoute.path)/\(scope.rawValue)/\(id.lowercased)/\(user.lowercased)", base: base,
                      as: InternalMembershipRoute.Answer.self, limit: 4096).member
    }
}
