import ChatAPI
import ChatService
import ColonyClient
import ColonyClientTesting
import ColonyModels
import ColonyPlatform
import ColonyTesting
import Foundation
import Testing

/// `POST /chat/v1/reports` and the console's moderation routes on chat: what a user may report
/// (only what they can see, never their own), and what a moderator's removal does.
@Suite("Chat reports")
struct ChatReportTests {
    typealias User = RunningService.User

    static func randomKey() -> InternalKey {
        InternalKey((0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined())
    }

    /// A running chat with a console key, and the moderation calls made with it.
    func withModeratedChat(_ body: @Sendable (RunningChat, ModerationCalls) async throws -> Void) async throws {
        let key = Self.randomKey()
        try await withRunningChat(configure: { $0.consoleKey = key }) { chat in
            try await body(chat, ModerationCalls(service: chat.service, key: key))
        }
    }

    func report(_ chat: RunningChat, _ user: User, _ type: Schemas.ReportCreate.ObjectTypePayload, _ id: String,
                _ category: Schemas.ReportCreate.CategoryPayload = .harassment, words: String? = nil) async throws -> Answer<ChatAPI.Operations.CreateReport.Output> {
        try await answer { try await chat.api(user).createReport(body: .json(.init(objectType: type, objectId: id, category: category, words: words))) }
    }

    func history(_ chat: RunningChat, _ user: User, _ group: UUID) async throws -> [String] {
        try await chat.api(user).listMessages(path: .init(groupId: group.uuidString)).ok.body.json.messages.map { $0.id.lowercased() }
    }

    func unread(_ chat: RunningChat, _ user: User, _ group: UUID) async throws -> Int? {
        try await chat.api(user).listUnreadCounts().ok.body.json.first { UUID(uuidString: $0.groupId) == group }?.unreadCount
    }

    @Test("messages: members report others' text and voice messages once; strangers, ex-members and unknown ids get 404, the sender 403; removal deletes as the sender would")
    func messages() async throws {
        try await withModeratedChat { chat, moderation in
            let owner = try await chat.user(), sender = try await chat.user(), leaver = try await chat.user(), stranger = try await chat.user()
            let group = try await chat.group(owner: owner, members: [sender, leaver])
            let senders = chat.api(sender)
            let text = try await senders.sendTextMessage(path: .init(groupId: group.uuidString), body: .json(.init(content: "buy my pills"))).created.body.json.id.lowercased()
            let voice = try await senders.sendVoiceMessage(path: .init(groupId: group.uuidString), query: .init(duration: 4.25, content: "listen"),
                                                           body: .audioMp4(upload(AudioFixtures.m4a))).created.body.json.id.lowercased()
            let hello = try await chat.api(owner).sendTextMessage(path: .init(groupId: group.uuidString), body: .json(.init(content: "hello"))).created.body.json.id.lowercased()
            #expect(chat.storedFiles.contains { $0.contains(voice) })
            #expect(try await answer { try await chat.api(leaver).leaveGroup(path: .init(groupId: group.uuidString)) }.status == 204)
            #expect(try await unread(chat, owner, group) == 2)
            let (textID, voiceID, helloID) = (try #require(UUID(uuidString: text)), try #require(UUID(uuidString: voice)), try #require(UUID(uuidString: hello)))

            let filed = try await report(chat, owner, .message, text, .spam, words: "  selling drugs  ")
            #expect(filed.status == 201, "\(filed.body)")
            let created = try filed.output.created.body.json
            #expect(created.status == .open && created.objectType == "message" && created.objectId == text && created.category == .spam && created.words == "selling drugs")
            let again = try await report(chat, owner, .message, text)
            #expect(again.status == 409 && again.code == "already_reported")
            for (user, id) in [(stranger, text), (leaver, text), (owner, UUID().uuidString)] {
                let hidden = try await report(chat, user, .message, id)
                #expect(hidden.status == 404 && hidden.code == "not_found", "\(id): \(hidden.status) \(hidden.body)")
            }
            // Not a UUID breaks the body's schema (`format: uuid`), as in every service.
            #expect(try await report(chat, owner, .message, "not-a-uuid").status == 422)
            let own = try await report(chat, sender, .message, text)
            #expect(own.status == 403 && own.code == "own_content")
            #expect(try await report(chat, owner, .message, voice, .sexual).status == 201)
            #expect(try await report(chat, sender, .message, hello, .other).status == 201)

            let queue = try await moderation.queue()
            #expect(queue.map { $0.objectId.lowercased }.sorted() == [text, voice, hello].sorted())
            let textItem = try #require(queue.first { $0.objectId.lowercased == text })
            #expect(textItem.objectType == "message" && textItem.reportedUserId == sender.id && textItem.openReports == 1 && textItem.categories.map(\.category) == [.spam])
            let review = try #require(try await moderation.review("message", textID))
            #expect(review.content == "buy my pills" && review.reportedUserId == sender.id && review.reports.map(\.reporterId) == [owner.id])
            #expect(try await moderation.review("message", voiceID)?.content == "voice message, 4 s: listen")

            for id in [textID, voiceID] {
                let resolved = try await moderation.resolve("message", id, .remove)
                #expect(resolved.removed && resolved.reporterIds == [owner.id] && resolved.reportedUserId == sender.id)
            }
            for user in [owner, sender] {
                #expect(try await history(chat, user, group) == [hello], "gone for every member")
            }
            #expect(try await unread(chat, owner, group) == 0, "unread counts follow")
            #expect(!chat.storedFiles.contains { $0.contains(voice) }, "the voice file went with its message")
            #expect(try await moderation.review("message", textID)?.content == nil)
            let events = try await chat.service.events(of: .chat) { events in
                events.filter { $0.type == .messageDeleted }.count >= 2
            }
            let deleted = try events.filter { $0.type == .messageDeleted }.map { try $0.decode(MessageDeleted.self) }
            #expect(Set(deleted.map { $0.payload.message.id.lowercased }) == [text, voice])
            #expect(deleted.allSatisfy { $0.payload.deletedBy == sender.id && $0.actor == sender.id && $0.aggregateId == group.lowercased })

            let dismissed = try await moderation.resolve("message", helloID, .dismiss)
            #expect(!dismissed.removed && dismissed.reporterIds == [sender.id])
            #expect(try await history(chat, sender, group) == [hello], "a dismissed report leaves the message")
            let twice = try await moderation.refusal("message", textID, .remove)
            #expect(twice == "404 no_open_reports")
            #expect(try await moderation.queue().isEmpty)
            // Closed, the same object may be reported again (a removed one is gone: 404).
            #expect(try await report(chat, owner, .message, text).status == 404)
        }
    }

    @Test("groups: members report a group they are in; strangers and unknown ids get 404, the owner 403; removal deletes it as the owner would")
    func groups() async throws {
        try await withModeratedChat { chat, moderation in
            let owner = try await chat.user(), member = try await chat.user(), stranger = try await chat.user()
            let bad = try await chat.group(owner: owner, members: [member], name: "Hate club"), fine = try await chat.group(owner: owner, members: [member], name: "Book club")
            let owners = chat.api(owner)
            _ = try await owners.setGroupPicture(path: .init(groupId: bad.uuidString), body: .png(upload(AudioFixtures.png))).ok
            let voice = try await owners.sendVoiceMessage(path: .init(groupId: bad.uuidString), query: .init(duration: 2), body: .audioMp4(upload(AudioFixtures.m4a)))
                .created.body.json.id.lowercased()
            let event = try await chat.api(member).createEvent(body: .json(.init(title: "rally", startsAt: Date(timeIntervalSinceNow: 3600), endsAt: Date(timeIntervalSinceNow: 7200),
                                                                                 groupId: bad.uuidString))).created.body.json.id
            let filesBefore = chat.storedFiles
            #expect(filesBefore.contains { $0.contains(voice) } && filesBefore.contains { $0.contains(bad.lowercased) && !$0.contains(voice) })

            let filed = try await report(chat, member, .group, bad.uuidString, .hate)
            #expect(try filed.status == 201 && filed.output.created.body.json.status == .open, "\(filed.body)")
            let again = try await report(chat, member, .group, bad.uuidString)
            #expect(again.status == 409 && again.code == "already_reported")
            #expect(try await report(chat, stranger, .group, bad.uuidString).status == 404)
            #expect(try await report(chat, member, .group, UUID().uuidString).status == 404)
            #expect(try await report(chat, member, .group, voice).status == 404, "a message's id is no group")
            let own = try await report(chat, owner, .group, bad.uuidString)
            #expect(own.status == 403 && own.code == "own_content")
            #expect(try await report(chat, member, .group, fine.uuidString, .spam).status == 201)

            let queue = try await moderation.queue()
            #expect(Set(queue.map(\.objectId)) == [bad, fine] && queue.allSatisfy { $0.objectType == "group" && $0.reportedUserId == owner.id })
            #expect(queue.first { $0.objectId == bad }?.categories.map(\.category) == [.hate])
            let review = try #require(try await moderation.review("group", bad))
            #expect(review.content?.hasPrefix("Hate club\npicture: ") == true, "\(review.content ?? "nil")")

            let resolved = try await moderation.resolve("group", bad, .remove)
            #expect(resolved.removed && resolved.reporterIds == [member.id] && resolved.reportedUserId == owner.id)
            for user in [owner, member] {
                #expect(try await answer { try await chat.api(user).getGroup(path: .init(groupId: bad.uuidString)) }.status == 404)
                #expect(try await chat.api(user).listGroups().ok.body.json.compactMap { UUID(uuidString: $0.id) } == [fine])
            }
            #expect(try await answer { try await chat.api(member).getEvent(path: .init(eventId: event)) }.status == 404, "its calendar events went with it")
            #expect(!chat.storedFiles.contains { $0.contains(bad.lowercased) }, "voice files and picture went: \(chat.storedFiles)")
            let events = try await chat.service.events(of: .chat) { events in
                events.contains { $0.type == .groupDeleted } && events.contains { $0.type == .calendarEventDeleted }
            }
            let deleted = try #require(try events.first { $0.type == .groupDeleted }?.decode(GroupDeleted.self))
            #expect(deleted.payload.group.id == bad && deleted.actor == owner.id && Set(deleted.payload.memberIds) == [owner.id, member.id])

            #expect(try await moderation.resolve("group", fine, .dismiss).removed == false)
            #expect(try await answer { try await chat.api(member).getGroup(path: .init(groupId: fine.uuidString)) }.status == 200)
            #expect(try await moderation.refusal("group", bad, .remove) == "404 no_open_reports")
        }
    }

    @Test("profiles: co-members report a person; strangers get 404, oneself 403; removal resets the name and removes the avatar")
    func profiles() async throws {
        try await withModeratedChat { chat, moderation in
            let reporter = try await chat.user(), rude = try await chat.user(), kind = try await chat.user(), stranger = try await chat.user()
            _ = try await chat.group(owner: reporter, members: [rude, kind])
            let rudes = chat.api(rude)
            _ = try await rudes.updateMe(body: .json(.init(displayName: "Rude Name"))).ok
            let avatar = try #require(try await rudes.setAvatar(body: .png(upload(AudioFixtures.png))).ok.body.json.avatarUrl)
            #expect(chat.storedFiles.contains { $0.hasPrefix("profile-pictures/") && $0.contains(rude.id.uuidString.lowercased()) })

            let filed = try await report(chat, reporter, .profile, rude.id.uuidString, .harassment)
            #expect(try filed.status == 201 && filed.output.created.body.json.objectType == "profile", "\(filed.body)")
            #expect(try await report(chat, reporter, .profile, rude.id.uuidString).code == "already_reported")
            #expect(try await report(chat, stranger, .profile, rude.id.uuidString).status == 404, "no shared group")
            #expect(try await report(chat, reporter, .profile, UUID().uuidString).status == 404)
            let own = try await report(chat, rude, .profile, rude.id.uuidString)
            #expect(own.status == 403 && own.code == "own_content")
            #expect(try await report(chat, rude, .profile, kind.id.uuidString, .spam).status == 201)

            let review = try #require(try await moderation.review("profile", rude.id))
            #expect(review.content == "Rude Name\navatar: \(avatar)" && review.reportedUserId == rude.id)
            #expect(try await moderation.queue().map(\.objectId) == [rude.id, kind.id])

            let resolved = try await moderation.resolve("profile", rude.id, .remove)
            #expect(resolved.removed && resolved.reporterIds == [reporter.id])
            let seen = try await chat.api(reporter).getUser(path: .init(userId: rude.id.uuidString)).ok.body.json
            #expect(seen.displayName == "Unify user" && seen.avatarUrl == nil)
            let me = try await rudes.getMe().ok.body.json
            #expect(me.displayName == "Unify user" && me.avatarUrl == nil)
            #expect(!chat.storedFiles.contains { $0.contains(rude.id.uuidString.lowercased()) }, "\(chat.storedFiles)")
            #expect(try await chat.service.request(.GET, avatar, as: nil).status == 404)
            #expect(try await rudes.updateMe(body: .json(.init(displayName: "Reformed"))).ok.body.json.displayName == "Reformed", "the user may rename again")

            #expect(try await moderation.resolve("profile", kind.id, .dismiss).removed == false)
            #expect(try await chat.api(reporter).getUser(path: .init(userId: kind.id.uuidString)).ok.body.json.displayName != "Unify user")
            #expect(try await moderation.refusal("profile", rude.id, .remove) == "404 no_open_reports")
        }
    }
}
