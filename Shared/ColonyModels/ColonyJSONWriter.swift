import Foundation
import Synchronization

extension ColonyJSON {
    /// `value` as JSON: what Foundation's encoder with Colony's settings writes (snake_case keys,
    /// sorted keys, ISO 8601 times, escaped slashes, Foundation's number text), byte for byte,
    /// except UUIDs, which are lower case (Foundation writes `uuidString`, upper case; Postgres,
    /// auth and realtime write ids lower case, and apps compare them as strings). Without
    /// Foundation's per-key conversion, date closure and boxing: every HTTP response and event
    /// goes through here, and Foundation's encoder was the largest item of a history page's CPU.
    public static func encode<T: Encodable>(_ value: T) throws -> [UInt8] {
        if let writable = value as? any ColonyJSONWritable { return try written(writable) }
        return try encodeTree(value)
    }

    /// `value` through the encoder's tree, never through a hand writer: what `encoder()` writes,
    /// and what each hand writer's tests hold it to.
    public static func encodeTree<T: Encodable>(_ value: T) throws -> [UInt8] {
        let node = try TreeEncoder.box(value)
        var output: [UInt8] = []
        output.reserveCapacity(256)
        JSONNode.write(node, to: &output)
        return output
    }
}

/// A key as written: the wire name (snake_case for a property, verbatim for a dictionary's key)
/// and its escaped, quoted bytes.
final class JSONKey: Sendable {
    let name: [UInt8]
    let quoted: [UInt8]

    init(_ name: String) {
        self.name = Array(name.utf8)
        var quoted: [UInt8] = []
        JSONNode.writeString(name, to: &quoted)
        self.quoted = quoted
    }

    /// Byte order of the wire names.
    func precedes(_ other: JSONKey) -> Bool {
        name.withUnsafeBufferPointer { a in
            other.name.withUnsafeBufferPointer { b in
                let common = min(a.count, b.count)
                let order = common == 0 ? 0 : memcmp(a.baseAddress!, b.baseAddress!, common)
                return order < 0 || (order == 0 && a.count < b.count)
            }
        }
    }

    /// The wire name of a property key, as Foundation's `.convertToSnakeCase` spells it: asked of
    /// Foundation once per distinct key (so its rules, quirks included, hold exactly) and kept.
    /// Keys without an upper-case letter are their own snake case.
    static func property(_ key: String) -> JSONKey {
        if let known = cache.withLock({ $0[key] }) { return known }
        let converted = key.utf8.contains(where: { (65...90).contains($0) || $0 >= 0x80 }) ? snakeCase(key) : key
        let made = JSONKey(converted)
        cache.withLock { $0[key] = made }
        return made
    }

    private static let cache = Mutex<[String: JSONKey]>([:])

    private static func snakeCase(_ key: String) -> String {
        struct Probe: Encodable {
            let key: String
            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: AnyKey.self)
                try container.encode(0, forKey: AnyKey(stringValue: key))
            }
        }
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        guard let data = try? encoder.encode(Probe(key: key)),
              let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any], let name = object.keys.first
        else { return key }
        return name
    }
}

struct AnyKey: CodingKey {
    var stringValue: String
    var intValue: Int?
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) {
        self.stringValue = String(intValue)
        self.intValue = intValue
    }
}

extension Int64 {
    /// Its decimal text, sign and all, at the start of `buffer` (20 bytes fit any), and how many
    /// bytes: what the JSON writer's integers and a keyset cursor's text share.
    public func decimalBytes(into buffer: UnsafeMutableBufferPointer<UInt8>) -> Int {
        JSONNode.integerBytes(self, into: buffer)
    }
}

/// The encoded tree: objects keep their members until written, since keys are written sorted.
enum JSONNode {
    case null
    case bool(Bool)
    case integer(Int64)
    case unsigned(UInt64)
    /// A floating-point number's text, as Foundation writes it.
    case number(String)
    case string(String)
    /// Written straight into the output (a UUID lower case, a time as `ISO8601.format`):
    /// formatting them as strings first was the largest cost after the keys.
    case uuid(UUID)
    case date(Date)
    case array(JSONArrayStorage)
    case object(JSONObjectStorage)
    /// What a super-encoder encodes, read when written (it may be encoded into after it is placed).
    case deferred(TreeEncoder)

