import ColonyModels
import ColonyPlatform
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import OpenAPIRuntime

// The history page (`GET /chat/v1/groups/{group_id}/messages`), the app's busiest read, and
// sending a text message (`POST`), its busiest write, served by hand: the generated route decodes
// and writes with Foundation's JSONDecoder and JSONEncoder, several times the cost of the types'
// own writers (`Schemas.HistoryPage`, `Schemas.Message`: ColonyJSONWritable). Each fast path reads
// the request as the generated code does (`PlainRequest`, `PlainJSONWrite`), calls the same
// `listMessages` / `sendTextMessage`, and writes its answer; a request it cannot read with
// certainty goes to the generated route itself, so every answer, good or bad, is the generated
// route's (ChatFastPathTests holds them byte-equal).
extension ChatAPI {
    static let historyPath = "/chat/v1/groups/{group_id}/messages"

    /// `maxBodyBytes`: the JSON body limit the generated routes keep (`RequestBodyCheck`).
    func fastPaths(maxBodyBytes: Int) -> [GeneratedFastPath] {
        [
            GeneratedFastPath(.get, Self.historyPath) { request, context, generated in
                guard let input = Self.historyInput(request, context) else { return try await generated.respond(to: request, context: context) }
                // `listMessages` answers a page or throws (its errors are answered as the generated route's are).
                guard case .ok(let ok) = try await listMessages(input), case .json(let page) = ok.body else { throw APIError.internalError }
                return try GeneratedFastPath.json(page)
            },
            // A text message: no ServerMiddleware but `RequestBodyCheck` acts on `sendTextMessage`
            // (the upload limits are the voice message's), and `PlainJSONWrite` reads only what it
            // would pass unchanged.
            GeneratedFastPath(.post, Self.historyPath) { request, context, generated in
                var request = request
                guard let plain = try await PlainJSONWrite<Schemas.TextMessage>(&request, context, parameter: "group_id", limit: maxBodyBytes) else {
                    return try await generated.respond(to: request, context: context)
                }
                let output = try await sendTextMessage(.init(path: .init(groupId: plain.parameter), body: .json(plain.body)))
                guard case .created(let created) = output, case .json(let message) = created.body else { throw APIError.internalError }
                return try GeneratedFastPath.json(message, status: .created)
            },
        ]
    }

    /// The input the generated code reads from a plain request (`PlainRequest`): the group id and
    /// `limit`, `before` and `after`, `limit` a whole number. Anything else (nil) is the generated
    /// route's to read and answer.
    static func historyInput(_ request: Request, _ context: ColonyRequestContext) -> Operations.ListMessages.Input? {
        guard let plain = PlainRequest(request, context, parameter: "group_id", query: ["limit", "before", "after"]),
              let limit = plain.integer("limit") else { return nil }
        return .init(path: .init(groupId: plain.parameter), query: .init(limit: limit, before: plain.query["before"], after: plain.query["after"]))
    }
}
