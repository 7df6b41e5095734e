import ColonyModels
import ColonyPlatform
import Foundation
import HTTPTypes
import Hummingbird
// The runtime's converter, which the generated code calls, for the fast path to read its input alike.
import OpenAPIRuntime

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
    static let feedPath = "/projects/v1/feed"

    /// The app's busiest read, the feed page, served by hand: a plain request (`PlainRequest`) read
    /// as the generated code reads it, the same `getFeed`, and its `PostPage` written by its own
    /// writer (`PostPageJSON.swift`) instead of Foundation's encoder; anything else goes to the
    /// generated route. ProjectsFastPathTests holds its answers, good and bad, byte-equal to the
    /// generated route's.
    var fastPaths: [GeneratedFastPath] {
        [
            GeneratedFastPath(.get, Self.feedPath) { request, context, generated in
                guard let plain = PlainRequest(request, context, query: ["limit", "cursor"]), let limit = plain.integer("limit") else {
                    return try await generated.respond(to: request, context: context)
                }
                let input = Operations.GetFeed.Input(query: .init(limit: limit, cursor: plain.query["cursor"]))
                guard case .ok(let ok) = try await getFeed(input), case .json(let page) = ok.body else { throw APIError.internalError }
                return try GeneratedFastPath.json(page)
            },
            // Following a project (ProjectsAPI+FollowFastPath.swift).
            followFastPath,
        ]
    }
}
