import ChatAPI
import ChatService
import ColonyClientTesting
import ColonyModels
import ColonyPlatform
import ColonyTesting
import Foundation
import Testing

/// Blocks in Unify (issue 39.2): a blocked user cannot create a group with the blocker in it or add
/// them to one; their messages, voice files and group events are gone from the blocker's reads
/// (the history's fast path and generated route alike) and withheld from the blocker in realtime
/// (`withheld_from` on the events chat publishes). Both stay members; unblocking restores it all.
@Suite("Chat: blocks")
struct ChatBlockTests {
    typealias User = RunningService.User

    @Test("block, list and unblock; bad ids; blocking is one-way and needs no shared group")
    func blockListUnblock() async throws {
        try await withRunningChat { chat in
            let ada = try await chat.user(), bea = try await chat.user(), cid = try await chat.user()
            let beas = chat.api(bea)
            #expect(try await beas.listBlocks().ok.body.json.isEmpty)
            let first = try await beas.blockUser(body: .json(.init(userId: ada.id.uuidString))).created.body.json
            #expect(first.map(\.userId) == [ada.id.lowercased])
            let again = try await beas.blockUser(body: .json(.init(userId: ada.id.uuidString.lowercased()))).created.body.json
            #expect(again.map(\.userId) == [ada.id.lowercased] && again.first?.createdAt == first.first?.createdAt, "blocking again changes nothing")
            _ = try await beas.blockUser(body: .json(.init(userId: cid.id.uuidString))).created
            #expect(try await beas.listBlocks().ok.body.json.map(\.userId) == [cid.id.lowercased, ada.id.lowercased], "most recent first")
            #expect(try await chat.api(ada).listBlocks().ok.body.json.isEmpty, "those who blocked me are not listed")

            let selfBlock = try await answer { try await beas.blockUser(body: .json(.init(userId: bea.id.uuidString))) }
            #expect(selfBlock.status == 409 && selfBlock.code == "cannot_block_self")
            let malformed = try await chat.service.request(.POST, "/blocks", as: bea, json: ["user_id": "not-a-uuid"])
            #expect(malformed.status == 422)
            #expect(try await chat.service.request(.DELETE, "/blocks/not-a-uuid", as: bea).code == "user_not_found")
            #expect(try await chat.service.request(.GET, "/blocks", as: nil).status == 401)

            #expect(try await answer { try await beas.unblockUser(path: .init(userId: ada.id.uuidString)) }.status == 204)
            #expect(try await answer { try await beas.unblockUser(path: .init(userId: ada.id.uuidString)) }.status == 204, "unblocking twice is fine")
            #expect(try await beas.listBlocks().ok.body.json.map(\.userId) == [cid.id.lowercased])
        }
    }

    @Test("a blocked user cannot create a group with the blocker or add them to one (403 blocked, nothing written); unknown addresses still answer as before")
    func addingIsRefused() async throws {
        try await withRunningChat { chat in
            let ada = try await chat.user(), bea = try await chat.user(), cid = try await chat.user(), dan = try await chat.user()
            let adas = chat.api(ada)
            let beaEmail = try await chat.email(of: bea), cidEmail = try await chat.email(of: cid)
            _ = try await chat.api(bea).blockUser(body: .json(.init(userId: ada.id.uuidString))).created

            // Creating a group that names the blocker: refused as a whole.
            let created = try await answer { try await adas.createGroup(body: .json(.init(name: "Trip", memberEmails: [cidEmail, beaEmail]))) }
            #expect(created.status == 403 && created.code == "blocked", "\(created.body)")
            #expect(try await adas.listGroups().ok.body.json.isEmpty)
            #expect(try await chat.api(cid).listGroups().ok.body.json.isEmpty)
            // An unknown address is still answered as unknown, whoever else the request names.
            let unknown = try await answer { try await adas.createGroup(body: .json(.init(name: "Trip", memberEmails: [beaEmail, "ghost@example.com"]))) }
            #expect(unknown.status == 409 && unknown.code == "unknown_emails")

            // Adding the blocker to a group: refused as a whole, also alongside someone else.
            let group = try await chat.group(owner: ada, admins: [dan], members: [cid]).uuidString
            func add(_ api: ChatClient, _ emails: [String]) async throws -> Answer<ChatOperations.AddMembers.Output> {
                try await answer { try await api.addMembers(path: .init(groupId: group), body: .json(.init(emails: emails))) }
            }
            let alone = try await add(adas, [beaEmail])
            #expect(alone.status == 403 && alone.code == "blocked")
            let together = try await add(adas, [cidEmail, beaEmail])
            #expect(together.status == 403 && together.code == "blocked")
            #expect(try await answer { try await chat.api(bea).getGroup(path: .init(groupId: group)) }.status == 404)
            #expect(try await adas.listMembers(path: .init(groupId: group)).ok.body.json.count == 3)

            // Someone else adds her: both stay members of what they share. Re-adding a member adds nobody, so nothing is refused.
            #expect(try await add(chat.api(dan), [beaEmail]).status == 200)
            let readd = try await add(adas, [beaEmail])
            #expect(try readd.status == 200 && readd.output.ok.body.json.added.isEmpty)
            #expect(try await chat.api(bea).listMembers(path: .init(groupId: group)).ok.body.json.contains { UUID(uuidString: $0.userId) == ada.id })

            // One-way: the blocker may still put the blocked user in a group.
            #expect(try await answer { try await chat.api(bea).createGroup(body: .json(.init(name: "Mine", memberEmails: [try await chat.email(of: ada)]))) }.status == 201)

            // Unblocked: adding works again.
            _ = try await chat.api(bea).unblockUser(path: .init(userId: ada.id.uuidString)).noContent
            #expect(try await answer { try await adas.createGroup(body: .json(.init(name: "Again", memberEmails: [beaEmail]))) }.status == 201)
        }
    }

