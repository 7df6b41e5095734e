import CirclesService
import ColonyModels
import ColonyPlatform
import ColonyTesting
import Foundation
import NIOCore
import NIOHTTP1
import Testing

/// The circles service from the outside: real Postgres, real broker, HTTP with mycirclee tokens.
@Suite("Circles service")
struct CirclesServiceTests {
    typealias User = RunningService.User

    func uuid(_ value: JSONValue?) -> UUID? { value?.stringValue.flatMap(UUID.init(uuidString:)) }
    /// An emoji as a path segment.
    func path(_ emoji: String) -> String { emoji.addingPercentEncoding(withAllowedCharacters: .alphanumerics)! }

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
            let poll = try await circles.post(circle, as: owner, ["type": "poll", "body": "Lunch?", "poll_options": ["Tacos", "Sushi"]])
            let event = try await circles.post(circle, as: owner, ["type": "event", "body": "Hike", "starts_at": "2030-01-01T09:00:00Z"])
            let pollDetail = try await circles.service.request(.GET, "/posts/\(poll)", as: owner)
            let option = pollDetail.body["poll_options"]?.arrayValue?.first?["id"]?.stringValue ?? ""
            let thread = try await circles.service.request(.POST, "/circles/\(circle)/dms", as: owner, json: ["user_id": member.id.uuidString])
            let threadID = thread.body["id"]?.stringValue ?? ""
            let message = try await circles.service.request(.POST, "/dms/\(threadID)/messages", as: owner, json: ["body": "hi"])
            let messageID = message.body["id"]?.stringValue ?? ""
            let someoneElse = try await circles.user()
            let request = try await circles.service.request(.POST, "/circles/\(circle)/add-requests", as: member, json: ["handle": try await handle(of: someoneElse, circles)])
            let requestID = request.body["id"]?.stringValue ?? ""
            #expect(request.status == 201)

