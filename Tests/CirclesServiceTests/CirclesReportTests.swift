import CirclesAPI
import CirclesService
import ColonyClientTesting
import ColonyModels
import ColonyPlatform
import ColonyTesting
import Foundation
import OpenAPIRuntime
import Testing

/// Reports (`POST /circles/v1/reports`) of posts, DMs and profiles, and the console's moderation
/// routes acting on them, against the running service: only what the reporter can see may be
/// reported (a stranger gets the 404 of what does not exist), never one's own, once while open;
/// a moderator's removal deletes the object as its owner would, with the owner's events.
@Suite("Circles reports")
struct CirclesReportTests {
    typealias User = RunningService.User

    static func consoleKey() -> InternalKey {
        InternalKey((0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined())
    }

    func report(_ circles: RunningCircles, _ type: Schemas.ReportCreate.ObjectTypePayload, _ id: String, as user: User,
                _ category: Schemas.ReportCreate.CategoryPayload = .spam, words: String? = nil) async throws -> Answer<Operations.CreateReport.Output> {
        try await answer { try await circles.api(user).createReport(body: .json(.init(objectType: type, objectId: id, category: category, words: words))) }
    }

    /// The console's answer when resolving fails (nil when it succeeded).
    func failedResolve(_ moderation: ModerationCalls, _ type: String, _ id: UUID, _ action: ModerationAction = .remove) async throws -> RunningService.Reply? {
        do {
            _ = try await moderation.resolve(type, id, action)
            return nil
        } catch let failure as ModerationCalls.Failure {
            return failure.reply
        }
    }

    func sorted(_ ids: [UUID]) -> [UUID] { ids.sorted { $0.uuidString < $1.uuidString } }

    @Test("a post: members report it once, a stranger or an unknown id gets 404, its author 403; removed, it goes as its author's delete takes it")
    func post() async throws {
        let key = Self.consoleKey()
        try await withRunningCircles(consoleKey: key) { circles in
            let author = try await circles.user(), member = try await circles.user(), another = try await circles.user(), stranger = try await circles.user()
            let circle = try await circles.circle(owner: author, members: [member, another])
            _ = try await circles.circle(owner: stranger, name: "Elsewhere")
            let poll = try await circles.post(circle, as: author, .init(_type: .poll, body: "Lunch?", pollOptions: ["Tacos", "Sushi"]))
            let pollID = try #require(UUID(uuidString: poll))
            let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 4, 5, 6]
            let photoURL = try #require(try await circles.api(author).setPostPhoto(path: .init(postId: poll), body: .png(HTTPBody(png))).ok.body.json.photoUrl)
            _ = try await circles.api(member).addPostReaction(path: .init(postId: poll, emoji: "👍")).ok
            _ = try await circles.api(another).keepPost(path: .init(postId: poll)).ok
            let stays = try await circles.post(circle, as: author, .init(_type: .note, body: "stays"))

            let filed = try await report(circles, .post, poll, as: member, .spam, words: "  selling things  ")
            #expect(filed.status == 201)
            let created = try filed.output.created.body.json
            #expect(created.status == .open && created.objectType == "post" && created.objectId == poll && created.category == .spam && created.words == "selling things")
            let again = try await report(circles, .post, poll, as: member, .hate)
            #expect(again.status == 409 && again.code == "already_reported", "\(again.body)")
            let outsider = try await report(circles, .post, poll, as: stranger)
            #expect(outsider.status == 404 && outsider.code == "not_found", "\(outsider.body)")
            let unknown = try await report(circles, .post, UUID().lowercased, as: member)
            #expect(unknown.status == 404 && unknown.code == "not_found", "\(unknown.body)")
            #expect(try await report(circles, .post, "not-a-uuid", as: member).status == 422)
            let own = try await report(circles, .post, poll, as: author)
            #expect(own.status == 403 && own.code == "own_content", "\(own.body)")
            #expect(try await report(circles, .post, poll, as: another, .harassment).status == 201)

            let moderation = ModerationCalls(service: circles.service, key: key)
            let queued = try #require(try await moderation.queue().first { $0.objectId == pollID })
            #expect(queued.objectType == "post" && queued.reportedUserId == author.id && queued.openReports == 2)
            #expect(Set(queued.categories.map(\.category)) == [.spam, .harassment])
            let review = try #require(try await moderation.review("post", pollID))
            let content = try #require(review.content)
            #expect(content.contains("poll: Lunch?") && content.contains("Tacos | Sushi") && content.contains("with a photo"), "\(content)")
            #expect(review.reports.count == 2 && review.reports.allSatisfy { $0.status == "open" })

            let resolution = try await moderation.resolve("post", pollID, .remove)
            #expect(resolution.removed && resolution.action == .remove && resolution.reportedUserId == author.id)
            #expect(resolution.reporterIds == sorted([member.id, another.id]))
            // Gone for every member, with its marks and photo, as if its author had deleted it.
            #expect(try await answer { _ = try await circles.api(member).getPost(path: .init(postId: poll)) }.status == 404)
            #expect(try await circles.api(another).listPosts(path: .init(circleId: circle.lowercased)).ok.body.json.posts.map { $0.id.lowercased() } == [stays])
            #expect(try await circles.api(another).listKeptPosts().ok.body.json.isEmpty)
            for table in ["post_reactions", "kept_posts", "poll_options"] { #expect(try await circles.count(table) == 0, "\(table)") }
            #expect(try await circles.count("posts") == 1)
            #expect(try await circles.service.request(.GET, photoURL, as: author).status == 404, "the photo goes with the post")
            let events = try await circles.service.events(of: .circles) { events in events.contains { $0.type == .postDeleted } }
            let deleted = try #require(events.first { $0.type == .postDeleted }).decode(PostDeleted.self)
            #expect(deleted.payload.post.id == pollID && deleted.payload.post.circleId == circle && deleted.actor == nil)

            let after = try #require(try await moderation.review("post", pollID))
            #expect(after.content == nil && after.reports.allSatisfy { $0.status == "removed" && $0.resolvedBy == moderation.operatorEmail })
            let twice = try #require(try await failedResolve(moderation, "post", pollID))
            #expect(twice.status == 404 && twice.code == "no_open_reports", "\(twice.body)")

            // Dismissed, a post stays.
            let staysID = try #require(UUID(uuidString: stays))
            #expect(try await report(circles, .post, stays, as: member, .other).status == 201)
            let dismissed = try await moderation.resolve("post", staysID, .dismiss)
            #expect(!dismissed.removed && dismissed.reporterIds == [member.id])
            #expect(try await circles.card(stays, as: another).body == "stays")
            #expect(try await circles.count("posts") == 1)
        }
    }

    @Test("an expired post can no longer be reported, and moderators see it gone: removing it removes nothing")
    func expiredPost() async throws {
        let key = Self.consoleKey()
        try await withRunningCircles(consoleKey: key) { circles in
            let author = try await circles.user(), member = try await circles.user(), another = try await circles.user()
            let circle = try await circles.circle(owner: author, members: [member, another])
            let note = try await circles.post(circle, as: author, .init(_type: .note, body: "soon gone"))
            let noteID = try #require(UUID(uuidString: note))
            #expect(try await report(circles, .post, note, as: member).status == 201)
            _ = try await circles.service.withDatabase { database in
                try await database.query("UPDATE posts SET expires_at = now() - interval '1 second' WHERE id = \(noteID)")
            }
            #expect(try await report(circles, .post, note, as: another).status == 404)
            let moderation = ModerationCalls(service: circles.service, key: key)
            let review = try #require(try await moderation.review("post", noteID))
            #expect(review.content == nil && review.reportedUserId == author.id)
            let resolution = try await moderation.resolve("post", noteID, .remove)
            #expect(!resolution.removed && resolution.reporterIds == [member.id])
        }
    }

    @Test("a DM: its recipient reports it, nobody outside the thread can, its sender 403; removed, it leaves the thread for both parties with dm_deleted")
    func dm() async throws {
        let key = Self.consoleKey()
        try await withRunningCircles(consoleKey: key) { circles in
            let sender = try await circles.user(), recipient = try await circles.user(), member = try await circles.user(), stranger = try await circles.user()
            let circle = try await circles.circle(owner: sender, members: [recipient, member])
            let (apiS, apiR) = (circles.api(sender), circles.api(recipient))
            let thread = try await apiS.openThread(path: .init(circleId: circle.lowercased), body: .json(.init(userId: recipient.id.lowercased))).ok.body.json.id
            let rude = try await apiS.sendMessage(path: .init(threadId: thread), body: .json(.init(body: "you are awful"))).created.body.json
            let fine = try await apiS.sendMessage(path: .init(threadId: thread), body: .json(.init(body: "see you at 8"))).created.body.json
            let reply = try await apiR.sendMessage(path: .init(threadId: thread), body: .json(.init(body: "excuse me?", replyToId: rude.id))).created.body.json
            _ = try await apiR.addMessageReaction(path: .init(threadId: thread, messageId: rude.id, emoji: "😡")).ok
            let rudeID = try #require(UUID(uuidString: rude.id))

            let filed = try await report(circles, .dm, rude.id, as: recipient, .harassment)
            #expect(filed.status == 201)
            #expect(try filed.output.created.body.json.objectId == rude.id.lowercased() && filed.output.created.body.json.objectType == "dm")
            #expect(try await report(circles, .dm, rude.id, as: recipient).code == "already_reported")
            for outsider in [member, stranger] {
                let answer = try await report(circles, .dm, rude.id, as: outsider)
                #expect(answer.status == 404 && answer.code == "not_found", "\(answer.body)")
            }
            #expect(try await report(circles, .dm, UUID().lowercased, as: recipient).status == 404)
            let own = try await report(circles, .dm, rude.id, as: sender)
            #expect(own.status == 403 && own.code == "own_content")
            #expect(try await report(circles, .dm, reply.id, as: recipient).code == "own_content")

            let moderation = ModerationCalls(service: circles.service, key: key)
            let queued = try #require(try await moderation.queue().first { $0.objectId == rudeID })
            #expect(queued.objectType == "dm" && queued.reportedUserId == sender.id && queued.categories.map(\.category) == [.harassment])
            #expect(try await moderation.review("dm", rudeID)?.content == "you are awful")
            let resolution = try await moderation.resolve("dm", rudeID, .remove)
            #expect(resolution.removed && resolution.reporterIds == [recipient.id])

            // Gone from the thread for both; the reply stays without its reference, the reaction goes.
            for api in [apiS, apiR] {
                let messages = try await api.listMessages(path: .init(threadId: thread)).ok.body.json.messages
                #expect(messages.map(\.value1.body) == ["excuse me?", "see you at 8"])
                #expect(messages.first?.value1.replyToId == nil)
            }
            #expect(try await circles.count("dm_reactions") == 0)
            #expect(try await apiR.listThreads().ok.body.json.first?.lastMessage?.id == reply.id)
            let events = try await circles.service.events(of: .circles) { events in events.contains { $0.type == DMDeleted.eventType } }
            let deleted = try #require(events.first { $0.type == DMDeleted.eventType }).decode(DMDeleted.self).payload
            #expect(deleted.message.id == rudeID && deleted.message.body == "you are awful" && deleted.circleId == circle)
            #expect(deleted.threadId.lowercased == thread.lowercased() && Set(deleted.participantIds) == [sender.id, recipient.id])
            #expect(try await moderation.review("dm", rudeID)?.content == nil)
            #expect(try await failedResolve(moderation, "dm", rudeID)?.code == "no_open_reports")

            // Dismissed, a message stays.
            let fineID = try #require(UUID(uuidString: fine.id))
            #expect(try await report(circles, .dm, fine.id, as: recipient).status == 201)
            #expect(try await moderation.resolve("dm", fineID, .dismiss).removed == false)
            #expect(try await apiR.listMessages(path: .init(threadId: thread)).ok.body.json.messages.map(\.value1.body) == ["excuse me?", "see you at 8"])
        }
    }

    @Test("a profile: members of a shared circle report it, a stranger cannot see it, nobody reports themselves; removed, what its owner wrote for others is reset")
    func profile() async throws {
        let key = Self.consoleKey()
        try await withRunningCircles(consoleKey: key) { circles in
            let rude = try await circles.user(), member = try await circles.user(), other = try await circles.user(handle: "other_one"), stranger = try await circles.user()
            let circle = try await circles.circle(owner: member, members: [rude, other])
            _ = try await circles.circle(owner: stranger, name: "Elsewhere")
            _ = try await circles.api(rude).updateProfile(body: .json(.init(displayName: "Rude Name", handle: "rude_one", bio: "a rude bio", dmPrivacy: .reciprocal,
                                                                            fullName: "Rude Q Person", location: "Nowhere", address: "1 Secret Lane"))).ok
            let (rudeID, otherID) = (rude.id.lowercased, other.id.lowercased)

            let filed = try await report(circles, .profile, rudeID, as: member, .hate)
            #expect(filed.status == 201)
            #expect(try filed.output.created.body.json.objectId == rudeID)
            #expect(try await report(circles, .profile, rudeID, as: member).code == "already_reported")
            let outsider = try await report(circles, .profile, rudeID, as: stranger)
            #expect(outsider.status == 404 && outsider.code == "not_found", "\(outsider.body)")
            #expect(try await report(circles, .profile, UUID().lowercased, as: member).status == 404)
            let own = try await report(circles, .profile, rudeID, as: rude)
            #expect(own.status == 403 && own.code == "own_content")

            let moderation = ModerationCalls(service: circles.service, key: key)
            let queued = try #require(try await moderation.queue().first { $0.objectId == rude.id })
            #expect(queued.objectType == "profile" && queued.reportedUserId == rude.id && queued.categories.map(\.category) == [.hate])
            let content = try #require(try await moderation.review("profile", rude.id)?.content)
            #expect(["Rude Name", "@rude_one", "a rude bio", "Rude Q Person", "Nowhere"].allSatisfy(content.contains), "\(content)")
            #expect(!content.contains("Secret Lane"), "private fields are not shown")
            let resolution = try await moderation.resolve("profile", rude.id, .remove)
            #expect(resolution.removed && resolution.reporterIds == [member.id])

            let reset = try await circles.api(rude).getProfile().ok.body.json
            #expect(reset.displayName == "Member" && reset.handle.hasPrefix("member_") && reset.bio == nil && reset.fullName == nil && reset.location == nil)
            #expect(reset.address == "1 Secret Lane" && reset.dmPrivacy == .reciprocal, "private fields and settings stay")
            let seen = try await circles.api(member).listMembers(path: .init(circleId: circle.lowercased)).ok.body.json.first { $0.profile.userId == rudeID }
            #expect(seen?.profile.displayName == "Member" && seen?.profile.bio == nil)
            #expect(try await moderation.review("profile", rude.id)?.content?.contains("name: Member") == true)
            #expect(try await failedResolve(moderation, "profile", rude.id)?.code == "no_open_reports")
            // The owner may name themselves again.
            #expect(try await circles.api(rude).updateProfile(body: .json(.init(displayName: "Kind Name"))).ok.body.json.displayName == "Kind Name")

            // Dismissed, a profile stays.
            #expect(try await report(circles, .profile, otherID, as: rude).status == 201)
            #expect(try await moderation.resolve("profile", other.id, .dismiss).removed == false)
            #expect(try await circles.api(other).getProfile().ok.body.json.handle == "other_one")
        }
    }
}
