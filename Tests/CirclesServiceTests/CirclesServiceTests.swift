import CirclesAPI
import CirclesService
import ColonyClientTesting
import ColonyModels
import ColonyPlatform
import ColonyTesting
import Foundation
import NIOCore
import NIOHTTP1
import OpenAPIRuntime
import Testing

/// The circles service from the outside: real Postgres, real broker, HTTP with mycirclee tokens,
/// through the generated client (`CirclesAPI`); raw requests only where the client cannot send
/// the request (values outside the document's enums, null clears, a content type it does not
/// take, keys in headers) or for the storage routes, each saying why.
@Suite("Circles service")
struct CirclesServiceTests {
    typealias User = RunningService.User


    @Test("the OpenAPI document lists exactly the routes the service registered, and each answers")
    func openAPIMatchesRoutes() async throws {
        try await withRunningCircles { running in
            let user = try await running.user()
            #expect(try await running.service.openAPIProblems(CirclesService.openAPIDocument, as: user) == [])
        }
    }

    @Test("an outsider can read or write nothing of a circle: every route answers 404")
    func outsiderGetsNothing() async throws {
        try await withRunningCircles { circles in
            let owner = try await circles.user(), member = try await circles.user(handle: "member_one"), outsider = try await circles.user()
            let circle = try await circles.circle(owner: owner, members: [member])
            let note = try await circles.post(circle, as: owner)
            let poll = try await circles.post(circle, as: owner, .init(_type: .poll, body: "Lunch?", pollOptions: ["Tacos", "Sushi"]))
            let event = try await circles.post(circle, as: owner, .init(_type: .event, body: "Hike", startsAt: try #require(ISO8601.parse("2030-01-01T09:00:00Z"))))
            let option = try #require(try await circles.card(poll, as: owner).pollOptions?.first?.id)
            let api = circles.api(owner)
            let threadID = try await api.openThread(path: .init(circleId: circle.lowercased), body: .json(.init(userId: member.id.lowercased))).ok.body.json.id
            let messageID = try await api.sendMessage(path: .init(threadId: threadID), body: .json(.init(body: "hi"))).created.body.json.id
            let someoneElse = try await circles.user()
            let requestID = try await circles.api(member).requestAdd(path: .init(circleId: circle.lowercased), body: .json(.init(handle: try await handle(of: someoneElse, circles))))
                .created.body.json.id

            let png = Array([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 0] as [UInt8])
            let (c, p, t, m, fire) = (circle.lowercased, note, threadID, messageID, "🔥")
            let them = circles.api(outsider)
            let calls: [(String, @Sendable () async throws -> Answer<Void>)] = [
                ("getCircle", { try await answer { _ = try await them.getCircle(path: .init(circleId: c)) } }),
                ("renameCircle", { try await answer { _ = try await them.renameCircle(path: .init(circleId: c), body: .json(.init(name: "Mine"))) } }),
                ("deleteCircle", { try await answer { _ = try await them.deleteCircle(path: .init(circleId: c)) } }),
                ("listMembers", { try await answer { _ = try await them.listMembers(path: .init(circleId: c)) } }),
                ("removeMember", { try await answer { _ = try await them.removeMember(path: .init(circleId: c, userId: member.id.lowercased)) } }),
                ("leaveCircle", { try await answer { _ = try await them.leaveCircle(path: .init(circleId: c)) } }),
                ("createInvite", { try await answer { _ = try await them.createInvite(path: .init(circleId: c)) } }),
                ("requestAdd", { try await answer { _ = try await them.requestAdd(path: .init(circleId: c), body: .json(.init(handle: "member_one"))) } }),
                ("declineAddRequest", { try await answer { _ = try await them.declineAddRequest(path: .init(requestId: requestID)) } }),
                ("listPresence", { try await answer { _ = try await them.listPresence(path: .init(circleId: c)) } }),
                ("setPresence", { try await answer { _ = try await them.setPresence(path: .init(circleId: c), body: .json(.init(status: .free))) } }),
                ("listPosts", { try await answer { _ = try await them.listPosts(path: .init(circleId: c)) } }),
                ("createPost", { try await answer { _ = try await them.createPost(path: .init(circleId: c), body: .json(.init(_type: .note, body: "x"))) } }),
                ("getPost", { try await answer { _ = try await them.getPost(path: .init(postId: p)) } }),
                ("updatePost", { try await answer { _ = try await them.updatePost(path: .init(postId: p), body: .json(.init(body: "x"))) } }),
                ("deletePost", { try await answer { _ = try await them.deletePost(path: .init(postId: p)) } }),
                ("setPostPhoto", { try await answer { _ = try await them.setPostPhoto(path: .init(postId: p), body: .png(HTTPBody(png))) } }),
                ("removePostPhoto", { try await answer { _ = try await them.removePostPhoto(path: .init(postId: p)) } }),
                ("addPostReaction", { try await answer { _ = try await them.addPostReaction(path: .init(postId: p, emoji: fire)) } }),
                ("removePostReaction", { try await answer { _ = try await them.removePostReaction(path: .init(postId: p, emoji: fire)) } }),
                ("setPollVote", { try await answer { _ = try await them.setPollVote(path: .init(postId: poll), body: .json(.init(optionId: option))) } }),
                ("withdrawPollVote", { try await answer { _ = try await them.withdrawPollVote(path: .init(postId: poll)) } }),
                ("setRSVP", { try await answer { _ = try await them.setRSVP(path: .init(postId: event), body: .json(.init(status: .going))) } }),
                ("withdrawRSVP", { try await answer { _ = try await them.withdrawRSVP(path: .init(postId: event)) } }),
                ("keepPost", { try await answer { _ = try await them.keepPost(path: .init(postId: p)) } }),
                ("unkeepPost", { try await answer { _ = try await them.unkeepPost(path: .init(postId: p)) } }),
                ("openThread", { try await answer { _ = try await them.openThread(path: .init(circleId: c), body: .json(.init(userId: member.id.lowercased))) } }),
                ("setThreadNotify", { try await answer { _ = try await them.setThreadNotify(path: .init(threadId: t), body: .json(.init(notify: false))) } }),
                ("listMessages", { try await answer { _ = try await them.listMessages(path: .init(threadId: t)) } }),
                ("sendMessage", { try await answer { _ = try await them.sendMessage(path: .init(threadId: t), body: .json(.init(body: "x"))) } }),
                ("markThreadRead", { try await answer { _ = try await them.markThreadRead(path: .init(threadId: t)) } }),
                ("addMessageReaction", { try await answer { _ = try await them.addMessageReaction(path: .init(threadId: t, messageId: m, emoji: fire)) } }),
                ("removeMessageReaction", { try await answer { _ = try await them.removeMessageReaction(path: .init(threadId: t, messageId: m, emoji: fire)) } }),
            ]
            for (operation, call) in calls {
                let reply = try await call()
                #expect(reply.status == 404, "\(operation): \(reply.status) \(reply.body)")
            }
            #expect(try await them.listCircles().ok.body.json.isEmpty)
            #expect(try await them.listThreads().ok.body.json.isEmpty)
            #expect(try await them.listKeptPosts().ok.body.json.isEmpty)
            // Nothing changed: the owner still sees the circle as it was.
            #expect(try await api.getCircle(path: .init(circleId: c)).ok.body.json.name == "Inner")
            #expect(try await circles.count("posts") == 3)
        }
    }

    func handle(of user: User, _ circles: RunningCircles) async throws -> String {
        try await circles.api(user).getProfile().ok.body.json.handle
    }

    @Test("invite codes: single use under concurrent claims, 48 h expiry, clear errors")
    func invites() async throws {
        try await withRunningCircles { circles in
            let owner = try await circles.user()
            let circle = try await circles.circle(owner: owner)
            let api = circles.api(owner)
            func invite() async throws -> Schemas.Invite { try await api.createInvite(path: .init(circleId: circle.lowercased)).created.body.json }
            func claim(_ code: String, as user: User) async throws -> Answer<Void> {
                try await answer { _ = try await circles.api(user).claimInvite(body: .json(.init(code: code))) }
            }
            let code = try await invite()
            #expect(abs(code.expiresAt.timeIntervalSinceNow - 48 * 3600) < 120)

            var claimers: [User] = []
            for _ in 0..<8 { claimers.append(try await circles.user()) }
            let statuses = try await withThrowingTaskGroup(of: (Int, String?).self) { group in
                for claimer in claimers {
                    group.addTask {
                        let reply = try await claim(code.code, as: claimer)
                        return (reply.status, reply.code)
                    }
                }
                return try await group.reduce(into: [(Int, String?)]()) { $0.append($1) }
            }
            #expect(statuses.filter { $0.0 == 200 }.count == 1, "\(statuses)")
            #expect(statuses.filter { $0.0 == 410 && $0.1 == "invite_used" }.count == 7, "\(statuses)")
            #expect(try await api.listMembers(path: .init(circleId: circle.lowercased)).ok.body.json.count == 2)

            let oldCode = try await invite().code
            _ = try await circles.service.withDatabase { database in
                try await database.query("UPDATE circle_invites SET expires_at = now() - interval '1 second' WHERE code = \(oldCode)")
            }
            let late = try await circles.user()
            let expired = try await claim(oldCode, as: late)
            #expect(expired.status == 410 && expired.code == "invite_expired")
            let bogus = try await claim("NOPE123456", as: late)
            #expect(bogus.status == 404 && bogus.code == "invite_invalid")
            let fresh = try await invite().code
            let again = try await claim(fresh, as: owner)
            #expect(again.status == 409 && again.code == "already_member")
            #expect(try await claim(fresh, as: late).status == 200, "a refused claim does not use the code up")
        }
    }

    @Test("DM privacy: anyone, reciprocal and nobody, both directions, on opening and on every send")
    func dmPrivacy() async throws {
        try await withRunningCircles { circles in
            let anyone = try await circles.user(privacy: .anyone), reciprocal = try await circles.user(privacy: .reciprocal), nobody = try await circles.user(privacy: .nobody)
            let circle = try await circles.circle(owner: anyone, members: [reciprocal, nobody])
            func open(_ from: User, _ to: User) async throws -> Int {
                try await answer { _ = try await circles.api(from).openThread(path: .init(circleId: circle.lowercased), body: .json(.init(userId: to.id.lowercased))) }.status
            }
            func send(_ thread: String, as user: User, _ body: String) async throws -> Answer<Void> {
                try await answer { _ = try await circles.api(user).sendMessage(path: .init(threadId: thread), body: .json(.init(body: body))) }
            }
            #expect(try await open(anyone, reciprocal) == 200)   // reciprocal accepts senders who accept DMs
            #expect(try await open(reciprocal, anyone) == 200)
            #expect(try await open(nobody, anyone) == 200)       // anyone accepts everyone
            #expect(try await open(anyone, nobody) == 403)
            #expect(try await open(reciprocal, nobody) == 403)
            #expect(try await open(nobody, reciprocal) == 403)   // nobody does not accept DMs, so reciprocal refuses them

            // Enforced on every send: a later change of privacy closes an open thread.
            let thread = try await circles.api(anyone).openThread(path: .init(circleId: circle.lowercased), body: .json(.init(userId: reciprocal.id.lowercased))).ok.body.json.id
            #expect(try await send(thread, as: anyone, "hey").status == 201)
            #expect(try await send(thread, as: reciprocal, "hi!").status == 201)
            _ = try await circles.api(reciprocal).updateProfile(body: .json(.init(dmPrivacy: .nobody))).ok
            let refused = try await send(thread, as: anyone, "still there?")
            #expect(refused.status == 403 && refused.code == "dm_not_allowed")
            #expect(try await send(thread, as: reciprocal, "I can still write").status == 201, "the anyone side accepts messages from nobody-users")
        }
    }

    @Test("DMs: threads with last message and unread count, replies, read receipts, reactions, notify flags")
    func directMessages() async throws {
        try await withRunningCircles { circles in
            let a = try await circles.user(), b = try await circles.user()
            let circle = try await circles.circle(owner: a, members: [b])
            let (apiA, apiB) = (circles.api(a), circles.api(b))
            let thread = try await apiA.openThread(path: .init(circleId: circle.lowercased), body: .json(.init(userId: b.id.lowercased))).ok.body.json.id
            let first = try await apiA.sendMessage(path: .init(threadId: thread), body: .json(.init(body: "one"))).created.body.json
            _ = try await apiA.sendMessage(path: .init(threadId: thread), body: .json(.init(body: "two", replyToId: first.id))).created
            let list = try await apiB.listThreads().ok.body.json
            #expect(list.first?.unreadCount == 2 && list.first?.lastMessage?.body == "two")
            // Members' cards never carry an email (the type has none; the bytes neither).
            let raw = try await answer { _ = try await apiB.listThreads() }
            #expect(raw.json?.arrayValue?.first?["other_user"]?["email"] == nil)
            let read = try await apiB.markThreadRead(path: .init(threadId: thread)).ok.body.json
            #expect(read.unreadCount == 0)
            let messages = try await apiA.listMessages(path: .init(threadId: thread)).ok.body.json.messages
            #expect(messages.map(\.value1.body) == ["two", "one"] && messages.allSatisfy { $0.value1.readAt != nil })
            #expect(messages.first?.value1.replyToId == first.id)
            for _ in 0..<2 {  // set twice: a retry does not undo it
                let react = try await apiB.addMessageReaction(path: .init(threadId: thread, messageId: first.id, emoji: "❤️")).ok.body.json
                #expect(react.active && react.emoji == "❤️", "\(react)")
            }
            #expect(try await apiA.listMessages(path: .init(threadId: thread)).ok.body.json.messages.last?.value2.reactions.count == 1)
            #expect(try await apiB.removeMessageReaction(path: .init(threadId: thread, messageId: first.id, emoji: "❤️")).ok.body.json.active == false)
            _ = try await apiB.removeMessageReaction(path: .init(threadId: thread, messageId: first.id, emoji: "❤️")).ok
            #expect(try await circles.count("dm_reactions") == 0)
            #expect(try await apiB.setThreadNotify(path: .init(threadId: thread), body: .json(.init(notify: false))).ok.body.json.notify == false)
            let events = try await circles.service.events(of: .circles) { events in events.filter { $0.type == .dmReacted }.count == 2 }
            let sent = try #require(events.first { $0.type == .dmSent }).decode(DMSent.self).payload
            #expect(Set(sent.participantIds) == [a.id, b.id] && sent.recipientId == b.id && sent.circleId == circle)
            let receipt = try #require(events.first { $0.type == .dmRead }).decode(DMRead.self).payload
            #expect(receipt.messages?.map(\.body) == ["one", "two"] && receipt.messages?.allSatisfy { $0.readAt != nil && $0.senderId == a.id } == true)
            let reacted = try events.filter { $0.type == .dmReacted }.map { try $0.decode(DMReacted.self).payload }
            #expect(reacted.map(\.operation) == [.insert, .delete] && reacted.allSatisfy { $0.reaction.userId == b.id && Set($0.participantIds) == [a.id, b.id] })
        }
    }

    @Test("reactions, poll votes and RSVPs are set and unset: a retried request changes nothing, each real change is one event; counts follow")
    func marks() async throws {
        try await withRunningCircles { circles in
            let a = try await circles.user(), b = try await circles.user()
            let circle = try await circles.circle(owner: a, members: [b])
            let (apiA, apiB) = (circles.api(a), circles.api(b))
            let note = try await circles.post(circle, as: a)
            for _ in 0..<2 {
                let set = try await apiB.addPostReaction(path: .init(postId: note, emoji: "🔥")).ok.body.json
                #expect(set.reactions.first?.reactedByMe == true, "\(set)")
            }
            #expect(try await circles.count("post_reactions") == 1, "a retried set stays set")
            _ = try await apiA.addPostReaction(path: .init(postId: note, emoji: "🔥")).ok
            _ = try await apiA.addPostReaction(path: .init(postId: note, emoji: "😂")).ok
            let reactions = try await circles.card(note, as: b).reactions
            #expect(reactions.first?.emoji == "🔥" && reactions.first?.count == 2 && reactions.first?.reactedByMe == true)
            for _ in 0..<2 { _ = try await apiB.removePostReaction(path: .init(postId: note, emoji: "🔥")).ok }
            #expect(try await circles.count("post_reactions") == 2, "a retried unset stays unset")
            #expect(try await answer { _ = try await apiA.addPostReaction(path: .init(postId: note, emoji: "lol")) }.status == 422)

            let poll = try await circles.post(circle, as: a, .init(_type: .poll, body: "Where?", pollOptions: ["Park", "Cafe", "Home"]))
            let options = try await circles.card(poll, as: b).pollOptions?.map(\.id) ?? []
            #expect(options.count == 3)
            // The feed's page (one cell of column arrays, lists as text) orders and marks as the detail does.
            let cards = try await apiB.listPosts(path: .init(circleId: circle.lowercased)).ok.body.json.posts
            #expect(cards.first?.pollOptions?.map(\.label) == ["Park", "Cafe", "Home"])
            let noteCard = cards.first { $0.id.lowercased() == note }
            #expect(noteCard?.reactions.map(\.emoji) == ["🔥", "😂"])
            #expect(noteCard?.reactions.map(\.reactedByMe) == [false, false])
            func vote(_ post: String, _ option: String) async throws -> Answer<CirclesAPI.Operations.SetPollVote.Output> {
                try await answer { try await apiB.setPollVote(path: .init(postId: post), body: .json(.init(optionId: option))) }
            }
            for _ in 0..<2 { _ = try await vote(poll, options[0]).output.ok }
            let moved = try await vote(poll, options[1]).output.ok.body.json
            #expect(try await circles.count("poll_votes") == 1, "one vote per user and poll, moved")
            let votes = moved.pollOptions ?? []
            #expect(votes.map(\.votes) == [0, 1, 0] && votes.map(\.votedByMe) == [false, true, false])
            for _ in 0..<2 { _ = try await apiB.withdrawPollVote(path: .init(postId: poll)).ok }
            #expect(try await circles.count("poll_votes") == 0)
            #expect(try await vote(poll, UUID().lowercased).status == 409)
            #expect(try await vote(note, options[0]).status == 409)

            let event = try await circles.post(circle, as: a, .init(_type: .event, body: "BBQ", location: "Park", latitude: 52.5, longitude: 13.4,
                                                                   startsAt: try #require(ISO8601.parse("2030-06-01T18:00:00Z"))))
            func rsvp(_ post: String, as api: CirclesAPI.Client, _ status: Schemas.RSVPStatus) async throws -> Answer<Void> {
                try await answer { _ = try await api.setRSVP(path: .init(postId: post), body: .json(.init(status: status))) }
            }
            _ = try await rsvp(event, as: apiB, .maybe)
            for _ in 0..<2 { _ = try await rsvp(event, as: apiB, .going) }
            _ = try await rsvp(event, as: apiA, .going)
            let rsvps = try await circles.card(event, as: b).rsvps
            #expect(rsvps?.going == 2 && rsvps?.maybe == 0 && rsvps?.mine == .going)
            let withdrawn = try await apiB.withdrawRSVP(path: .init(postId: event)).ok.body.json
            #expect(withdrawn.rsvps?.going == 1 && withdrawn.rsvps?.mine == nil)
            #expect(try await rsvp(note, as: apiB, .going).status == 409)

            // Each real change is one event with the row before and after; the retries made none.
            let events = try await circles.service.events(of: .circles) { events in events.filter { $0.type == .eventRsvped }.count == 4 }
            #expect(try events.filter { $0.type == .postReacted }.map { try $0.decode(PostReacted.self).payload.operation } == [.insert, .insert, .insert, .delete])
            let voted = try events.filter { $0.type == .pollVoted }.map { try $0.decode(PollVoted.self).payload }
            #expect(voted.map { $0.previous?.optionId.uuidString.lowercased() } == [nil, options[0].lowercased(), options[1].lowercased()])
            #expect(voted.map { $0.vote?.optionId.uuidString.lowercased() } == [options[0].lowercased(), options[1].lowercased(), nil])
            let answered = try events.filter { $0.type == .eventRsvped }.map { try $0.decode(EventRsvped.self).payload }
            #expect(answered.map { $0.previous?.status } == [nil, .maybe, nil, .going] && answered.map { $0.rsvp?.status } == [.maybe, .going, .going, nil])
        }
    }

    @Test("post expiry: the job deletes expired posts with reactions, votes, RSVPs, kept marks and photos, and emits post_expired")
    func expiry() async throws {
        try await withRunningCircles(settings: CirclesSettings(maxPhotoBytes: 64 << 10, expiryInterval: .seconds(1))) { circles in
            let a = try await circles.user(), b = try await circles.user()
            let circle = try await circles.circle(owner: a, members: [b])
            let (apiA, apiB) = (circles.api(a), circles.api(b))
            let poll = try await circles.post(circle, as: a, .init(_type: .poll, body: "Soon gone", pollOptions: ["Yes", "No"]))
            let keep = try await circles.post(circle, as: a, .init(_type: .note, body: "stays"))
            let option = try #require(try await circles.card(poll, as: b).pollOptions?.first?.id)
            _ = try await apiB.setPollVote(path: .init(postId: poll), body: .json(.init(optionId: option))).ok
            _ = try await apiB.addPostReaction(path: .init(postId: poll, emoji: "👍")).ok
            _ = try await apiB.keepPost(path: .init(postId: poll)).ok
            let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 1, 2, 3]
            let photo = try await apiA.setPostPhoto(path: .init(postId: poll), body: .png(HTTPBody(png))).ok.body.json
            let photoURL = try #require(photo.photoUrl)
            // A stable URL for the circle's members (their token), nobody else. (Storage routes: raw requests.)
            #expect(photoURL.contains("/storage/v1/object/authenticated/post-photos/\(circle.uuidString.lowercased())/") && !photoURL.contains("token"))
            #expect(try await circles.service.request(.GET, photoURL, as: b).status == 200)
            #expect(try await circles.service.request(.GET, photoURL, as: nil).status == 401)
            #expect(try await circles.service.request(.GET, photoURL, as: try await circles.user()).status == 404)
            #expect(try await apiB.listKeptPosts().ok.body.json.count == 1)

            let pollID = try #require(UUID(uuidString: poll))
            _ = try await circles.service.withDatabase { database in
                try await database.query("UPDATE posts SET expires_at = now() - interval '1 second' WHERE id = \(pollID)")
            }
            // Expired is gone at once for readers, before the job runs.
            let feed = try await apiB.listPosts(path: .init(circleId: circle.lowercased)).ok.body.json
            #expect(feed.posts.map { $0.id.lowercased() } == [keep])
            #expect(try await answer { _ = try await apiB.getPost(path: .init(postId: poll)) }.status == 404)
            let events = try await circles.service.events(of: .circles) { events in events.contains { $0.type == .postExpired } }
            let expired = try #require(events.first { $0.type == .postExpired }).decode(PostExpired.self).payload
            #expect(expired.post.id.uuidString.lowercased() == poll && expired.post.circleId == circle)
            for table in ["poll_votes", "poll_options", "post_reactions", "kept_posts"] { #expect(try await circles.count(table) == 0, "\(table)") }
            #expect(try await circles.count("posts") == 1)
            #expect(try await circles.service.request(.GET, photoURL, as: a).status == 404, "the photo is deleted with the post")
        }
    }

    @Test("bad input gets 422 and writes nothing")
    func badInput() async throws {
        try await withRunningCircles { circles in
            let a = try await circles.user()
            let circle = try await circles.circle(owner: a)
            let api = circles.api(a)
            let at = try #require(ISO8601.parse("2030-01-01T00:00:00Z"))
            let bad: [Schemas.PostCreate] = [
                .init(_type: .poll, body: "x", pollOptions: ["only"]), .init(_type: .poll, body: "x", pollOptions: (1...11).map { "o\($0)" }),
                .init(_type: .poll, body: "x", pollOptions: ["a", "A"]), .init(_type: .note, body: String(repeating: "x", count: 2001)), .init(_type: .note, body: "   "),
                .init(_type: .event, body: "no time"), .init(_type: .note, body: "x", startsAt: at),
                .init(_type: .note, body: "x", latitude: 95, longitude: 0), .init(_type: .note, body: "x", latitude: 10),
                .init(_type: .note, body: "x", pollOptions: ["a", "b"]),
            ]
            for body in bad {
                let reply = try await answer { _ = try await api.createPost(path: .init(circleId: circle.lowercased), body: .json(body)) }
                #expect(reply.status == 422, "\(body): \(reply.status) \(reply.body)")
            }
            // Values outside the document's enums: the typed client cannot send them, so raw.
            for body: [String: Any] in [["type": "story", "body": "x"], ["type": "ask", "body": "x", "urgency": "someday"]] {
                let reply = try await circles.service.request(.POST, "/circles/\(circle)/posts", as: a, json: body)
                #expect(reply.status == 422, "\(body): \(reply.status) \(reply.body)")
            }
            #expect(try await circles.count("posts") == 0)
            #expect(try await circles.count("poll_options") == 0)
            let post = try await circles.post(circle, as: a)
            var big: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
            big += [UInt8](repeating: 0, count: 70 << 10)
            #expect(try await answer { _ = try await api.setPostPhoto(path: .init(postId: post), body: .png(HTTPBody(big))) }.status == 422)
            // A content type the document does not take: raw.
            #expect(try await circles.service.request(.PUT, "/posts/\(post)/photo", as: a, bytes: ByteBuffer(string: "<svg/>"), contentType: "image/svg+xml").status == 422)
            #expect(try await circles.card(post, as: a).photoUrl == nil)
            #expect(FileManager.default.enumerator(atPath: circles.storageRoot)?.allObjects.compactMap { $0 as? String }.filter { !$0.hasPrefix(".") && $0.contains("/") }.isEmpty ?? true)
            #expect(try await answer { _ = try await api.createCircle(body: .json(.init(name: ""))) }.status == 422)
            #expect(try await answer { _ = try await api.updateProfile(body: .json(.init(handle: "no spaces!"))) }.status == 422)
            #expect(try await circles.service.request(.PUT, "/circles/\(circle)/presence", as: a, json: ["status": "busy"]).status == 422, "not a status (raw: outside the enum)")
        }
    }

    @Test("posts: feed newest first with keyset pages; author-only edits; the post types' fields")
    func posts() async throws {
        try await withRunningCircles { circles in
            let a = try await circles.user(), b = try await circles.user()
            let circle = try await circles.circle(owner: a, members: [b])
            let (apiA, apiB) = (circles.api(a), circles.api(b))
            var ids: [String] = []
            for index in 0..<7 {
                ids.append(try await circles.post(circle, as: index.isMultiple(of: 2) ? a : b, .init(_type: .note, body: "p\(index)", mood: "happy", category: "life")))
            }
            let first = try await apiB.listPosts(path: .init(circleId: circle.lowercased), query: .init(limit: 4)).ok.body.json
            #expect(first.posts.map(\.body) == ["p6", "p5", "p4", "p3"])
            let second = try await apiB.listPosts(path: .init(circleId: circle.lowercased), query: .init(before: first.nextCursor, limit: 4)).ok.body.json
            #expect(second.posts.map(\.body) == ["p2", "p1", "p0"] && second.nextCursor == nil)
            let raw = try await answer { _ = try await apiB.listPosts(path: .init(circleId: circle.lowercased), query: .init(limit: 4)) }
            let author = raw.body["posts"]?.arrayValue?.first?["author"]
            #expect(author?["handle"]?.stringValue != nil && author?["email"] == nil)

            #expect(try await answer { _ = try await apiB.updatePost(path: .init(postId: ids[0]), body: .json(.init(body: "hijack"))) }.status == 403)
            #expect(try await answer { _ = try await apiB.deletePost(path: .init(postId: ids[0])) }.status == 403)
            // null clears mood: the client leaves nil fields out, so raw.
            let edited = try await circles.service.request(.PATCH, "/posts/\(ids[0])", as: a, json: ["body": "edited", "mood": NSNull()])
            #expect(edited.status == 200 && edited.body["body"]?.stringValue == "edited" && edited.body["mood"] == nil && edited.body["category"]?.stringValue == "life")
            _ = try await apiA.deletePost(path: .init(postId: ids[0])).noContent
            let ask = try await apiB.createPost(path: .init(circleId: circle.lowercased), body: .json(.init(_type: .ask, body: "Ride to the airport?"))).created.body.json
            #expect(ask.urgency == .medium)
            #expect(abs(ask.expiresAt.timeIntervalSinceNow - 24 * 3600) < 120)
        }
    }

    @Test("members see the public profile, never address, phone, email or birthday; presence is the circle's")
    func profilesAndPresence() async throws {
        try await withRunningCircles { circles in
            let a = try await circles.user(handle: "alice"), b = try await circles.user()
            let circle = try await circles.circle(owner: a, members: [b])
            let (apiA, apiB) = (circles.api(a), circles.api(b))
            let mine = try await apiA.updateProfile(body: .json(.init(bio: "hi", fullName: "Alice A.", address: "1 Main St", phone: "+15550100", birthday: "1990-04-01")))
                .ok.body.json
            #expect(mine.address == "1 Main St" && mine.birthday == "1990-04-01")
            let members = try await answer { _ = try await apiB.listMembers(path: .init(circleId: circle.lowercased)) }
            let alice = try #require(members.json?.arrayValue?.first { $0["profile"]?["handle"]?.stringValue == "alice" })
            #expect(alice["role"]?.stringValue == "owner" && alice["profile"]?["full_name"]?.stringValue == "Alice A.")
            for field in ["address", "phone", "email", "birthday"] { #expect(alice["profile"]?[field] == nil, "\(field) leaked") }
            #expect(try await answer { _ = try await apiB.updateProfile(body: .json(.init(handle: "ALICE"))) }.code == "handle_taken")

            let set = try await apiB.setPresence(path: .init(circleId: circle.lowercased), body: .json(.init(status: .deepWork))).ok.body.json
            #expect(set.status == .deepWork)
            let presence = try await apiA.listPresence(path: .init(circleId: circle.lowercased)).ok.body.json
            #expect(presence.count == 1 && presence.first?.userId == b.id.lowercased)
            let events = try await circles.service.events(of: .circles) { events in events.contains { $0.type == .presenceChanged } }
            let changed = try #require(events.first { $0.type == .presenceChanged }).decode(PresenceChanged.self)
            #expect(changed.payload.presence.status == .deepWork && changed.aggregateId == circle.uuidString.lowercased())
        }
    }

    @Test("add requests: a member asks by handle; only the invitee accepts (an owner accepting on their behalf is refused); the owner may approve or veto; others cannot answer")
    func addRequests() async throws {
        try await withRunningCircles { circles in
            let owner = try await circles.user(), member = try await circles.user(), third = try await circles.user()
            let invitee = try await circles.user(handle: "newbie"), other = try await circles.user(handle: "other_one")
            let circle = try await circles.circle(owner: owner, members: [member, third])
            func ask(_ handle: String, as user: User) async throws -> Answer<CirclesAPI.Operations.RequestAdd.Output> {
                try await answer { try await circles.api(user).requestAdd(path: .init(circleId: circle.lowercased), body: .json(.init(handle: handle))) }
            }
            /// The answer and, when it was 200, the request as it is now.
            func decide(_ id: String, _ how: String, as user: User) async throws -> (status: Int, code: String?, body: [String: JSONValue], output: Schemas.AddRequest?) {
                let api = circles.api(user)
                let reply: Answer<Schemas.AddRequest?> = try await answer {
                    switch how {
                    case "accept": if case .ok(let ok) = try await api.acceptAddRequest(path: .init(requestId: id)) { return try ok.body.json }
                    case "approve": if case .ok(let ok) = try await api.approveAddRequest(path: .init(requestId: id)) { return try ok.body.json }
                    default: if case .ok(let ok) = try await api.declineAddRequest(path: .init(requestId: id)) { return try ok.body.json }
                    }
                    return nil
                }
                return (reply.status, reply.code, reply.body, reply.output)
            }
            func seesCircle(_ user: User) async throws -> Int { try await answer { _ = try await circles.api(user).getCircle(path: .init(circleId: circle.lowercased)) }.status }
            let request = try await ask("@Newbie", as: member).output.created.body.json
            #expect(request.status == .pending && !request.ownerApproved)
            let duplicate = try await ask("newbie", as: third)
            #expect(duplicate.status == 409 && duplicate.code == "add_request_pending")
            let id = request.id
            #expect(try await decide(id, "accept", as: third).status == 403)
            #expect(try await decide(id, "approve", as: third).status == 403)

            // The attack: the owner accepts on the invitee's behalf. Refused, and nobody joins.
            let onBehalf = try await decide(id, "accept", as: owner)
            #expect(onBehalf.status == 403 && onBehalf.code == "invitee_must_accept", "\(onBehalf.body)")
            #expect(try await seesCircle(invitee) == 404)
            #expect(try await circles.count("circle_members WHERE circle_id = '\(circle.uuidString)'") == 3)
            // The owner may approve first; it still waits for the invitee, who alone can accept.
            let approved = try await decide(id, "approve", as: owner)
            #expect(approved.status == 200 && approved.output?.status == .pending && approved.output?.ownerApproved == true)
            #expect(try await decide(id, "approve", as: invitee).code == "owner_only")
            #expect(try await circles.api(invitee).listAddRequests().ok.body.json.count == 1)
            #expect(try await circles.api(owner).listAddRequests().ok.body.json.count == 1)
            let accepted = try await decide(id, "accept", as: invitee)
            #expect(accepted.status == 200 && accepted.output?.status == .accepted)
            #expect(try await seesCircle(invitee) == 200)
            #expect(try await decide(id, "decline", as: owner).code == "add_request_decided")
            let joined = try await circles.service.events(of: .circles) { events in events.contains { (try? $0.decode(CircleMemberJoined.self).payload.member.userId) == invitee.id } }
            let join = try #require(joined.first { (try? $0.decode(CircleMemberJoined.self).payload.member.userId) == invitee.id })
            #expect(join.header.actor == invitee.id, "the invitee joined by their own acceptance")

            // The owner vetoes another request: declined, nobody joins.
            let second = try await ask("other_one", as: member).output.created.body.json
            #expect(try await decide(second.id, "decline", as: owner).output?.status == .declined)
            #expect(try await seesCircle(other) == 404)
            #expect(try await ask("ghost_user", as: member).status == 409)
        }
    }

    @Test("add requests are rate-limited per member: past the quota, 429 with Retry-After and nothing written")
    func addRequestQuota() async throws {
        try await withRunningCircles(settings: CirclesSettings(maxPhotoBytes: 64 << 10, addRequestQuota: Quota(3, perSeconds: 3600))) { circles in
            let owner = try await circles.user(), member = try await circles.user()
            let circle = try await circles.circle(owner: owner, members: [member])
            func ask(_ handle: String, as user: User) async throws -> Answer<Void> {
                try await answer { _ = try await circles.api(user).requestAdd(path: .init(circleId: circle.lowercased), body: .json(.init(handle: handle))) }
            }
            for index in 0..<4 { _ = try await circles.user(handle: "target_\(index)") }
            for index in 0..<3 { #expect(try await ask("target_\(index)", as: member).status == 201) }
            let over = try await ask("target_3", as: member)
            #expect(over.status == 429 && over.code == "rate_limited" && over.headers[.retryAfter] != nil, "\(over.body)")
            #expect(try await circles.count("add_requests WHERE circle_id = '\(circle.uuidString)'") == 3)
            #expect(try await ask("target_3", as: owner).status == 201, "the quota is the member's own")
        }
    }

    @Test("user_deleted erases the user and everything they wrote; their circle passes on")
    func accountDeleted() async throws {
        try await withRunningCircles { circles in
            let gone = try await circles.user(), stays = try await circles.user()
            let circle = try await circles.circle(owner: gone, members: [stays])
            let solo = try await circles.circle(owner: gone, name: "Solo")
            _ = try await circles.post(circle, as: gone, .init(_type: .note, body: "bye"))
            let kept = try await circles.post(circle, as: stays, .init(_type: .note, body: "mine"))
            _ = try await circles.api(gone).addPostReaction(path: .init(postId: kept, emoji: "🎉")).ok
            try await circles.service.publishAuthEvent(UserDeleted(userId: gone.id, app: .mycirclee, deletedAt: Date()), user: gone.id)
            try await waitUntil { try await answer { _ = try await circles.api(gone).getProfile() }.status == 401 }
            let api = circles.api(stays)
            let detail = try await api.getCircle(path: .init(circleId: circle.lowercased)).ok.body.json
            #expect(detail.role == .owner && detail.memberCount == 1)
            let feed = try await api.listPosts(path: .init(circleId: circle.lowercased)).ok.body.json
            #expect(feed.posts.map(\.body) == ["mine"])
            #expect(feed.posts.first?.reactions.isEmpty == true)
            #expect(try await circles.count("circles WHERE id = '\(solo.uuidString)'") == 0)
            // The members were told what went: the circle passed on, the account's post and its reaction on another's.
            let events = try await circles.service.events(of: .circles) { events in events.contains { $0.type == .circleMemberLeft } && events.contains { $0.type == .circleDeleted } }
            let passed = try #require(events.first { $0.type == .circleMemberUpdated }).decode(CircleMemberUpdated.self).payload
            #expect(passed.member.userId == stays.id && passed.member.role == .owner && passed.previous.role == .member)
            let left = try #require(events.first { $0.type == .circleMemberLeft }).decode(CircleMemberLeft.self).payload
            #expect(left.reason == .accountDeleted && left.removed?.posts.map(\.body) == ["bye"] && left.removed?.reactions.map(\.emoji) == ["🎉"])
        }
    }

    @Test("a placeholder profile takes the sign-up name when auth's event comes; a later event for an email change keeps the user's own rename")
    func profileNameFromAuth() async throws {
        try await withRunningCircles { circles in
            let early = try await circles.service.user(email: "sam@example.com")
            let api = circles.api(early)
            func profile() async throws -> Schemas.MyProfile { try await api.getProfile().ok.body.json }
            #expect(try await profile().displayName == "sam")
            try await circles.service.publishAuthEvent(UserRegistered(userId: early.id, app: .mycirclee, email: "sam@example.com", phone: nil, phoneHash: nil,
                                                                      userMetadata: ["display_name": .string("Samantha")], createdAt: Date()), user: early.id)
            try await waitUntil(timeout: .seconds(120)) { try await profile().displayName == "Samantha" }
            _ = try await api.updateProfile(body: .json(.init(displayName: "Sam!"))).ok
            try await circles.service.publishAuthEvent(UserUpdated(userId: early.id, app: .mycirclee, email: "sam@new.example", phone: nil, phoneHash: nil,
                                                                   userMetadata: ["display_name": .string("Samantha")], updatedAt: Date()), user: early.id)
            try await waitUntil(timeout: .seconds(120)) { try await profile().email == "sam@new.example" }
            #expect(try await profile().displayName == "Sam!")
            // A name changed through auth's metadata is a new name: it follows.
            try await circles.service.publishAuthEvent(UserUpdated(userId: early.id, app: .mycirclee, email: "sam@new.example", phone: nil, phoneHash: nil,
                                                                   userMetadata: ["display_name": .string("Samira")], updatedAt: Date()), user: early.id)
            try await waitUntil(timeout: .seconds(120)) { try await profile().displayName == "Samira" }
        }
    }

    @Test("is_pro is set by the app's servers with its service-role key; a user's token, another app's key or an anon key is refused")
    func proFlag() async throws {
        try await withRunningCircles { circles in
            let member = try await circles.user()
            let path = "/admin/profiles/\(member.id)/pro"
            // Raw: the key goes in Authorization or apikey, which the token-carrying client does not send.
            func put(_ key: String?, header: String = "Authorization", _ value: Bool = true) async throws -> RunningService.Reply {
                try await circles.service.request(.PUT, path, as: nil, json: ["is_pro": value], headers: key.map { [(header, header == "Authorization" ? "Bearer \($0)" : $0)] } ?? [])
            }
            // Attacks: the member's own token, a key for another app, an anon key, a forged key, none.
            #expect(try await put(member.token).status == 401)
            #expect(try await put(try await circles.service.tokens.serviceKey(app: .unify)).status == 401)
            #expect(try await put(try await circles.service.tokens.serviceKey(app: .mycirclee, role: "anon")).status == 401)
            #expect(try await put(try await TestTokens().serviceKey(app: .mycirclee)).status == 401)
            #expect(try await put(nil).status == 401)
            #expect(try await circles.api(member).getProfile().ok.body.json.isPro == false)

            let key = try await circles.service.tokens.serviceKey(app: .mycirclee)
            let set = try await put(key)
            #expect(set.status == 200 && set.body["is_pro"]?.boolValue == true, "\(set.body)")
            #expect(try await put(key, header: "apikey", false).body["is_pro"]?.boolValue == false, "the key is also accepted as apikey")
            #expect(try await circles.service.request(.PUT, "/admin/profiles/\(UUID())/pro", as: nil, json: ["is_pro": true],
                                                      headers: [("Authorization", "Bearer \(key)")]).status == 404)
            #expect(try await circles.service.request(.PUT, path, as: nil, json: ["is_pro": "yes"], headers: [("Authorization", "Bearer \(key)")]).status == 422)
        }
    }

    @Test("renaming a circle and passing it on are events with the row before; deleting it names its members, live posts, statuses and DM threads")
    func circleChangesAreTold() async throws {
        try await withRunningCircles { circles in
            let owner = try await circles.user(), member = try await circles.user()
            let circle = try await circles.circle(owner: owner, members: [member])
            let (apiOwner, apiMember) = (circles.api(owner), circles.api(member))
            for _ in 0..<2 { _ = try await apiOwner.renameCircle(path: .init(circleId: circle.lowercased), body: .json(.init(name: "Outer"))).ok }
            _ = try await circles.post(circle, as: member, .init(_type: .note, body: "still here"))
            for status: Schemas.PresenceStatus in [.free, .out] { _ = try await apiMember.setPresence(path: .init(circleId: circle.lowercased), body: .json(.init(status: status))).ok }
            let thread = try await apiOwner.openThread(path: .init(circleId: circle.lowercased), body: .json(.init(userId: member.id.lowercased))).ok.body.json
            _ = try await apiOwner.deleteCircle(path: .init(circleId: circle.lowercased)).noContent
            let events = try await circles.service.events(of: .circles) { events in events.contains { $0.type == .circleDeleted } }
            let renamed = try events.filter { $0.type == .circleUpdated }.map { try $0.decode(CircleUpdated.self).payload }
            #expect(renamed.count == 1 && renamed.first?.previous.name == "Inner" && renamed.first?.circle.name == "Outer" && Set(renamed.first?.memberIds ?? []) == [owner.id, member.id])
            let presence = try events.filter { $0.type == .presenceChanged }.map { try $0.decode(PresenceChanged.self).payload }
            #expect(presence.map(\.operation) == [.insert, .update] && presence.last?.previous?.status == .free)
            let deleted = try #require(events.first { $0.type == .circleDeleted }).decode(CircleDeleted.self).payload
            #expect(Set(deleted.removed?.members.map(\.userId) ?? []) == [owner.id, member.id] && deleted.removed?.posts.map(\.body) == ["still here"])
            #expect(deleted.removed?.presence.map(\.status) == [.out] && deleted.removed?.threads.map { $0.id.uuidString.lowercased() } == [thread.id.lowercased()])
        }
    }
}
