import ColonyModels
import ColonyPlatform
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import OpenAPIRuntime

// The history page (`GET /chat/v1/groups/{group_id}/messages`), the app's busiest read, served by
// hand: the generated route writes its answer with Foundation's JSONEncoder, several times the
// cost of the page's own writer (`Schemas.HistoryPage: ColonyJSONWritable`). The fast path reads
// the request as the generated code does, calls the same `listMessages`, and writes its answer;
// a request it cannot read with certainty goes to the generated route itself, so every answer,
// good or bad, is the generated route's (ChatFastPathTests holds them byte-equal).
extension ChatAPI {
    static let historyPath = "/chat/v1/groups/{group_id}/messages"

    var fastPaths: [GeneratedFastPath] {
        [
            GeneratedFastPath(.get, Self.historyPath) { request, context, generated in
                guard let input = Self.historyInput(request, context) else { return try await generated.respond(to: request, context: context) }
                // `listMessages` answers a page or throws (its errors are answered as the generated route's are).
                guard case .ok(let ok) = try await listMessages(input), case .json(let page) = ok.body else { throw APIError.internalError }
                return try GeneratedFastPath.json(page)
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
