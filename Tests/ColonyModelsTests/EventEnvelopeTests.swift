import ColonyModels
import Foundation
import Testing

@Suite("Event envelope")
struct EventEnvelopeTests {
    let userID = UUID()
    let occurredAt = Date(timeIntervalSince1970: 1_790_000_000.125)

    @Test("user_registered round-trips through JSON")
    func userRegisteredRoundTrip() throws {
        let event = EventEnvelope(
            app: .habithive,
            aggregateId: userID.uuidString.lowercased(),
            occurredAt: occurredAt,
            actor: userID,
            payload: UserRegistered(userId: userID, app: .habithive, email: nil, phone: "+14155550100", phoneHash: String(repeating: "ab", count: 32), userMetadata: ["full_name": .string("Ada")], createdAt: occurredAt)
        )
        let decoded = try ReceivedEvent(bytes: event.encoded()).decode(UserRegistered.self)
        #expect(decoded == event)
        #expect(decoded.type == "user_registered")
        #expect(decoded.source == .auth)
        #expect(decoded.schemaVersion == 1)
    }

    @Test("user_updated and user_deleted round-trip")
    func otherAuthEvents() throws {
        let updated = EventEnvelope(app: .unify, aggregateId: userID.uuidString, occurredAt: occurredAt, payload: UserUpdated(userId: userID, app: .unify, email: "a@example.com", phone: nil, phoneHash: nil, userMetadata: [:], updatedAt: occurredAt))
        #expect(try ReceivedEvent(bytes: updated.encoded()).decode(UserUpdated.self) == updated)
        let deleted = EventEnvelope(app: .unify, aggregateId: userID.uuidString, occurredAt: occurredAt, payload: UserDeleted(userId: userID, app: .unify, deletedAt: occurredAt))
        #expect(try ReceivedEvent(bytes: deleted.encoded()).decode(UserDeleted.self) == deleted)
    }

    @Test("wire format uses snake_case keys and ISO 8601 UTC times")
    func wireFormat() throws {
        let event = EventEnvelope(app: .mycirclee, aggregateId: "k", occurredAt: occurredAt, payload: UserDeleted(userId: userID, app: .mycirclee, deletedAt: occurredAt))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(event.encoded())) as? [String: Any])
        #expect(Set(object.keys) == ["id", "type", "source", "app", "aggregate_id", "occurred_at", "schema_version", "payload"])
        #expect(object["occurred_at"] as? String == "2026-09-21T14:13:20.125Z")
        #expect(object["type"] as? String == "user_deleted")
        let payload = try #require(object["payload"] as? [String: Any])
        #expect(payload["user_id"] as? String != nil)
        #expect(payload["deleted_at"] as? String == "2026-09-21T14:13:20.125Z")
    }

    @Test("decoding with the wrong payload type fails clearly")
    func typeMismatch() throws {
        let event = EventEnvelope(app: .unify, aggregateId: "k", payload: UserDeleted(userId: userID, app: .unify, deletedAt: occurredAt))
        let received = try ReceivedEvent(bytes: event.encoded())
        #expect(throws: EventDecodingError.typeMismatch(expected: .userRegistered, actual: .userDeleted)) {
            try received.decode(UserRegistered.self)
        }
    }

    @Test("one topic per source service")
    func topics() {
        let event = EventEnvelope(app: .unify, aggregateId: "k", payload: UserDeleted(userId: userID, app: .unify, deletedAt: occurredAt))
        #expect(event.topic() == "colony.auth")
        #expect(event.topic(prefix: "t_1") == "t_1.auth")
        #expect(EventCatalogue.source(of: .userRegistered) == .auth)
    }

    @Test("event ids are version 7 UUIDs that sort by time")
    func timeOrderedIDs() {
        let earlier = UUID.timeOrdered(at: Date(timeIntervalSince1970: 1_700_000_000))
        let later = UUID.timeOrdered(at: Date(timeIntervalSince1970: 1_700_000_001))
        #expect(earlier.uuidString.lowercased() < later.uuidString.lowercased())
        #expect(earlier.uuidString.dropFirst(14).first == "7")
        #expect(abs(earlier.timeOrderedDate!.timeIntervalSince1970 - 1_700_000_000) < 0.001)
        let ids = (0..<1000).map { _ in UUID.timeOrdered() }
        #expect(Set(ids).count == 1000)
    }

    @Test("times keep whole milliseconds through a round trip, before and after 1970")
    func millisecondTimes() throws {
        for seconds in [1_790_000_000.123, 1_790_000_000.0, 1_790_000_000.9996, -1.5, 0] {
            let date = Date(timeIntervalSince1970: seconds)
            let text = ISO8601.format(date)
            #expect(ISO8601.parse(text) == ISO8601.wholeMilliseconds(date), "\(text)")
        }
        #expect(ISO8601.format(Date(timeIntervalSince1970: 1_790_000_000.123)) == "2026-09-21T14:13:20.123Z")
        #expect(ISO8601.format(Date(timeIntervalSince1970: -1.5)) == "1969-12-31T23:59:58.500Z")
        #expect(ISO8601.parse("2026-09-21T14:13:20Z") == Date(timeIntervalSince1970: 1_790_000_000))
    }

    @Test("times are read as RFC 3339 date-times, every one of them and nothing else")
    func rfc3339() {
        let base = Date(timeIntervalSince1970: 1_790_000_000)
        for text in ["2026-09-21T14:13:20Z", "2026-09-21t14:13:20z", "2026-09-21T16:13:20+02:00", "2026-09-21T00:52:20-13:21",
                     "2026-09-21T14:13:20.000000Z", "2026-09-21T14:13:19.9999Z"] {
            #expect(ISO8601.parse(text) == base, "\(text)")
        }
        #expect(ISO8601.parse("0345-03-06T18:04:54-21:24") != nil)
        for text in ["2026-09-21T14:13:20", "2026-09-21T14:13:20+0200", "2026-09-21T14:13Z", "2026-02-30T00:00:00Z", "2026-09-21 14:13:20Z",
                     "2026-09-21T24:00:00Z", "2026-09-21T14:13:20+24:00", "2026-09-21T14:13:20.Z", "+2026-09-21T14:13:20Z", "2026-09-21T14:13:20Z ", "2016-12-31T23:59:60Z"] {
            #expect(ISO8601.parse(text) == nil, "\(text)")
        }
    }

    @Test("free-form JSON values round-trip")
    func jsonValue() throws {
        let value: JSONValue = .object(["a": .array([.number(1), .bool(true), .null, .string("x")])])
        let data = try JSONEncoder().encode(value)
        #expect(try JSONDecoder().decode(JSONValue.self, from: data) == value)
    }
}
