import ColonyModels
import ColonyPlatform
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import OpenAPIRuntime

/// The chat REST API under `/chat/v1`: the operations of `openapi.json`, as the generated
/// `APIProtocol` has them (grouped by area in `ChatAPI+*.swift`). Each reads the caller and runs
/// the domain on a pooled connection (reads) or in one transaction (writes). Uploads (pictures,
/// voice) are raw bodies with their `Content-Type`.
struct ChatAPI: APIProtocol {
    let database: Database
    let users: Users
    let groups: Groups
    let messages: Messages
    let events: CalendarEvents
    /// Adding members by email: each address asked counts against the caller's budget.
    let lookups: MemberLookupBudget
    /// Reports of messages, groups and profiles (`ChatReportables`).
    let reports: ReportDesk
    /// The document, served as itself.
    let document: Components.Schemas.OpenAPIDocument

    init(database: Database, users: Users, groups: Groups, messages: Messages, events: CalendarEvents, lookups: MemberLookupBudget, reports: ReportDesk) throws {
        self.database = database
        self.users = users
        self.groups = groups
        self.messages = messages
        self.events = events
        self.lookups = lookups
        self.reports = reports
        self.document = try JSONDecoder().decode(Components.Schemas.OpenAPIDocument.self, from: Data(PackageResources.openapi_json))
    }

    /// The operations that take files, each up to `uploadLimit`.
    static let uploads = ["setAvatar", "setGroupPicture", "sendVoiceMessage"]

    /// Serves the operations behind the token middleware (but the document), the history page and
    /// sending a text message by their fast paths unless `COLONY_FAST_PATHS=off`.
    func register(on router: Router<ColonyRequestContext>, context: ServiceContext, uploadLimit: Int) throws {
        let fastPaths = fastPaths(maxBodyBytes: context.configuration.maxBodyBytes)
        let middlewares = GeneratedRoutes.middlewares(maxBodyBytes: context.configuration.maxBodyBytes,
                                                      uploads: Dictionary(uniqueKeysWithValues: Self.uploads.map { ($0, uploadLimit) }))
        try registerHandlers(on: GeneratedRoutes.transport(router, behind: context.tokenMiddleware, publicPaths: ["/chat/v1/openapi.json"],
                                                           fastPaths: fastPaths, mode: context.configuration.fastPaths),
                             serverURL: GeneratedRoutes.serverURL, configuration: GeneratedRoutes.configuration, middlewares: middlewares)
        try GeneratedFastPath.requireOperations(fastPaths, in: ChatService.openAPIDocument)
    }

    func getOpenAPIDocument(_ input: Operations.GetOpenAPIDocument.Input) async throws -> Operations.GetOpenAPIDocument.Output {
        .ok(.init(body: .json(document)))
    }

    // MARK: me

    func getMe(_ input: Operations.GetMe.Input) async throws -> Operations.GetMe.Output {
        .ok(.init(body: .json(try await database.callerRead { caller, connection in
            users.view(try await users.require(caller.id, email: caller.email, on: connection))
        })))
    }

    func updateMe(_ input: Operations.UpdateMe.Input) async throws -> Operations.UpdateMe.Output {
        guard case .json(let patch) = input.body else { throw APIError.unprocessable("body: expected JSON") }
        return .ok(.init(body: .json(try await database.callerWrite { caller, connection in
            try await users.rename(caller.id, displayName: patch.displayName, on: connection)
        })))
    }

    func setAvatar(_ input: Operations.SetAvatar.Input) async throws -> Operations.SetAvatar.Output {
        let (image, contentType): (HTTPBody, String) = switch input.body {
        case .jpeg(let body): (body, "image/jpeg")
        case .png(let body): (body, "image/png")
        }
        let bytes = try await Self.buffer(image)
        return .ok(.init(body: .json(try await database.callerWrite { caller, connection in
            try await users.setAvatar(caller.id, image: bytes, contentType: contentType, on: connection)
        })))
    }

    func removeAvatar(_ input: Operations.RemoveAvatar.Input) async throws -> Operations.RemoveAvatar.Output {
        .ok(.init(body: .json(try await database.callerWrite { caller, connection in try await users.removeAvatar(caller.id, on: connection) })))
    }

    func getUser(_ input: Operations.GetUser.Input) async throws -> Operations.GetUser.Output {
        // Anything that is not a UUID cannot name anyone: the same 404 as a stranger.
        guard let id = UUID(canonical: input.path.userId) else { throw ChatErrors.userNotFound }
        return .ok(.init(body: .json(try await database.callerRead { caller, connection in try await users.profile(id, viewer: caller.id, on: connection) })))
    }

    // MARK: support

    /// An upload's bytes (held in memory already, within the upload limit: `RequestBodyCheck`).
    static func buffer(_ body: HTTPBody) async throws -> ByteBuffer {
        ByteBuffer(bytes: try await [UInt8](collecting: body, upTo: .max))
    }

    /// A path id that is not a UUID names nothing: the record's 404.
    static func id(_ text: String, _ notFound: APIError) throws -> UUID {
        guard let id = UUID(canonical: text) else { throw notFound }
        return id
    }

    /// A body id that is not a UUID breaks the body's rules: 422.
    static func bodyID(_ text: String, _ field: String) throws -> UUID {
        guard let id = UUID(canonical: text) else { throw APIError.unprocessable("\(field) must be a UUID") }
        return id
    }
}