    static func write(_ node: JSONNode, to out: inout [UInt8]) {
        switch node {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let value): out.append(contentsOf: value ? "true".utf8 : "false".utf8)
        case .integer(let value): append(upTo: 20, to: &out) { integerBytes(value, into: $0) }
        case .unsigned(let value): append(upTo: 20, to: &out) { digitBytes(value, into: $0) }
        case .number(let text): out.append(contentsOf: text.utf8)
        case .string(let text): writeString(text, to: &out)
        case .uuid(let id): writeUUID(id, to: &out)
        case .date(let date): writeDate(date, to: &out)
        case .array(let storage):
            out.append(UInt8(ascii: "["))
            for (index, item) in storage.items.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                write(item, to: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let storage):
            out.append(UInt8(ascii: "{"))
            for (index, member) in storage.sortedMembers().enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                out.append(contentsOf: member.key.quoted)
                out.append(UInt8(ascii: ":"))
                write(member.value, to: &out)
            }
            out.append(UInt8(ascii: "}"))
        case .deferred(let encoder):
            // A super-encoder that encoded nothing is an empty object, as in Foundation.
            write(encoder.result ?? .object(JSONObjectStorage()), to: &out)
        }
    }

    static let hex: [UInt8] = Array("0123456789abcdef".utf8)

    /// Up to `length` bytes made on the stack by `body` (which says how many), appended at once.
    static func append(upTo length: Int, to out: inout [UInt8], _ body: (UnsafeMutableBufferPointer<UInt8>) -> Int) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: length) { buffer in
            out.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[..<body(buffer)]))
        }
    }

    /// The decimal text of `value`, sign and all, at the start of `buffer` (20 bytes fit any), and
    /// how many bytes.
    @inline(__always)
    static func integerBytes(_ value: Int64, into buffer: UnsafeMutableBufferPointer<UInt8>) -> Int {
        guard value < 0 else { return digitBytes(UInt64(value), into: buffer) }
        buffer[0] = UInt8(ascii: "-")
        return 1 + digitBytes(value.magnitude, into: UnsafeMutableBufferPointer(rebasing: buffer[1...]))
    }

    /// The decimal digits of `value` at the start of `buffer` (20 bytes fit any), and how many.
    @inline(__always)
    static func digitBytes(_ value: UInt64, into buffer: UnsafeMutableBufferPointer<UInt8>) -> Int {
        var count = 1
        var rest = value / 10
        while rest > 0 { count += 1; rest /= 10 }
        rest = value
        for index in stride(from: count - 1, through: 0, by: -1) {
            buffer[index] = UInt8(truncatingIfNeeded: rest % 10) + 48
            rest /= 10
        }
        return count
    }

    /// `"xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx"`, lower case (`UUID.lowercased`): the 38 bytes made on the stack
    /// and appended at once (an append per byte checked the array's uniqueness and capacity 38
    /// times; UUIDs were the largest item of a history page's JSON).
    static func writeUUID(_ id: UUID, to out: inout [UInt8]) {
        append(upTo: 38, to: &out) { uuidBytes(id, into: $0); return 38 }
    }

    /// The quoted UUID's 38 bytes at the start of `buffer`.
    @inline(__always)
    static func uuidBytes(_ id: UUID, into buffer: UnsafeMutableBufferPointer<UInt8>) {
        buffer[0] = UInt8(ascii: "\"")
        id.writeCanonical(into: buffer, from: 1, upperCase: false)
        buffer[37] = UInt8(ascii: "\"")
    }

    /// `"YYYY-MM-DDTHH:MM:SS.mmmZ"`, exactly `ISO8601.format` (which years outside 0…9999 take).
    static func writeDate(_ date: Date, to out: inout [UInt8]) {
        // Made on the stack and appended at once (an append per byte checked the array's
        // uniqueness and capacity 26 times).
        var inRange = true
        append(upTo: 26, to: &out) { inRange = dateBytes(date, into: $0); return inRange ? 26 : 0 }
        if !inRange { writeString(ISO8601.format(date), to: &out) }
    }

    /// The quoted time's 26 bytes at the start of `buffer`; false, and nothing written, for a year
    /// outside 0…9999 (which `ISO8601.format` writes its own way).
    static func dateBytes(_ date: Date, into buffer: UnsafeMutableBufferPointer<UInt8>) -> Bool {
        let milliseconds = Int64((date.timeIntervalSince1970 * 1000).rounded())
        let seconds = milliseconds.floorDivided(by: 1000)
        let fraction = Int(milliseconds - seconds * 1000)
        let days = seconds.floorDivided(by: 86_400)
        let time = Int(seconds - days * 86_400)
        // LocalDate's civil-from-days arithmetic: no `gmtime_r` and its locale.
        let calendarDay = LocalDate(dayNumber: Int(days))
        let (year, month, day) = (calendarDay.year, calendarDay.month, calendarDay.day)
        guard (0...9999).contains(year) else { return false }
        func two(_ value: Int, at index: Int) {
            buffer[index] = UInt8(truncatingIfNeeded: value / 10) + 48
            buffer[index + 1] = UInt8(truncatingIfNeeded: value % 10) + 48
        }
        buffer[0] = UInt8(ascii: "\"")
        two(year / 100, at: 1)
        two(year % 100, at: 3)
        buffer[5] = UInt8(ascii: "-")
        two(month, at: 6)
        buffer[8] = UInt8(ascii: "-")
        two(day, at: 9)
        buffer[11] = UInt8(ascii: "T")
        two(time / 3600, at: 12)
        buffer[14] = UInt8(ascii: ":")
        two(time / 60 % 60, at: 15)
        buffer[17] = UInt8(ascii: ":")
        two(time % 60, at: 18)
        buffer[20] = UInt8(ascii: ".")
        buffer[21] = UInt8(truncatingIfNeeded: fraction / 100) + 48
        two(fraction % 100, at: 22)
        buffer[24] = UInt8(ascii: "Z")
        buffer[25] = UInt8(ascii: "\"")
        return true
    }

    /// A JSON string as Foundation escapes it: quote, backslash and slash, the short escapes for
    /// backspace, form feed, newline, return and tab, `\u00xx` for other control characters;
    /// everything else as its UTF-8.
    static func writeString(_ text: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        var text = text
        text.withUTF8 { bytes in
            var start = 0
            for index in firstEscaped(bytes)..<bytes.count {
                let byte = bytes[index]
                guard escaped(byte) else { continue }
                if start < index { out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<index])) }
                start = index + 1
                out.append(UInt8(ascii: "\\"))
                switch byte {
                case 0x22, 0x5C, 0x2F: out.append(byte)
                case 0x08: out.append(UInt8(ascii: "b"))
                case 0x0C: out.append(UInt8(ascii: "f"))
                case 0x0A: out.append(UInt8(ascii: "n"))
                case 0x0D: out.append(UInt8(ascii: "r"))
                case 0x09: out.append(UInt8(ascii: "t"))
                default:
                    out.append(contentsOf: "u00".utf8)
                    out.append(hex[Int(byte >> 4)])
                    out.append(hex[Int(byte & 0x0F)])
                }
            }
            if start < bytes.count { out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start...])) }
        }
        out.append(UInt8(ascii: "\""))
    }

    @inline(__always)
    static func escaped(_ byte: UInt8) -> Bool {
        byte < 0x20 || byte == 0x22 || byte == 0x5C || byte == 0x2F
    }

    /// Where the first byte to escape is (the count when none is), eight bytes to a step: most
    /// strings have none and go out in one append. A byte at a time cost about 18 instructions a
    /// byte, a fifth of a history page's JSON.
    static func firstEscaped(_ bytes: UnsafeBufferPointer<UInt8>) -> Int {
        guard let base = bytes.baseAddress else { return 0 }
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
        // Nonzero exactly when some byte of `word` is below `limit` (at most 0x80).
        func anyBelow(_ word: UInt64, _ limit: UInt64) -> Bool { (word &- ones &* limit) & ~word & highs != 0 }
        var index = 0
        while bytes.count - index >= 8 {
            let word = UnsafeRawPointer(base).loadUnaligned(fromByteOffset: index, as: UInt64.self)
            if anyBelow(word, 0x20) || anyBelow(word ^ (ones &* 0x22), 1) || anyBelow(word ^ (ones &* 0x5C), 1)
                || anyBelow(word ^ (ones &* 0x2F), 1) { break }
            index += 8
        }
        while index < bytes.count, !escaped(bytes[index]) { index += 1 }
        return index
    }

    /// Foundation's text for a finite Double or Float: Swift's shortest round-trip digits, a
    /// whole number without its `.0`. A NaN or infinity is refused as Foundation refuses it.
    static func number<F: BinaryFloatingPoint & CustomStringConvertible>(_ value: F) throws -> JSONNode {
        guard value.isFinite else {
            throw EncodingError.invalidValue(value, .init(codingPath: [], debugDescription: "Unable to encode \(F.self).\(value) directly in JSON."))
        }
        var text = value.description
        if text.hasSuffix(".0") { text.removeLast(2) }
        return .number(text)
    }
}

