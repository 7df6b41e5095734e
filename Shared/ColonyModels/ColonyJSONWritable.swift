import Foundation

/// A response that writes its own JSON, straight into bytes: the hot pages (a chat history, a
/// projects feed), where building `ColonyJSON.encode`'s tree (a node per value, every object's
/// keys sorted, retain and release around each) was the largest part of the service's CPU per
/// page. `ColonyJSON.encode` takes this path for any value that has it. What it writes must be
/// byte for byte what `ColonyJSON.encoder()` writes for the same value (keys in byte order of
/// their snake_case names, absent optionals left out): each conformance has a test holding the
/// two equal.
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
public struct JSONBytesWriter {
    public private(set) var bytes: [UInt8]

    public init(capacity: Int) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    /// Punctuation or a literal: `{`, `],`, `null`.
    public mutating func raw(_ text: StaticString) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// `"name":` (a key needing no escapes), after a comma unless it opens its object.
    public mutating func key(_ name: StaticString) {
        if bytes.last != UInt8(ascii: "{") { bytes.append(UInt8(ascii: ",")) }
        bytes.append(UInt8(ascii: "\""))
        raw(name)
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
    }

    /// Before each element of an array: a comma unless it is the first.
    private mutating func element() {
        if bytes.last != UInt8(ascii: "[") { bytes.append(UInt8(ascii: ",")) }
    }

    /// `[…]`, each element written by `write`.
    public mutating func array<Elements: Sequence>(_ elements: Elements, _ write: (inout JSONBytesWriter, Elements.Element) throws -> Void) rethrows {
        bytes.append(UInt8(ascii: "["))
        for element in elements {
            self.element()
            try write(&self, element)
        }
        bytes.append(UInt8(ascii: "]"))
    }

    public mutating func string(_ value: String) { JSONNode.writeString(value, to: &bytes) }
    /// Upper case, as Foundation writes a `UUID`.
    public mutating func uuid(_ value: UUID) { JSONNode.writeUUID(value, to: &bytes) }
    /// ISO 8601 in UTC with milliseconds, as `ColonyJSON` writes times.
    public mutating func date(_ value: Date) { JSONNode.writeDate(value, to: &bytes) }
    public mutating func bool(_ value: Bool) { if value { raw("true") } else { raw("false") } }

    public mutating func int(_ value: Int) { JSONNode.write(.integer(Int64(value)), to: &bytes) }

    /// Foundation's number text; a non-finite value throws, as the encoder does.
    public mutating func double(_ value: Double) throws {
        JSONNode.write(try JSONNode.number(value), to: &bytes)
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
        return writer.bytes
    }
}
