import ColonyModels
import ColonyPlatform
import Foundation
import Hummingbird

// The nearby list (`GET /nearby/v1/nearby`), the app's busiest read, served by hand: its answer is
// the heaviest JSON of any service (up to 100 people, each a profile, a distance and a position),
// and the generated route's Foundation JSONEncoder took 6.7 M of the 12.6 M instructions a query cost
// the service (`scripts/bench profile`). The fast path reads the request as the generated code does
// (`PlainRequest`), calls the same `listNearby` and writes the list with its own writer
// (`NearbyList: ColonyJSONWritable`, Domain/Schemas.swift); a request it cannot read with certainty
// goes to the generated route itself, so every answer, good or bad, is the generated route's
// (NearbyFastPathTests holds them byte-equal).
extension NearbyAPI {
    static let listPath = "/nearby/v1/nearby"

    /// Made once, when the routes are registered.
    func fastPaths() -> [GeneratedFastPath] {
        [
            GeneratedFastPath(.get, Self.listPath) { request, context, generated in
                guard let input = Self.listInput(request, context) else { return try await generated.respond(to: request, context: context) }
                // `listNearby` answers a list or throws (its errors are answered as the generated route's are).
                guard case .ok(let ok) = try await listNearby(input), case .json(let list) = ok.body else { throw APIError.internalError }
                return try GeneratedFastPath.json(list)
            },
        ]
    }

    /// The input the generated code reads from a plain request (`PlainRequest`): `radius_feet` and
    /// `limit`, each a whole number. Anything else (nil) is the generated route's to read and answer.
    static func listInput(_ request: Request, _ context: ColonyRequestContext) -> Operations.ListNearby.Input? {
        guard let plain = PlainRequest(request, context, query: ["radius_feet", "limit"]),
              let radiusFeet = plain.integer("radius_feet"), let limit = plain.integer("limit") else { return nil }
        return .init(query: .init(radiusFeet: radiusFeet, limit: limit))
    }
}
