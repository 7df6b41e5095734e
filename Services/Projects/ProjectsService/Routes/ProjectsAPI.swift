import ColonyModels
import ColonyPlatform
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import OpenAPIRuntime

/// The projects REST API under `/projects/v1`: the operations of `openapi.json`, as the generated
/// `APIProtocol` has them (grouped by area in `ProjectsAPI+*.swift`). Each reads the caller and
/// runs the domain on a pooled connection (reads) or in one transaction (writes). Pictures are
/// raw bodies with their `Content-Type`.
struct ProjectsAPI: APIProtocol {
    let database: Database
    let builders: Builders
    let projects: Projects
    let posts: Posts
    let milestones: Milestones
    let messages: SupportMessages
    /// Reports of projects, posts, support messages and builders (`ProjectsReportables`).
    let reportDesk: ReportDesk
    /// The document, served as itself.
    let document: Components.Schemas.OpenAPIDocument

    init(database: Database, builders: Builders, projects: Projects, posts: Posts, milestones: Milestones, messages: SupportMessages, reportDesk: ReportDesk) throws {
        self.database = database
        self.builders = builders
        self.projects = projects
        self.posts = posts
        self.milestones = milestones
        self.messages = messages
        self.reportDesk = reportDesk
        self.document = try JSONDecoder().decode(Components.Schemas.OpenAPIDocument.self, from: Data(PackageResources.openapi_json))
    }

    /// Serves the operations behind the token middleware (but the document), pictures up to
    /// `uploadLimit`, and the feed and following a project by their fast paths unless the
    /// configuration turns fast paths off.
    func register(on router: Router<ColonyRequestContext>, context: ServiceContext, uploadLimit: Int) throws {
        let middlewares = GeneratedRoutes.middlewares(maxBodyBytes: context.configuration.maxBodyBytes,
                                                      uploads: ["setAvatar": uploadLimit, "setCover": uploadLimit, "uploadPostImage": uploadLimit])
        try registerHandlers(on: GeneratedRoutes.transport(router, behind: context.tokenMiddleware, publicPaths: ["/projects/v1/openapi.json"],
                                                           fastPaths: fastPaths, mode: context.configuration.fastPaths),
                             serverURL: GeneratedRoutes.serverURL, configuration: GeneratedRoutes.configuration, middlewares: middlewares)
        try GeneratedFastPath.requireOperations(fastPaths, in: ProjectsService.openAPIDocument)
    }

    func getOpenAPIDocument(_ input: Operations.GetOpenAPIDocument.Input) async throws -> Operations.GetOpenAPIDocument.Output {
        .ok(.init(body: .json(document)))
    }

    // MARK: shared input rules

    /// A path id: anything that is not a UUID names no record, the same 404 as a missing one.
    static func id(_ text: String, or notFound: APIError) throws -> UUID {
        guard let id = UUID(canonical: text) else { throw notFound }
        return id
    }

    /// `limit` within `range`, `defaultValue` when absent.
    static func limit(_ limit: Int?, default defaultValue: Int, range: ClosedRange<Int>) throws -> Int {
        guard let limit else { return defaultValue }
        guard range.contains(limit) else { throw APIError.unprocessable("limit must be between \(range.lowerBound) and \(range.upperBound)") }
        return limit
    }

    /// An uploaded picture held in memory (within its limit already, `RequestBodyCheck`) with the
    /// content type it was sent as.
    static func picture(_ body: HTTPBody, _ contentType: String) async throws -> (ByteBuffer, String) {
        (ByteBuffer(bytes: try await [UInt8](collecting: body, upTo: .max)), contentType)
    }
}

// MARK: me and builders

extension ProjectsAPI {
    func getMe(_ input: Operations.GetMe.Input) async throws -> Operations.GetMe.Output {
        .ok(.init(body: .json(try await database.callerRead { caller, connection in try await builders.me(caller.id, email: caller.email, on: connection) })))
    }

