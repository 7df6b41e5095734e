import ColonyModels
import ColonyPlatform
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import OpenAPIRuntime

/// The circles REST API under `/circles/v1`: the operations of `openapi.json` (but its `Media`
/// ones, the storage routes'), as the generated `APIProtocol` has them. Each reads the caller and
/// runs the domain on a pooled connection (reads) or in one transaction (writes); the areas are
/// in `CirclesAPI+Circles`, `+Posts` and `+DMs`.
struct CirclesAPI: APIProtocol {
    let database: Database
    let profiles: Profiles
    let circles: Circles
    let posts: Posts
    let messages: DirectMessages
    let presence: Presence
    /// Reports of posts, DMs and profiles (`CirclesReportables`).
    let reports: ReportDesk
    /// The document, served as itself.
    let document: Components.Schemas.OpenAPIDocument

    init(database: Database, profiles: Profiles, circles: Circles, posts: Posts, messages: DirectMessages, presence: Presence, reports: ReportDesk) throws {
        self.database = database
        self.profiles = profiles
        self.circles = circles
        self.posts = posts
        self.messages = messages
        self.presence = presence
        self.reports = reports
        self.document = try JSONDecoder().decode(Components.Schemas.OpenAPIDocument.self, from: Data(PackageResources.openapi_json))
    }

    static let adminPath = "/circles/v1/admin/profiles/{user_id}/pro"

    /// Serves the operations behind the token middleware (but the document, and the admin route,
    /// which takes the app's service-role key instead), post photos up to their upload limit, and
    /// the feed page and posting by their fast paths unless `COLONY_FAST_PATHS=off`.
    func register(on router: Router<ColonyRequestContext>, context: ServiceContext, uploadLimit: Int) throws {
        let fastPaths = fastPaths(maxBodyBytes: context.configuration.maxBodyBytes)
        let middlewares = [ServiceKeyCheck(tokenMiddleware: context.tokenMiddleware, operations: ["setProfilePro"])]
            + GeneratedRoutes.middlewares(maxBodyBytes: context.configuration.maxBodyBytes, uploads: ["setPostPhoto": uploadLimit])
        try registerHandlers(on: GeneratedRoutes.transport(router, behind: context.tokenMiddleware, publicPaths: ["/circles/v1/openapi.json", Self.adminPath],
                                                           fastPaths: fastPaths, mode: context.configuration.fastPaths),
                             serverURL: GeneratedRoutes.serverURL, configuration: GeneratedRoutes.configuration, middlewares: middlewares)
        try GeneratedFastPath.requireOperations(fastPaths, in: CirclesService.openAPIDocument)
    }

    func getOpenAPIDocument(_ input: Operations.GetOpenAPIDocument.Input) async throws -> Operations.GetOpenAPIDocument.Output {
        .ok(.init(body: .json(document)))
    }

    // MARK: profile

    func getProfile(_ input: Operations.GetProfile.Input) async throws -> Operations.GetProfile.Output {
        .ok(.init(body: .json(try await database.callerRead { caller, connection in try await profiles.require(caller.id, email: caller.email, on: connection) })))
    }

    func updateProfile(_ input: Operations.UpdateProfile.Input) async throws -> Operations.UpdateProfile.Output {
        guard case .json(let patch) = input.body else { throw CirclesErrors.validation("body: expected JSON") }
        let birthday = try RequestBodyNulls.field(patch.birthday, "birthday").map { (text: String?) throws -> LocalDate? in
            try text.map { text in
                guard let date = LocalDate(text) else { throw CirclesErrors.validation("birthday must be a YYYY-MM-DD date") }
                return date
            }
        }
        let edit = Profiles.Edit(displayName: patch.displayName, handle: patch.handle, bio: RequestBodyNulls.field(patch.bio, "bio"),
                                 dmPrivacy: patch.dmPrivacy.flatMap { DMPrivacy(rawValue: $0.rawValue) },
                                 fullName: RequestBodyNulls.field(patch.fullName, "full_name"), location: RequestBodyNulls.field(patch.location, "location"),
                                 address: RequestBodyNulls.field(patch.address, "address"), phone: RequestBodyNulls.field(patch.phone, "phone"), birthday: birthday)
        return .ok(.init(body: .json(try await database.callerWrite { caller, connection in try await profiles.edit(caller.id, edit, on: connection) })))
    }

    /// The app's servers set a member's Pro flag (`ServiceKeyCheck` has checked their key).
    func setProfilePro(_ input: Operations.SetProfilePro.Input) async throws -> Operations.SetProfilePro.Output {
        guard let user = UUID(canonical: input.path.userId) else { throw CirclesErrors.userNotFound }
        guard case .json(let json) = input.body else { throw CirclesErrors.validation("body: expected JSON") }
        let isPro = json.isPro
        return .ok(.init(body: .json(try await database.transaction { connection in try await profiles.setPro(user, isPro: isPro, on: connection) })))
    }
}

extension CirclesAPI {
    // A path id that is not a UUID names nothing: the record's own 404, as for a stranger's.

    static func circleID(_ text: String) throws -> UUID {
        guard let id = UUID(canonical: text) else { throw CirclesErrors.circleNotFound }
        return id
    }

    static func postID(_ text: String) throws -> UUID {
        guard let id = UUID(canonical: text) else { throw CirclesErrors.postNotFound }
        return id
    }

    static func threadID(_ text: String) throws -> UUID {
        guard let id = UUID(canonical: text) else { throw CirclesErrors.threadNotFound }
        return id
    }

    /// A body's id that is not a UUID: 422, naming the field.
    static func bodyID(_ text: String, _ field: String) throws -> UUID {
        guard let id = UUID(canonical: text) else { throw CirclesErrors.validation("\(field) must be a UUID") }
        return id
    }

    /// A page size: `default` when absent, else within `range` (422 otherwise).
    static func limit(_ value: Int?, default defaultValue: Int, range: ClosedRange<Int>) throws -> Int {
        guard let value else { return defaultValue }
        guard range.contains(value) else { throw CirclesErrors.validation("limit must be between \(range.lowerBound) and \(range.upperBound)") }
        return value
    }
}

/// Operations an app's servers call with its service-role key (`Authorization: Bearer` or
/// `apikey`) in place of a user's token: their paths are public to the token middleware, so the
/// key is checked here, before anything else of the request (a 401 otherwise).
struct ServiceKeyCheck: ServerMiddleware {
    let tokenMiddleware: TokenMiddleware
    let operations: Set<String>

    func intercept(_ request: HTTPRequest, body: HTTPBody?, metadata: ServerRequestMetadata, operationID: String,
                   next: @Sendable (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> (HTTPResponse, HTTPBody?)) async throws -> (HTTPResponse, HTTPBody?) {
        if operations.contains(operationID) {
            // Only the head is read.
            _ = try await tokenMiddleware.requireServiceKey(Request(head: request, body: .init(buffer: ByteBuffer())))
        }
        return try await next(request, body, metadata)
    }
}
