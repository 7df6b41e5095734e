import AsyncHTTPClient
import ColonyModels
import ColonyPlatform
import Foundation
import NIOCore
import NIOHTTP1

/// A user as auth's admin routes answer (Supabase Auth's user object, the fields the console shows).
public struct AdminUser: Decodable, Sendable {
    public struct Identity: Decodable, Sendable {
        public var provider: String
        public var email: String?
        public var createdAt: Date?
        public var lastSignInAt: Date?
    }

    public struct Factor: Decodable, Sendable {
        public var id: String
        public var friendlyName: String?
        public var factorType: String
        public var status: String
        public var createdAt: Date?
    }

    public var id: String
    public var email: String?
    public var phone: String?
    public var emailConfirmedAt: Date?
    public var phoneConfirmedAt: Date?
    public var confirmationSentAt: Date?
    public var lastSignInAt: Date?
    public var bannedUntil: Date?
    public var createdAt: Date?
    public var updatedAt: Date?
    public var isAnonymous: Bool?
    public var userMetadata: [String: JSONValue]?
    public var appMetadata: [String: JSONValue]?
    public var identities: [Identity]?
    public var factors: [Factor]?

    /// The name the apps show: `display_name`, else `full_name`, else `name` in the user's metadata.
    public var displayName: String? {
        for key in ["display_name", "full_name", "name"] {
            if case .string(let name)? = userMetadata?[key], !name.isEmpty { return name }
        }
        return nil
    }

    public var isBanned: Bool {
        guard let bannedUntil else { return false }
        return bannedUntil > Date()
    }
}

/// A session of a user, as auth's `GET /admin/users/{id}/sessions` lists them.
public struct AdminSession: Decodable, Sendable {
    public var id: String
    public var createdAt: Date?
    public var updatedAt: Date?
    public var refreshedAt: Date?
    public var userAgent: String?
    public var ip: String?
    public var aal: String?
}

/// One HTTP call from the console to a service's admin route, with the console's credential,
/// naming the operator and (where the route acts in one app) the app (`ConsoleCaller`).
public struct ConsoleHTTP: Sendable {
    let baseURL: String
    let key: InternalKey?
    let httpClient: HTTPClient
    /// A refused connection is retried until this passes: a page waits no longer for a service that is down.
    let timeout: TimeAmount

    public init(baseURL: String, key: InternalKey?, timeout: TimeAmount = .seconds(30), httpClient: HTTPClient = .shared) {
        self.baseURL = baseURL
        self.key = key
        self.timeout = timeout
        self.httpClient = httpClient
    }

    /// A service's answer other than 2xx: its status and `{"code","message"}` when it sent one.
    public struct Failure: Error, CustomStringConvertible {
        public var status: Int
        public var code: String?
        public var message: String?
        public var description: String { "answered \(status)\(code.map { " \($0)" } ?? "")\(message.map { ": \($0)" } ?? "")" }
    }

    func call<Answer: Decodable>(_ method: HTTPMethod, _ path: String, app: App?, operatorEmail: String, as: Answer.Type) async throws -> Answer {
        let body = try await send(method, path, body: nil, app: app, operatorEmail: operatorEmail)
        return try ColonyJSON.decoder().decode(Answer.self, from: Data(buffer: body))
    }

    @discardableResult
    func send(_ method: HTTPMethod, _ path: String, body: [String: String]?, app: App?, operatorEmail: String) async throws -> ByteBuffer {
        guard let key else { throw Failure(status: 503, code: "console_key_missing", message: "COLONY_CONSOLE_KEY is not set") }
        var request = HTTPClientRequest(url: baseURL + path)
        request.method = method
        for (name, value) in ConsoleCaller.headers(key: key, operatorEmail: operatorEmail, app: app) { request.headers.add(name: name, value: value) }
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(bytes: try ColonyJSON.encode(body)))
        }
        let response = try await httpClient.execute(request, timeout: timeout)
        let answer = try await response.body.collect(upTo: 8 << 20)
        guard (200..<300).contains(Int(response.status.code)) else {
            struct ErrorBody: Decodable { var code: String?; var message: String?; var msg: String? }
            let error = try? ColonyJSON.decoder().decode(ErrorBody.self, from: Data(buffer: answer))
            throw Failure(status: Int(response.status.code), code: error?.code, message: error?.message ?? error?.msg)
        }
        return answer
    }
}

/// Calls auth's admin routes (`ConsoleHTTP`): auth records the operator in its own audit log too.
public struct AuthAdminClient: Sendable {
    let http: ConsoleHTTP

    public init(baseURL: String, key: InternalKey?, httpClient: HTTPClient = .shared) {
        self.http = ConsoleHTTP(baseURL: baseURL, key: key, httpClient: httpClient)
    }

