import ColonyModels
import ColonyPlatform
import Foundation
import Hummingbird
import NIOCore
import OpenAPIRuntime

// Posts: the feed, writing and editing, photos, and the marks (reactions, votes, RSVPs, kept).
extension CirclesAPI {
    func listPosts(_ input: Operations.ListPosts.Input) async throws -> Operations.ListPosts.Output {
        let id = try Self.circleID(input.path.circleId)
        let limit = try Self.limit(input.query.limit, default: 20, range: 1...FeedSQL.maxPage)
        return .ok(.init(body: .json(try await database.callerRead { caller, connection in
            try await posts.feed(id, before: input.query.before, limit: limit, userID: caller.id, on: connection)
        })))
    }

    func createPost(_ input: Operations.CreatePost.Input) async throws -> Operations.CreatePost.Output {
        let id = try Self.circleID(input.path.circleId)
        guard case .json(let post) = input.body else { throw CirclesErrors.validation("body: expected JSON") }
        guard let type = PostType(rawValue: post._type.rawValue) else { throw CirclesErrors.validation("type is not a post type") }
        let draft = CirclesRules.PostDraft(type: type, body: post.body, mood: post.mood, category: post.category, urgency: post.urgency.flatMap { AskUrgency(rawValue: $0.rawValue) },
                                           location: post.location, latitude: post.latitude, longitude: post.longitude, startsAt: post.startsAt,
                                           pollOptions: post.pollOptions ?? [])
        return .created(.init(body: .json(try await database.callerWrite { caller, connection in
            try await posts.create(draft, circleID: id, userID: caller.id, on: connection)
        })))
    }

    func listKeptPosts(_ input: Operations.ListKeptPosts.Input) async throws -> Operations.ListKeptPosts.Output {
        .ok(.init(body: .json(try await database.callerRead { caller, connection in try await posts.kept(userID: caller.id, on: connection) })))
    }

    func getPost(_ input: Operations.GetPost.Input) async throws -> Operations.GetPost.Output {
        let id = try Self.postID(input.path.postId)
        return .ok(.init(body: .json(try await database.callerRead { caller, connection in try await posts.detail(id, userID: caller.id, on: connection) })))
    }

    func updatePost(_ input: Operations.UpdatePost.Input) async throws -> Operations.UpdatePost.Output {
        let id = try Self.postID(input.path.postId)
        guard case .json(let patch) = input.body else { throw CirclesErrors.validation("body: expected JSON") }
        let edit = Posts.Edit(body: patch.body, mood: RequestBodyNulls.field(patch.mood, "mood"), category: RequestBodyNulls.field(patch.category, "category"),
                              urgency: patch.urgency.flatMap { AskUrgency(rawValue: $0.rawValue) }, location: RequestBodyNulls.field(patch.location, "location"),
                              latitude: RequestBodyNulls.field(patch.latitude, "latitude"), longitude: RequestBodyNulls.field(patch.longitude, "longitude"),
                              startsAt: patch.startsAt)
        return .ok(.init(body: .json(try await database.callerWrite { caller, connection in try await posts.edit(id, userID: caller.id, edit, on: connection) })))
    }

    func deletePost(_ input: Operations.DeletePost.Input) async throws -> Operations.DeletePost.Output {
        let id = try Self.postID(input.path.postId)
        try await database.callerWrite { caller, connection in try await posts.delete(id, userID: caller.id, on: connection) }
        return .noContent(.init())
    }

    func setPostPhoto(_ input: Operations.SetPostPhoto.Input) async throws -> Operations.SetPostPhoto.Output {
        let id = try Self.postID(input.path.postId)
        let (image, contentType): (HTTPBody, String) = switch input.body {
        case .jpeg(let body): (body, "image/jpeg")
        case .png(let body): (body, "image/png")
        }
        // Held in memory already, within the upload limit (`RequestBodyCheck`).
        let bytes = ByteBuffer(bytes: try await [UInt8](collecting: image, upTo: .max))
        return .ok(.init(body: .json(try await database.callerWrite { caller, connection in
            try await posts.setPhoto(id, image: bytes, contentType: contentType, userID: caller.id, on: connection)
        })))
    }

