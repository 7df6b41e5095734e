import ChatService
import ColonyPlatform
import ColonyTesting
import Foundation
import Testing

/// Every documented write of chat, sent JSON nested 100,000 deep and numbers no field holds
/// (1e300, 2^63, 1.5) in each body property, on the caller's own group: a 4xx JSON error, never a
/// 5xx or a trap (issue 33).
@Suite("Chat: no trap on hostile bodies")
struct ChatTrapTests {
    @Test("hostile bodies on every documented write, and hostile values of every documented query parameter, are 4xx JSON errors")
    func hostileBodies() async throws {
        try await withRunningChat { running in
            let user = try await running.user()
            let group = try await running.group(owner: user)
            let result = try await running.service.hostileBodyProblems(ChatService.openAPIDocument, as: user, values: ["group_id": group.uuidString.lowercased()])
            #expect(result.problems == [])
            let query = try await running.service.hostileQueryProblems(ChatService.openAPIDocument, as: user, values: ["group_id": group.uuidString.lowercased()])
            #expect(query.problems == [])
            #expect(query.requests > 10)
            #expect(result.requests > 100)
        }
    }
}