    struct UserList: Decodable { var users: [AdminUser] }

    /// Users of `app` matching `filter` (an id, an address's start, a phone's, a name's).
    public func search(_ filter: String, app: App, perPage: Int, operatorEmail: String) async throws -> [AdminUser] {
        var components = URLComponents()
        components.queryItems = [URLQueryItem(name: "filter", value: filter), URLQueryItem(name: "per_page", value: "\(perPage)")]
        let query = components.percentEncodedQuery ?? ""
        return try await http.call(.GET, "/auth/v1/admin/users?\(query)", app: app, operatorEmail: operatorEmail, as: UserList.self).users
    }

    public func user(_ id: UUID, app: App, operatorEmail: String) async throws -> AdminUser? {
        do {
            return try await http.call(.GET, "/auth/v1/admin/users/\(id.lowercased)", app: app, operatorEmail: operatorEmail, as: AdminUser.self)
        } catch let failure as ConsoleHTTP.Failure where failure.status == 404 {
            return nil
        }
    }

    public func sessions(of id: UUID, app: App, operatorEmail: String) async throws -> [AdminSession] {
        struct Sessions: Decodable { var sessions: [AdminSession] }
        return try await http.call(.GET, "/auth/v1/admin/users/\(id.lowercased)/sessions", app: app, operatorEmail: operatorEmail, as: Sessions.self).sessions
    }

    /// Bans for `duration` (Supabase's `ban_duration`, e.g. `24h`), or lifts a ban with `none`.
    public func ban(_ id: UUID, duration: String, app: App, operatorEmail: String) async throws {
        try await http.send(.PUT, "/auth/v1/admin/users/\(id.lowercased)", body: ["ban_duration": duration], app: app, operatorEmail: operatorEmail)
    }

    public func signOutEverywhere(_ id: UUID, app: App, operatorEmail: String) async throws {
        try await http.send(.POST, "/auth/v1/admin/users/\(id.lowercased)/logout", body: nil, app: app, operatorEmail: operatorEmail)
    }

    public func sendRecovery(_ id: UUID, app: App, operatorEmail: String) async throws {
        try await http.send(.POST, "/auth/v1/admin/users/\(id.lowercased)/recover", body: nil, app: app, operatorEmail: operatorEmail)
    }

    public func resendConfirmation(_ id: UUID, app: App, operatorEmail: String) async throws {
        try await http.send(.POST, "/auth/v1/admin/users/\(id.lowercased)/resend", body: nil, app: app, operatorEmail: operatorEmail)
    }

    public func deleteFactor(_ id: UUID, factor: UUID, app: App, operatorEmail: String) async throws {
        try await http.send(.DELETE, "/auth/v1/admin/users/\(id.lowercased)/factors/\(factor.lowercased)", body: nil, app: app, operatorEmail: operatorEmail)
    }

    /// A subject access request: auth assembles the user's data from every service and sends the
    /// link to the user's own address (never to the operator).
    public func requestExport(_ id: UUID, app: App, operatorEmail: String) async throws {
        try await http.send(.POST, "/auth/v1/admin/users/\(id.lowercased)/export", body: nil, app: app, operatorEmail: operatorEmail)
    }

    public func delete(_ id: UUID, app: App, operatorEmail: String) async throws {
        try await http.send(.DELETE, "/auth/v1/admin/users/\(id.lowercased)", body: nil, app: app, operatorEmail: operatorEmail)
    }
}

/// Calls a service's pipeline routes (`PipelineAdminRoutes`, the same on every service).
public struct PipelineClient: Sendable {
    public let service: ColonyService
    let http: ConsoleHTTP

    /// 10 s: the Pipeline and Overview pages show a service that does not answer as such, in time.
    public init(service: ColonyService, baseURL: String, key: InternalKey?, httpClient: HTTPClient = .shared) {
        self.service = service
        self.http = ConsoleHTTP(baseURL: baseURL, key: key, timeout: .seconds(10), httpClient: httpClient)
    }

    public func pipeline(operatorEmail: String) async throws -> PipelineAdminRoutes.Pipeline {
        try await http.call(.GET, PipelineAdminRoutes.pipelinePath, app: nil, operatorEmail: operatorEmail, as: PipelineAdminRoutes.Pipeline.self)
    }

