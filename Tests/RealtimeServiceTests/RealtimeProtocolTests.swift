import ColonyModels
import ColonyPlatform
import Foundation
import Testing
@testable import RealtimeService

@Suite("Realtime: Phoenix protocol and postgres_changes rules without a socket")
struct RealtimeProtocolTests {
    func json(_ text: String) throws -> JSONValue {
        try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
    }

    @Test("serializer 1.0.0 objects and 2.0.0 arrays decode and encode")
    func serializers() throws {
        let v1 = try PhoenixSerializer.v1.decode(#"{"topic":"realtime:room","event":"phx_join","payload":{"config":{}},"ref":"1","join_ref":"1"}"#)
        #expect(v1 == PhoenixMessage(joinRef: "1", ref: "1", topic: "realtime:room", event: "phx_join", payload: .object(["config": .object([:])])))
        let v2 = try PhoenixSerializer.v2.decode(#"["3","4","realtime:room","broadcast",{"type":"broadcast"}]"#)
        #expect(v2.joinRef == "3" && v2.ref == "4" && v2.topic == "realtime:room" && v2.event == "broadcast")
        #expect(throws: PhoenixProtocolError.self) { try PhoenixSerializer.v2.decode(#"{"topic":"x","event":"y"}"#) }
        #expect(throws: PhoenixProtocolError.self) { try PhoenixSerializer.v1.decode("not json") }
        let reply = PhoenixReplies.ok(v2, response: .object(["postgres_changes": .array([])]))
        #expect(try json(PhoenixSerializer.v2.encode(reply)) == json(#"["3","4","realtime:room","phx_reply",{"response":{"postgres_changes":[]},"status":"ok"}]"#))
        #expect(try json(PhoenixSerializer.v1.encode(reply)) == json(#"{"topic":"realtime:room","event":"phx_reply","payload":{"response":{"postgres_changes":[]},"status":"ok"},"ref":"4","join_ref":"3"}"#))
        #expect(PhoenixSerializer(vsn: nil) == .v1 && PhoenixSerializer(vsn: "2.0.0") == .v2 && PhoenixSerializer(vsn: "3.0.0") == nil)
        #expect(JSONText.encode(.object(["a": .number(12), "b": .string("q\"\n")])) == #"{"a":12,"b":"q\"\n"}"#)
    }

    @Test("system, error, close replies have Supabase's shapes")
    func replies() throws {
        let system = PhoenixReplies.system(topic: "realtime:room", joinRef: "1", extension: "postgres_changes", status: "ok", message: "Subscribed to PostgreSQL")
        #expect(system.payload == .object(["extension": "postgres_changes", "status": "ok", "message": "Subscribed to PostgreSQL", "channel": "room"].mapValues(JSONValue.string)))
        let request = PhoenixMessage(joinRef: "1", ref: "2", topic: "realtime:room", event: "phx_join", payload: .object([:]))
        #expect(PhoenixReplies.error(request, reason: "nope").payload == .object(["status": .string("error"), "response": .object(["reason": .string("nope")])]))
        #expect(PhoenixReplies.close(topic: "realtime:room", joinRef: "1").event == "phx_close")
    }

    @Test("join config: broadcast, presence, postgres_changes with ids")
    func joinConfig() throws {
        let payload = try json(#"""
            {"config":{"broadcast":{"self":true,"ack":true},"presence":{"key":"me"},"private":false,
             "postgres_changes":[{"event":"INSERT","schema":"public","table":"message","filter":"group_id=eq.A1"},{"event":"*","schema":"public"}]},
             "access_token":"t"}
            """#)
        let config = try JoinConfig.parse(payload)
        #expect(config.broadcastSelf && config.broadcastAck && config.presenceKey == "me" && config.presenceEnabled)
        #expect(config.postgresChanges.count == 2)
        let first = config.postgresChanges[0]
        #expect(first.event == .insert && first.table == "message" && first.filter == RowFilter(column: "group_id", op: .eq, values: ["A1"]))
        #expect(first.id > 0 && first.id != config.postgresChanges[1].id)
        #expect(first.replyJSON == .object(["id": .number(Double(first.id)), "event": "INSERT", "schema": "public", "table": "message", "filter": "group_id=eq.A1"].mapValues { $0 }))
        #expect(throws: PhoenixProtocolError.self) { try JoinConfig.parse(json(#"{"config":{"postgres_changes":[{"event":"UPSERT","schema":"public"}]}}"#)) }
        #expect(throws: PhoenixProtocolError.self) { try JoinConfig.parse(json(#"{"config":{"postgres_changes":[{"event":"*","schema":"public","filter":"id=like.5"}]}}"#)) }
        #expect(try !JoinConfig.parse(.object([:])).presenceEnabled)
    }

    @Test("filters: eq, neq, lt, lte, gt, gte, in; UUIDs compare case-insensitively")
    func filters() throws {
        let id = UUID()
        let row: [String: JSONValue] = ["group_id": .string(id.uuidString.lowercased()), "n": .number(5), "name": .string("b"), "ok": .bool(true), "gone": .null]
        func passes(_ text: String) throws -> Bool { try RowFilter.parse(text).matches(row) }
        #expect(try passes("group_id=eq.\(id.uuidString)"))
        #expect(try !passes("group_id=eq.\(UUID().uuidString)"))
        #expect(try passes("n=neq.4") && !passes("n=neq.5"))
        #expect(try passes("n=lt.6") && !passes("n=lt.5") && passes("n=lte.5"))
        #expect(try passes("n=gt.4") && !passes("n=gt.5") && passes("n=gte.5"))
        #expect(try passes("name=in.(a,b,c)") && !passes("name=in.(x,y)") && passes("n=in.(1,5)"))
        #expect(try passes("ok=eq.true") && !passes("gone=eq.x") && !passes("missing=eq.1"))
        #expect(throws: PhoenixProtocolError.self) { try RowFilter.parse("nonsense") }
    }

    @Test("a chat message becomes a `message` INSERT for the group's members, with the postgres_changes payload")
    func messageChange() throws {
        let group = UUID(), sender = UUID()
        let row = MessageRow(id: UUID(), groupId: group, content: "hi", sentBy: sender, sentAt: Date(), isEdited: false, messageType: .text, voiceDuration: nil, voiceUrl: nil)
        let envelope = EventEnvelope(app: .unify, aggregateId: group.uuidString.lowercased(), payload: MessageSent(message: row, senderDisplayName: "S"))
        let event = try ReceivedEvent(bytes: envelope.encoded())
        let changes = try RowChanges.changes(for: event)
        #expect(changes.count == 1)
        let change = try #require(changes.first)
        #expect(change.table == "message" && change.operation == .insert && change.app == .unify)
        #expect(change.audience == .members(.group, group))
        #expect(change.record["group_id"] == .string(group.uuidString.lowercased()) && change.record["content"] == .string("hi"))
        let data = change.dataJSON
        #expect(data["schema"] == "public" && data["table"] == "message" && data["eventType"] == "INSERT" && data["type"] == "INSERT")
        #expect(data["new"] == .object(change.record) && data["record"] == .object(change.record) && data["errors"] == .null && data["old"] == .object([:]))
        #expect(data["commit_timestamp"]?.stringValue?.hasSuffix("Z") == true)
        #expect(data["columns"]?.arrayValue?.contains(.object(["name": "group_id", "type": "uuid"].mapValues(JSONValue.string))) == true)
        let binding = try PostgresChangeBinding.parse(json(#"{"event":"INSERT","schema":"public","table":"message","filter":"group_id=eq.\#(group.uuidString)"}"#))
        #expect(binding.matches(change))
        #expect(try !PostgresChangeBinding.parse(json(#"{"event":"DELETE","schema":"public","table":"message"}"#)).matches(change))
        #expect(try !PostgresChangeBinding.parse(json(#"{"event":"*","schema":"public","table":"posts"}"#)).matches(change))
        let payload = try json(change.payloadPrefix + "[\(binding.id)]}")
        #expect(payload["ids"] == .array([.number(Double(binding.id))]) && payload["data"] == data)
        // a delete carries the old row; filters apply to it
        let deleted = try RowChanges.changes(for: ReceivedEvent(bytes: EventEnvelope(app: .unify, aggregateId: "g", payload: MessageDeleted(message: row, deletedBy: sender)).encoded()))[0]
        #expect(deleted.operation == .delete && deleted.record.isEmpty && deleted.oldRecord["id"] != nil && binding.matches(deleted) == false)
        #expect(try PostgresChangeBinding.parse(json(#"{"event":"DELETE","schema":"public","table":"message","filter":"group_id=eq.\#(group)"}"#)).matches(deleted))
    }

    @Test("a DM a moderator removed (dm_deleted) is a dm_messages DELETE for the thread's two parties only")
    func dmDeleted() throws {
        let circle = UUID(), thread = UUID(), sender = UUID(), recipient = UUID()
        let row = DMMessageRow(id: UUID(), threadId: thread, senderId: sender, body: "rude", replyToId: nil, createdAt: Date(), readAt: nil)
        let event = try ReceivedEvent(bytes: EventEnvelope(app: .mycirclee, aggregateId: circle.lowercased, payload: DMDeleted(
            circleId: circle, threadId: thread, message: row, participantIds: [sender, recipient])).encoded())
        let change = try #require(try RowChanges.changes(for: event).first)
        #expect(change.table == "dm_messages" && change.operation == .delete && change.audience == .only([sender, recipient]))
        #expect(change.oldRecord["id"] == .string(row.id.lowercased) && change.record.isEmpty)
    }

    @Test("an event withheld from those who blocked its author leaves them out of every row change's audience")
    func withheldFromBlockers() throws {
        let group = UUID(), sender = UUID(), blocker = UUID()
        let row = MessageRow(id: UUID(), groupId: group, content: "hi", sentBy: sender, sentAt: Date(), isEdited: false, messageType: .text, voiceDuration: nil, voiceUrl: nil)
        let withheld = try ReceivedEvent(bytes: EventEnvelope(app: .unify, aggregateId: group.lowercased, withheldFrom: [blocker],
                                                              payload: MessageSent(message: row, senderDisplayName: "S")).encoded())
        #expect(withheld.header.withheldFrom == [blocker])
        let change = try #require(try RowChanges.changes(for: withheld).first)
        #expect(change.audience.withheldFrom == [blocker] && change.audience.scope?.id == group)
        // None withheld: the field is left out of the event, and the audience is the group's.
        let envelope = EventEnvelope(app: .unify, aggregateId: group.lowercased, withheldFrom: [], payload: MessageSent(message: row, senderDisplayName: "S"))
        #expect(try !String(decoding: envelope.encoded(), as: UTF8.self).contains("withheld_from"))
        #expect(try RowChanges.changes(for: ReceivedEvent(bytes: envelope.encoded())).first?.audience.withheldFrom.isEmpty == true)
    }

    @Test("a hive check-in withheld from a blocker keeps back only the member's feed line: the member-day row is the hive's state")
    func withheldFeedLineOnly() throws {
        let hive = UUID(), member = UUID(), blocker = UUID()
        let day = HiveMemberDayRow(hiveId: hive, userId: member, dayDate: try #require(LocalDate("2026-11-29")), value: 1)
        let line = ActivityEventRow(id: UUID(), actorId: member, hiveId: hive, habitId: nil, type: .habitCompleted, data: [:], createdAt: Date())
        let event = try ReceivedEvent(bytes: EventEnvelope(app: .habithive, aggregateId: hive.lowercased, actor: member, withheldFrom: [blocker],
                                                           payload: HiveDayLogged(operation: .insert, day: day, activity: line)).encoded())
        let changes = try RowChanges.changes(for: event)
        #expect(changes.map(\.table) == ["hive_member_days", "activity_events"])
        for change in changes {
            #expect(change.audience.withheldFrom == (change.table == "activity_events" ? [blocker] : []), "\(change.table)")
        }
    }

    @Test("membership events become projection changes")
    func membership() throws {
        let group = UUID(), user = UUID()
        let member = GroupMemberRow(groupId: group, userId: user, role: .user, joinedAt: Date(), lastReadAt: Date())
        let added = try ReceivedEvent(bytes: EventEnvelope(app: .unify, aggregateId: "g", payload: GroupMemberAdded(member: member, groupName: "n")).encoded())
        #expect(try Memberships.changes(for: added) == [.add(.group, group, [user])])
        let removed = try ReceivedEvent(bytes: EventEnvelope(app: .unify, aggregateId: "g", payload: GroupMemberRemoved(member: member, reason: .removed)).encoded())
        #expect(try Memberships.changes(for: removed) == [.remove(.group, group, user)])
        // the removed member still sees their own removal
        #expect(try RowChanges.changes(for: removed).first?.audience == .members(.group, group, plus: [user]))
    }
}
