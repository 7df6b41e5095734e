import CirclesAPI
import CirclesService
import ColonyClientTesting
import ColonyModels
import ColonyPlatform
import ColonyTesting
import Foundation
import Testing

/// Blocks in MyCirclee (issue 39.2): a blocked user cannot DM the blocker, react to their
/// messages or ask to add them (403 `blocked`); their posts, presence, DM threads and reactions
/// are hidden from the blocker's reads (the feed's fast path and its generated route alike) and
/// their events are withheld from the blocker (`withheld_from`). Both stay in the circle.
@Suite("Circles: blocks")
struct CirclesBlockTests {
    typealias User = RunningService.User

    func block(_ blocked: User, by blocker: User, _ circles: RunningCircles) async throws -> [Schemas.Block] {
        try await circles.api(blocker).blockUser(body: .json(.init(userId: blocked.id.lowercased))).created.body.json
    }

    func unblock(_ blocked: User, by blocker: User, _ circles: RunningCircles) async throws {
        _ = try await circles.api(blocker).unblockUser(path: .init(userId: blocked.id.lowercased)).noContent
    }

    @Test("block, list and unblock; blocking twice changes nothing; self is 409, a malformed id 404, past the limit 409")
    func blockListUnblock() async throws {
        try await withRunningCircles { circles in
            let me = try await circles.user(), first = try await circles.user(), second = try await circles.user()
            let api = circles.api(me)
            #expect(try await api.listBlocks().ok.body.json.isEmpty)
            #expect(try await block(first, by: me, circles).map(\.userId) == [first.id.lowercased])
            let both = try await block(second, by: me, circles)
            #expect(both.map(\.userId) == [second.id.lowercased, first.id.lowercased], "most recent first")
            #expect(try await block(second, by: me, circles).map(\.userId) == both.map(\.userId), "a second block changes nothing")
            #expect(try await api.listBlocks().ok.body.json.map(\.userId) == both.map(\.userId))
            #expect(try await circles.api(first).listBlocks().ok.body.json.isEmpty, "the blocked user's own list is theirs")

            let own = try await answer { _ = try await api.blockUser(body: .json(.init(userId: me.id.lowercased))) }
            #expect(own.status == 409 && own.code == "cannot_block_self")
            let malformed = try await circles.service.request(.DELETE, "/blocks/not-a-uuid", as: me)
            #expect(malformed.status == 404 && malformed.body["code"]?.stringValue == "user_not_found")

            try await unblock(first, by: me, circles)
            try await unblock(first, by: me, circles)  // again: fine
            #expect(try await api.listBlocks().ok.body.json.map(\.userId) == [second.id.lowercased])

            // At the limit, a new block is 409 and nothing is written.
            try await circles.service.withDatabase { database in
                try await database.query("""
                    INSERT INTO user_blocks (blocker_id, blocked_id) SELECT \(me.id), gen_random_uuid() FROM generate_series(1, \(BlockList.limit - 1))
                    """).collect()
            }
            let over = try await answer { _ = try await api.blockUser(body: .json(.init(userId: first.id.lowercased))) }
            #expect(over.status == 409 && over.code == "block_limit")
            #expect(try await api.listBlocks().ok.body.json.count == BlockList.limit)
        }
    }

