import ChatAPI
@testable import ChatService
import ColonyClientTesting
import ColonyModels
import ColonyPlatform
import ColonyTesting
import Foundation
import HTTPTypes
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
            let owners = chat.api(owner)
            func create(_ api: ChatClient, _ name: String, _ emails: [String]? = nil) async throws -> Answer<ChatOperations.CreateGroup.Output> {
                try await answer { try await api.createGroup(body: .json(.init(name: name, memberEmails: emails))) }
            }
            // 3 addresses asked (duplicates count once), one unknown: refused, and still counted.
            let unknown = try await create(owners, "Trip", [friendEmail, friendEmail.uppercased(), "ghost@example.com", "ghost2@example.com"])
            #expect(unknown.status == 409 && unknown.code == "unknown_emails", "\(unknown.body)")
            // 2 more fit; then the sixth address is one too many, whatever it is.
            let group = try await create(owners, "Trip", [friendEmail, "ghost3@example.com"])
            #expect(group.status == 409)
            let over = try await create(owners, "Trip", [friendEmail])
            #expect(over.status == 429 && over.code == MemberLookupBudget.code, "\(over.body)")
            #expect(try over.output.tooManyRequests.headers.retryAfter ?? 0 >= 1)
            // No addresses, no lookup: a group alone is still made; adding members is budgeted too.
            let alone = try await create(owners, "Alone")
            #expect(alone.status == 201)
            let id = try alone.output.created.body.json.id
            let add = try await answer { try await owners.addMembers(path: .init(groupId: id), body: .json(.init(emails: [friendEmail]))) }
            #expect(add.status == 429 && add.code == MemberLookupBudget.code)
            // The friend's own budget is untouched.
            let theirs = try await create(chat.api(friend), "Mine", ["ghost@example.com"])
            #expect(theirs.status == 409 && theirs.code == "unknown_emails")
        }
    }
}