    func updateMe(_ input: Operations.UpdateMe.Input) async throws -> Operations.UpdateMe.Output {
        guard case .json(let patch) = input.body else { throw APIError.unprocessable("body: expected JSON") }
        // Absent leaves a field; null (or "") clears bio, website and Twitter handle.
        let edit = Builders.ProfileEdit(name: patch.name, bio: RequestBodyNulls.field(patch.bio, "bio"), websiteUrl: RequestBodyNulls.field(patch.websiteUrl, "website_url"),
                                        twitterHandle: RequestBodyNulls.field(patch.twitterHandle, "twitter_handle"), isCreator: patch.isCreator)
        return .ok(.init(body: .json(try await database.callerWrite { caller, connection in try await builders.edit(caller.id, edit, on: connection) })))
    }

    func setAvatar(_ input: Operations.SetAvatar.Input) async throws -> Operations.SetAvatar.Output {
        let (image, contentType) = switch input.body {
        case .jpeg(let body): try await Self.picture(body, "image/jpeg")
        case .png(let body): try await Self.picture(body, "image/png")
        }
        return .ok(.init(body: .json(try await database.callerWrite { caller, connection in
            try await builders.setAvatar(caller.id, image: image, contentType: contentType, on: connection)
        })))
    }

    func removeAvatar(_ input: Operations.RemoveAvatar.Input) async throws -> Operations.RemoveAvatar.Output {
        .ok(.init(body: .json(try await database.callerWrite { caller, connection in try await builders.removeAvatar(caller.id, on: connection) })))
    }

    func getKarma(_ input: Operations.GetKarma.Input) async throws -> Operations.GetKarma.Output {
        .ok(.init(body: .json(try await database.callerRead { caller, connection in try await builders.karma(caller.id, on: connection) })))
    }

    func getSupportStats(_ input: Operations.GetSupportStats.Input) async throws -> Operations.GetSupportStats.Output {
        .ok(.init(body: .json(try await database.callerRead { caller, connection in try await builders.stats(caller.id, on: connection) })))
    }

    func listSupportActions(_ input: Operations.ListSupportActions.Input) async throws -> Operations.ListSupportActions.Output {
        let limit = try Self.limit(input.query.limit, default: 20, range: 1...100)
        return .ok(.init(body: .json(try await database.callerRead { caller, connection in try await builders.actions(caller.id, limit: limit, on: connection) })))
    }

    func listFollowedProjects(_ input: Operations.ListFollowedProjects.Input) async throws -> Operations.ListFollowedProjects.Output {
        let limit = try Self.limit(input.query.limit, default: 50, range: 1...200)
        return .ok(.init(body: .json(try await database.callerRead { caller, connection in
            try await projects.following(userID: caller.id, cursor: input.query.cursor, limit: limit, on: connection)
        })))
    }

    func listMyProjects(_ input: Operations.ListMyProjects.Input) async throws -> Operations.ListMyProjects.Output {
        let limit = try Self.limit(input.query.limit, default: 50, range: 1...100)
        return .ok(.init(body: .json(try await database.callerRead { caller, connection in try await projects.mine(userID: caller.id, limit: limit, on: connection) })))
    }

    func getBuilder(_ input: Operations.GetBuilder.Input) async throws -> Operations.GetBuilder.Output {
        let id = try Self.id(input.path.builderId, or: ProjectsErrors.builderNotFound)
        return .ok(.init(body: .json(try await database.callerRead { _, connection in try await builders.get(id, on: connection) })))
    }

    func listBuilderProjects(_ input: Operations.ListBuilderProjects.Input) async throws -> Operations.ListBuilderProjects.Output {
        let id = try Self.id(input.path.builderId, or: ProjectsErrors.builderNotFound)
        let limit = try Self.limit(input.query.limit, default: 50, range: 1...100)
        return .ok(.init(body: .json(try await database.callerRead { caller, connection in
            try await projects.byBuilder(id, userID: caller.id, limit: limit, on: connection)
        })))
    }

    func getBuilderByUser(_ input: Operations.GetBuilderByUser.Input) async throws -> Operations.GetBuilderByUser.Output {
        let id = try Self.id(input.path.userId, or: ProjectsErrors.builderNotFound)
        return .ok(.init(body: .json(try await database.callerRead { _, connection in try await builders.get(userID: id, on: connection) })))
    }
}