    @Test("a blocked user's DM thread, message, reaction and add request are refused with 403 blocked; the blocker's are not; unblocking lets them through")
    func refusals() async throws {
        try await withRunningCircles { circles in
            let blocker = try await circles.user(handle: "the_blocker"), blocked = try await circles.user(handle: "the_blocked")
            let circle = try await circles.circle(owner: blocker, members: [blocked])
            let other = try await circles.circle(owner: blocked, name: "Theirs")
            // A thread from before the block, with a message of each.
            let thread = try await circles.api(blocked).openThread(path: .init(circleId: circle.lowercased), body: .json(.init(userId: blocker.id.lowercased))).ok.body.json.id
            _ = try await circles.api(blocked).sendMessage(path: .init(threadId: thread), body: .json(.init(body: "before"))).created
            let mine = try await circles.api(blocker).sendMessage(path: .init(threadId: thread), body: .json(.init(body: "mine"))).created.body.json.id
            _ = try await block(blocked, by: blocker, circles)
            let them = circles.api(blocked)

            let open = try await answer { _ = try await them.openThread(path: .init(circleId: circle.lowercased), body: .json(.init(userId: blocker.id.lowercased))) }
            #expect(open.status == 403 && open.code == "blocked")
            let send = try await answer { _ = try await them.sendMessage(path: .init(threadId: thread), body: .json(.init(body: "hello?"))) }
            #expect(send.status == 403 && send.code == "blocked")
            let react = try await answer { _ = try await them.addMessageReaction(path: .init(threadId: thread, messageId: mine, emoji: "🔥")) }
            #expect(react.status == 403 && react.code == "blocked")
            let add = try await answer { _ = try await them.requestAdd(path: .init(circleId: other.lowercased), body: .json(.init(handle: "the_blocker"))) }
            #expect(add.status == 403 && add.code == "blocked")
            #expect(try await circles.count("add_requests") == 0)
            #expect(try await circles.count("dm_reactions") == 0)
            #expect(try await circles.count("dm_messages") == 2, "nothing of the refused message is written")

            // A block is personal: the blocker may still write, and both stay in the circle.
            #expect(try await circles.api(blocker).openThread(path: .init(circleId: circle.lowercased), body: .json(.init(userId: blocked.id.lowercased))).ok.body.json.id == thread)
            _ = try await circles.api(blocker).sendMessage(path: .init(threadId: thread), body: .json(.init(body: "still here"))).created
            #expect(try await circles.api(blocked).listMembers(path: .init(circleId: circle.lowercased)).ok.body.json.count == 2)

            try await unblock(blocked, by: blocker, circles)
            _ = try await them.sendMessage(path: .init(threadId: thread), body: .json(.init(body: "thanks"))).created
            _ = try await them.addMessageReaction(path: .init(threadId: thread, messageId: mine, emoji: "🔥")).ok
            _ = try await them.requestAdd(path: .init(circleId: other.lowercased), body: .json(.init(handle: "the_blocker"))).created
        }
    }