final class JSONArrayStorage {
    var items: [JSONNode] = []
}

final class JSONObjectStorage {
    var members: [(key: JSONKey, value: JSONNode)] = []

    func set(_ key: JSONKey, _ value: JSONNode) {
        members.append((key, value))
    }

    /// By the UTF-8 bytes of the wire names (what `.sortedKeys` does on this platform). A key
    /// encoded twice keeps its last value, as in Foundation's encoder: equal keys sort by when
    /// they were set, and only the last of each run is kept (checking on every set cost more
    /// than the rest of the object).
    func sortedMembers() -> [(key: JSONKey, value: JSONNode)] {
        let order = members.indices.sorted { a, b in
            let (left, right) = (members[a].key, members[b].key)
            if left === right { return a < b }
            if left.precedes(right) { return true }
            return !right.precedes(left) && a < b
        }
        var sorted: [(key: JSONKey, value: JSONNode)] = []
        sorted.reserveCapacity(order.count)
        for (position, index) in order.enumerated() {
            if position + 1 < order.count {
                let next = members[order[position + 1]].key, key = members[index].key
                if next === key || next.name == key.name { continue }
            }
            sorted.append(members[index])
        }
        return sorted
    }
}

/// A String-keyed dictionary: its keys are data, written as they are (Foundation exempts them
/// from the key strategy the same way).
private protocol StringKeyedDictionary {}
extension Dictionary: StringKeyedDictionary where Key == String {}

