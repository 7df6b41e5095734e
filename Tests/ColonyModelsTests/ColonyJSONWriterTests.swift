import ColonyModels
import Foundation
import Testing

/// `ColonyJSON.encode` writes every response and event: it must be byte for byte what Foundation's
/// JSONEncoder with Colony's settings writes, except that UUIDs are lower case (Foundation writes
/// `uuidString`, upper case).
@Suite("ColonyJSON.encode")
struct ColonyJSONWriterTests {
    /// Foundation's output with Colony's settings, each UUID it wrote lower-cased (the test values
    /// hold no other upper-case UUID-shaped text).
    func foundation<T: Encodable>(_ value: T) throws -> String {
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(ISO8601.format(date))
        }
        encoder.outputFormatting = [.sortedKeys]
        return lowercasingUUIDs(String(decoding: try encoder.encode(value), as: UTF8.self))
    }

    func lowercasingUUIDs(_ text: String) -> String {
        text.replacing(/[0-9A-F]{8}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{12}/) { $0.output.lowercased() }
    }

    func fast<T: Encodable>(_ value: T) throws -> String {
        String(decoding: try ColonyJSON.encode(value), as: UTF8.self)
    }

    func expectSame<T: Encodable>(_ value: T, sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(try fast(value) == foundation(value), sourceLocation: sourceLocation)
    }

    struct Page: Encodable {
        struct Sender: Encodable {
            var id: UUID
            var displayName: String
        }

        struct Item: Encodable {
            var id: UUID
            var groupId: UUID
            var content: String
            var sentAt: Date
            var isEdited: Bool
            var voiceDuration: Double?
            var voiceUrl: String?
            var user: Sender
            var cursor: String?
            var tags: [String]
            var counts: [String: Int]
            var byUser: [UUID: Int]
            var link: URL?
            var blob: Data?
        }

        var messages: [Item]
        var hasMore: Bool
        var olderCursor: String?
        var newerCursor: String?
    }

    @Test("a history-like page, optionals present and absent, nested objects, dictionaries, URLs and data")
    func page() throws {
        let items = (0..<60).map { n in
            Page.Item(id: UUID(), groupId: UUID(), content: "Message \(n): \"quoted\" \\ back/slash\n\t\u{01} é 😀 \u{2028}",
                      sentAt: Date(timeIntervalSince1970: 1_790_000_000 + Double(n) * 0.001 + Double.random(in: 0...1e6)),
                      isEdited: n % 3 == 0, voiceDuration: n % 2 == 0 ? nil : Double(n) / 7, voiceUrl: n % 4 == 0 ? "https://x.example/v/\(n).m4a?a=b&c" : nil,
                      user: .init(id: UUID(), displayName: "User \(n)"), cursor: n % 5 == 0 ? nil : "\(n)_\(UUID().uuidString.lowercased())",
                      tags: ["a", "B", "c/d"], counts: ["zeta": n, "Alpha": 2, "camelCaseKey": 3, "snake_key": 4, "a10": 5, "a2": 6],
                      byUser: [UUID(): n], link: n % 2 == 0 ? URL(string: "https://colony.example/a b?q=1") : nil,
                      blob: n % 3 == 0 ? Data((0..<UInt8(n)).map { $0 }) : nil)
        }
        try expectSame(Page(messages: items, hasMore: true, olderCursor: "x", newerCursor: nil))
        try expectSame(Page(messages: [], hasMore: false, olderCursor: nil, newerCursor: nil))
    }

    @Test("numbers: Double and Float as Foundation writes them, integers of every width")
    func numbers() throws {
        var doubles: [Double] = [0, -0.0, 1, 100, 0.1, 2.5, 1e15, 1e16, 3e16, 1e21, 1.5e-7, 1e-6, 0.0001, 5e-324, .greatestFiniteMagnitude, 9_007_199_254_740_993]
        for _ in 0..<5000 {
            doubles.append(Double(bitPattern: UInt64.random(in: 0...UInt64.max)))
            doubles.append(Double.random(in: -1000...1000))
            doubles.append(Double(Int.random(in: -100_000...100_000)) / 100)
        }
        try expectSame(doubles.filter(\.isFinite))
        try expectSame((0..<2000).map { _ in Float(bitPattern: UInt32.random(in: 0...UInt32.max)) }.filter(\.isFinite))
        try expectSame([Int.min, Int.max, 0, -1])
        try expectSame([Int64.min, Int64.max])
        try expectSame([UInt64.max, 0])
        try expectSame([Int8.min, Int8.max])
        try expectSame([UInt16.max])
        try expectSame(Decimal(string: "12.50")!)
        #expect(throws: EncodingError.self) { try ColonyJSON.encode([Double.nan]) }
        #expect(throws: EncodingError.self) { try ColonyJSON.encode(["x": Double.infinity]) }
    }

    @Test("every control character and the escapes Foundation writes")
    func strings() throws {
        try expectSame((0..<0x80).map { String(UnicodeScalar(UInt8($0))) })
        try expectSame(["", "/", "a/b", "\u{7F}", "ß", "\u{FEFF}", "🇺🇸"])
    }

    @Test("times as ISO8601.format writes them: leap days, ends of years and centuries, before 1970, the years 0 and 9999 and past them")
    func times() throws {
        var dates = [-62_167_219_200.0, -62_167_219_200.5, 253_402_300_799.999, 253_402_300_800, -1.5, -0.0004, 0, 0.0005, 951_782_400, 951_868_799.9996,
                     4_107_542_400, 1_790_000_000.123, -2_208_988_800, 946_684_799.999, 1_078_012_800].map { Date(timeIntervalSince1970: $0) }
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2000 { dates.append(Date(timeIntervalSince1970: Double.random(in: -70_000_000_000...260_000_000_000, using: &generator))) }
        try expectSame(dates)
    }

    @Test("strings longer than a word: an escape at every position, beside bytes past 0x7F and the edges of the ranges")
    func longStrings() throws {
        let plain = "abcdefghijklmnopqrstu"
        var strings = [plain, String(repeating: "é", count: 13), String(repeating: " !~\u{7F}", count: 5), String(repeating: "😀", count: 5)]
        for escape in ["\"", "\\", "/", "\n", "\u{01}", "\u{1F}", "\t"] {
            for position in 0...plain.count {
                var text = plain
                text.insert(contentsOf: escape, at: text.index(text.startIndex, offsetBy: position))
                strings.append(text)
            }
            strings.append(String(repeating: "é", count: 9) + escape + String(repeating: "ü", count: 9))
        }
        try expectSame(strings)
    }

    @Test("keys: snake_case conversion with Foundation's quirks, sorted by bytes, dictionaries verbatim")
    func keys() throws {
        struct Keys: Encodable {
            var a: Int = 1
            var userID: Int = 2
            var URLValue: Int = 3
            var picture2x: Int = 4
            var a1B: Int = 5
            var ABCdef: Int = 6
            var hasMore: Int = 7
            var hash: Int = 8
            var _private: Int = 9
            var zeta: Int = 10
            var Zeta: Int = 11
        }
        try expectSame(Keys())
        try expectSame(["someKey": 1, "other_key": 2, "Z": 3, "a b": 4, "a": 5])
        try expectSame([1: "one", 10: "ten", 2: "two"])
    }

    @Test("JSON values, top-level fragments and optionals")
    func values() throws {
        let value: JSONValue = .object(["full_name": .string("Ada"), "camelKey": .array([.null, .bool(true), .number(1.25), .number(3), .object([:])])])
        try expectSame(value)
        try expectSame("fragment")
        try expectSame(42)
        try expectSame(Optional<Int>.none)
        try expectSame([Optional<String>.none, "x"])
        try expectSame([[String: Int]]())
        try expectSame(["k": [String: Int]()])
    }

    @Test("a hand-written encode(to:): a key twice, encodeNil, a nested container and a super-encoder")
    func handWritten() throws {
        struct Custom: Encodable {
            enum Keys: String, CodingKey { case first, secondKey, nested, list }
            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: Keys.self)
                try container.encode(1, forKey: .first)
                try container.encode(2, forKey: .first)
                try container.encodeNil(forKey: .secondKey)
                var nested = container.nestedContainer(keyedBy: Keys.self, forKey: .nested)
                try nested.encode("x", forKey: .secondKey)
                var list = container.nestedUnkeyedContainer(forKey: .list)
                try list.encode(1)
                try list.encodeNil()
                var inner = list.nestedContainer(keyedBy: Keys.self)
                try inner.encode(true, forKey: .first)
            }
        }
        struct WithSuper: Encodable {
            enum Keys: String, CodingKey { case value }
            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: Keys.self)
                try container.encode(1, forKey: .value)
                try Custom().encode(to: container.superEncoder())
            }
        }
        try expectSame(Custom())
        try expectSame(WithSuper())
    }

    @Test("UUID(canonical:) reads what UUID(uuidString:) reads, and refuses what it refuses (and a space sscanf lets through)")
    func canonicalUUID() {
        for _ in 0..<1000 {
            let id = UUID()
            #expect(UUID(canonical: id.uuidString) == id && UUID(canonical: id.lowercased) == id)
        }
        let text = "0192a7d6-AbCd-7000-8000-00000000000f"
        #expect(UUID(canonical: text) == UUID(uuidString: text) && UUID(canonical: text) != nil)
        #expect(UUID(canonical: text.dropFirst(0)) == UUID(uuidString: text), "a Substring reads the same")
        let refused = ["", "0192a7d6-abcd-7000-8000-00000000000", "0192a7d6-abcd-7000-8000-00000000000f0", "0192a7d6abcd-7000-8000-00000000000f0",
                       "0192a7d6-abcd-7000-8000_00000000000f", "0192a7g6-abcd-7000-8000-00000000000f", "{0192a7d6-abcd-7000-8000-00000000000f}",
                       "0192a7d6-abcd-7000-8000-00000000000é"]
        for bad in refused {
            #expect(UUID(canonical: bad) == nil && UUID(uuidString: bad) == nil, "\(bad)")
        }
        // Foundation's sscanf reads " 1" as the byte 01; an id with a space in it is not one.
        #expect(UUID(uuidString: " 192a7d6-abcd-7000-8000-00000000000f") != nil && UUID(canonical: " 192a7d6-abcd-7000-8000-00000000000f") == nil)
    }

    @Test("UUID.lowercased is uuidString.lowercased()")
    func lowercasedUUID() throws {
        for _ in 0..<1000 {
            let id = UUID()
            #expect(id.lowercased == id.uuidString.lowercased())
        }
        #expect(UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)).lowercased == "00000000-0000-0000-0000-000000000000")
        #expect(UUID(uuid: (255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255)).lowercased == "ffffffff-ffff-ffff-ffff-ffffffffffff")
        let counting = UUID(uuid: (0x01, 0x23, 0x45, 0x67, 0x89, 0xAB, 0xCD, 0xEF, 0xFE, 0xDC, 0xBA, 0x98, 0x76, 0x54, 0x32, 0x10))
        #expect(counting.lowercased == "01234567-89ab-cdef-fedc-ba9876543210")
    }

    @Test("ids are lower case in every path that writes JSON: the tree, a hand writer, a dictionary's keys, ColonyJSON.encoder(), errors")
    func lowerCaseIDs() throws {
        let counting = UUID(uuid: (0x01, 0x23, 0x45, 0x67, 0x89, 0xAB, 0xCD, 0xEF, 0xFE, 0xDC, 0xBA, 0x98, 0x76, 0x54, 0x32, 0x10))
        let text = "01234567-89ab-cdef-fedc-ba9876543210"
        #expect(try ColonyJSON.encode([counting]) == Array(#"["\#(text)"]"#.utf8))
        #expect(try ColonyJSON.encode([counting: 1]) == Array(#"["\#(text)",1]"#.utf8), "Foundation writes a UUID-keyed dictionary as an array of pairs")
        #expect(try ColonyJSON.encode(["k": Optional(counting)]) == Array(#"{"k":"\#(text)"}"#.utf8))
        let written = EveryWrite(count: 1, escaped: "", id: counting, items: [], late: Date(timeIntervalSince1970: 0), note: nil, ok: true, ratio: 1,
                                 when: Date(timeIntervalSince1970: 0))
        #expect(String(decoding: try ColonyJSON.encode(written), as: UTF8.self).contains(#""id":"\#(text)""#))
        #expect(String(decoding: try ColonyJSON.encoder().encode(written), as: UTF8.self).contains(#""id":"\#(text)""#))
        // Through a super-encoder and beside a Decimal (both once left to Foundation's encoder).
        struct Mixed: Encodable {
            enum Keys: String, CodingKey { case amount, owner }
            let id: UUID
            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: Keys.self)
                try container.encode(Decimal(string: "1.5")!, forKey: .amount)
                var owner = container.superEncoder(forKey: .owner).singleValueContainer()
                try owner.encode(id)
            }
        }
        #expect(try ColonyJSON.encode(Mixed(id: counting)) == Array(#"{"amount":1.5,"owner":"\#(text)"}"#.utf8))
        // A printed (pretty) encoder keeps them lower case too.
        let pretty = ColonyJSON.encoder()
        pretty.outputFormatting = [.prettyPrinted, .sortedKeys]
        let printed = String(decoding: try pretty.encode(["id": counting]), as: UTF8.self)
        #expect(printed.contains(text) && !printed.contains(text.uppercased()))
        // Upper-case input still reads.
        #expect(try ColonyJSON.decoder().decode([UUID].self, from: Data(#"["\#(text.uppercased())","\#(text)"]"#.utf8)) == [counting, counting])
        // Random ids: never an upper-case hex digit.
        let many = (0..<200).map { _ in UUID() }
        let bytes = try ColonyJSON.encode(many)
        #expect(!bytes.contains { (UInt8(ascii: "A")...UInt8(ascii: "F")).contains($0) })
        #expect(try ColonyJSON.decoder().decode([UUID].self, from: Data(bytes)) == many)
    }

    @Test("event envelopes encode as before")
    func envelopes() throws {
        let user = UUID()
        let event = EventEnvelope(app: .unify, aggregateId: user.uuidString.lowercased(), occurredAt: Date(timeIntervalSince1970: 1_790_000_000.125), actor: user, payload: MessageSent(
            message: MessageRow(id: UUID(), groupId: UUID(), content: "Hi / there", sentBy: user, sentAt: Date(), isEdited: false, messageType: .text,
                                voiceDuration: 1.5, voiceUrl: nil),
            senderDisplayName: "Ada"))
        try expectSame(event)
        #expect(try event.encoded() == Array(ColonyJSON.encoder().encode(event)))
    }
}