    @Test("the blocked user's posts, presence, DM thread, messages and reactions are hidden from the blocker (fast path and generated route); others see all; unblock restores")
    func hiddenFromTheBlocker() async throws {
        try await withRunningCircles { circles in
            let blocker = try await circles.user(), blocked = try await circles.user(), friend = try await circles.user()
            let circle = try await circles.circle(owner: blocker, members: [blocked, friend])
            let theirs = try await circles.post(circle, as: blocked, .init(_type: .note, body: "theirs"))
            let poll = try await circles.post(circle, as: blocked, .init(_type: .poll, body: "Lunch?", pollOptions: ["Tacos", "Sushi"]))
            let friends = try await circles.post(circle, as: friend, .init(_type: .note, body: "a friend's"))
            let own = try await circles.post(circle, as: blocker, .init(_type: .note, body: "the blocker's"))
            _ = try await circles.api(blocker).keepPost(path: .init(postId: theirs)).ok
            _ = try await circles.api(blocked).setPresence(path: .init(circleId: circle.lowercased), body: .json(.init(status: .deepWork))).ok
            _ = try await circles.api(friend).setPresence(path: .init(circleId: circle.lowercased), body: .json(.init(status: .free))).ok
            let thread = try await circles.api(blocker).openThread(path: .init(circleId: circle.lowercased), body: .json(.init(userId: blocked.id.lowercased))).ok.body.json.id
            let mine = try await circles.api(blocker).sendMessage(path: .init(threadId: thread), body: .json(.init(body: "mine"))).created.body.json.id
            let their = try await circles.api(blocked).sendMessage(path: .init(threadId: thread), body: .json(.init(body: "theirs"))).created.body.json.id
            _ = try await circles.api(blocked).addMessageReaction(path: .init(threadId: thread, messageId: mine, emoji: "❤️")).ok
            _ = try await block(blocked, by: blocker, circles)
            let api = circles.api(blocker)

            // The feed, through the fast path (the service) and the generated route (a twin without it).
            let everyone = Set([theirs, poll, friends, own]), visible = Set([friends, own])
            @Sendable func feed(_ service: RunningService, as user: User) async throws -> Set<String> {
                let page = try await service.request(.GET, "/circles/\(circle.lowercased)/posts", as: user)
                #expect(page.status == 200)
                return Set(page.body["posts"]?.arrayValue?.compactMap { $0["id"]?.stringValue?.lowercased() } ?? [])
            }
            #expect(try await feed(circles.service, as: blocker) == visible)
            #expect(try await feed(circles.service, as: friend) == everyone)
            #expect(try await feed(circles.service, as: blocked) == everyone, "the block is one-way")
            try await circles.withTwin(configure: { $0.fastPaths = .off }) { generated in
                let (blockers, friends) = (try await feed(generated, as: blocker), try await feed(generated, as: friend))
                #expect(blockers == visible)
                #expect(friends == everyone)
            }
            #expect(Set(try await api.listPosts(path: .init(circleId: circle.lowercased)).ok.body.json.posts.map { $0.id.lowercased() }) == visible)

            // Single reads and marks: the post is not there for the blocker.
            for post in [theirs, poll] {
                let read = try await answer { _ = try await api.getPost(path: .init(postId: post)) }
                #expect(read.status == 404 && read.code == "post_not_found")
                #expect(try await answer { _ = try await api.addPostReaction(path: .init(postId: post, emoji: "🔥")) }.status == 404)
                #expect(try await answer { _ = try await api.keepPost(path: .init(postId: post)) }.status == 404)
            }
            #expect(try await answer { _ = try await api.withdrawPollVote(path: .init(postId: poll)) }.status == 404)
            #expect(try await circles.card(theirs, as: friend).body == "theirs")
            #expect(try await api.listKeptPosts().ok.body.json.isEmpty, "a kept post of theirs is left out")

            // Presence: theirs is left out for the blocker only.
            #expect(try await api.listPresence(path: .init(circleId: circle.lowercased)).ok.body.json.map(\.userId) == [friend.id.lowercased])
            #expect(Set(try await circles.api(friend).listPresence(path: .init(circleId: circle.lowercased)).ok.body.json.map(\.userId)) == [friend.id.lowercased, blocked.id.lowercased])

            // DMs: the thread is left out of the blocker's list; its page has only the blocker's
            // messages, without the blocked user's reactions; their messages stay unread.
            #expect(try await api.listThreads().ok.body.json.isEmpty)
            #expect(try await circles.api(blocked).listThreads().ok.body.json.map(\.id) == [thread])
            let page = try await api.listMessages(path: .init(threadId: thread)).ok.body.json.messages
            #expect(page.map(\.value1.id) == [mine] && page.allSatisfy { $0.value2.reactions.isEmpty }, "\(page)")
            let hiddenMessage = try await answer { _ = try await api.addMessageReaction(path: .init(threadId: thread, messageId: their, emoji: "🔥")) }
            #expect(hiddenMessage.status == 404 && hiddenMessage.code == "message_not_found")
            _ = try await api.markThreadRead(path: .init(threadId: thread)).ok
            #expect(try await circles.api(blocked).listMessages(path: .init(threadId: thread)).ok.body.json.messages.first { $0.value1.id == their }?.value1.readAt == nil)
            #expect(try await circles.api(blocked).listMessages(path: .init(threadId: thread)).ok.body.json.messages.count == 2)

            // Unblocking shows it all again.
            try await unblock(blocked, by: blocker, circles)
            #expect(try await feed(circles.service, as: blocker) == everyone)
            #expect(try await api.getPost(path: .init(postId: theirs)).ok.body.json.body == "theirs")
            #expect(try await api.listKeptPosts().ok.body.json.map { $0.id.lowercased() } == [theirs])
            #expect(try await api.listPresence(path: .init(circleId: circle.lowercased)).ok.body.json.count == 2)
            let threads = try await api.listThreads().ok.body.json
            #expect(threads.map(\.id) == [thread] && threads.first?.unreadCount == 1)
            let restored = try await api.listMessages(path: .init(threadId: thread)).ok.body.json.messages
            #expect(restored.map(\.value1.id) == [their, mine] && restored.last?.value2.reactions.map(\.userId) == [blocked.id.lowercased])
        }
    }

    @Test("an add request the blocked user made before the block is left out of the blocker's pending list")
    func pendingRequestHidden() async throws {
        try await withRunningCircles { circles in
            let invitee = try await circles.user(handle: "invitee_x"), asker = try await circles.user()
            let circle = try await circles.circle(owner: asker)
            _ = try await circles.api(asker).requestAdd(path: .init(circleId: circle.lowercased), body: .json(.init(handle: "invitee_x"))).created
            #expect(try await circles.api(invitee).listAddRequests().ok.body.json.count == 1)
            _ = try await block(asker, by: invitee, circles)
            #expect(try await circles.api(invitee).listAddRequests().ok.body.json.isEmpty)
            #expect(try await circles.api(asker).listAddRequests().ok.body.json.count == 1, "the owner still sees it")
            try await unblock(asker, by: invitee, circles)
            #expect(try await circles.api(invitee).listAddRequests().ok.body.json.count == 1)
        }
    }

