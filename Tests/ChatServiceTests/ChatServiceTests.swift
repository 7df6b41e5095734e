import ChatAPI
import ChatService
import ColonyClient
import ColonyClientTesting
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

    /// JSON ids compared as UUIDs (their case is not part of the contract).
    func uuid(_ value: JSONValue?) -> UUID? { value?.stringValue.flatMap(UUID.init(uuidString:)) }
    func uuid(_ value: String?) -> UUID? { value.flatMap(UUID.init(uuidString:)) }
    /// A time the test names, as the typed client sends it.
    func time(_ text: String) throws -> Date { try #require(ISO8601.parse(text)) }

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
            #expect(try await answer { try await chat.api(nil).getMe() }.status == 401)
            let other = try await chat.service.user(app: .habithive)
            #expect(try await answer { try await chat.api(other).getMe() }.status == 401)
            let user = try await chat.service.user(email: "Ada@Example.com")
            let api = chat.api(user)
            let me = try await api.getMe().ok.body.json
            #expect(me.email == "Ada@Example.com" && me.displayName == "Ada")
            let renamed = try await api.updateMe(body: .json(.init(displayName: "Ada L."))).ok.body.json
            #expect(renamed.displayName == "Ada L.")
            let blank = try await answer { try await api.updateMe(body: .json(.init(displayName: "  "))) }
            #expect(blank.status == 422)
        }
    }

    @Test("groups: create with members by email; unknown addresses are reported and nothing is written")
    func createAndAddByEmail() async throws {
        try await withRunningChat { chat in
            let owner = try await chat.user(), friend = try await chat.user(email: "friend@example.com")
            let owners = chat.api(owner)
            let unknown = try await answer { try await owners.createGroup(body: .json(.init(name: "Trip", memberEmails: ["FRIEND@example.com", "ghost@example.com"]))) }
            #expect(unknown.status == 409 && unknown.code == "unknown_emails")
            #expect(unknown.body["unknown_emails"]?.arrayValue?.compactMap(\.stringValue) == ["ghost@example.com"], "\(unknown.body)")
            #expect(try await owners.listGroups().ok.body.json.isEmpty)

            let empty = try await answer { try await owners.createGroup(body: .json(.init(name: "   "))) }
            #expect(empty.status == 422)
            #expect(try await owners.listGroups().ok.body.json.isEmpty)

            let created = try await owners.createGroup(body: .json(.init(name: " Trip ", memberEmails: ["FRIEND@example.com"]))).created.body.json
            #expect(created.name == "Trip" && created.role == .owner)
            let group = created.id
            let members = try await answer { try await chat.api(friend).listMembers(path: .init(groupId: group)) }
            #expect(try members.output.ok.body.json.map(\.role) == [.owner, .user])
            #expect(members.json?.arrayValue?.allSatisfy { $0["email"] == nil } == true, "co-members' emails stay private")

            let third = try await chat.user()
            func add(_ emails: [String]) async throws -> Answer<ChatAPI.Operations.AddMembers.Output> {
                try await answer { try await owners.addMembers(path: .init(groupId: group), body: .json(.init(emails: emails))) }
            }
            let refused = try await add([try await chat.email(of: third), "nobody@example.com"])
            #expect(refused.status == 409 && refused.code == "unknown_emails")
            #expect(try await answer { try await chat.api(third).getGroup(path: .init(groupId: group)) }.status == 404)
            let added = try await add([try await chat.email(of: third)])
            #expect(try added.status == 200 && (try added.output.ok.body.json.added.count) == 1)
            let again = try await add([try await chat.email(of: third)])
            #expect(try again.status == 200 && (try again.output.ok.body.json.added.isEmpty))
        }
    }

    @Test("ownership: transfer makes the old owner an admin; the owner cannot leave without a successor")
    func ownershipAndLeaving() async throws {
        try await withRunningChat { chat in
            let owner = try await chat.user(), admin = try await chat.user(), member = try await chat.user(), outsider = try await chat.user()
            let group = try await chat.group(owner: owner, admins: [admin], members: [member]).uuidString
            let owners = chat.api(owner), admins = chat.api(admin), members = chat.api(member)

            let noSuccessor = try await answer { try await owners.leaveGroup(path: .init(groupId: group)) }
            #expect(noSuccessor.status == 409 && noSuccessor.code == "cannot_leave_as_owner_without_successor")
            let badSuccessor = try await answer { try await owners.leaveGroup(path: .init(groupId: group), body: .json(.init(successorId: outsider.id.uuidString))) }
            #expect(badSuccessor.status == 409 && badSuccessor.code == "invalid_successor")
            #expect(try await owners.getGroup(path: .init(groupId: group)).ok.body.json.role == .owner)

            let transferred = try await owners.transferGroupOwnership(path: .init(groupId: group), body: .json(.init(newOwnerId: member.id.uuidString))).ok.body.json
            #expect(UUID(uuidString: transferred.ownerId) == member.id && transferred.role == .admin)
            let oldOwnerNow = try await answer { try await owners.renameGroup(path: .init(groupId: group), body: .json(.init(name: "Mine again"))) }
            #expect(oldOwnerNow.status == 403 && oldOwnerNow.code == "not_group_owner")

            let left = try await answer { try await members.leaveGroup(path: .init(groupId: group), body: .json(.init(successorId: admin.id.uuidString))) }
            #expect(left.status == 204)
            let detail = try await admins.getGroup(path: .init(groupId: group)).ok.body.json
            #expect(detail.role == .owner && UUID(uuidString: detail.ownerId) == admin.id)
            #expect(try await answer { try await members.getGroup(path: .init(groupId: group)) }.status == 404)
            let roles = try await admins.listMembers(path: .init(groupId: group)).ok.body.json.map(\.role)
            #expect(roles == [.owner, .admin])

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
            func send(_ user: User, _ group: UUID, _ text: String) async throws {
                _ = try await chat.api(user).sendTextMessage(path: .init(groupId: group.uuidString), body: .json(.init(content: text))).created
            }
            for text in ["one", "two", "three"] { try await send(a, group, text) }
            try await send(b, group, "four")
            try await send(b, other, "elsewhere")

            func counts(_ user: User) async throws -> [UUID: Int] {
                let counts = try await chat.api(user).listUnreadCounts().ok.body.json
                return Dictionary(uniqueKeysWithValues: counts.map { (UUID(uuidString: $0.groupId) ?? UUID(), $0.unreadCount) })
            }
            let g = group, o = other
            #expect(try await counts(a) == [g: 1])
            #expect(try await counts(b) == [g: 3, o: 0])
            #expect(try await counts(c) == [g: 4, o: 1])
            let list = try await chat.api(c).listGroups().ok.body.json
            #expect(list.first.flatMap { UUID(uuidString: $0.id) } == o, "most recently active first")
            #expect(list.map(\.unreadCount) == [1, 4])

            _ = try await chat.api(c).markGroupRead(path: .init(groupId: group.uuidString)).ok
            #expect(try await counts(c) == [g: 0, o: 1])
            try await send(a, group, "five")
            #expect(try await counts(c) == [g: 1, o: 1])
            #expect(try await counts(b) == [g: 4, o: 0])
        }
    }

    @Test("voice: a stable URL (no expiry, for cached lists and realtime rows) that members fetch with their token or have signed; a removed member and outsiders get 404; deleting the message removes the file")
    func voiceMessages() async throws {
        try await withRunningChat { chat in
            let owner = try await chat.user(), member = try await chat.user(), outsider = try await chat.user()
            let group = try await chat.group(owner: owner, members: [member]).uuidString
            let owners = chat.api(owner), members = chat.api(member)
            let sent = try await answer { try await members.sendVoiceMessage(path: .init(groupId: group), query: .init(duration: 4.25), body: .audioMp4(upload(AudioFixtures.m4a))) }
            #expect(sent.status == 201, "\(sent.body)")
            let message = try sent.output.created.body.json
            #expect(message.messageType == .voice && message.voiceDuration == 4.25)
            let url = try #require(message.voiceUrl)
            #expect(url.hasSuffix("/storage/v1/object/authenticated/voice-messages/\(group.lowercased())/\(message.id.lowercased())") && !url.contains("token"))
            #expect(chat.storedFiles.contains { $0.contains(message.id.lowercased()) })

            // Raw: the URL exactly as the answer gave it (what an app's player is handed).
            for user in [owner, member] {
                let download = try await chat.service.request(.GET, url, as: user)
                #expect(download.status == 200 && download.bytes == AudioFixtures.m4a)
            }
            #expect(try await chat.service.request(.GET, url, as: outsider).status == 404)
            #expect(try await chat.service.request(.GET, url, as: nil).status == 401)
            let publicPath = url.replacingOccurrences(of: "/object/authenticated/", with: "/object/public/")
            #expect(try await chat.service.request(.GET, publicPath, as: nil).status == 404, "the voice bucket is private")
            // A player that cannot send a token gets it signed (Supabase's createSignedUrl).
            // A storage path names the object as stored: ids in lower case, as Colony writes them.
            let path = ChatAPI.Operations.SignVoiceMessages.Input.Path(groupId: group.lowercased(), messageId: message.id.lowercased())
            let signed = try await members.signVoiceMessages(path: path, body: .json(.init(expiresIn: 600))).ok.body.json
            #expect(try await chat.service.request(.GET, signed.signedUrl, as: nil).bytes == AudioFixtures.m4a)
            #expect(try await answer { try await chat.api(outsider).signVoiceMessages(path: path, body: .json(.init(expiresIn: 600))) }.status == 404)

            // The same stable URL is in the history and in the event realtime turns into the row.
            let history = try await owners.listMessages(path: .init(groupId: group)).ok.body.json
            #expect(history.messages.first?.voiceUrl == url)
            #expect(uuid(history.messages.first?.user.id) == member.id)
            let events = try await chat.service.events(of: .chat) { events in events.contains { $0.type == .messageSent } }
            #expect(try events.first { $0.type == .messageSent }?.decode(MessageSent.self).payload.message.voiceUrl == url)

            // Removed from the group: the URL they kept leads nowhere.
            #expect(try await answer { try await owners.removeMember(path: .init(groupId: group, userId: member.id.uuidString)) }.status < 300)
            #expect(try await chat.service.request(.GET, url, as: member).status == 404)

            let deleted = try await answer { try await owners.deleteMessage(path: .init(groupId: group, messageId: message.id)) }
            #expect(deleted.status == 204)
            #expect(!chat.storedFiles.contains { $0.contains(message.id.lowercased()) }, "\(chat.storedFiles)")
            #expect(try await chat.service.request(.GET, url, as: owner).status == 404)
        }
    }

    @Test("bad input gets 422 and writes nothing")
    func badInput() async throws {
        try await withRunningChat { chat in
            let owner = try await chat.user()
            let group = try await chat.group(owner: owner)
            let api = chat.api(owner), path = ChatAPI.Operations.SendVoiceMessage.Input.Path(groupId: group.uuidString)
            // Raw: a content type the document does not offer for voice, which the typed client cannot send.
            let wrongType = try await chat.service.request(.POST, "/groups/\(group)/messages/voice?duration=3", as: owner, bytes: AudioFixtures.png, contentType: "image/png")
            #expect(wrongType.status == 422 && wrongType.code == "unsupported_media_type", "\(wrongType.body)")
            let lying = try await answer { try await api.sendVoiceMessage(path: path, query: .init(duration: 3), body: .audioMp4(upload(AudioFixtures.png))) }
            #expect(lying.status == 422 && lying.code == "unsupported_media_type")
            var big = ByteBuffer(bytes: [0x00, 0x00, 0x00, 0x20] + Array("ftypM4A ".utf8))
            big.writeRepeatingByte(1, count: (256 << 10))
            let oversized = try await answer { try await api.sendVoiceMessage(path: path, query: .init(duration: 3), body: .audioMp4(upload(big))) }
            #expect(oversized.status == 422 && oversized.code == "file_too_large", "\(oversized.status) \(oversized.body)")
            // Raw: no duration (a required parameter missing: the generated code's 400), and one
            // that is not a number, which the typed client cannot send.
            let noDuration = try await chat.service.request(.POST, "/groups/\(group)/messages/voice", as: owner, bytes: AudioFixtures.m4a, contentType: "audio/mp4")
            #expect(noDuration.status == 400 && noDuration.code == "bad_request", "\(noDuration.body)")
            let nanDuration = try await chat.service.request(.POST, "/groups/\(group)/messages/voice?duration=nan", as: owner, bytes: AudioFixtures.m4a, contentType: "audio/mp4")
            #expect(nanDuration.status == 422)
            let emptyText = try await answer { try await api.sendTextMessage(path: .init(groupId: group.uuidString), body: .json(.init(content: "  "))) }
            #expect(emptyText.status == 422)
            // Raw: a body that is not JSON.
            let malformed = try await chat.service.request(.POST, "/groups/\(group)/messages", as: owner, raw: "{\"content\": 5")
            #expect(malformed.status == 400 || malformed.status == 422)
            let emptyName = try await answer { try await api.renameGroup(path: .init(groupId: group.uuidString), body: .json(.init(name: ""))) }
            #expect(emptyName.status == 422)
            let backwards = try await answer { try await api.createEvent(body: .json(.init(title: "Oops", startsAt: time("2030-01-02T10:00:00Z"), endsAt: time("2030-01-02T09:00:00Z")))) }
            #expect(backwards.status == 422 && backwards.message?.contains("ends_at") == true)
            let badPicture = try await answer { try await api.setGroupPicture(path: .init(groupId: group.uuidString), body: .jpeg(upload(AudioFixtures.m4a))) }
            #expect(badPicture.status == 422)
            let badCursor = try await answer { try await api.listMessages(path: .init(groupId: group.uuidString), query: .init(before: "xyz")) }
            #expect(badCursor.status == 422)

            let history = try await api.listMessages(path: .init(groupId: group.uuidString)).ok.body.json
            #expect(history.messages.isEmpty)
            #expect(chat.storedFiles.isEmpty, "\(chat.storedFiles)")
            #expect(try await api.getGroup(path: .init(groupId: group.uuidString)).ok.body.json.name == "Crew")
            let events = try await api.listEvents(query: .init(from: time("2030-01-01T00:00:00Z"), to: time("2030-02-01T00:00:00Z"))).ok.body.json
            #expect(events.isEmpty)
        }
    }

    @Test("history pages both ways by cursor, with the sender's name")
    func historyPaging() async throws {
        try await withRunningChat { chat in
            let owner = try await chat.user(), member = try await chat.user()
            let group = try await chat.group(owner: owner, members: [member]).uuidString
            for index in 0..<25 {
                _ = try await chat.api(index.isMultiple(of: 2) ? owner : member).sendTextMessage(path: .init(groupId: group), body: .json(.init(content: "m\(index)"))).created
            }
            let members = chat.api(member)
            func page(limit: Int, before: String? = nil, after: String? = nil) async throws -> Answer<ChatAPI.Operations.ListMessages.Output> {
                try await answer { try await members.listMessages(path: .init(groupId: group), query: .init(limit: limit, before: before, after: after)) }
            }
            func contents(_ page: Schemas.HistoryPage) -> [String] { page.messages.map(\.content) }
            let latest = try await page(limit: 10).output.ok.body.json
            #expect(contents(latest) == (15..<25).map { "m\($0)" })
            #expect(latest.hasMore == true)
            let older = try await page(limit: 10, before: latest.olderCursor ?? "").output.ok.body.json
            #expect(contents(older) == (5..<15).map { "m\($0)" })
            let oldestAnswer = try await page(limit: 10, before: older.olderCursor ?? "")
            let oldest = try oldestAnswer.output.ok.body.json
            #expect(contents(oldest) == (0..<5).map { "m\($0)" } && oldest.hasMore == false && oldestAnswer.body["older_cursor"] == nil)
            let newer = try await page(limit: 7, after: oldest.newerCursor ?? "").output.ok.body.json
            #expect(contents(newer) == (5..<12).map { "m\($0)" } && newer.hasMore == true)
            let first = latest.messages.first
            #expect(first?.user.displayName != nil && uuid(first?.sentBy) == member.id, "m15 is the member's")
        }
    }

    @Test("a history page carries every message exactly as sending and editing answered it: escapes, emoji, voice, edits")
    func historyMatchesSentMessages() async throws {
        try await withRunningChat { chat in
            let owner = try await chat.user(), member = try await chat.user()
            let group = try await chat.group(owner: owner, members: [member]).uuidString
            let owners = chat.api(owner), members = chat.api(member)
            let tricky = "quote \" backslash \\ slash / newline \n tab \t cr \r bell \u{7} soh \u{1} esc \u{1B} del \u{7F} é 日本 🚀 \u{2028} end"
            func text(_ api: ChatAPI.Client, _ content: String) async throws -> Answer<ChatAPI.Operations.SendTextMessage.Output> {
                try await answer { try await api.sendTextMessage(path: .init(groupId: group), body: .json(.init(content: content))) }
            }
            func voice(_ api: ChatAPI.Client, _ duration: Double) async throws -> Answer<ChatAPI.Operations.SendVoiceMessage.Output> {
                try await answer { try await api.sendVoiceMessage(path: .init(groupId: group), query: .init(duration: duration), body: .audioMp4(upload(AudioFixtures.m4a))) }
            }
            // Each answer's JSON as it came, so the page is compared byte for byte (after parsing), not only as the client reads it.
            let first = try await text(owners, tricky), second = try await voice(members, 4.25), third = try await voice(owners, 3)
            let plain = try await text(members, "before the edit")
            #expect([first.status, second.status, third.status, plain.status] == [Int](repeating: 201, count: 4))
            #expect(try first.output.created.body.json.content == tricky)
            _ = try second.output.created
            _ = try third.output.created
            var sent = [first.body, second.body, third.body]
            let edited = try await answer { try await members.editMessage(path: .init(groupId: group, messageId: plain.output.created.body.json.id), body: .json(.init(content: "after / the edit"))) }
            #expect(try edited.status == 200 && (try edited.output.ok.body.json.isEdited) == true)
            sent.append(edited.body)

            let page = try await answer { try await owners.listMessages(path: .init(groupId: group)) }
            let messages = page.body["messages"]?.arrayValue ?? []
            #expect(try page.status == 200 && messages.count == sent.count && (try page.output.ok.body.json.messages.count) == sent.count)
            for (listed, answered) in zip(messages, sent) {
                var listed = listed.objectValue ?? [:]
                let cursor = listed.removeValue(forKey: "cursor")?.stringValue
                #expect(cursor.flatMap(KeysetCursor.init) != nil, "each message carries its cursor")
                #expect(listed == answered)
            }
            #expect(page.body["older_cursor"] == nil && page.body["has_more"]?.boolValue == false)
            #expect(page.body["newer_cursor"]?.stringValue == messages.last?["cursor"]?.stringValue)
            let emptyGroup = try await chat.group(owner: owner).uuidString
            let empty = try await answer { try await owners.listMessages(path: .init(groupId: emptyGroup)) }
            #expect(try empty.status == 200 && (try empty.output.ok.body.json.messages.isEmpty) && empty.body["has_more"]?.boolValue == false)
        }
    }

    @Test("calendar: personal events are invisible to others; group events to outsiders; ranges")
    func calendarVisibility() async throws {
        try await withRunningChat { chat in
            let owner = try await chat.user(), member = try await chat.user()
            let group = try await chat.group(owner: owner, members: [member])
            let owners = chat.api(owner), members = chat.api(member)
            let personal = try await answer { try await owners.createEvent(body: .json(.init(title: "Dentist", startsAt: time("2030-03-01T09:00:00Z"), endsAt: time("2030-03-01T10:00:00Z")))) }
            #expect(personal.status == 201 && personal.body["group_id"] == nil)
            let personalID = try personal.output.created.body.json.id
            let shared = try await members.createEvent(body: .json(.init(title: "Dinner", details: "8 pm", startsAt: time("2030-03-02T19:00:00Z"), endsAt: time("2030-03-02T21:00:00Z"), groupId: group.uuidString))).created.body.json
            let march = ChatAPI.Operations.ListEvents.Input.Query(from: try time("2030-03-01T00:00:00Z"), to: try time("2030-03-31T00:00:00Z"))
            #expect(try await owners.listEvents(query: march).ok.body.json.map(\.title) == ["Dentist", "Dinner"])
            #expect(try await members.listEvents(query: march).ok.body.json.map(\.title) == ["Dinner"])
            #expect(try await answer { try await members.getEvent(path: .init(eventId: personalID)) }.status == 404)
            #expect(try await answer { try await members.updateEvent(path: .init(eventId: personalID), body: .json(.init(title: "Mine"))) }.status == 404)
            #expect(try await answer { try await members.deleteEvent(path: .init(eventId: personalID)) }.status == 404)
            let narrow = try await members.listEvents(query: .init(from: time("2030-03-02T20:00:00Z"), to: time("2030-03-02T20:30:00Z"))).ok.body.json
            #expect(narrow.count == 1, "overlapping events count")
            let moved = try await answer { try await members.updateEvent(path: .init(eventId: shared.id), body: .json(.init(startsAt: time("2030-03-03T19:00:00Z")))) }
            #expect(moved.status == 409 && moved.code == "ends_before_starts", "moving the start past the stored end is a conflict")
            // Raw: "details": null clears the field, and the typed client leaves a nil out instead.
            let cleared = try await chat.service.request(.PATCH, "/events/\(shared.id)", as: owner, json: ["details": NSNull()])
            #expect(cleared.status == 200 && cleared.body["details"] == nil)
            #expect(try await answer { try await owners.listEvents(query: .init(from: time("2030-03-02T00:00:00Z"), to: time("2030-03-01T00:00:00Z"))) }.status == 422)
        }
    }

    @Test("pictures are not keyed by user or group id: each upload gets a key of its own and the old key stops working; an ex-member cannot reach the group's new picture")
    func pictures() async throws {
        try await withRunningChat { chat in
            let owner = try await chat.user(), member = try await chat.user()
            let owners = chat.api(owner), members = chat.api(member)
            let url1 = try #require(try await owners.setAvatar(body: .png(upload(AudioFixtures.png))).ok.body.json.avatarUrl)
            let url2 = try #require(try await owners.setAvatar(body: .png(upload(AudioFixtures.png))).ok.body.json.avatarUrl)
            #expect(url1 != url2 && url2.contains("/storage/v1/object/public/profile-pictures/\(owner.id.uuidString.lowercased())/"))
            // Raw: the pictures' URLs exactly as the answers gave them.
            #expect(try await chat.service.request(.GET, url1, as: nil).status == 404, "the old picture key after a change")
            let byID = "\(chat.service.base)/storage/v1/object/public/profile-pictures/\(owner.id.uuidString.lowercased())"
            #expect(try await chat.service.request(.GET, byID, as: nil).status == 404, "the user's id alone names no picture")
            #expect(chat.storedFiles.filter { $0.contains("profile-pictures") }.count == 1)
            let fetched = try await chat.service.request(.GET, url2, as: nil)
            #expect(fetched.status == 200 && fetched.headers.first(name: "Content-Type") == "image/png")
            let removed = try await answer { try await owners.removeAvatar() }
            #expect(try removed.status == 200 && removed.body["avatar_url"] == nil && (try removed.output.ok.body.json.avatarUrl) == nil)
            #expect(try await chat.service.request(.GET, url2, as: nil).status == 404)

            // The group's picture: a member sees it; removed, they keep the old URL, which dies with the next picture.
            let group = try await chat.group(owner: owner, members: [member]).uuidString
            let set = try await owners.setGroupPicture(path: .init(groupId: group), body: .png(upload(AudioFixtures.png))).ok.body.json
            let old = try #require(set.pictureUrl, "\(set)")
            #expect(try await members.getGroup(path: .init(groupId: group)).ok.body.json.pictureUrl == old)
            #expect(try await answer { try await owners.removeMember(path: .init(groupId: group, userId: member.id.uuidString)) }.status < 300)
            let reset = try await owners.setGroupPicture(path: .init(groupId: group), body: .png(upload(AudioFixtures.png))).ok.body.json
            let new = try #require(reset.pictureUrl)
            #expect(new != old)
            #expect(try await chat.service.request(.GET, new, as: nil).status == 200)
            #expect(try await chat.service.request(.GET, old, as: member).status == 404, "the ex-member's old picture key after a change")
            #expect(try await chat.service.request(.GET, "\(chat.service.base)/storage/v1/object/public/group-pictures/\(group.lowercased())", as: member).status == 404)
            #expect(try await answer { try await members.getGroup(path: .init(groupId: group)) }.status == 404)
        }
    }

    @Test("auth's events: user_registered names the user; user_deleted erases them, their voice files, and passes their groups on")
    func authEvents() async throws {
        try await withRunningChat { chat in
            let gone = UUID(), heir = try await chat.user()
            try await chat.service.publishAuthEvent(UserRegistered(userId: gone, app: .unify, email: "gone@example.com", phone: nil, phoneHash: nil,
                                                                   userMetadata: ["display_name": .string("Gone Soon")], createdAt: Date()), user: gone)
            let goneUser = try await chat.service.user(gone)
            let gones = chat.api(goneUser), heirs = chat.api(heir)
            try await waitUntil(timeout: .seconds(120)) { (try? await gones.getMe().ok.body.json.displayName) == "Gone Soon" }
            let owned = try await chat.group(owner: goneUser, members: [heir]).uuidString
            let alone = try await chat.group(owner: goneUser, name: "Solo")
            _ = try await gones.sendVoiceMessage(path: .init(groupId: owned), query: .init(duration: 1), body: .audioMp4(upload(AudioFixtures.m4a)))
            _ = try await heirs.sendTextMessage(path: .init(groupId: owned), body: .json(.init(content: "stays")))
            #expect(chat.storedFiles.count == 1)

            try await chat.service.publishAuthEvent(UserDeleted(userId: gone, app: .unify, deletedAt: Date()), user: gone)
            try await waitUntil(timeout: .seconds(120)) { try await answer { try await gones.getMe() }.status == 401 }
            #expect(try await heirs.getGroup(path: .init(groupId: owned)).ok.body.json.role == .owner)
            let history = try await heirs.listMessages(path: .init(groupId: owned)).ok.body.json
            #expect(history.messages.map(\.content) == ["stays"])
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
            let api = chat.api(user)
            func me() async throws -> Schemas.User { try await api.getMe().ok.body.json }
            #expect(try await me().displayName == "kim")
            func event(email: String, name: String, registered: Bool = false) async throws {
                let metadata: [String: JSONValue] = ["display_name": .string(name)]
                if registered {
                    try await chat.service.publishAuthEvent(UserRegistered(userId: id, app: .unify, email: email, phone: nil, phoneHash: nil, userMetadata: metadata, createdAt: Date()), user: id)
                } else {
                    try await chat.service.publishAuthEvent(UserUpdated(userId: id, app: .unify, email: email, phone: nil, phoneHash: nil, userMetadata: metadata, updatedAt: Date()), user: id)
                }
            }
            try await event(email: "kim@example.com", name: "Kim Lee", registered: true)
            try await waitUntil(timeout: .seconds(120)) { (try? await me().displayName) == "Kim Lee" }
            #expect(try await answer { try await api.updateMe(body: .json(.init(displayName: "Kimmy"))) }.status == 200)
            try await event(email: "kim@new.example", name: "Kim Lee")  // an email change; the metadata still has the sign-up name
            try await waitUntil(timeout: .seconds(120)) { (try? await me().email) == "kim@new.example" }
            #expect(try await me().displayName == "Kimmy")
            try await event(email: "kim@new.example", name: "Kim L.")  // renamed through auth's metadata: the newer change wins
            try await waitUntil(timeout: .seconds(120)) { (try? await me().displayName) == "Kim L." }
        }
    }

    @Test("GET /users/{id}: the public profile of co-members and of senders who left the group; 404 for anyone else and the erased")
    func userProfiles() async throws {
        try await withRunningChat { chat in
            let owner = try await chat.user(), leaver = try await chat.user(), quiet = try await chat.user(), stranger = try await chat.user()
            let group = try await chat.group(owner: owner, members: [leaver, quiet]).uuidString
            let owners = chat.api(owner), leavers = chat.api(leaver)
            _ = try await leavers.updateMe(body: .json(.init(displayName: "Lea")))
            _ = try await leavers.sendTextMessage(path: .init(groupId: group), body: .json(.init(content: "bye all")))
            #expect(try await answer { try await leavers.leaveGroup(path: .init(groupId: group)) }.status == 204)
            #expect(try await answer { try await chat.api(quiet).leaveGroup(path: .init(groupId: group)) }.status == 204)

            func profile(_ api: ChatAPI.Client, _ id: String) async throws -> Answer<ChatAPI.Operations.GetUser.Output> {
                try await answer { try await api.getUser(path: .init(userId: id)) }
            }
            let sender = try await profile(owners, leaver.id.uuidString)
            let seen = try sender.output.ok.body.json
            #expect(sender.status == 200 && seen.displayName == "Lea" && uuid(seen.id) == leaver.id)
            #expect(sender.body["email"] == nil, "never another user's email")
            #expect(try await profile(leavers, owner.id.uuidString).status == 404, "the leaver no longer shares a group")
            #expect(try await profile(owners, quiet.id.uuidString).status == 404, "left without writing")
            #expect(try await profile(chat.api(stranger), owner.id.uuidString).status == 404)
            #expect(try await profile(owners, owner.id.uuidString).status == 200)
            #expect(try await profile(owners, "not-a-uuid").status == 404)

            try await chat.service.publishAuthEvent(UserDeleted(userId: leaver.id, app: .unify, deletedAt: Date()), user: leaver.id)
            try await waitUntil(timeout: .seconds(120)) { try await profile(owners, leaver.id.uuidString).status == 404 }
        }
    }

    @Test("every change leaves through the outbox with the row in the seed's shape")
    func outboxEvents() async throws {
        try await withRunningChat { chat in
            let owner = try await chat.user(), member = try await chat.user()
            let group = try await chat.group(owner: owner, members: [member])
            let owners = chat.api(owner), members = chat.api(member)
            let sent = try await members.sendTextMessage(path: .init(groupId: group.uuidString), body: .json(.init(content: "hello"))).created.body.json.id
            _ = try await members.editMessage(path: .init(groupId: group.uuidString, messageId: sent), body: .json(.init(content: "hello!")))
            _ = try await owners.deleteMessage(path: .init(groupId: group.uuidString, messageId: sent))
            let event = try await members.createEvent(body: .json(.init(title: "x", startsAt: time("2030-01-01T00:00:00Z"), endsAt: time("2030-01-01T01:00:00Z"), groupId: group.uuidString))).created.body.json.id
            _ = try await members.updateEvent(path: .init(eventId: event), body: .json(.init(title: "y")))
            _ = try await owners.deleteEvent(path: .init(eventId: event))
            _ = try await owners.deleteGroup(path: .init(groupId: group.uuidString))
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
