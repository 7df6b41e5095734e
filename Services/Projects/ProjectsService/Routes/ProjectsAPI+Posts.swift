import ColonyModels
import ColonyPlatform
import Foundation
import HTTPTypes
import Hummingbird
// The runtime's converter, which the generated code calls, for the fast path to read its input alike.
@_spi(Generated) import OpenAPIRuntime

// Posts: a project's updates, their pictures, likes, and the feed (with its fast path).
extension ProjectsAPI {
    func listProjectPosts(_ input: Operations.ListProjectPosts.Input) async throws -> Operations.ListProjectPosts.Output {
        let id = try Self.id(input.path.projectId, or: ProjectsErrors.projectNotFound)
        let limit = try Self.limit(input.query.limit, default: 20, range: 1...50)
        return .ok(.init(body: .json(try await database.callerRead { caller, connection in
            try await posts.list(id, cursor: input.query.cursor, limit: limit, userID: caller.id, on: connection)
        })))
    }

    func createPost(_ input: Operations.CreatePost.Input) async throws -> Operations.CreatePost.Output {
        let id = try Self.id(input.path.projectId, or: ProjectsErrors.projectNotFound)
        guard case .json(let create) = input.body else { throw APIError.unprocessable("body: expected JSON") }
        return .created(.init(body: .json(try await database.callerWrite { caller, connection in
            try await posts.create(id, content: create.content, images: create.images ?? [], userID: caller.id, on: connection)
        })))
    }

    func uploadPostImage(_ input: Operations.UploadPostImage.Input) async throws -> Operations.UploadPostImage.Output {
        let id = try Self.id(input.path.projectId, or: ProjectsErrors.projectNotFound)
        let (image, contentType) = switch input.body {
        case .jpeg(let body): try await Self.picture(body, "image/jpeg")
        case .png(let body): try await Self.picture(body, "image/png")
        }
        return .created(.init(body: .json(try await database.callerWrite { caller, connection in
            try await posts.uploadImage(id, image: image, contentType: contentType, userID: caller.id, on: connection)
        })))
    }

    func getFeed(_ input: Operations.GetFeed.Input) async throws -> Operations.GetFeed.Output {
        let limit = try Self.limit(input.query.limit, default: FeedPage.pageSize, range: 1...50)
        return .ok(.init(body: .json(try await database.callerRead { caller, connection in
            try await posts.feed(userID: caller.id, cursor: input.query.cursor, limit: limit, on: connection)
        })))
    }

    func getPost(_ input: Operations.GetPost.Input) async throws -> Operations.GetPost.Output {
        let id = try Self.id(input.path.postId, or: ProjectsErrors.postNotFound)
        return .ok(.init(body: .json(try await database.callerRead { caller, connection in try await posts.get(id, userID: caller.id, on: connection) })))
    }

    func updatePost(_ input: Operations.UpdatePost.Input) async throws -> Operations.UpdatePost.Output {
        let id = try Self.id(input.path.postId, or: ProjectsErrors.postNotFound)
        guard case .json(let patch) = input.body else { throw APIError.unprocessable("body: expected JSON") }
        return .ok(.init(body: .json(try await database.callerWrite { caller, connection in
            try await posts.update(id, content: patch.content, images: patch.images, userID: caller.id, on: connection)
        })))
    }

    func deletePost(_ input: Operations.DeletePost.Input) async throws -> Operations.DeletePost.Output {
        let id = try Self.id(input.path.postId, or: ProjectsErrors.postNotFound)
        try await database.callerWrite { caller, connection in try await posts.delete(id, userID: caller.id, on: connection) }
        return .noContent(.init())
    }

    func likePost(_ input: Operations.LikePost.Input) async throws -> Operations.LikePost.Output {
        let id = try Self.id(input.path.postId, or: ProjectsErrors.postNotFound)
        return .ok(.init(body: .json(try await database.callerWrite { caller, connection in try await posts.like(id, userID: caller.id, on: connection) })))
    }