/// The `Encoder` that builds the tree. One per encoded value that is not a leaf.
final class TreeEncoder: Encoder {
    var codingPath: [any CodingKey] = []
    var userInfo: [CodingUserInfoKey: Any] { [:] }
    /// Whether this encoder's keyed container holds a dictionary's keys (written verbatim).
    let verbatimKeys: Bool
    var result: JSONNode?

    init(verbatimKeys: Bool) {
        self.verbatimKeys = verbatimKeys
    }

    /// A value as a node: leaves directly (with Foundation's special cases for dates, URLs, data
    /// and UUIDs), anything else through its `encode(to:)`.
    static func box<T: Encodable>(_ value: T) throws -> JSONNode {
        // Metatype comparisons, not `as?` casts: this runs for every value of every response,
        // mostly unspecialized (through the type-erased containers), where a failed dynamic cast
        // per candidate type costs more than the write.
        if T.self == String.self { return .string(unsafeBitCast(value, to: String.self)) }
        if T.self == UUID.self { return .uuid(unsafeBitCast(value, to: UUID.self)) }
        if T.self == Date.self { return .date(unsafeBitCast(value, to: Date.self)) }
        if T.self == Int.self { return .integer(Int64(unsafeBitCast(value, to: Int.self))) }
        if T.self == Bool.self { return .bool(unsafeBitCast(value, to: Bool.self)) }
        if T.self == Double.self { return try JSONNode.number(unsafeBitCast(value, to: Double.self)) }
        if T.self == Int64.self { return .integer(unsafeBitCast(value, to: Int64.self)) }
        if T.self == Int32.self { return .integer(Int64(unsafeBitCast(value, to: Int32.self))) }
        if T.self == Int16.self { return .integer(Int64(unsafeBitCast(value, to: Int16.self))) }
        if T.self == Int8.self { return .integer(Int64(unsafeBitCast(value, to: Int8.self))) }
        if T.self == UInt64.self { return .unsigned(unsafeBitCast(value, to: UInt64.self)) }
        if T.self == UInt.self { return .unsigned(UInt64(unsafeBitCast(value, to: UInt.self))) }
        if T.self == UInt32.self { return .unsigned(UInt64(unsafeBitCast(value, to: UInt32.self))) }
        if T.self == UInt16.self { return .unsigned(UInt64(unsafeBitCast(value, to: UInt16.self))) }
        if T.self == UInt8.self { return .unsigned(UInt64(unsafeBitCast(value, to: UInt8.self))) }
        if T.self == Float.self { return try JSONNode.number(unsafeBitCast(value, to: Float.self)) }
        if T.self == URL.self { return .string((value as! URL).absoluteString) }
        if T.self == Data.self { return .string((value as! Data).base64EncodedString()) }
        if T.self == Decimal.self {
            // Foundation writes a Decimal as its description; NaN has no JSON number.
            let decimal = value as! Decimal
            guard !decimal.isNaN else {
                throw EncodingError.invalidValue(decimal, .init(codingPath: [], debugDescription: "Unable to encode Decimal.nan directly in JSON."))
            }
            return .number(decimal.description)
        }
        let encoder = TreeEncoder(verbatimKeys: T.self is any StringKeyedDictionary.Type)
        try value.encode(to: encoder)
        // A value that encoded nothing is an empty object, as in Foundation.
        return encoder.result ?? .object(JSONObjectStorage())
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        let storage: JSONObjectStorage
        if case .object(let existing) = result {
            storage = existing
        } else {
            storage = JSONObjectStorage()
            result = .object(storage)
        }
        return KeyedEncodingContainer(KeyedContainer<Key>(storage: storage, verbatimKeys: verbatimKeys))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        let storage: JSONArrayStorage
        if case .array(let existing) = result {
            storage = existing
        } else {
            storage = JSONArrayStorage()
            result = .array(storage)
        }
        return UnkeyedContainer(storage: storage)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        SingleValueContainer(encoder: self)
    }
}