/// Every writer method, from a capacity too small for it (the writer grows), against Foundation.
struct EveryWrite: ColonyJSONWritable {
    var count: Int
    var escaped: String
    var id: UUID
    var items: [Int]
    var late: Date
    var note: String?
    var ok: Bool
    var ratio: Double
    var when: Date

    func writeJSON(to json: inout JSONBytesWriter) throws {
        json.raw("{")
        json.key("count"); json.int(count)
        json.key("escaped"); json.string(escaped)
        json.key("id"); json.uuid(id)
        json.key("items"); json.array(items) { $0.int($1) }
        json.key("late"); json.date(late)
        json.member("note", note) { $0.string($1) }
        json.key("ok"); json.bool(ok)
        json.key("ratio"); try json.double(ratio)
        json.key("when"); json.date(when)
        json.raw("}")
    }

    var jsonCapacity: Int { 1 }
}

@Suite("JSONBytesWriter")
struct JSONBytesWriterTests {
    @Test("every method writes what Foundation writes, growing from a capacity too small: integers at their ends, escapes, times past 9999, absent members")
    func everyWrite() throws {
        let values = [
            EveryWrite(count: Int.min, escaped: "a \"quoted\" \\ / line\nbreak \u{01} é 😀 and then some more text", id: UUID(), items: [Int.max, -1, 0, 7],
                       late: Date(timeIntervalSince1970: 253_402_300_800.5), note: nil, ok: true, ratio: 0.1, when: Date(timeIntervalSince1970: 1_790_000_000.123)),
            EveryWrite(count: 0, escaped: "", id: UUID(), items: [], late: Date(timeIntervalSince1970: -62_167_219_200.5), note: "plain note of some length",
                       ok: false, ratio: -2.5e300, when: Date(timeIntervalSince1970: -1.5)),
        ]
        for value in values {
            let fast = String(decoding: try ColonyJSON.encode(value), as: UTF8.self)
            #expect(fast == String(decoding: try ColonyJSON.encoder().encode(value), as: UTF8.self), "hand writer and tree")
            #expect(fast == (try ColonyJSONWriterTests().foundation(value)), "hand writer and Foundation (ids lower case)")
        }
    }
}
