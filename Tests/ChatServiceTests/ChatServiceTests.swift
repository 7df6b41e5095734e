import ChatService
import ColonyModels
import ColonyPlatform
import ColonyTesting
import Foundation
import NIOCore
import NIOHTTP1
import Testing

/// The chat service from the outside: real Postgres, real broker, HTTP with unify tokens.
@Suite("Chat service")
struct ChatServiceTests {
    typealias User = RunningService.User

    func id(_ reply: RunningService.Reply) throws -> String { try #require(reply.body["id"]?.stringValue).lowercased() }
    /// JSON ids compared as UUIDs (their case is not part of the contract).
    func uuid(_ value: JSONValue?) -> UUID? { value?.stringValue.flatMap(UUID.init(uuidString:)) }

    @Test("the OpenAPI document lists exactly the routes the service registered, and each answers")
    func openAPIMatchesRoutes() async throws {
        try await withRunningChat { running in
            let user = try await running.user()
            #expect(try await running.service.openAPIProblems(ChatService.openAPIDocument, as: user) == [])
        }
    }

    @Test("tokens of other apps get 401; the user row appears on first request with the token's email")
    func authentication() async throws {
        try await withRunningChat { chat in
            #expect(try await chat.service.request(.GET, "/me", as: nil).status == 401)
            let other = try await chat.service.user(app: .habithive)
            #expect(try await chat.service.request(.GET, "/me", as: other).status == 401)
            let user = try await chat.service.user(email: "Ada@Example.com")
            let me = try await chat.service.request(.GET, "/me", as: user)
            #expect(me.status == 200 && me.body["email"]?.stringValue == "Ada@Example.com" && me.body["display_name"]?.stringValue == "Ada")
            let renamed = try await chat.service.request(.PATCH, "/me", as: user, json: ["display_name": "Ada L."])
            #expect(renamed.status == 200 && renamed.body["display_name"]?.stringValue == "Ada L.")
            let blank = try await chat.service.request(.PATCH, "/me", as: user, json: ["display_name": "  "])
            #expect(blank.status == 422)
        }
    }

    @Test("groups: create with members by email; unknown addresses are reported and nothing is written")
    func createAndAddByEmail() async throws {
        try await withRunningChat { chat in
            let owner = try await chat.user(), friend = try await chat.user(email: "friend@example.com")
            let unknown = try await chat.service.request(.POST, "/groups", as: owner, json: ["name": "Trip", "member_emails": ["FRIEND@example.com", "ghost@example.com"]])
            #expect(unknown.status == 409 && unknown.code == "unknown_emails")
            #expect(unknown.body["unknown_emails"]?.arrayValue?.compactMap(\.stringValue) == ["ghost@example.com"], "\(unknown.body)")
            #expect(try await chat.service.request(.GET, "/groups", as: owner).array.isEmpty)

            let empty = try await chat.service.request(.POST, "/groups", as: owner, json: ["name": "   "])
            #expect(empty.status == 422)
            #expect(try await chat.service.request(.GET, "/groups", as: owner).array.isEmpty)

            let created = try await chat.service.request(.POST, "/groups", as: owner, json: ["name": " Trip ", "member_emails": ["FRIEND@example.com"]])
            #expect(created.status == 201 && created.body["name"]?.stringValue == "Trip" && created.body["role"]?.stringValue == "owner")
            let group = try id(created)
            let members = try await chat.service.request(.GET, "/groups/\(group)/members", as: friend)
            #expect(members.array.map { $0["role"]?.stringValue } == ["owner", "user"])
            #expect(members.array.allSatisfy { $0["email"] == nil }, "co-members' emails stay private")

            let third = try await chat.user()
            let add = try await chat.service.request(.POST, "/groups/\(group)/members", as: owner, json: ["emails": [try await chat.email(of: third), "nobody@example.com"]])
            #expect(add.status == 409 && add.code == "unknown_emails")
            #expect(try await chat.service.request(.GET, "/groups/\(group)", as: third).status == 404)
            let added = try await chat.service.request(.POST, "/groups/\(group)/members", as: owner, json: ["emails": [try await chat.email(of: third)]])
            #expect(added.status == 200 && added.body["added"]?.arrayValue?.count == 1)
            let again = try await chat.service.request(.POST, "/groups/\(group)/members", as: owner, json: ["emails": [try await chat.email(of: third)]])
            #expect(again.status == 200 && again.body["added"]?.arrayValue?.isEmpty == true)
        }
    }

    @Test("ownership: transfer makes the old owner an admin; the owner cannot leave without a successor")
    func ownershipAndLeaving() async throws {
        try await withRunningChat { chat in
            let owner = try await chat.user(), admin = try await chat.user(), member = try await chat.user(), outsider = try await chat.user()
            let group = try await chat.group(owner: owner, admins: [admin], members: [member])

            let noSuccessor = try await chat.service.request(.POST, "/groups/\(group)/leave", as: owner)
            #expect(noSuccessor.status == 409 && noSuccessor.code == "cannot_leave_as_owner_without_successor")
            let badSuccessor = try await chat.service.request(.POST, "/groups/\(group)/leave", as: owner, json: ["successor_id": outsider.id.uuidString])
            #expect(badSuccessor.status == 409 && badSuccessor.code == "invalid_successor")
            #expect(try await chat.service.request(.GET, "/groups/\(group)", as: owner).body["role"]?.stringValue == "owner")

            let transferred = try await chat.service.request(.POST, "/groups/\(group)/transfer", as: owner, json: ["new_owner_id": member.id.uuidString])
            #expect(transferred.status == 200 && uuid(transferred.body["owner_id"]) == member.id && transferred.body["role"]?.stringValue == "admin")
            let oldOwnerNow = try await chat.service.request(.PATCH, "/groups/\(group)", as: owner, json: ["name": "Mine again"])
            #expect(oldOwnerNow.status == 403 && oldOwnerNow.code == "not_group_owner")

            let left = try await chat.service.request(.POST, "/groups/\(group)/leave", as: member, json: ["successor_id": admin.id.uuidString])
            #expect(left.status == 204)
            let detail = try await chat.service.request(.GET, "/groups/\(group)", as: admin)
            #expect(detail.body["role"]?.stringValue == "owner" && uuid(detail.body["owner_id"]) == admin.id)
            #expect(try await chat.service.request(.GET, "/groups/\(group)", as: member).status == 404)
            let roles = try await chat.service.request(.GET, "/groups/\(group)/members", as: admin).array.compactMap { $0["role"]?.stringValue }
            #expect(roles == ["owner", "admin"])

            let events = try await chat.service.events(of: .chat) { events in events.contains { $0.type == .groupMemberRemoved } }
            #expect(events.filter { $0.type == .groupRoleChanged }.count >= 5)
        }
    }

    @Test("unread counts across members, and mark-read")
    func unreadCounts() async throws {
        try await withRunningChat { chat in
            let a = try await chat.user(), b = try await chat.user(), c = try await chat.user()
            let group = try await chat.group(owner: a, members: [b, c])
            let other = try await chat.group(owner: b, members: [c])
            for text in ["one", "two", "three"] { _ = try await chat.service.request(.POST, "/groups/\(group)/messages", as: a, json: ["content": text]) }
            _ = try await chat.service.request(.POST, "/groups/\(group)/messages", as: b, json: ["content": "four"])
            _ = try await chat.service.request(.POST, "/groups/\(other)/messages", as: b, json: ["content": "elsewhere"])

            func counts(_ user: User) async throws -> [UUID: Int] {
                let reply = try await chat.service.request(.GET, "/groups/unread", as: user)
                return Dictionary(uniqueKeysWithValues: reply.array.map { (uuid($0["group_id"]) ?? UUID(), $0["unread_count"]?.intValue ?? -1) })
            }
            let g = group, o = other
            #expect(try await counts(a) == [g: 1])
            #expect(try await counts(b) == [g: 3, o: 0])
            #expect(try await counts(c) == [g: 4, o: 1])
            let list = try await chat.service.request(.GET, "/groups", as: c)
            #expect(uuid(list.array.first?["id"]) == o, "most recently active first")
            #expect(list.array.map { $0["unread_count"]?.intValue } == [1, 4])

            let read = try await chat.service.request(.POST, "/groups/\(group)/read", as: c)
            #expect(read.status == 200)
            #expect(try await counts(c) == [g: 0, o: 1])
            _ = try await chat.service.request(.POST, "/groups/\(group)/messages", as: a, json: ["content": "five"])
            #expect(try await counts(c) == [g: 1, o: 1])
            #expect(try await counts(b) == [g: 4, o: 0])
        }
    }

    @Test("voice: a stable URL (no expiry, for cached lists and realtime rows) that members fetch with their token or have signed; a removed member and outsiders get 404; deleting the message removes the file")
    func voiceMessages() async throws {
        try await withRunningChat { chat in
            let owner = try await chat.user(), member = try await chat.user(), outsider = try await chat.user()
            let group = try await chat.group(owner: owner, members: [member])
            let sent = try await chat.service.request(.POST, "/groups/\(group)/messages/voice?duration=4.25", as: member, bytes: AudioFixtures.m4a, contentType: "audio/mp4")
            #expect(sent.status == 201, "\(sent.body)")
            #expect(sent.body["message_type"]?.stringValue == "voice" && sent.body["voice_duration"]?.doubleValue == 4.25)
            let url = try #require(sent.body["voice_url"]?.stringValue)
            #expect(url.hasSuffix("/storage/v1/object/authenticated/voice-messages/\(group.uuidString.lowercased())/\(try id(sent))") && !url.contains("token"))
            #expect(chat.storedFiles.contains { $0.contains(try! id(sent)) })

            for user in [owner, member] {
                let download = try await chat.service.request(.GET, url, as: user)
                #expect(download.status == 200 && download.bytes == AudioFixtures.m4a)
            }
            #expect(try await chat.service.request(.GET, url, as: outsider).status == 404)
            #expect(try await chat.service.request(.GET, url, as: nil).status == 401)
            let publicPath = url.replacingOccurrences(of: "/object/authenticated/", with: "/object/public/")
            #expect(try await chat.service.request(.GET, publicPath, as: nil).status == 404, "the voice bucket is private")
            // A player that cannot send a token gets it signed (Supabase's createSignedUrl).
            let signPath = url.replacingOccurrences(of: "/object/authenticated/", with: "/object/sign/")
            let signed = try await chat.service.request(.POST, signPath, as: member, json: ["expiresIn": 600])
            let signedURL = try #require(signed.body["signed_url"]?.stringValue, "\(signed.body)")
            #expect(try await chat.service.request(.GET, signedURL, as: nil).bytes == AudioFixtures.m4a)
            #expect(try await chat.service.request(.POST, signPath, as: outsider, json: ["expiresIn": 600]).status == 404)

            // The same stable URL is in the history and in the event realtime turns into the row.
            let history = try await chat.service.request(.GET, "/groups/\(group)/messages", as: owner)
            #expect(history.body["messages"]?.arrayValue?.first?["voice_url"]?.stringValue == url)
            #expect(uuid(history.body["messages"]?.arrayValue?.first?["user"]?["id"]) == member.id)
            let events = try await chat.service.events(of: .chat) { events in events.contains { $0.type == .messageSent } }
            #expect(try events.first { $0.type == .messageSent }?.decode(MessageSent.self).payload.message.voiceUrl == url)

            // Removed from the group: the URL they kept leads nowhere.
            #expect(try await chat.service.request(.DELETE, "/groups/\(group)/members/\(member.id)", as: owner).status < 300)
            #expect(try await chat.service.request(.GET, url, as: member).status == 404)

            let deleted = try await chat.service.request(.DELETE, "/groups/\(group)/messages/\(try id(sent))", as: owner)
            #expect(deleted.status == 204)
            #expect(!chat.storedFiles.contains { $0.contains(try! id(sent)) }, "\(chat.storedFiles)")
            #expect(try await chat.service.request(.GET, url, as: owner).status == 404)
        }
    }

    @Test("bad input gets 422 and writes nothing")
    func badInput() async throws {
        try await withRunningChat { chat in
            let owner = try await chat.user()
            let group = try await chat.group(owner: owner)
            let wrongType = try await chat.service.request(.POST, "/groups/\(group)/messages/voice?duration=3", as: owner, bytes: AudioFixtures.png, contentType: "image/png")
            #expect(wrongType.status == 422 && wrongType.code == "unsupported_media_type", "\(wrongType.body)")
            let lying = try await chat.service.request(.POST, "/groups/\(group)/messages/voice?duration=3", as: owner, bytes: AudioFixtures.png, contentType: "audio/mp4")
            #expect(lying.status == 422 && lying.code == "unsupported_media_type")
            var big = ByteBuffer(bytes: [0x00, 0x00, 0x00, 0x20] + Array("ftypM4A ".utf8))
            big.writeRepeatingByte(1, count: (256 << 10))
            let oversized = try await chat.service.request(.POST, "/groups/\(group)/messages/voice?duration=3", as: owner, bytes: big, contentType: "audio/mp4")
            #expect(oversized.status == 422 && oversized.code == "file_too_large", "\(oversized.status) \(oversized.body)")
            let noDuration = try await chat.service.request(.POST, "/groups/\(group)/messages/voice", as: owner, bytes: AudioFixtures.m4a, contentType: "audio/mp4")
            #expect(noDuration.status == 422)
            let nanDuration = try await chat.service.request(.POST, "/groups/\(group)/messages/voice?duration=nan", as: owner, bytes: AudioFixtures.m4a, contentType: "audio/mp4")
            #expect(nanDuration.status == 422)
            let emptyText = try await chat.service.request(.POST, "/groups/\(group)/messages", as: owner, json: ["content": "  "])
            #expect(emptyText.status == 422)
            let malformed = try await chat.service.request(.POST, "/groups/\(group)/messages", as: owner, raw: "{\"content\": 5")
            #expect(malformed.status == 400 || malformed.status == 422)
            let emptyName = try await chat.service.request(.PATCH, "/groups/\(group)", as: owner, json: ["name": ""])
            #expect(emptyName.status == 422)
            let backwards = try await chat.service.request(.POST, "/events", as: owner, json: ["title": "Oops", "starts_at": "2030-01-02T10:00:00Z", "ends_at": "2030-01-02T09:00:00Z"])
            #expect(backwards.status == 422 && backwards.body["message"]?.stringValue?.contains("ends_at") == true)
            let badPicture = try await chat.service.request(.PUT, "/groups/\(group)/picture", as: owner, bytes: AudioFixtures.m4a, contentType: "image/jpeg")
            #expect(badPicture.status == 422)
            let badCursor = try await chat.service.request(.GET, "/groups/\(group)/messages?before=xyz", as: owner)
            #expect(badCursor.status == 422)

            let history = try await chat.service.request(.GET, "/groups/\(group)/messages", as: owner)
            #expect(history.body["messages"]?.arrayValue?.isEmpty == true)
            #expect(chat.storedFiles.isEmpty, "\(chat.storedFiles)")
            #expect(try await chat.service.request(.GET, "/groups/\(group)", as: owner).body["name"]?.stringValue == "Crew")
            let events = try await chat.service.request(.GET, "/events?from=2030-01-01T00:00:00Z&to=2030-02-01T00:00:00Z", as: owner)
            #expect(events.status == 200 && events.array.isEmpty)
        }
    }

    @Test("history pages both ways by cursor, with the sender's name")
    func historyPaging() async throws {
        try await withRunningChat { chat in
            let owner = try await chat.user(), member = try await chat.user()
            let group = try await chat.group(owner: owner, members: [member])
            for index in 0..<25 {
                let reply = try await chat.service.request(.POST, "/groups/\(group)/messages", as: index.isMultiple(of: 2) ? owner : member, json: ["content": "m\(index)"])
                #expect(reply.status == 201)
            }
            func contents(_ reply: RunningService.Reply) -> [String] { reply.body["messages"]?.arrayValue?.compactMap { $0["content"]?.stringValue } ?? [] }
            let latest = try await chat.service.request(.GET, "/groups/\(group)/messages?limit=10", as: member)
            #expect(contents(latest) == (15..<25).map { "m\($0)" })
            #expect(latest.body["has_more"]?.boolValue == true)
            let older = try await chat.service.request(.GET, "/groups/\(group)/messages?limit=10&before=\(latest.body["older_cursor"]?.stringValue ?? "")", as: member)
            #expect(contents(older) == (5..<15).map { "m\($0)" })
            let oldest = try await chat.service.request(.GET, "/groups/\(group)/messages?limit=10&before=\(older.body["older_cursor"]?.stringValue ?? "")", as: member)
            #expect(contents(oldest) == (0..<5).map { "m\($0)" } && oldest.body["has_more"]?.boolValue == false && oldest.body["older_cursor"] == nil)
            let newer = try await chat.service.request(.GET, "/groups/\(group)/messages?limit=7&after=\(oldest.body["newer_cursor"]?.stringValue ?? "")", as: member)
            #expect(contents(newer) == (5..<12).map { "m\($0)" } && newer.body["has_more"]?.boolValue == true)
            let first = latest.body["messages"]?.arrayValue?.first
            #expect(first?["user"]?["display_name"]?.stringValue != nil && uuid(first?["sent_by"]) == member.id, "m15 is the member's")
        }
    }

    @Test("a history page carries every message exactly as sending and editing answered it: escapes, emoji, voice, edits")
    func historyMatchesSentMessages() async throws {
        try await withRunningChat { chat in
            let owner = try await chat.user(), member = try await chat.user()
            let group = try await chat.group(owner: owner, members: [member])
            let tricky = "quote \" backslash \\ slash / newline \n tab \t cr \r bell \u{7} soh \u{1} esc \u{1B} del \u{7F} é 日本 🚀 \u{2028} end"
            var sent: [RunningService.Reply] = []
            sent.append(try await chat.service.request(.POST, "/groups/\(group)/messages", as: owner, json: ["content": tricky]))
            sent.append(try await chat.service.request(.POST, "/groups/\(group)/messages/voice?duration=4.25", as: member, bytes: AudioFixtures.m4a, contentType: "audio/mp4"))
            sent.append(try await chat.service.request(.POST, "/groups/\(group)/messages/voice?duration=3", as: owner, bytes: AudioFixtures.m4a, contentType: "audio/mp4"))
            let plain = try await chat.service.request(.POST, "/groups/\(group)/messages", as: member, json: ["content": "before the edit"])
            #expect(sent.allSatisfy { $0.status == 201 } && plain.status == 201)
            let edited = try await chat.service.request(.PATCH, "/groups/\(group)/messages/\(try id(plain))", as: member, json: ["content": "after / the edit"])
            #expect(edited.status == 200 && edited.body["is_edited"]?.boolValue == true)
            sent.append(edited)

            let page = try await chat.service.request(.GET, "/groups/\(group)/messages", as: owner)
            let messages = page.body["messages"]?.arrayValue ?? []
            #expect(page.status == 200 && messages.count == sent.count)
            for (listed, answered) in zip(messages, sent) {
                var listed = listed.objectValue ?? [:], answered = answered.body
                let cursor = listed.removeValue(forKey: "cursor")?.stringValue
                #expect(cursor.flatMap(KeysetCursor.init) != nil, "each message carries its cursor")
                #expect(listed == answered)
            }
            #expect(page.body["older_cursor"] == nil && page.body["has_more"]?.boolValue == false)
            #expect(page.body["newer_cursor"]?.stringValue == messages.last?["cursor"]?.stringValue)
            let empty = try await chat.service.request(.GET, "/groups/\(try await chat.group(owner: owner))/messages", as: owner)
            #expect(empty.status == 200 && empty.body["messages"]?.arrayValue?.isEmpty == true && empty.body["has_more"]?.boolValue == false)
        }
    }

    @Test("calendar: personal events are invisible to others; group events to outsiders; ranges")
    func calendarVisibility() async throws {
        try await withRunningChat { chat in
            let owner = try await chat.user(), member = try await chat.user()
            let group = try await chat.group(owner: owner, members: [member])
            let personal = try await chat.service.request(.POST, "/events", as: owner, json: ["title": "Dentist", "starts_at": "2030-03-01T09:00:00Z", "ends_at": "2030-03-01T10:00:00Z"])
            #expect(personal.status == 201 && personal.body["group_id"] == nil)
            let shared = try await chat.service.request(.POST, "/events", as: member, json: ["title": "Dinner", "details": "8 pm", "starts_at": "2030-03-02T19:00:00Z", "ends_at": "2030-03-02T21:00:00Z", "group_id": group.uuidString])
            #expect(shared.status == 201)
            let range = "/events?from=2030-03-01T00:00:00Z&to=2030-03-31T00:00:00Z"
            #expect(try await chat.service.request(.GET, range, as: owner).array.compactMap { $0["title"]?.stringValue } == ["Dentist", "Dinner"])
            #expect(try await chat.service.request(.GET, range, as: member).array.compactMap { $0["title"]?.stringValue } == ["Dinner"])
            #expect(try await chat.service.request(.GET, "/events/\(try id(personal))", as: member).status == 404)
            #expect(try await chat.service.request(.PATCH, "/events/\(try id(personal))", as: member, json: ["title": "Mine"]).status == 404)
            #expect(try await chat.service.request(.DELETE, "/events/\(try id(personal))", as: member).status == 404)
            let narrow = try await chat.service.request(.GET, "/events?from=2030-03-02T20:00:00Z&to=2030-03-02T20:30:00Z", as: member)
            #expect(narrow.array.count == 1, "overlapping events count")
            let moved = try await chat.service.request(.PATCH, "/events/\(try id(shared))", as: member, json: ["starts_at": "2030-03-03T19:00:00Z"])
            #expect(moved.status == 409 && moved.code == "ends_before_starts", "moving the start past the stored end is a conflict")
            let cleared = try await chat.service.request(.PATCH, "/events/\(try id(shared))", as: owner, json: ["details": NSNull()])
            #expect(cleared.status == 200 && cleared.body["details"] == nil)
            #expect(try await chat.service.request(.GET, "/events?from=2030-03-02T00:00:00Z&to=2030-03-01T00:00:00Z", as: owner).status == 422)
        }
    }

    @Test("pictures are not keyed by user or group id: each upload gets a key of its own and the old key stops working; an ex-member cannot reach the group's new picture")
    func pictures() async throws {
        try await withRunningChat { chat in
            let owner = try await chat.user(), member = try await chat.user()
            let first = try await chat.service.request(.PUT, "/me/avatar", as: owner, bytes: AudioFixtures.png, contentType: "image/png")
            let url1 = try #require(first.body["avatar_url"]?.stringValue)
            let second = try await chat.service.request(.PUT, "/me/avatar", as: owner, bytes: AudioFixtures.png, contentType: "image/png")
            let url2 = try #require(second.body["avatar_url"]?.stringValue)
            #expect(url1 != url2 && url2.contains("/storage/v1/object/public/profile-pictures/\(owner.id.uuidString.lowercased())/"))
            #expect(try await chat.service.request(.GET, url1, as: nil).status == 404, "the old picture key after a change")
            let byID = "\(chat.service.base)/storage/v1/object/public/profile-pictures/\(owner.id.uuidString.lowercased())"
            #expect(try await chat.service.request(.GET, byID, as: nil).status == 404, "the user's id alone names no picture")
            #expect(chat.storedFiles.filter { $0.contains("profile-pictures") }.count == 1)
            let fetched = try await chat.service.request(.GET, url2, as: nil)
            #expect(fetched.status == 200 && fetched.headers.first(name: "Content-Type") == "image/png")
            let removed = try await chat.service.request(.DELETE, "/me/avatar", as: owner)
            #expect(removed.status == 200 && removed.body["avatar_url"] == nil)
            #expect(try await chat.service.request(.GET, url2, as: nil).status == 404)

            // The group's picture: a member sees it; removed, they keep the old URL, which dies with the next picture.
            let group = try await chat.group(owner: owner, members: [member])
            let set = try await chat.service.request(.PUT, "/groups/\(group)/picture", as: owner, bytes: AudioFixtures.png, contentType: "image/png")
            let old = try #require(set.body["picture_url"]?.stringValue, "\(set.body)")
            #expect(try await chat.service.request(.GET, "/groups/\(group)", as: member).body["picture_url"]?.stringValue == old)
            #expect(try await chat.service.request(.DELETE, "/groups/\(group)/members/\(member.id)", as: owner).status < 300)
            let reset = try await chat.service.request(.PUT, "/groups/\(group)/picture", as: owner, bytes: AudioFixtures.png, contentType: "image/png")
            let new = try #require(reset.body["picture_url"]?.stringValue)
            #expect(new != old)
            #expect(try await chat.service.request(.GET, new, as: nil).status == 200)
            #expect(try await chat.service.request(.GET, old, as: member).status == 404, "the ex-member's old picture key after a change")
            #expect(try await chat.service.request(.GET, "\(chat.service.base)/storage/v1/object/public/group-pictures/\(group.uuidString.lowercased())", as: member).status == 404)
            #expect(try await chat.service.request(.GET, "/groups/\(group)", as: member).status == 404)
        }
    }

    @Test("auth's events: user_registered names the user; user_deleted erases them, their voice files, and passes their groups on")
    func authEvents() async throws {
        try await withRunningChat { chat in
            let gone = UUID(), heir = try await chat.user()
            try await chat.service.publishAuthEvent(UserRegistered(userId: gone, app: .unify, email: "gone@example.com", phone: nil, phoneHash: nil,
                                                                   userMetadata: ["display_name": .string("Gone Soon")], createdAt: Date()), user: gone)
            let goneUser = try await chat.service.user(gone)
            try await waitUntil(timeout: .seconds(120)) { try await chat.service.request(.GET, "/me", as: goneUser).body["display_name"]?.stringValue == "Gone Soon" }
            let owned = try await chat.group(owner: goneUser, members: [heir])
            let alone = try await chat.group(owner: goneUser, name: "Solo")
            _ = try await chat.service.request(.POST, "/groups/\(owned)/messages/voice?duration=1", as: goneUser, bytes: AudioFixtures.m4a, contentType: "audio/mp4")
            _ = try await chat.service.request(.POST, "/groups/\(owned)/messages", as: heir, json: ["content": "stays"])
            #expect(chat.storedFiles.count == 1)

            try await chat.service.publishAuthEvent(UserDeleted(userId: gone, app: .unify, deletedAt: Date()), user: gone)
            try await waitUntil(timeout: .seconds(120)) { try await chat.service.request(.GET, "/me", as: goneUser).status == 401 }
            let group = try await chat.service.request(.GET, "/groups/\(owned)", as: heir)
            #expect(group.body["role"]?.stringValue == "owner")
            let history = try await chat.service.request(.GET, "/groups/\(owned)/messages", as: heir)
            #expect(history.body["messages"]?.arrayValue?.compactMap { $0["content"]?.stringValue } == ["stays"])
            #expect(chat.storedFiles.isEmpty, "\(chat.storedFiles)")
            let events = try await chat.service.events(of: .chat, until: { events in
                [.groupDeleted, .userErased].allSatisfy { type in events.contains { $0.type == type } }
                    && events.contains { ($0.type == .groupUpdated) && (try? $0.decode(GroupUpdated.self).payload.previous?.ownerId) == gone }
            }, timeout: .seconds(120))
            #expect(events.contains { $0.type == .groupDeleted && $0.header.aggregateId == alone.uuidString.lowercased() })
            // Those who shared a group hear of the erasure once (its messages went with it); ownership passed with the row before.
            let erased = try #require(events.first { $0.type == .userErased }).decode(UserErased.self).payload
            #expect(erased.userId == gone && erased.displayName == "Gone Soon" && erased.sharedWith == [heir.id])
            let renamed = try events.filter { $0.type == .groupUpdated }.map { try $0.decode(GroupUpdated.self).payload }
            #expect(renamed.contains { $0.previous?.ownerId == gone && $0.group.ownerId == heir.id })
        }
    }

    @Test("user_updated never reverts a display name the user changed; a name changed through auth follows; a late sign-up name replaces the placeholder")
    func displayNameFromAuth() async throws {
        try await withRunningChat { chat in
            let id = UUID()
            let user = try await chat.service.user(id, email: "kim@example.com")
            #expect(try await chat.service.request(.GET, "/me", as: user).body["display_name"]?.stringValue == "kim")
            func event(email: String, name: String, registered: Bool = false) async throws {
                let metadata: [String: JSONValue] = ["display_name": .string(name)]
                if registered {
                    try await chat.service.publishAuthEvent(UserRegistered(userId: id, app: .unify, email: email, phone: nil, phoneHash: nil, userMetadata: metadata, createdAt: Date()), user: id)
                } else {
                    try await chat.service.publishAuthEvent(UserUpdated(userId: id, app: .unify, email: email, phone: nil, phoneHash: nil, userMetadata: metadata, updatedAt: Date()), user: id)
                }
            }
            try await event(email: "kim@example.com", name: "Kim Lee", registered: true)
            try await waitUntil(timeout: .seconds(120)) { try await chat.service.request(.GET, "/me", as: user).body["display_name"]?.stringValue == "Kim Lee" }
            #expect(try await chat.service.request(.PATCH, "/me", as: user, json: ["display_name": "Kimmy"]).status == 200)
            try await event(email: "kim@new.example", name: "Kim Lee")  // an email change; the metadata still has the sign-up name
            try await waitUntil(timeout: .seconds(120)) { try await chat.service.request(.GET, "/me", as: user).body["email"]?.stringValue == "kim@new.example" }
            #expect(try await chat.service.request(.GET, "/me", as: user).body["display_name"]?.stringValue == "Kimmy")
            try await event(email: "kim@new.example", name: "Kim L.")  // renamed through auth's metadata: the newer change wins
            try await waitUntil(timeout: .seconds(120)) { try await chat.service.request(.GET, "/me", as: user).body["display_name"]?.stringValue == "Kim L." }
        }
    }

    @Test("GET /users/{id}: the public profile of co-members and of senders who left the group; 404 for anyone else and the erased")
    func userProfiles() async throws {
        try await withRunningChat { chat in
            let owner = try await chat.user(), leaver = try await chat.user(), quiet = try await chat.user(), stranger = try await chat.user()
            let group = try await chat.group(owner: owner, members: [leaver, quiet])
            _ = try await chat.service.request(.PATCH, "/me", as: leaver, json: ["display_name": "Lea"])
            _ = try await chat.service.request(.POST, "/groups/\(group)/messages", as: leaver, json: ["content": "bye all"])
            #expect(try await chat.service.request(.POST, "/groups/\(group)/leave", as: leaver).status == 204)
            #expect(try await chat.service.request(.POST, "/groups/\(group)/leave", as: quiet).status == 204)

            let sender = try await chat.service.request(.GET, "/users/\(leaver.id)", as: owner)
            #expect(sender.status == 200 && sender.body["display_name"]?.stringValue == "Lea" && uuid(sender.body["id"]) == leaver.id)
            #expect(sender.body["email"] == nil, "never another user's email")
            #expect(try await chat.service.request(.GET, "/users/\(owner.id)", as: leaver).status == 404, "the leaver no longer shares a group")
            #expect(try await chat.service.request(.GET, "/users/\(quiet.id)", as: owner).status == 404, "left without writing")
            #expect(try await chat.service.request(.GET, "/users/\(owner.id)", as: stranger).status == 404)
            #expect(try await chat.service.request(.GET, "/users/\(owner.id)", as: owner).status == 200)
            #expect(try await chat.service.request(.GET, "/users/not-a-uuid", as: owner).status == 404)

            try await chat.service.publishAuthEvent(UserDeleted(userId: leaver.id, app: .unify, deletedAt: Date()), user: leaver.id)
            try await waitUntil(timeout: .seconds(120)) { try await chat.service.request(.GET, "/users/\(leaver.id)", as: owner).status == 404 }
        }
    }

    @Test("every change leaves through the outbox with the row in the seed's shape")
    func outboxEvents() async throws {
        try await withRunningChat { chat in
            let owner = try await chat.user(), member = try await chat.user()
            let group = try await chat.group(owner: owner, members: [member])
            let sent = try await chat.service.request(.POST, "/groups/\(group)/messages", as: member, json: ["content": "hello"])
            _ = try await chat.service.request(.PATCH, "/groups/\(group)/messages/\(try id(sent))", as: member, json: ["content": "hello!"])
            _ = try await chat.service.request(.DELETE, "/groups/\(group)/messages/\(try id(sent))", as: owner)
            let event = try await chat.service.request(.POST, "/events", as: member, json: ["title": "x", "starts_at": "2030-01-01T00:00:00Z", "ends_at": "2030-01-01T01:00:00Z", "group_id": group.uuidString])
            _ = try await chat.service.request(.PATCH, "/events/\(try id(event))", as: member, json: ["title": "y"])
            _ = try await chat.service.request(.DELETE, "/events/\(try id(event))", as: owner)
            _ = try await chat.service.request(.DELETE, "/groups/\(group)", as: owner)
            let events = try await chat.service.events(of: .chat) { events in events.contains { $0.type == .groupDeleted } }
            let types = events.map(\.type)
            for type: EventType in [.groupCreated, .messageSent, .messageEdited, .messageDeleted, .calendarEventCreated, .calendarEventUpdated, .calendarEventDeleted, .groupDeleted] {
                #expect(types.contains(type), "missing \(type)")
            }
            let message = try #require(events.first { $0.type == .messageSent }).decode(MessageSent.self)
            #expect(message.payload.message.content == "hello" && message.payload.message.sentBy == member.id && message.aggregateId == group.uuidString.lowercased())
            #expect(message.app == .unify)
            // Updates carry the row before; the deleted group names its members' rows.
            let edited = try #require(events.first { $0.type == .messageEdited }).decode(MessageEdited.self).payload
            #expect(edited.previous?.content == "hello" && edited.message.content == "hello!")
            let changed = try #require(events.first { $0.type == .calendarEventUpdated }).decode(CalendarEventUpdated.self).payload
            #expect(changed.previous?.title == "x" && changed.event.title == "y")
            let deleted = try #require(events.first { $0.type == .groupDeleted }).decode(GroupDeleted.self).payload
            #expect(Set(deleted.members?.map(\.userId) ?? []) == [owner.id, member.id] && deleted.members?.first { $0.userId == owner.id }?.role == .owner)
        }
    }
}