    func removePostPhoto(_ input: Operations.RemovePostPhoto.Input) async throws -> Operations.RemovePostPhoto.Output {
        let id = try Self.postID(input.path.postId)
        return .ok(.init(body: .json(try await database.callerWrite { caller, connection in try await posts.removePhoto(id, userID: caller.id, on: connection) })))
    }

    // MARK: marks: set (PUT) and unset (DELETE), never toggled, so a retried request changes nothing

    func addPostReaction(_ input: Operations.AddPostReaction.Input) async throws -> Operations.AddPostReaction.Output {
        .ok(.init(body: .json(try await react(input.path.postId, input.path.emoji, on: true))))
    }

    func removePostReaction(_ input: Operations.RemovePostReaction.Input) async throws -> Operations.RemovePostReaction.Output {
        .ok(.init(body: .json(try await react(input.path.postId, input.path.emoji, on: false))))
    }

    private func react(_ post: String, _ emoji: String, on: Bool) async throws -> PostView {
        let id = try Self.postID(post)
        return try await database.callerWrite { caller, connection in try await posts.react(id, emoji: emoji, on: on, userID: caller.id, on: connection) }
    }

    func setPollVote(_ input: Operations.SetPollVote.Input) async throws -> Operations.SetPollVote.Output {
        let id = try Self.postID(input.path.postId)
        guard case .json(let json) = input.body else { throw CirclesErrors.validation("body: expected JSON") }
        let option = try Self.bodyID(json.optionId, "option_id")
        return .ok(.init(body: .json(try await database.callerWrite { caller, connection in try await posts.vote(id, optionID: option, userID: caller.id, on: connection) })))
    }

    func withdrawPollVote(_ input: Operations.WithdrawPollVote.Input) async throws -> Operations.WithdrawPollVote.Output {
        let id = try Self.postID(input.path.postId)
        return .ok(.init(body: .json(try await database.callerWrite { caller, connection in try await posts.vote(id, optionID: nil, userID: caller.id, on: connection) })))
    }

    func setRSVP(_ input: Operations.SetRSVP.Input) async throws -> Operations.SetRSVP.Output {
        let id = try Self.postID(input.path.postId)
        guard case .json(let json) = input.body else { throw CirclesErrors.validation("body: expected JSON") }
        let sent = json.status
        guard let status = RSVPStatus(rawValue: sent.rawValue) else { throw CirclesErrors.validation("status is not an RSVP status") }
        return .ok(.init(body: .json(try await database.callerWrite { caller, connection in try await posts.rsvp(id, status: status, userID: caller.id, on: connection) })))
    }

    func withdrawRSVP(_ input: Operations.WithdrawRSVP.Input) async throws -> Operations.WithdrawRSVP.Output {
        let id = try Self.postID(input.path.postId)
        return .ok(.init(body: .json(try await database.callerWrite { caller, connection in try await posts.rsvp(id, status: nil, userID: caller.id, on: connection) })))
    }

    func keepPost(_ input: Operations.KeepPost.Input) async throws -> Operations.KeepPost.Output {
        let id = try Self.postID(input.path.postId)
        return .ok(.init(body: .json(try await database.callerWrite { caller, connection in try await posts.keep(id, keep: true, userID: caller.id, on: connection) })))
    }

    func unkeepPost(_ input: Operations.UnkeepPost.Input) async throws -> Operations.UnkeepPost.Output {
        let id = try Self.postID(input.path.postId)
        return .ok(.init(body: .json(try await database.callerWrite { caller, connection in try await posts.keep(id, keep: false, userID: caller.id, on: connection) })))
    }
}
