import ColonyModels
import ColonyPlatform
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import OpenAPIRuntime

// The feed page (`GET /circles/v1/circles/{circle_id}/posts`), the app's busiest read, and posting
// to it (`POST`), its busiest write, served by hand: the generated route decodes and writes with
// Foundation's JSONDecoder and JSONEncoder, several times the cost of the page's own writer
// (`FeedPage: ColonyJSONWritable`, Domain/Schemas.swift) and of `ColonyJSON`'s tree. Each fast path
// reads a plain request as the generated code does (`PlainRequest`, `PlainJSONWrite`), calls the
// same `listPosts` / `createPost` and writes its answer; any request it cannot read with certainty
// goes to the generated route itself, so every answer, good or bad, is the generated route's
// (CirclesFastPathTests holds them byte-equal).
extension CirclesAPI {
    static let feedPath = "/circles/v1/circles/{circle_id}/posts"

    /// `maxBodyBytes`: the JSON body limit the generated routes keep (`RequestBodyCheck`).
    func fastPaths(maxBodyBytes: Int) -> [GeneratedFastPath] {
        [
            GeneratedFastPath(.get, Self.feedPath) { request, context, generated in
                guard let input = Self.feedInput(request, context) else { return try await generated.respond(to: request, context: context) }
                // `listPosts` answers a page or throws (its errors are answered as the generated route's are).
                guard case .ok(let ok) = try await listPosts(input), case .json(let page) = ok.body else { throw APIError.internalError }
                return try GeneratedFastPath.json(page)
            },
            // Posting, the app's busiest write: the runtime's decoding, middlewares and encoding
            // were a third of its instructions. A plain JSON post is read and answered here.
            GeneratedFastPath(.post, Self.feedPath) { request, context, generated in
                var request = request
                guard let plain = try await PlainJSONWrite<Components.Schemas.PostCreate>(&request, context, parameter: "circle_id", limit: maxBodyBytes) else {
                    return try await generated.respond(to: request, context: context)
                }
                let output = try await createPost(.init(path: .init(circleId: plain.parameter), body: .json(plain.body)))
                guard case .created(let created) = output, case .json(let post) = created.body else { throw APIError.internalError }
                return try GeneratedFastPath.json(encoding: post, status: .created)
            },
        ]
    }

    /// The input the generated code reads from a plain request (`PlainRequest`): the circle id,
    /// `limit` (a whole number) and `before`. Anything else (nil) is the generated route's to
    /// read and answer.
    static func feedInput(_ request: Request, _ context: ColonyRequestContext) -> Operations.ListPosts.Input? {
        guard let plain = PlainRequest(request, context, parameter: "circle_id", query: ["limit", "before"]),
              let limit = plain.integer("limit") else { return nil }
        return .init(path: .init(circleId: plain.parameter), query: .init(before: plain.query["before"], limit: limit))
    }
}
