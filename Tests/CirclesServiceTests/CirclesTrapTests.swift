import CirclesService
import ColonyPlatform
import ColonyTesting
import Foundation
import Testing

/// Every documented write of circles, sent JSON nested 100,000 deep and numbers no field holds
/// (1e300, 2^63, 1.5) in each body property, on the caller's own circle and post: a 4xx JSON
/// error, never a 5xx or a trap (issue 33).
@Suite("Circles: no trap on hostile bodies")
struct CirclesTrapTests {
    @Test("hostile bodies on every documented write, and hostile values of every documented query parameter, are 4xx JSON errors")
    func hostileBodies() async throws {
        try await withRunningCircles { running in
            let user = try await running.user()
            let circle = try await running.circle(owner: user)
            let post = try await running.post(circle, as: user)
            let result = try await running.service.hostileBodyProblems(CirclesService.openAPIDocument, as: user,
                                                                       values: ["circle_id": circle.uuidString.lowercased(), "post_id": post, "emoji": "%F0%9F%91%8D"])
            #expect(result.problems == [])
            let query = try await running.service.hostileQueryProblems(CirclesService.openAPIDocument, as: user, values: ["circle_id": circle.uuidString.lowercased(), "post_id": post, "emoji": "%F0%9F%91%8D"])
            #expect(query.problems == [])
            #expect(query.requests > 10)
            #expect(result.requests > 100)
        }
    }
}
