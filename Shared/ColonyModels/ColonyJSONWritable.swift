import Foundation

/// A response that writes its own JSON, straight into bytes: the hot pages (a chat history, a
/// projects feed), where building `ColonyJSON.encode`'s tree (a node per value, every object's
/// keys sorted, retain and release around each) was the largest part of the service's CPU per
/// page. `ColonyJSON.encode` takes this path for any value that has it. What it writes must be
/// byte for byte what `ColonyJSON.encoder()` (the encoder's tree) writes for the same value (keys
/// in byte order of their snake_case names, absent optionals left out, UUIDs lower case): each
/// conformance has a test holding the two equal.
public protocol ColonyJSONWritable: Encodable {
    func writeJSON(to json: inout JSONBytesWriter) throws
    /// About how many bytes the JSON takes, so the output grows once or not at all.
    var jsonCapacity: Int { get }
}

extension ColonyJSONWritable {
    public var jsonCapacity: Int { 1024 }
}

/// The bytes of one JSON value being written by hand, with the encoder's own writers for
/// strings, UUIDs, times and numbers.
///
/// The bytes are written into an array kept at its full capacity (`storage`, unwritten past `count`)
/// through its buffer, a value at a time: an `Array` append per key, quote and value cost about
/// 5,800 instructions a message of a history page, the largest part of its JSON.
public struct JSONBytesWriter {
    private var storage: [UInt8]
    private var count = 0

    public init(capacity: Int) {
        // Not zero-filled: bytes past `count` are never read (filling a history page's 26 KB was
        // 2% of its instructions).
        storage = [UInt8](unsafeUninitializedCapacity: max(capacity, 64)) { _, initialized in initialized = max(capacity, 64) }
    }

    /// The bytes written, without a copy; the writer is spent.
    public consuming func finish() -> [UInt8] {
        storage.removeLast(storage.count - count)
        return storage
    }

    /// Writes up to `length` bytes through `body`, which says how many it wrote.
    @inline(__always)
    private mutating func write(upTo length: Int, _ body: (UnsafeMutableBufferPointer<UInt8>) -> Int) {
        if storage.count - count < length { storage.append(contentsOf: repeatElement(0, count: max(storage.count, length))) }
        let start = count
        count += storage.withUnsafeMutableBufferPointer { all in body(UnsafeMutableBufferPointer(rebasing: all[start..<start + length])) }
    }

    @inline(__always)
    private mutating func write(_ bytes: UnsafeBufferPointer<UInt8>) {
        write(upTo: bytes.count) { out in
            if let base = bytes.baseAddress, bytes.count > 0 { out.baseAddress!.update(from: base, count: bytes.count) }
            return bytes.count
        }
    }

    /// What the encoder's tree writers append, for the rare values written no faster here
    /// (strings with escapes, years past 9999, doubles).
    private mutating func write(_ tree: (inout [UInt8]) -> Void) {
        var bytes: [UInt8] = []
        tree(&bytes)
        bytes.withUnsafeBufferPointer { write($0) }
    }

    @inline(__always)
    private mutating func write(_ byte: UInt8) {
        write(upTo: 1) { out in out[0] = byte; return 1 }
    }

    private var last: UInt8? { count > 0 ? storage[count - 1] : nil }

    /// Punctuation or a literal: `{`, `],`, `null`.
    public mutating func raw(_ text: StaticString) {
        write(UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// `"name":` (a key needing no escapes), after a comma unless it opens its object.
    public mutating func key(_ name: StaticString) {
        let comma = last != UInt8(ascii: "{")
        let length = name.utf8CodeUnitCount
        write(upTo: length + 4) { out in
            var index = 0
            if comma { out[0] = UInt8(ascii: ","); index = 1 }
            out[index] = UInt8(ascii: "\"")
            out.baseAddress!.advanced(by: index + 1).update(from: name.utf8Start, count: length)
            out[index + 1 + length] = UInt8(ascii: "\"")
            out[index + 2 + length] = UInt8(ascii: ":")
            return index + 3 + length
        }
    }

    /// Before each element of an array: a comma unless it is the first.
    private mutating func element() {
        if last != UInt8(ascii: "[") { write(UInt8(ascii: ",")) }
    }

    /// `[…]`, each element written by `write`.
    public mutating func array<Elements: Sequence>(_ elements: Elements, _ write: (inout JSONBytesWriter, Elements.Element) throws -> Void) rethrows {
        self.write(UInt8(ascii: "["))
        for element in elements {
            self.element()
            try write(&self, element)
        }
        self.write(UInt8(ascii: "]"))
    }

    /// A string as `JSONNode.writeString` escapes it; one without escapes (most) copied whole.
    public mutating func string(_ value: String) {
        var text = value
        text.withUTF8 { bytes in
            if JSONNode.firstEscaped(bytes) == bytes.count {
                write(upTo: bytes.count + 2) { out in
                    out[0] = UInt8(ascii: "\"")
                    if let base = bytes.baseAddress, bytes.count > 0 { out.baseAddress!.advanced(by: 1).update(from: base, count: bytes.count) }
                    out[bytes.count + 1] = UInt8(ascii: "\"")
                    return bytes.count + 2
                }
            } else {
                write { JSONNode.writeString(value, to: &$0) }
            }
        }
    }

    /// Lower case, as every id Colony writes (the encoder's tree writes them so too).
    public mutating func uuid(_ value: UUID) {
        write(upTo: 38) { out in JSONNode.uuidBytes(value, into: out); return 38 }
    }

    /// ISO 8601 in UTC with milliseconds, as `ColonyJSON` writes times.
    public mutating func date(_ value: Date) {
        var inRange = true
        write(upTo: 26) { out in
            inRange = JSONNode.dateBytes(value, into: out)
            return inRange ? 26 : 0
        }
        if !inRange { write { JSONNode.writeDate(value, to: &$0) } }
    }

    public mutating func bool(_ value: Bool) { if value { raw("true") } else { raw("false") } }

    public mutating func int(_ value: Int) {
        write(upTo: 20) { JSONNode.integerBytes(Int64(value), into: $0) }
    }

    /// Foundation's number text; a non-finite value throws, as the encoder does.
    public mutating func double(_ value: Double) throws {
        let number = try JSONNode.number(value)
        write { JSONNode.write(number, to: &$0) }
    }

    /// An optional member: written when present, left out when not (as the encoder does).
    public mutating func member<Value>(_ name: StaticString, _ value: Value?, _ write: (inout JSONBytesWriter, Value) throws -> Void) rethrows {
        guard let value else { return }
        key(name)
        try write(&self, value)
    }
}

extension ColonyJSON {
    /// A hand-written value's bytes.
    static func written(_ value: any ColonyJSONWritable) throws -> [UInt8] {
        var writer = JSONBytesWriter(capacity: value.jsonCapacity)
        try value.writeJSON(to: &writer)
        return writer.finish()
    }
}