    public func deadLetters(includePayload: Bool, operatorEmail: String) async throws -> [PipelineAdminRoutes.DeadLetter] {
        let path = "\(PipelineAdminRoutes.deadLettersPath)?limit=100&include_payload=\(includePayload)"
        let body = try await http.send(.GET, path, body: nil, app: nil, operatorEmail: operatorEmail)
        // A dead letter's keys are spelled out by its CodingKeys (snake case already), which a
        // snake-case-converting decoder would not match: the plain decoder reads them.
        struct Letters: Decodable {
            var deadLetters: [PipelineAdminRoutes.DeadLetter]
            enum CodingKeys: String, CodingKey { case deadLetters = "dead_letters" }
        }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = ColonyJSON.decoder().dateDecodingStrategy
        return try decoder.decode(Letters.self, from: Data(buffer: body)).deadLetters
    }

    /// Whether the service answers `/ready` with 200 now.
    public func isReady() async -> Bool {
        let response = try? await http.httpClient.execute(HTTPClientRequest(url: http.baseURL + "/ready"), timeout: .seconds(5))
        return response?.status == .ok
    }

    public func retry(_ id: Int64, operatorEmail: String) async throws {
        try await http.send(.POST, "\(PipelineAdminRoutes.deadLettersPath)/\(id)/retry", body: nil, app: nil, operatorEmail: operatorEmail)
    }

    public func drop(_ id: Int64, operatorEmail: String) async throws {
        try await http.send(.DELETE, "\(PipelineAdminRoutes.deadLettersPath)/\(id)", body: nil, app: nil, operatorEmail: operatorEmail)
    }
}

extension PipelineClient {
    /// How many rows of each kind the service holds of a user (`HoldingsAdminRoutes`).
    public func holdings(of user: UUID, operatorEmail: String) async throws -> HoldingsAdminRoutes.Holdings {
        try await http.call(.GET, HoldingsAdminRoutes.holdingsPath(user), app: nil, operatorEmail: operatorEmail, as: HoldingsAdminRoutes.Holdings.self)
    }

    /// The service's objects with open reports, the oldest first (`ModerationAdminRoutes`).
    public func reportQueue(operatorEmail: String) async throws -> ModerationAdminRoutes.Queue {
        try await http.call(.GET, "\(ModerationAdminRoutes.reportsPath)?limit=200", app: nil, operatorEmail: operatorEmail, as: ModerationAdminRoutes.Queue.self)
    }

    /// One object's reports and the object as it is now; nil when it has no report.
    public func reportReview(_ objectType: String, _ id: UUID, operatorEmail: String) async throws -> ReportDesk.ObjectReview? {
        do {
            return try await http.call(.GET, ModerationAdminRoutes.objectPath(objectType, id), app: nil, operatorEmail: operatorEmail, as: ReportDesk.ObjectReview.self)
        } catch let failure as ConsoleHTTP.Failure where failure.status == 404 {
            return nil
        }
    }

    /// A moderator's action on the object's open reports.
    public func resolveReports(_ objectType: String, _ id: UUID, action: ModerationAction, operatorEmail: String) async throws -> ReportDesk.Resolution {
        let body = try await http.send(.POST, "\(ModerationAdminRoutes.objectPath(objectType, id))/resolve", body: ["action": action.rawValue], app: nil, operatorEmail: operatorEmail)
        return try ColonyJSON.decoder().decode(ReportDesk.Resolution.self, from: Data(buffer: body))
    }
}

/// Calls notifications' push routes (`PushAdmin`): a user's devices and deliveries, the app's
/// delivery log, a test push.
public struct PushClient: Sendable {
    let http: ConsoleHTTP

    /// 10 s: the pages show notifications as not answering, in time.
    public init(baseURL: String, key: InternalKey?, httpClient: HTTPClient = .shared) {
        self.http = ConsoleHTTP(baseURL: baseURL, key: key, timeout: .seconds(10), httpClient: httpClient)
    }

    public func user(_ user: UUID, app: App, limit: Int, operatorEmail: String) async throws -> PushAdmin.UserPush {
        try await http.call(.GET, "\(PushAdmin.userPath(user))?limit=\(limit)", app: app, operatorEmail: operatorEmail, as: PushAdmin.UserPush.self)
    }

    /// The app's delivery log, newest first; `status` one of `PushAdmin.statuses`, or nil for all.
    public func deliveries(app: App, status: String?, limit: Int, operatorEmail: String) async throws -> [PushAdmin.Delivery] {
        var query = "limit=\(limit)"
        if let status { query += "&status=\(status)" }
        return try await http.call(.GET, "\(PushAdmin.deliveriesPath)?\(query)", app: app, operatorEmail: operatorEmail, as: PushAdmin.DeliveryLog.self).deliveries
    }

    public func sendTest(user: UUID, device: UUID, app: App, operatorEmail: String) async throws -> PushAdmin.TestPush {
        try await http.call(.POST, PushAdmin.testPath(user: user, device: device), app: app, operatorEmail: operatorEmail, as: PushAdmin.TestPush.self)
    }
}
