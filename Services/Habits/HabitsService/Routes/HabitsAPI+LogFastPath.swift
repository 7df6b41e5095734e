import ColonyModels
import ColonyPlatform
import Foundation
import HTTPTypes
import Hummingbird
import OpenAPIRuntime

// Logging a habit (`POST /habits/v1/habits/{habit_id}/logs`), the write HabitsBench measures,
// served by hand: the generated route decodes the body with Foundation's JSONDecoder after two
// ServerMiddlewares and writes the answer with its JSONEncoder, which kept it under its target
// beside one short transaction (issue 35.1). The fast path reads a plain JSON write as the generated
// code and `RequestBodyCheck` would (`PlainJSONWrite`), calls the same `logHabit` and writes its
// `HabitLog` with `ColonyJSON`'s tree; anything else goes to the generated route
// (HabitsFastPathTests holds the answers byte-equal).
extension HabitsAPI {
    static let logPath = "/habits/v1/habits/{habit_id}/logs"

    /// `maxBodyBytes`: the JSON body limit the generated routes keep (`RequestBodyCheck`).
    func fastPaths(maxBodyBytes: Int) -> [GeneratedFastPath] {
        [
            GeneratedFastPath(.post, Self.logPath) { request, context, generated in
                // With an `Idempotency-Key`, `IdempotencyKeyCheck` checks it and digests the request,
                // and `IdempotentWrites` stores or replays the answer: the generated route's to do.
                // Without one the check passes the request unchanged, as the fast path reads it.
                guard request.headers[IdempotencyKeyCheck.header] == nil else { return try await generated.respond(to: request, context: context) }
                var request = request
                guard let plain = try await PlainJSONWrite<Components.Schemas.HabitLogRequest>(&request, context, parameter: "habit_id", limit: maxBodyBytes) else {
                    // An empty body (a log of 1 for today) is the generated route's too.
                    return try await generated.respond(to: request, context: context)
                }
                let output = try await logHabit(.init(path: .init(habitId: plain.parameter), body: .json(plain.body)))
                guard case .ok(let ok) = output, case .json(let log) = ok.body else { throw APIError.internalError }
                return try GeneratedFastPath.json(encoding: log)
            },
        ]
    }
}