    @Test("the blocked user's messages, voice files and group events are gone from the blocker's reads (fast path and generated route) and withheld in realtime; unblocking restores them")
    func hiddenAndWithheld() async throws {
        try await withRunningChat { chat in
            let ada = try await chat.user(), bea = try await chat.user(), cid = try await chat.user()
            let groupID = try await chat.group(owner: ada, members: [bea, cid])
            let group = groupID.uuidString
            let adas = chat.api(ada), beas = chat.api(bea), cids = chat.api(cid)
            _ = try await beas.blockUser(body: .json(.init(userId: ada.id.uuidString))).created

            let text = try await adas.sendTextMessage(path: .init(groupId: group), body: .json(.init(content: "from ada"))).created.body.json
            let voice = try await adas.sendVoiceMessage(path: .init(groupId: group), query: .init(duration: 2), body: .audioMp4(upload(AudioFixtures.m4a))).created.body.json
            _ = try await adas.editMessage(path: .init(groupId: group, messageId: text.id), body: .json(.init(content: "from ada, edited"))).ok
            let fromCid = try await cids.sendTextMessage(path: .init(groupId: group), body: .json(.init(content: "from cid"))).created.body.json
            let fromBea = try await beas.sendTextMessage(path: .init(groupId: group), body: .json(.init(content: "from bea"))).created.body.json

            let start = Date(timeIntervalSinceNow: 86400), end = Date(timeIntervalSinceNow: 90000)
            let range = ChatOperations.ListEvents.Input.Query(from: Date(timeIntervalSinceNow: -86400), to: Date(timeIntervalSinceNow: 7 * 86400))
            let event = try await adas.createEvent(body: .json(.init(title: "Ada's party", startsAt: start, endsAt: end, groupId: group))).created.body.json
            _ = try await adas.updateEvent(path: .init(eventId: event.id), body: .json(.init(title: "Ada's big party"))).ok
            let cidsEvent = try await cids.createEvent(body: .json(.init(title: "Cid's talk", startsAt: start, endsAt: end, groupId: group))).created.body.json

            // The history: the blocker reads neither of Ada's messages, by the fast path or by the generated route.
            let path = "/groups/\(group.lowercased())/messages"
            try await withRunningTwin(of: chat.service, .chat, configure: { $0.fastPaths = .off; $0.maxUploadBytes = chat.settings.maxUploadBytes }, definition: { _ in
                ChatService.definition(settings: chat.settings, storage: chat.storage)
            }) { generated in
                for query in ["", "?limit=1", "?after=0_\(UUID().uuidString.lowercased())"] {
                    let fast = try await chat.service.request(.GET, path + query, as: bea)
                    let reference = try await generated.request(.GET, path + query, as: bea)
                    #expect(fast.status == 200 && fast.bytes == reference.bytes, "\(query): \(String(buffer: fast.bytes)) / \(String(buffer: reference.bytes))")
                }
                let page = try await chat.service.request(.GET, path, as: bea).body["messages"]?.arrayValue?.compactMap { $0["id"]?.stringValue } ?? []
                #expect(page == [fromCid.id, fromBea.id])
                let older = try await chat.service.request(.GET, path + "?limit=1", as: bea)
                #expect(older.body["messages"]?.arrayValue?.compactMap { $0["id"]?.stringValue } == [fromBea.id] && older.body["has_more"] == .bool(true))
            }
            // Others still read everything; the blocked user still reads the blocker.
            #expect(try await cids.listMessages(path: .init(groupId: group)).ok.body.json.messages.map(\.id) == [text.id, voice.id, fromCid.id, fromBea.id])
            #expect(try await adas.listMessages(path: .init(groupId: group)).ok.body.json.messages.map(\.id).contains(fromBea.id))

            // Unread counts and the group list count only what she can read.
            #expect(try await beas.listUnreadCounts().ok.body.json.first { $0.groupId == group.lowercased() }?.unreadCount == 1)
            #expect(try await beas.listGroups().ok.body.json.first?.unreadCount == 1)
            #expect(try await cids.listUnreadCounts().ok.body.json.first?.unreadCount == 3)

            // The voice file: 404 for the blocker (stable URL and signing), still served to others.
            let voiceURL = try #require(voice.voiceUrl)
            #expect(try await chat.service.request(.GET, voiceURL, as: bea).status == 404)
            #expect(try await chat.service.request(.GET, voiceURL, as: cid).status == 200)
            let voicePath = ChatOperations.SignVoiceMessages.Input.Path(groupId: group.lowercased(), messageId: voice.id.lowercased())
            #expect(try await answer { try await beas.signVoiceMessages(path: voicePath, body: .json(.init(expiresIn: 60))) }.status == 404)

            // Group events Ada created: gone from her lists and single reads, not from others'.
            #expect(try await beas.listEvents(query: range).ok.body.json.map(\.id) == [cidsEvent.id])
            #expect(try await beas.listEvents(query: .init(from: range.from, to: range.to, groupId: group)).ok.body.json.map(\.id) == [cidsEvent.id])
            let hiddenEvent = try await answer { try await beas.getEvent(path: .init(eventId: event.id)) }
            #expect(hiddenEvent.status == 404 && hiddenEvent.code == "event_not_found")
            #expect(Set(try await cids.listEvents(query: range).ok.body.json.map(\.id)) == [event.id, cidsEvent.id])

            // Both stay members.
            #expect(try await beas.listMembers(path: .init(groupId: group)).ok.body.json.count == 3)

            // Realtime: what shows Ada's content is withheld from Bea, and only from her.
            let events = try await chat.service.events(of: .chat) { events in
                events.filter { $0.type == .messageSent }.count >= 4 && events.contains { $0.type == .calendarEventUpdated }
                    && events.filter { $0.type == .calendarEventCreated }.count >= 2
            }
            func withheld(_ type: EventType, _ id: String) throws -> [UUID]? {
                for received in events where received.type == type {
                    let envelope = try ColonyJSON.decoder().decode(WithheldProbe.self, from: Data(received.bytes))
                    if envelope.payload.message?.id == UUID(uuidString: id) || envelope.payload.event?.id == UUID(uuidString: id) { return received.header.withheldFrom }
                }
                Issue.record("no \(type) for \(id)")
                return nil
            }
            #expect(try withheld(.messageSent, text.id) == [bea.id])
            #expect(try withheld(.messageSent, voice.id) == [bea.id])
            #expect(try withheld(.messageEdited, text.id) == [bea.id])
            #expect(try withheld(.calendarEventCreated, event.id) == [bea.id])
            #expect(try withheld(.calendarEventUpdated, event.id) == [bea.id])
            #expect(try withheld(.messageSent, fromCid.id) == nil)
            #expect(try withheld(.messageSent, fromBea.id) == nil)
            #expect(try withheld(.calendarEventCreated, cidsEvent.id) == nil)

            // Unblocked: everything is back, and what Ada sends next reaches Bea.
            _ = try await beas.unblockUser(path: .init(userId: ada.id.uuidString)).noContent
            #expect(try await beas.listMessages(path: .init(groupId: group)).ok.body.json.messages.map(\.id) == [text.id, voice.id, fromCid.id, fromBea.id])
            #expect(try await chat.service.request(.GET, path, as: bea).body["messages"]?.arrayValue?.count == 4)
            #expect(try await chat.service.request(.GET, voiceURL, as: bea).status == 200)
            #expect(try await answer { try await beas.getEvent(path: .init(eventId: event.id)) }.status == 200)
            #expect(try await beas.listUnreadCounts().ok.body.json.first?.unreadCount == 3)
            let after = try await adas.sendTextMessage(path: .init(groupId: group), body: .json(.init(content: "hello again"))).created.body.json
            let later = try await chat.service.events(of: .chat) { events in
                events.contains { $0.type == .messageSent && (try? $0.decode(MessageSent.self).payload.message.id) == UUID(uuidString: after.id) }
            }
            let sent = try #require(later.first { $0.type == .messageSent && (try? $0.decode(MessageSent.self).payload.message.id) == UUID(uuidString: after.id) })
            #expect(sent.header.withheldFrom == nil)
        }
    }
}

/// Just enough of a message or calendar event's payload to find it by id.
private struct WithheldProbe: Decodable {
    struct Identified: Decodable { var id: UUID }
    struct Payload: Decodable {
        var message: Identified?
        var event: Identified?
    }
    var payload: Payload
}