    @Test("the blocked user's posts, edits, reactions, votes, RSVPs, presence and DM activity are withheld from the blocker (withheld_from); others' are not")
    func eventsWithheld() async throws {
        try await withRunningCircles { circles in
            let blocker = try await circles.user(), blocked = try await circles.user(), friend = try await circles.user(), stranger = try await circles.user()
            let circle = try await circles.circle(owner: blocker, members: [blocked, friend])
            // A block by someone outside the circle withholds nothing here.
            _ = try await block(blocked, by: stranger, circles)
            let poll = try await circles.post(circle, as: friend, .init(_type: .poll, body: "Lunch?", pollOptions: ["Tacos", "Sushi"]))
            let event = try await circles.post(circle, as: friend, .init(_type: .event, body: "Hike", startsAt: ISO8601.parse("2030-01-01T09:00:00Z")))
            let option = try #require(try await circles.card(poll, as: blocked).pollOptions?.first?.id)
            let thread = try await circles.api(blocker).openThread(path: .init(circleId: circle.lowercased), body: .json(.init(userId: blocked.id.lowercased))).ok.body.json.id
            let mine = try await circles.api(blocker).sendMessage(path: .init(threadId: thread), body: .json(.init(body: "mine"))).created.body.json.id
            _ = try await circles.api(blocked).addMessageReaction(path: .init(threadId: thread, messageId: mine, emoji: "❤️")).ok
            _ = try await block(blocked, by: blocker, circles)

            let them = circles.api(blocked)
            let post = try await circles.post(circle, as: blocked, .init(_type: .note, body: "hidden"))
            _ = try await them.updatePost(path: .init(postId: post), body: .json(.init(body: "edited"))).ok
            _ = try await them.addPostReaction(path: .init(postId: poll, emoji: "🔥")).ok
            _ = try await them.setPollVote(path: .init(postId: poll), body: .json(.init(optionId: option))).ok
            _ = try await them.setRSVP(path: .init(postId: event), body: .json(.init(status: .going))).ok
            _ = try await them.setPresence(path: .init(circleId: circle.lowercased), body: .json(.init(status: .out))).ok
            _ = try await them.markThreadRead(path: .init(threadId: thread)).ok
            _ = try await them.removeMessageReaction(path: .init(threadId: thread, messageId: mine, emoji: "❤️")).ok
            _ = try await circles.post(circle, as: friend, .init(_type: .note, body: "a friend's"))
            try await unblock(blocked, by: blocker, circles)
            let after = try await circles.post(circle, as: blocked, .init(_type: .note, body: "after the unblock"))

            let events = try await circles.service.events(of: .circles) { events in
                events.contains { (try? $0.decode(PostCreated.self).payload.post.id.lowercased) == after }
            }
            func withheld(_ type: EventType, by actor: User) -> [[UUID]?] {
                events.filter { $0.type == type && $0.header.actor == actor.id }.map(\.header.withheldFrom)
            }
            let onlyTheBlocker: [UUID]? = [blocker.id]
            #expect(withheld(.postCreated, by: blocked) == [onlyTheBlocker, nil], "withheld while blocked, not after the unblock")
            #expect(withheld(.postUpdated, by: blocked) == [onlyTheBlocker])
            #expect(withheld(.postReacted, by: blocked) == [onlyTheBlocker])
            #expect(withheld(.pollVoted, by: blocked) == [onlyTheBlocker])
            #expect(withheld(.eventRsvped, by: blocked) == [onlyTheBlocker])
            #expect(withheld(.presenceChanged, by: blocked) == [onlyTheBlocker])
            #expect(withheld(.dmRead, by: blocked) == [onlyTheBlocker])
            #expect(withheld(.dmReacted, by: blocked) == [nil, onlyTheBlocker], "the reaction before the block reached them; its removal after does not")
            #expect(withheld(.postCreated, by: friend).allSatisfy { $0 == nil }, "nobody blocked the friend")
            #expect(withheld(.dmSent, by: blocker) == [nil])
            // The envelope carries it as `withheld_from`.
            let created = try #require(events.first { $0.type == .postCreated && $0.header.actor == blocked.id })
            let json = try JSONSerialization.jsonObject(with: Data(created.bytes)) as? [String: Any]
            #expect(json?["withheld_from"] as? [String] == [blocker.id.lowercased])
        }
    }
}