    func unlikePost(_ input: Operations.UnlikePost.Input) async throws -> Operations.UnlikePost.Output {
        let id = try Self.id(input.path.postId, or: ProjectsErrors.postNotFound)
        return .ok(.init(body: .json(try await database.callerWrite { caller, connection in try await posts.unlike(id, userID: caller.id, on: connection) })))
    }
}

// MARK: the feed's fast path

extension ProjectsAPI {
    /// The app's busiest read, the feed page, served by hand: the request through the generated
    /// route's `middlewares` (a body checked, though the feed reads none), the same input read by
    /// the same runtime calls the generated route makes, the same `getFeed`, and its `PostPage`
    /// written by its own writer (`PostPageJSON.swift`) instead of Foundation's encoder.
    /// ProjectsFastPathTests holds its answers, good and bad, byte-equal to the generated route's.
    func fastPaths(middlewares: [any ServerMiddleware]) -> [GeneratedFastPath] {
        [GeneratedFastPath(.get, "/projects/v1/feed") { request, _ in
            try await Self.run(middlewares, on: request, operationID: Operations.GetFeed.id)
            let converter = Self.converter
            let input = try Self.asGenerated(request) {
                Operations.GetFeed.Input(
                    query: .init(limit: try converter.getOptionalQueryItemAsURI(in: request.head.soar_query, style: .form, explode: true, name: "limit", as: Int.self),
                                 cursor: try converter.getOptionalQueryItemAsURI(in: request.head.soar_query, style: .form, explode: true, name: "cursor",
                                                                                 as: Components.Parameters.Cursor.self)),
                    headers: .init(accept: try converter.extractAcceptHeaderIfPresent(in: request.headers)))
            }
            guard case .ok(let ok) = try await getFeed(input), case .json(let page) = ok.body else { throw APIError.internalError }
            try Self.asGenerated(request, input: input) { try converter.validateAcceptIfPresent("application/json", in: request.headers) }
            return try GeneratedFastPath.json(page)
        }]
    }

    /// Runs the generated route's middlewares on the request as its transport hands it to them
    /// (swift-openapi-hummingbird: the body with the length `Content-Length` gives), for their
    /// refusals alone; a refusal is thrown as the route's would be (`APIError.from` answers the
    /// runtime's wrapping of it with the error itself).
    static func run(_ middlewares: [any ServerMiddleware], on request: Request, operationID: String) async throws {
        let length: HTTPBody.Length = if let header = request.headers[.contentLength], let length = Int64(header) { .known(length) } else { .unknown }
        let body = HTTPBody(request.body.map { [UInt8](buffer: $0) }, length: length, iterationBehavior: .single)
        var next: @Sendable (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> (HTTPResponse, HTTPBody?) = { _, _, _ in (HTTPResponse(status: .ok), nil) }
        for middleware in middlewares.reversed() {
            let inner = next
            next = { request, body, metadata in try await middleware.intercept(request, body: body, metadata: metadata, operationID: operationID, next: inner) }
        }
        _ = try await next(request.head, body, ServerRequestMetadata())
    }

    /// The runtime's converter as the generated code has it (its parsing and `Accept` rules).
    static let converter = Converter(configuration: GeneratedRoutes.configuration)

    /// `body`, a step the generated route takes through the runtime, failing as the generated route
    /// fails: the runtime wraps the error in a `ServerError` (a decoding error stays the underlying
    /// one; `input` once the handler had it), which `APIError.from` answers.
    static func asGenerated<Result>(_ request: Request, input: (any Sendable)? = nil, _ body: () throws -> Result) throws -> Result {
        do {
            return try body()
        } catch {
            throw APIError.from(ServerError(operationID: Operations.GetFeed.id, request: request.head, requestBody: nil, requestMetadata: .init(),
                                            operationInput: input, causeDescription: String(describing: error), underlyingError: error))
        }
    }
}
