import ColonyModels
import ColonyPlatform
import Foundation
import Testing
@testable import ChatService

@Suite("Chat: rules without HTTP")
struct ChatRulesTests {
    @Test("the seed's role table")
    func policy() {
        for action: GroupPolicy.Action in [.rename, .deleteGroup, .changeRoles, .transferOwnership] {
            #expect(GroupPolicy.allows(.owner, action) && !GroupPolicy.allows(.admin, action) && !GroupPolicy.allows(.user, action))
        }
        for action: GroupPolicy.Action in [.changePicture, .addMembers, .deleteMessage(own: false), .manageEvent(createdByMe: false)] {
            #expect(GroupPolicy.allows(.owner, action) && GroupPolicy.allows(.admin, action) && !GroupPolicy.allows(.user, action))
        }
        #expect(GroupPolicy.allows(.user, .deleteMessage(own: true)) && GroupPolicy.allows(.user, .manageEvent(createdByMe: true)))
        #expect(GroupPolicy.allows(.admin, .removeMember(targetRole: .user)) && !GroupPolicy.allows(.admin, .removeMember(targetRole: .admin)))
        #expect(GroupPolicy.allows(.owner, .removeMember(targetRole: .admin)) && !GroupPolicy.allows(.owner, .removeMember(targetRole: .owner)))
        #expect(!GroupPolicy.allows(.owner, .editMessage(own: false)) && GroupPolicy.allows(.user, .editMessage(own: true)))
    }

    @Test("input rules")
    func input() throws {
        #expect(throws: APIError.self) { try ChatRules.groupName("   ") }
        #expect(throws: APIError.self) { try ChatRules.groupName(String(repeating: "x", count: 101)) }
        #expect(try ChatRules.groupName("  Crew ") == "Crew")
        #expect(throws: APIError.self) { try ChatRules.messageContent(" \n ") }
        #expect(throws: APIError.self) { try ChatRules.voiceDuration(.nan, max: 600) }
        #expect(throws: APIError.self) { try ChatRules.voiceDuration(0, max: 600) }
        #expect(throws: APIError.self) { try ChatRules.voiceDuration(601, max: 600) }
        #expect(try ChatRules.emails(["A@x.io", "a@X.io", "b@y.org"]) == ["A@x.io", "b@y.org"])
        #expect(throws: APIError.self) { try ChatRules.emails(["not-an-email"]) }
        let now = Date()
        #expect(throws: ValidationErrors.self) { try ChatRules.event(.init(title: "x", details: nil, startsAt: now, endsAt: now.addingTimeInterval(-1))) }
        #expect(try ChatRules.event(.init(title: " x ", details: nil, startsAt: now, endsAt: now)).title == "x")
    }
}
