import ColonyModels
import Foundation
import Testing

/// Values from outside (client JSON, other services' events, imported rows) reach these helpers;
/// none of them may trap on an extreme value (issue 33: `Int(_:)` of a Double, unchecked ranges).
@Suite("ColonyModels: no trap on extreme values")
struct ColonyModelsTrapTests {
    @Test("JSONValue.intValue is nil for numbers that are not a whole Int (1e300, -1e300, 1.5, NaN), the number otherwise")
    func intValue() throws {
        let decoded = try JSONDecoder().decode([String: JSONValue].self, from: Data(#"{"huge":1e300,"tiny":-1e300,"half":1.5,"whole":42,"negative":-7}"#.utf8))
        #expect(decoded["huge"]?.intValue == nil)
        #expect(decoded["tiny"]?.intValue == nil)
        #expect(decoded["half"]?.intValue == nil)
        #expect(decoded["whole"]?.intValue == 42)
        #expect(decoded["negative"]?.intValue == -7)
        #expect(JSONValue.number(.nan).intValue == nil)
        #expect(JSONValue.number(.infinity).intValue == nil)
        #expect(JSONValue.number(9_223_372_036_854_775_807).intValue == nil)  // 2^63 as a Double
    }

    @Test("a time-ordered id from a time far outside its 48 bits, or NaN, is made without a trap")
    func timeOrderedExtremes() {
        for seconds in [1e300, -1e300, Double.nan, Double.infinity, -Double.infinity, 1e15] {
            let id = UUID.timeOrdered(at: Date(timeIntervalSince1970: seconds))
            #expect(id.timeOrderedDate != nil, "\(seconds)")
        }
        #expect(UUID.timeOrdered(at: Date(timeIntervalSince1970: -5)).timeOrderedDate == Date(timeIntervalSince1970: 0))
        let now = Date(timeIntervalSince1970: 1_790_000_000.125)
        #expect(UUID.timeOrdered(at: now).timeOrderedDate == now)
    }

    @Test("times at the edges of what the parser takes (years 0000 and 9999, ±23:59 offsets) parse and format without a trap")
    func timeEdges() throws {
        for text in ["0000-01-01T00:00:00+23:59", "0000-01-01T00:00:00Z", "9999-12-31T23:59:59.999999999-23:59", "9999-12-31T23:59:59Z"] {
            let date = try #require(ISO8601.parse(text), "\(text)")
            #expect(!ISO8601.format(date).isEmpty)
            #expect(try ColonyJSON.encode(["at": date]).isEmpty == false)
            #expect(LocalDate.utcDay(of: date).year >= -1)
        }
        #expect(ISO8601.parse("99999-01-01T00:00:00Z") == nil)
    }

    @Test("an event nested far deeper than any payload is refused by the decoder (a dead letter), not a stack overflow")
    func deepEvent() {
        let header = #"{"id":"01a21cc2-e264-7000-8000-000000000001","type":"user_registered","source":"auth","aggregate_id":"x","occurred_at":"2026-11-27T12:00:00.000Z","schema_version":1,"payload":"#
        for depth in [600, 100_000] {
            let bytes = Array((header + String(repeating: "[", count: depth) + String(repeating: "]", count: depth) + "}").utf8)
            // Foundation's parser stops at 512 levels: reading the header already fails.
            #expect(throws: (any Error).self) { try ReceivedEvent(bytes: bytes).decode(UserRegistered.self) }
        }
    }
}