struct KeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let storage: JSONObjectStorage
    let verbatimKeys: Bool
    var codingPath: [any CodingKey] { [] }

    func key(_ key: Key) -> JSONKey {
        verbatimKeys ? JSONKey(key.stringValue) : JSONKey.property(key.stringValue)
    }

    mutating func encodeNil(forKey key: Key) throws { storage.set(self.key(key), .null) }
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws { storage.set(self.key(key), try TreeEncoder.box(value)) }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        let nested = JSONObjectStorage()
        storage.set(self.key(key), .object(nested))
        return KeyedEncodingContainer(KeyedContainer<NestedKey>(storage: nested, verbatimKeys: false))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let nested = JSONArrayStorage()
        storage.set(self.key(key), .array(nested))
        return UnkeyedContainer(storage: nested)
    }

    /// Foundation's: an encoder whose value goes under the key `super` (or the given key).
    mutating func superEncoder() -> any Encoder { placed(under: JSONKey.property("super")) }
    mutating func superEncoder(forKey key: Key) -> any Encoder { placed(under: self.key(key)) }

    private func placed(under key: JSONKey) -> any Encoder {
        let encoder = TreeEncoder(verbatimKeys: false)
        storage.set(key, .deferred(encoder))
        return encoder
    }
}

struct UnkeyedContainer: UnkeyedEncodingContainer {
    let storage: JSONArrayStorage
    var codingPath: [any CodingKey] { [] }
    var count: Int { storage.items.count }

    mutating func encodeNil() throws { storage.items.append(.null) }
    mutating func encode<T: Encodable>(_ value: T) throws { storage.items.append(try TreeEncoder.box(value)) }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        let nested = JSONObjectStorage()
        storage.items.append(.object(nested))
        return KeyedEncodingContainer(KeyedContainer<NestedKey>(storage: nested, verbatimKeys: false))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let nested = JSONArrayStorage()
        storage.items.append(.array(nested))
        return UnkeyedContainer(storage: nested)
    }

    /// Foundation's: an encoder whose value is the next element.
    mutating func superEncoder() -> any Encoder {
        let encoder = TreeEncoder(verbatimKeys: false)
        storage.items.append(.deferred(encoder))
        return encoder
    }
}

struct SingleValueContainer: SingleValueEncodingContainer {
    let encoder: TreeEncoder
    var codingPath: [any CodingKey] { [] }

    mutating func encodeNil() throws { encoder.result = .null }
    mutating func encode<T: Encodable>(_ value: T) throws { encoder.result = try TreeEncoder.box(value) }
}
