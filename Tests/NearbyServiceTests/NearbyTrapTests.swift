import ColonyPlatform
import ColonyTesting
import Foundation
import NearbyService
import Testing

/// Every documented write of nearby, sent JSON nested 100,000 deep and numbers no field holds
/// (1e300, 2^63, 1.5) in each body property (the location body reads JSON5 too): a 4xx JSON
/// error, never a 5xx or a trap (issue 33).
@Suite("Nearby: no trap on hostile bodies")
struct NearbyTrapTests {
    @Test("hostile bodies on every documented write, and hostile values of every documented query parameter, are 4xx JSON errors; NaN and Infinity locations are 4xx")
    func hostileBodies() async throws {
        try await withRunningNearby { running in
            let user = try await running.user()
            let result = try await running.service.hostileBodyProblems(NearbyService.openAPIDocument, as: user)
            #expect(result.problems == [])
            let query = try await running.service.hostileQueryProblems(NearbyService.openAPIDocument, as: user)
            #expect(query.problems == [])
            #expect(query.requests > 10)
            #expect(result.requests > 30)
            for body in [#"{"latitude":NaN,"longitude":0}"#, #"{"latitude":0,"longitude":Infinity}"#, #"{"latitude":1e300,"longitude":-1e300,"accuracy":1e300}"#,
                         #"{"latitude":0,"longitude":0,"accuracy":-Infinity}"#, #"{"latitude":0x7fffffffffffffffff,"longitude":0}"#] {
                let reply = try await running.service.request(.PUT, "/location", as: user, raw: body)
                #expect((400..<500).contains(reply.status) && reply.code != nil, "\(body): \(reply.status) \(reply.body)")
            }
        }
    }
}