            let png = ByteBuffer(bytes: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 0])
            let cases: [(HTTPMethod, String, [String: Any]?, ByteBuffer?)] = [
                (.GET, "/circles/\(circle)", nil, nil), (.PATCH, "/circles/\(circle)", ["name": "Mine"], nil), (.DELETE, "/circles/\(circle)", nil, nil),
                (.GET, "/circles/\(circle)/members", nil, nil), (.DELETE, "/circles/\(circle)/members/\(member.id)", nil, nil),
                (.POST, "/circles/\(circle)/leave", nil, nil), (.POST, "/circles/\(circle)/invites", nil, nil),
                (.POST, "/circles/\(circle)/add-requests", ["handle": "member_one"], nil),
                (.POST, "/add-requests/\(requestID)/decline", nil, nil),
                (.GET, "/circles/\(circle)/presence", nil, nil), (.PUT, "/circles/\(circle)/presence", ["status": "free"], nil),
                (.GET, "/circles/\(circle)/posts", nil, nil), (.POST, "/circles/\(circle)/posts", ["type": "note", "body": "x"], nil),
                (.GET, "/posts/\(note)", nil, nil), (.PATCH, "/posts/\(note)", ["body": "x"], nil), (.DELETE, "/posts/\(note)", nil, nil),
                (.PUT, "/posts/\(note)/photo", nil, png), (.DELETE, "/posts/\(note)/photo", nil, nil),
                (.PUT, "/posts/\(note)/reactions/\(path("🔥"))", nil, nil), (.DELETE, "/posts/\(note)/reactions/\(path("🔥"))", nil, nil),
                (.PUT, "/posts/\(poll)/vote", ["option_id": option], nil), (.DELETE, "/posts/\(poll)/vote", nil, nil),
                (.PUT, "/posts/\(event)/rsvp", ["status": "going"], nil), (.DELETE, "/posts/\(event)/rsvp", nil, nil),
                (.PUT, "/posts/\(note)/keep", nil, nil), (.DELETE, "/posts/\(note)/keep", nil, nil),
                (.POST, "/circles/\(circle)/dms", ["user_id": member.id.uuidString], nil), (.PATCH, "/dms/\(threadID)", ["notify": false], nil),
                (.GET, "/dms/\(threadID)/messages", nil, nil), (.POST, "/dms/\(threadID)/messages", ["body": "x"], nil), (.POST, "/dms/\(threadID)/read", nil, nil),
                (.PUT, "/dms/\(threadID)/messages/\(messageID)/reactions/\(path("🔥"))", nil, nil),
                (.DELETE, "/dms/\(threadID)/messages/\(messageID)/reactions/\(path("🔥"))", nil, nil),
            ]
            for (method, path, json, bytes) in cases {
                let reply = bytes.map { _ in () } != nil
                    ? try await circles.service.request(method, path, as: outsider, bytes: bytes, contentType: "image/png")
                    : try await circles.service.request(method, path, as: outsider, json: json)
                #expect(reply.status == 404, "\(method) \(path): \(reply.status) \(reply.body)")
            }
            #expect(try await circles.service.request(.GET, "/circles", as: outsider).array.isEmpty)
            #expect(try await circles.service.request(.GET, "/dms", as: outsider).array.isEmpty)
            #expect(try await circles.service.request(.GET, "/posts/kept", as: outsider).array.isEmpty)
            // Nothing changed: the owner still sees the circle as it was.
            #expect(try await circles.service.request(.GET, "/circles/\(circle)", as: owner).body["name"]?.stringValue == "Inner")
            #expect(try await circles.count("posts") == 3)
        }
    }

    func handle(of user: User, _ circles: RunningCircles) async throws -> String {
        try await circles.service.request(.GET, "/profile", as: user).body["handle"]?.stringValue ?? ""
    }

    @Test("invite codes: single use under concurrent claims, 48 h expiry, clear errors")
    func invites() async throws {
        try await withRunningCircles { circles in
            let owner = try await circles.user()
            let circle = try await circles.circle(owner: owner)
            let invite = try await circles.service.request(.POST, "/circles/\(circle)/invites", as: owner)
            let code = try #require(invite.body["code"]?.stringValue)
            let expires = try #require(invite.body["expires_at"]?.stringValue.flatMap(ISO8601.parse))
            #expect(abs(expires.timeIntervalSinceNow - 48 * 3600) < 120)

            var claimers: [User] = []
            for _ in 0..<8 { claimers.append(try await circles.user()) }
            let statuses = try await withThrowingTaskGroup(of: (Int, String?).self) { group in
                for claimer in claimers {
                    group.addTask {
                        let reply = try await circles.service.request(.POST, "/invites/claim", as: claimer, json: ["code": code])
                        return (reply.status, reply.code)
                    }
                }
                return try await group.reduce(into: [(Int, String?)]()) { $0.append($1) }
            }
            #expect(statuses.filter { $0.0 == 200 }.count == 1, "\(statuses)")
            #expect(statuses.filter { $0.0 == 410 && $0.1 == "invite_used" }.count == 7, "\(statuses)")
            #expect(try await circles.service.request(.GET, "/circles/\(circle)/members", as: owner).array.count == 2)

            let old = try await circles.service.request(.POST, "/circles/\(circle)/invites", as: owner)
            let oldCode = old.body["code"]?.stringValue ?? ""
            _ = try await circles.service.withDatabase { database in
                try await database.query("UPDATE circle_invites SET expires_at = now() - interval '1 second' WHERE code = \(oldCode)")
            }
            let late = try await circles.user()
            let expired = try await circles.service.request(.POST, "/invites/claim", as: late, json: ["code": oldCode])
            #expect(expired.status == 410 && expired.code == "invite_expired")
            let bogus = try await circles.service.request(.POST, "/invites/claim", as: late, json: ["code": "NOPE123456"])
            #expect(bogus.status == 404 && bogus.code == "invite_invalid")
            let fresh = try await circles.service.request(.POST, "/circles/\(circle)/invites", as: owner)
            let again = try await circles.service.request(.POST, "/invites/claim", as: owner, json: ["code": fresh.body["code"]?.stringValue ?? ""])
            #expect(again.status == 409 && again.code == "already_member")
            let stillUsable = try await circles.service.request(.POST, "/invites/claim", as: late, json: ["code": fresh.body["code"]?.stringValue ?? ""])
            #expect(stillUsable.status == 200, "a refused claim does not use the code up")
        }
    }

    @Test("DM privacy: anyone, reciprocal and nobody, both directions, on opening and on every send")
    func dmPrivacy() async throws {
        try await withRunningCircles { circles in
            let anyone = try await circles.user(privacy: .anyone), reciprocal = try await circles.user(privacy: .reciprocal), nobody = try await circles.user(privacy: .nobody)
            let circle = try await circles.circle(owner: anyone, members: [reciprocal, nobody])
            func open(_ from: User, _ to: User) async throws -> Int {
                try await circles.service.request(.POST, "/circles/\(circle)/dms", as: from, json: ["user_id": to.id.uuidString]).status
            }
            #expect(try await open(anyone, reciprocal) == 200)   // reciprocal accepts senders who accept DMs
            #expect(try await open(reciprocal, anyone) == 200)
            #expect(try await open(nobody, anyone) == 200)       // anyone accepts everyone
            #expect(try await open(anyone, nobody) == 403)
            #expect(try await open(reciprocal, nobody) == 403)
            #expect(try await open(nobody, reciprocal) == 403)   // nobody does not accept DMs, so reciprocal refuses them

            // Enforced on every send: a later change of privacy closes an open thread.
            let thread = try await circles.service.request(.POST, "/circles/\(circle)/dms", as: anyone, json: ["user_id": reciprocal.id.uuidString])
            let threadID = thread.body["id"]?.stringValue ?? ""
            #expect(try await circles.service.request(.POST, "/dms/\(threadID)/messages", as: anyone, json: ["body": "hey"]).status == 201)
            #expect(try await circles.service.request(.POST, "/dms/\(threadID)/messages", as: reciprocal, json: ["body": "hi!"]).status == 201)
            _ = try await circles.service.request(.PATCH, "/profile", as: reciprocal, json: ["dm_privacy": "nobody"])
            let refused = try await circles.service.request(.POST, "/dms/\(threadID)/messages", as: anyone, json: ["body": "still there?"])
            #expect(refused.status == 403 && refused.code == "dm_not_allowed")
            let outgoing = try await circles.service.request(.POST, "/dms/\(threadID)/messages", as: reciprocal, json: ["body": "I can still write"])
            #expect(outgoing.status == 201, "the anyone side accepts messages from nobody-users")
        }
    }

    @Test("DMs: threads with last message and unread count, replies, read receipts, reactions, notify flags")
    func directMessages() async throws {
        try await withRunningCircles { circles in
            let a = try await circles.user(), b = try await circles.user()
            let circle = try await circles.circle(owner: a, members: [b])
            let thread = try await circles.service.request(.POST, "/circles/\(circle)/dms", as: a, json: ["user_id": b.id.uuidString])
            let threadID = try #require(thread.body["id"]?.stringValue)
            let first = try await circles.service.request(.POST, "/dms/\(threadID)/messages", as: a, json: ["body": "one"])
            _ = try await circles.service.request(.POST, "/dms/\(threadID)/messages", as: a, json: ["body": "two", "reply_to_id": first.body["id"]?.stringValue ?? ""])
            let list = try await circles.service.request(.GET, "/dms", as: b)
            #expect(list.array.first?["unread_count"]?.intValue == 2 && list.array.first?["last_message"]?["body"]?.stringValue == "two")
            #expect(list.array.first?["other_user"]?["email"] == nil)
            let read = try await circles.service.request(.POST, "/dms/\(threadID)/read", as: b)
            #expect(read.status == 200 && read.body["unread_count"]?.intValue == 0)
            let page = try await circles.service.request(.GET, "/dms/\(threadID)/messages", as: a)
            let messages = page.body["messages"]?.arrayValue ?? []
            #expect(messages.map { $0["body"]?.stringValue } == ["two", "one"] && messages.allSatisfy { $0["read_at"] != nil })
            #expect(uuid(messages.first?["reply_to_id"]) == uuid(first.body["id"]))
            let reactions = "/dms/\(threadID)/messages/\(first.body["id"]?.stringValue ?? "")/reactions/\(path("❤️"))"
            for _ in 0..<2 {  // set twice: a retry does not undo it
                let react = try await circles.service.request(.PUT, reactions, as: b)
                #expect(react.body["active"]?.boolValue == true && react.body["emoji"]?.stringValue == "❤️", "\(react.status) \(react.body)")
            }
            #expect(try await circles.service.request(.GET, "/dms/\(threadID)/messages", as: a).body["messages"]?.arrayValue?.last?["reactions"]?.arrayValue?.count == 1)
            #expect(try await circles.service.request(.DELETE, reactions, as: b).body["active"]?.boolValue == false)
            #expect(try await circles.service.request(.DELETE, reactions, as: b).status == 200)
            #expect(try await circles.count("dm_reactions") == 0)
            let muted = try await circles.service.request(.PATCH, "/dms/\(threadID)", as: b, json: ["notify": false])
            #expect(muted.body["notify"]?.boolValue == false)
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
            let note = try await circles.post(circle, as: a)
            let fire = "/posts/\(note)/reactions/\(path("🔥"))"
            for _ in 0..<2 {
                let set = try await circles.service.request(.PUT, fire, as: b)
                #expect(set.status == 200 && set.body["reactions"]?.arrayValue?.first?["reacted_by_me"]?.boolValue == true, "\(set.body)")
            }
            #expect(try await circles.count("post_reactions") == 1, "a retried set stays set")
            _ = try await circles.service.request(.PUT, fire, as: a)
            _ = try await circles.service.request(.PUT, "/posts/\(note)/reactions/\(path("😂"))", as: a)
            let detail = try await circles.service.request(.GET, "/posts/\(note)", as: b)
            let reactions = detail.body["reactions"]?.arrayValue ?? []
            #expect(reactions.first?["emoji"]?.stringValue == "🔥" && reactions.first?["count"]?.intValue == 2 && reactions.first?["reacted_by_me"]?.boolValue == true)
            for _ in 0..<2 { #expect(try await circles.service.request(.DELETE, fire, as: b).status == 200) }
            #expect(try await circles.count("post_reactions") == 2, "a retried unset stays unset")
            #expect(try await circles.service.request(.PUT, "/posts/\(note)/reactions/lol", as: a).status == 422)

            let poll = try await circles.post(circle, as: a, ["type": "poll", "body": "Where?", "poll_options": ["Park", "Cafe", "Home"]])
            let options = try await circles.service.request(.GET, "/posts/\(poll)", as: b).body["poll_options"]?.arrayValue?.compactMap { $0["id"]?.stringValue } ?? []
            #expect(options.count == 3)
            // The feed's page (one cell of column arrays, lists as text) orders and marks as the detail does.
            let cards = try await circles.service.request(.GET, "/circles/\(circle)/posts", as: b).body["posts"]?.arrayValue ?? []
            #expect(cards.first?["poll_options"]?.arrayValue?.compactMap { $0["label"]?.stringValue } == ["Park", "Cafe", "Home"])
            let noteCard = cards.first { $0["id"]?.stringValue?.lowercased() == note.lowercased() }
            #expect(noteCard?["reactions"]?.arrayValue?.compactMap { $0["emoji"]?.stringValue } == ["🔥", "😂"])
            #expect(noteCard?["reactions"]?.arrayValue?.compactMap { $0["reacted_by_me"]?.boolValue } == [false, false])
            for _ in 0..<2 { _ = try await circles.service.request(.PUT, "/posts/\(poll)/vote", as: b, json: ["option_id": options[0]]) }
            let moved = try await circles.service.request(.PUT, "/posts/\(poll)/vote", as: b, json: ["option_id": options[1]])
            #expect(try await circles.count("poll_votes") == 1, "one vote per user and poll, moved")
            let votes = moved.body["poll_options"]?.arrayValue ?? []
            #expect(votes.map { $0["votes"]?.intValue } == [0, 1, 0] && votes[1]["voted_by_me"]?.boolValue == true)
            for _ in 0..<2 { #expect(try await circles.service.request(.DELETE, "/posts/\(poll)/vote", as: b).status == 200) }
            #expect(try await circles.count("poll_votes") == 0)
            #expect(try await circles.service.request(.PUT, "/posts/\(poll)/vote", as: b, json: ["option_id": UUID().uuidString]).status == 409)
            #expect(try await circles.service.request(.PUT, "/posts/\(note)/vote", as: b, json: ["option_id": options[0]]).status == 409)

            let event = try await circles.post(circle, as: a, ["type": "event", "body": "BBQ", "starts_at": "2030-06-01T18:00:00Z", "location": "Park", "latitude": 52.5, "longitude": 13.4])
            _ = try await circles.service.request(.PUT, "/posts/\(event)/rsvp", as: b, json: ["status": "maybe"])
            for _ in 0..<2 { _ = try await circles.service.request(.PUT, "/posts/\(event)/rsvp", as: b, json: ["status": "going"]) }
            _ = try await circles.service.request(.PUT, "/posts/\(event)/rsvp", as: a, json: ["status": "going"])
            let rsvps = try await circles.service.request(.GET, "/posts/\(event)", as: b).body["rsvps"]
            #expect(rsvps?["going"]?.intValue == 2 && rsvps?["maybe"]?.intValue == 0 && rsvps?["mine"]?.stringValue == "going")
            let withdrawn = try await circles.service.request(.DELETE, "/posts/\(event)/rsvp", as: b)
            #expect(withdrawn.body["rsvps"]?["going"]?.intValue == 1 && withdrawn.body["rsvps"]?["mine"] == nil)
            #expect(try await circles.service.request(.PUT, "/posts/\(note)/rsvp", as: b, json: ["status": "going"]).status == 409)

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
            let poll = try await circles.post(circle, as: a, ["type": "poll", "body": "Soon gone", "poll_options": ["Yes", "No"]])
            let keep = try await circles.post(circle, as: a, ["body": "stays"])
            let option = try await circles.service.request(.GET, "/posts/\(poll)", as: b).body["poll_options"]?.arrayValue?.first?["id"]?.stringValue ?? ""
            _ = try await circles.service.request(.PUT, "/posts/\(poll)/vote", as: b, json: ["option_id": option])
            _ = try await circles.service.request(.PUT, "/posts/\(poll)/reactions/\(path("👍"))", as: b)
            _ = try await circles.service.request(.PUT, "/posts/\(poll)/keep", as: b)
            let png = ByteBuffer(bytes: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 1, 2, 3])
            let photo = try await circles.service.request(.PUT, "/posts/\(poll)/photo", as: a, bytes: png, contentType: "image/png")
            let photoURL = try #require(photo.body["photo_url"]?.stringValue)
            // A stable URL for the circle's members (their token), nobody else.
            #expect(photoURL.contains("/storage/v1/object/authenticated/post-photos/\(circle.uuidString.lowercased())/") && !photoURL.contains("token"))
            #expect(try await circles.service.request(.GET, photoURL, as: b).status == 200)
            #expect(try await circles.service.request(.GET, photoURL, as: nil).status == 401)
            #expect(try await circles.service.request(.GET, photoURL, as: try await circles.user()).status == 404)
            #expect(try await circles.service.request(.GET, "/posts/kept", as: b).array.count == 1)

            _ = try await circles.service.withDatabase { database in
                try await database.query("UPDATE posts SET expires_at = now() - interval '1 second' WHERE id = \(UUID(uuidString: poll)!)")
            }
            // Expired is gone at once for readers, before the job runs.
            let feed = try await circles.service.request(.GET, "/circles/\(circle)/posts", as: b)
            #expect(feed.body["posts"]?.arrayValue?.compactMap { $0["id"]?.stringValue?.lowercased() } == [keep])
            #expect(try await circles.service.request(.GET, "/posts/\(poll)", as: b).status == 404)
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
            let bad: [[String: Any]] = [
                ["type": "story", "body": "x"], ["type": "poll", "body": "x", "poll_options": ["only"]],
                ["type": "poll", "body": "x", "poll_options": (1...11).map { "o\($0)" }], ["type": "poll", "body": "x", "poll_options": ["a", "A"]],
                ["type": "note", "body": String(repeating: "x", count: 2001)], ["type": "note", "body": "   "],
                ["type": "event", "body": "no time"], ["type": "note", "body": "x", "starts_at": "2030-01-01T00:00:00Z"],
                ["type": "note", "body": "x", "latitude": 95, "longitude": 0], ["type": "note", "body": "x", "latitude": 10],
                ["type": "note", "body": "x", "poll_options": ["a", "b"]], ["type": "ask", "body": "x", "urgency": "someday"],
            ]
            for body in bad {
                let reply = try await circles.service.request(.POST, "/circles/\(circle)/posts", as: a, json: body)
                #expect(reply.status == 422, "\(body): \(reply.status) \(reply.body)")
            }
            #expect(try await circles.count("posts") == 0)
            #expect(try await circles.count("poll_options") == 0)
            let post = try await circles.post(circle, as: a)
            var big = ByteBuffer(bytes: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
            big.writeRepeatingByte(0, count: 70 << 10)
            #expect(try await circles.service.request(.PUT, "/posts/\(post)/photo", as: a, bytes: big, contentType: "image/png").status == 422)
            #expect(try await circles.service.request(.PUT, "/posts/\(post)/photo", as: a, bytes: ByteBuffer(string: "<svg/>"), contentType: "image/svg+xml").status == 422)
            #expect(try await circles.service.request(.GET, "/posts/\(post)", as: a).body["photo_url"] == nil)
            #expect(FileManager.default.enumerator(atPath: circles.storageRoot)?.allObjects.compactMap { $0 as? String }.filter { !$0.hasPrefix(".") && $0.contains("/") }.isEmpty ?? true)
            #expect(try await circles.service.request(.POST, "/circles", as: a, json: ["name": ""]).status == 422)
            #expect(try await circles.service.request(.PATCH, "/profile", as: a, json: ["handle": "no spaces!"]).status == 422)
            #expect(try await circles.service.request(.PUT, "/circles/\(circle)/presence", as: a, json: ["status": "busy"]).status == 422)
        }
    }

    @Test("posts: feed newest first with keyset pages; author-only edits; the post types' fields")
    func posts() async throws {
        try await withRunningCircles { circles in
            let a = try await circles.user(), b = try await circles.user()
            let circle = try await circles.circle(owner: a, members: [b])
            var ids: [String] = []
            for index in 0..<7 { ids.append(try await circles.post(circle, as: index.isMultiple(of: 2) ? a : b, ["body": "p\(index)", "mood": "happy", "category": "life"])) }
            let first = try await circles.service.request(.GET, "/circles/\(circle)/posts?limit=4", as: b)
            #expect(first.body["posts"]?.arrayValue?.compactMap { $0["body"]?.stringValue } == ["p6", "p5", "p4", "p3"])
            let second = try await circles.service.request(.GET, "/circles/\(circle)/posts?limit=4&before=\(first.body["next_cursor"]?.stringValue ?? "")", as: b)
            #expect(second.body["posts"]?.arrayValue?.compactMap { $0["body"]?.stringValue } == ["p2", "p1", "p0"] && second.body["next_cursor"] == nil)
            let author = first.body["posts"]?.arrayValue?.first?["author"]
            #expect(author?["handle"]?.stringValue != nil && author?["email"] == nil)

            #expect(try await circles.service.request(.PATCH, "/posts/\(ids[0])", as: b, json: ["body": "hijack"]).status == 403)
            #expect(try await circles.service.request(.DELETE, "/posts/\(ids[0])", as: b).status == 403)
            let edited = try await circles.service.request(.PATCH, "/posts/\(ids[0])", as: a, json: ["body": "edited", "mood": NSNull()])
            #expect(edited.status == 200 && edited.body["body"]?.stringValue == "edited" && edited.body["mood"] == nil && edited.body["category"]?.stringValue == "life")
            #expect(try await circles.service.request(.DELETE, "/posts/\(ids[0])", as: a).status == 204)
            let ask = try await circles.service.request(.POST, "/circles/\(circle)/posts", as: b, json: ["type": "ask", "body": "Ride to the airport?"])
            #expect(ask.body["urgency"]?.stringValue == "medium")
            let expires = try #require(ask.body["expires_at"]?.stringValue.flatMap(ISO8601.parse))
            #expect(abs(expires.timeIntervalSinceNow - 24 * 3600) < 120)
        }
    }

    @Test("members see the public profile, never address, phone, email or birthday; presence is the circle's")
    func profilesAndPresence() async throws {
        try await withRunningCircles { circles in
            let a = try await circles.user(handle: "alice"), b = try await circles.user()
            let circle = try await circles.circle(owner: a, members: [b])
            let mine = try await circles.service.request(.PATCH, "/profile", as: a, json: ["bio": "hi", "address": "1 Main St", "phone": "+15550100", "birthday": "1990-04-01", "full_name": "Alice A."])
            #expect(mine.body["address"]?.stringValue == "1 Main St" && mine.body["birthday"]?.stringValue == "1990-04-01")
            let members = try await circles.service.request(.GET, "/circles/\(circle)/members", as: b)
            let alice = try #require(members.array.first { $0["profile"]?["handle"]?.stringValue == "alice" })
            #expect(alice["role"]?.stringValue == "owner" && alice["profile"]?["full_name"]?.stringValue == "Alice A.")
            for field in ["address", "phone", "email", "birthday"] { #expect(alice["profile"]?[field] == nil, "\(field) leaked") }
            #expect(try await circles.service.request(.PATCH, "/profile", as: b, json: ["handle": "ALICE"]).code == "handle_taken")

            let set = try await circles.service.request(.PUT, "/circles/\(circle)/presence", as: b, json: ["status": "deep_work"])
            #expect(set.status == 200 && set.body["status"]?.stringValue == "deep_work")
            let presence = try await circles.service.request(.GET, "/circles/\(circle)/presence", as: a)
            #expect(presence.array.count == 1 && uuid(presence.array.first?["user_id"]) == b.id)
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
            let request = try await circles.service.request(.POST, "/circles/\(circle)/add-requests", as: member, json: ["handle": "@Newbie"])
            #expect(request.status == 201 && request.body["status"]?.stringValue == "pending" && request.body["owner_approved"]?.boolValue == false)
            let duplicate = try await circles.service.request(.POST, "/circles/\(circle)/add-requests", as: third, json: ["handle": "newbie"])
            #expect(duplicate.status == 409 && duplicate.code == "add_request_pending")
            let id = request.body["id"]?.stringValue ?? ""
            #expect(try await circles.service.request(.POST, "/add-requests/\(id)/accept", as: third).status == 403)
            #expect(try await circles.service.request(.POST, "/add-requests/\(id)/approve", as: third).status == 403)

            // The attack: the owner accepts on the invitee's behalf. Refused, and nobody joins.
            let onBehalf = try await circles.service.request(.POST, "/add-requests/\(id)/accept", as: owner)
            #expect(onBehalf.status == 403 && onBehalf.code == "invitee_must_accept", "\(onBehalf.body)")
            #expect(try await circles.service.request(.GET, "/circles/\(circle)", as: invitee).status == 404)
            #expect(try await circles.count("circle_members WHERE circle_id = '\(circle.uuidString)'") == 3)
            // The owner may approve first; it still waits for the invitee, who alone can accept.
            let approved = try await circles.service.request(.POST, "/add-requests/\(id)/approve", as: owner)
            #expect(approved.status == 200 && approved.body["status"]?.stringValue == "pending" && approved.body["owner_approved"]?.boolValue == true)
            #expect(try await circles.service.request(.POST, "/add-requests/\(id)/approve", as: invitee).code == "owner_only")
            #expect(try await circles.service.request(.GET, "/add-requests", as: invitee).array.count == 1)
            #expect(try await circles.service.request(.GET, "/add-requests", as: owner).array.count == 1)
            let accepted = try await circles.service.request(.POST, "/add-requests/\(id)/accept", as: invitee)
            #expect(accepted.status == 200 && accepted.body["status"]?.stringValue == "accepted")
            #expect(try await circles.service.request(.GET, "/circles/\(circle)", as: invitee).status == 200)
            #expect(try await circles.service.request(.POST, "/add-requests/\(id)/decline", as: owner).code == "add_request_decided")
            let joined = try await circles.service.events(of: .circles) { events in events.contains { (try? $0.decode(CircleMemberJoined.self).payload.member.userId) == invitee.id } }
            let join = try #require(joined.first { (try? $0.decode(CircleMemberJoined.self).payload.member.userId) == invitee.id })
            #expect(join.header.actor == invitee.id, "the invitee joined by their own acceptance")

            // The owner vetoes another request: declined, nobody joins.
            let second = try await circles.service.request(.POST, "/circles/\(circle)/add-requests", as: member, json: ["handle": "other_one"])
            let declined = try await circles.service.request(.POST, "/add-requests/\(second.body["id"]?.stringValue ?? "")/decline", as: owner)
            #expect(declined.body["status"]?.stringValue == "declined")
            #expect(try await circles.service.request(.GET, "/circles/\(circle)", as: other).status == 404)
            #expect(try await circles.service.request(.POST, "/circles/\(circle)/add-requests", as: member, json: ["handle": "ghost_user"]).status == 409)
        }
    }

    @Test("add requests are rate-limited per member: past the quota, 429 with Retry-After and nothing written")
    func addRequestQuota() async throws {
        try await withRunningCircles(settings: CirclesSettings(maxPhotoBytes: 64 << 10, addRequestQuota: Quota(3, perSeconds: 3600))) { circles in
            let owner = try await circles.user(), member = try await circles.user()
            let circle = try await circles.circle(owner: owner, members: [member])
            for index in 0..<4 { _ = try await circles.user(handle: "target_\(index)") }
            for index in 0..<3 {
                #expect(try await circles.service.request(.POST, "/circles/\(circle)/add-requests", as: member, json: ["handle": "target_\(index)"]).status == 201)
            }
            let over = try await circles.service.request(.POST, "/circles/\(circle)/add-requests", as: member, json: ["handle": "target_3"])
            #expect(over.status == 429 && over.code == "rate_limited" && over.headers.first(name: "Retry-After") != nil, "\(over.body)")
            #expect(try await circles.count("add_requests WHERE circle_id = '\(circle.uuidString)'") == 3)
            #expect(try await circles.service.request(.POST, "/circles/\(circle)/add-requests", as: owner, json: ["handle": "target_3"]).status == 201,
                    "the quota is the member's own")
        }
    }

    @Test("user_deleted erases the user and everything they wrote; their circle passes on")
    func accountDeleted() async throws {
        try await withRunningCircles { circles in
            let gone = try await circles.user(), stays = try await circles.user()
            let circle = try await circles.circle(owner: gone, members: [stays])
            let solo = try await circles.circle(owner: gone, name: "Solo")
            _ = try await circles.post(circle, as: gone, ["body": "bye"])
            let kept = try await circles.post(circle, as: stays, ["body": "mine"])
            _ = try await circles.service.request(.PUT, "/posts/\(kept)/reactions/\(path("🎉"))", as: gone)
            try await circles.service.publishAuthEvent(UserDeleted(userId: gone.id, app: .mycirclee, deletedAt: Date()), user: gone.id)
            try await waitUntil { try await circles.service.request(.GET, "/profile", as: gone).status == 401 }
            let detail = try await circles.service.request(.GET, "/circles/\(circle)", as: stays)
            #expect(detail.body["role"]?.stringValue == "owner" && detail.body["member_count"]?.intValue == 1)
            let feed = try await circles.service.request(.GET, "/circles/\(circle)/posts", as: stays)
            #expect(feed.body["posts"]?.arrayValue?.compactMap { $0["body"]?.stringValue } == ["mine"])
            #expect(feed.body["posts"]?.arrayValue?.first?["reactions"]?.arrayValue?.isEmpty == true)
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
            #expect(try await circles.service.request(.GET, "/profile", as: early).body["display_name"]?.stringValue == "sam")
            try await circles.service.publishAuthEvent(UserRegistered(userId: early.id, app: .mycirclee, email: "sam@example.com", phone: nil, phoneHash: nil,
                                                                      userMetadata: ["display_name": .string("Samantha")], createdAt: Date()), user: early.id)
            try await waitUntil(timeout: .seconds(120)) { try await circles.service.request(.GET, "/profile", as: early).body["display_name"]?.stringValue == "Samantha" }
            #expect(try await circles.service.request(.PATCH, "/profile", as: early, json: ["display_name": "Sam!"]).status == 200)
            try await circles.service.publishAuthEvent(UserUpdated(userId: early.id, app: .mycirclee, email: "sam@new.example", phone: nil, phoneHash: nil,
                                                                   userMetadata: ["display_name": .string("Samantha")], updatedAt: Date()), user: early.id)
            try await waitUntil(timeout: .seconds(120)) { try await circles.service.request(.GET, "/profile", as: early).body["email"]?.stringValue == "sam@new.example" }
            #expect(try await circles.service.request(.GET, "/profile", as: early).body["display_name"]?.stringValue == "Sam!")
            // A name changed through auth's metadata is a new name: it follows.
            try await circles.service.publishAuthEvent(UserUpdated(userId: early.id, app: .mycirclee, email: "sam@new.example", phone: nil, phoneHash: nil,
                                                                   userMetadata: ["display_name": .string("Samira")], updatedAt: Date()), user: early.id)
            try await waitUntil(timeout: .seconds(120)) { try await circles.service.request(.GET, "/profile", as: early).body["display_name"]?.stringValue == "Samira" }
        }
    }

    @Test("is_pro is set by the app's servers with its service-role key; a user's token, another app's key or an anon key is refused")
    func proFlag() async throws {
        try await withRunningCircles { circles in
            let member = try await circles.user()
            let path = "/admin/profiles/\(member.id)/pro"
            func put(_ key: String?, header: String = "Authorization", _ value: Bool = true) async throws -> RunningService.Reply {
                try await circles.service.request(.PUT, path, as: nil, json: ["is_pro": value], headers: key.map { [(header, header == "Authorization" ? "Bearer \($0)" : $0)] } ?? [])
            }
            // Attacks: the member's own token, a key for another app, an anon key, a forged key, none.
            #expect(try await put(member.token).status == 401)
            #expect(try await put(try await circles.service.tokens.serviceKey(app: .unify)).status == 401)
            #expect(try await put(try await circles.service.tokens.serviceKey(app: .mycirclee, role: "anon")).status == 401)
            #expect(try await put(try await TestTokens().serviceKey(app: .mycirclee)).status == 401)
            #expect(try await put(nil).status == 401)
            #expect(try await circles.service.request(.GET, "/profile", as: member).body["is_pro"]?.boolValue == false)

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
            #expect(try await circles.service.request(.PATCH, "/circles/\(circle)", as: owner, json: ["name": "Outer"]).status == 200)
            #expect(try await circles.service.request(.PATCH, "/circles/\(circle)", as: owner, json: ["name": "Outer"]).status == 200)
            _ = try await circles.post(circle, as: member, ["body": "still here"])
            _ = try await circles.service.request(.PUT, "/circles/\(circle)/presence", as: member, json: ["status": "free"])
            _ = try await circles.service.request(.PUT, "/circles/\(circle)/presence", as: member, json: ["status": "out"])
            let thread = try await circles.service.request(.POST, "/circles/\(circle)/dms", as: owner, json: ["user_id": member.id.uuidString])
            #expect(try await circles.service.request(.DELETE, "/circles/\(circle)", as: owner).status == 204)
            let events = try await circles.service.events(of: .circles) { events in events.contains { $0.type == .circleDeleted } }
            let renamed = try events.filter { $0.type == .circleUpdated }.map { try $0.decode(CircleUpdated.self).payload }
            #expect(renamed.count == 1 && renamed.first?.previous.name == "Inner" && renamed.first?.circle.name == "Outer" && Set(renamed.first?.memberIds ?? []) == [owner.id, member.id])
            let presence = try events.filter { $0.type == .presenceChanged }.map { try $0.decode(PresenceChanged.self).payload }
            #expect(presence.map(\.operation) == [.insert, .update] && presence.last?.previous?.status == .free)
            let deleted = try #require(events.first { $0.type == .circleDeleted }).decode(CircleDeleted.self).payload
            #expect(Set(deleted.removed?.members.map(\.userId) ?? []) == [owner.id, member.id] && deleted.removed?.posts.map(\.body) == ["still here"])
            #expect(deleted.removed?.presence.map(\.status) == [.out] && deleted.removed?.threads.map { $0.id.uuidString.lowercased() } == thread.body["id"]?.stringValue.map { [$0.lowercased()] })
        }
    }
}
