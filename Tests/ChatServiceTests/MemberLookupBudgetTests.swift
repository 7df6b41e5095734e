@testable import ChatService
import ColonyModels
import ColonyPlatform
import ColonyTesting
import Foundation
import Testing

/// Issue 33: adding members by email keeps the seed's "these addresses have no account" answer,
/// under a per-user budget of addresses looked up.
@Suite("Chat: add-by-email budget")
struct MemberLookupBudgetTests {
    @Test("every address asked counts, a refused request's too; past the budget 429 with Retry-After; each user has their own")
    func budget() async throws {
        try await withRunningChat(settings: ChatSettings(maxImageBytes: 64 << 10, maxVoiceBytes: 256 << 10, memberEmailLookups: Quota(5, perSeconds: 3600))) { chat in
            let owner = try await chat.user()
            let friend = try await chat.user()
            let friendEmail = try await chat.email(of: friend)
            // 3 addresses asked (duplicates count once), one unknown: refused, and still counted.
            let unknown = try await chat.service.request(.POST, "/groups", as: owner, json: ["name": "Trip", "member_emails": [friendEmail, friendEmail.uppercased(), "ghost@example.com", "ghost2@example.com"]])
            #expect(unknown.status == 409 && unknown.code == "unknown_emails", "\(unknown.body)")
            // 2 more fit; then the sixth address is one too many, whatever it is.
            let group = try await chat.service.request(.POST, "/groups", as: owner, json: ["name": "Trip", "member_emails": [friendEmail, "ghost3@example.com"]])
            #expect(group.status == 409)
            let over = try await chat.service.request(.POST, "/groups", as: owner, json: ["name": "Trip", "member_emails": [friendEmail]])
            #expect(over.status == 429 && over.code == MemberLookupBudget.code, "\(over.body)")
            #expect(Int(over.headers.first(name: "Retry-After") ?? "") ?? 0 >= 1)
            // No addresses, no lookup: a group alone is still made; adding members is budgeted too.
            let alone = try await chat.service.request(.POST, "/groups", as: owner, json: ["name": "Alone"])
            #expect(alone.status == 201)
            let id = try #require(alone.body["id"]?.stringValue)
            let add = try await chat.service.request(.POST, "/groups/\(id)/members", as: owner, json: ["emails": [friendEmail]])
            #expect(add.status == 429 && add.code == MemberLookupBudget.code)
            // The friend's own budget is untouched.
            let theirs = try await chat.service.request(.POST, "/groups", as: friend, json: ["name": "Mine", "member_emails": ["ghost@example.com"]])
            #expect(theirs.status == 409 && theirs.code == "unknown_emails")
        }
    }
}
