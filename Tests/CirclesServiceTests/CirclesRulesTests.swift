import ColonyModels
import ColonyPlatform
import Foundation
import Testing
@testable import CirclesService

@Suite("Circles: rules without HTTP")
struct CirclesRulesTests {
    @Test("the DM privacy table: per recipient, both directions")
    func privacy() {
        let expected: [DMPrivacy: [DMPrivacy: Bool]] = [
            .anyone: [.anyone: true, .reciprocal: true, .nobody: false],
            .reciprocal: [.anyone: true, .reciprocal: true, .nobody: false],
            .nobody: [.anyone: true, .reciprocal: false, .nobody: false],
        ]
        for (sender, row) in expected {
            for (recipient, allowed) in row {
                #expect(DMPolicy.allows(sender: sender, recipient: recipient) == allowed, "\(sender) → \(recipient)")
            }
        }
    }

    @Test("post rules per type")
    func posts() throws {
        func draft(_ type: PostType, options: [String] = [], startsAt: Date? = nil) -> CirclesRules.PostDraft {
            .init(type: type, body: "x", mood: nil, category: nil, urgency: nil, location: nil, latitude: nil, longitude: nil, startsAt: startsAt, pollOptions: options)
        }
        #expect(throws: ValidationErrors.self) { try CirclesRules.post(draft(.poll, options: ["one"])) }
        #expect(throws: ValidationErrors.self) { try CirclesRules.post(draft(.poll, options: (1...11).map(String.init))) }
        #expect(try CirclesRules.post(draft(.poll, options: (1...10).map(String.init))).pollOptions.count == 10)
        #expect(throws: ValidationErrors.self) { try CirclesRules.post(draft(.event)) }
        #expect(try CirclesRules.post(draft(.ask)).urgency == .medium)
        #expect(try CirclesRules.handle("@Some.One_1") == "some.one_1")
        #expect(throws: APIError.self) { try CirclesRules.emoji("ok") }
        #expect(try CirclesRules.emoji("👍🏽") == "👍🏽")
        #expect(CirclesRules.suggestedHandle(from: "Zoë Smith", userID: UUID()).range(of: #"^[a-z0-9_.]{3,30}$"#, options: .regularExpression) != nil)
    }
}
