import Foundation

/// The five apps Colony serves. Each is its own user pool; a token's audience names one.
public enum App: String, Codable, Sendable, CaseIterable {
    case mycirclee
    case unify
    case habithive
    case socialspot
    case ibelieveinyou
}

/// Colony's services. Each owns one Postgres schema and publishes to one Kafka topic.
public enum ColonyService: String, Codable, Sendable, CaseIterable {
    case auth
    case circles
    case chat
    case habits
    case nearby
    case projects
    case realtime
    case notifications
}

extension UUID {
    /// The canonical text (`8-4-4-4-12` hex digits, either case), as `UUID(uuidString:)` reads it,
    /// without its `sscanf`: ids in paths, cursors and card aggregates are parsed on every request.
    public init?<Text: StringProtocol>(canonical text: Text) {
        var parsed: UUID?
        var text = String(text)
        text.withUTF8 { bytes in
            guard bytes.count == 36 else { return }
            var value: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
            let valid = withUnsafeMutableBytes(of: &value) { out -> Bool in
                var position = 0
                for index in 0..<16 {
                    if index == 4 || index == 6 || index == 8 || index == 10 {
                        guard bytes[position] == UInt8(ascii: "-") else { return false }
                        position += 1
                    }
                    guard let high = Self.hexValue(bytes[position]), let low = Self.hexValue(bytes[position + 1]) else { return false }
                    out[index] = high << 4 | low
                    position += 2
                }
                return true
            }
            if valid { parsed = UUID(uuid: value) }
        }
        guard let parsed else { return nil }
        self = parsed
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// Lowercase text, as ids appear in JSON, event keys and Kafka keys: `uuidString.lowercased()`,
    /// written directly (every cursor of every page is one; Foundation formats with snprintf).
    public var lowercased: String {
        String(unsafeUninitializedCapacity: 36) { buffer in
            writeCanonical(into: buffer, from: 0, upperCase: false)
            return 36
        }
    }

    /// The 36 characters of the canonical form (`8-4-4-4-12` hex digits) into `buffer` from `start`,
    /// by arithmetic: what `lowercased` and the JSON writer's UUIDs (upper case, as Foundation) share.
    func writeCanonical(into buffer: UnsafeMutableBufferPointer<UInt8>, from start: Int, upperCase: Bool) {
        precondition(start >= 0 && buffer.count - start >= 36)
        let table = upperCase ? UUIDHexPairs.upper : UUIDHexPairs.lower
        let out = buffer.baseAddress! + start
        withUnsafeBytes(of: uuid) { bytes in
            table.withUnsafeBufferPointer { pairs in
                // Each byte's two digits from the table (one load, no branches); dashes after bytes 4, 6, 8 and 10.
                var position = 0
                for index in 0..<16 {
                    if index == 4 || index == 6 || index == 8 || index == 10 {
                        out[position] = UInt8(ascii: "-")
                        position += 1
                    }
                    let pair = pairs[Int(bytes[index])]
                    out[position] = UInt8(truncatingIfNeeded: pair >> 8)
                    out[position + 1] = UInt8(truncatingIfNeeded: pair)
                    position += 2
                }
            }
        }
    }

    /// A version 7 UUID (RFC 9562): 48 bits of Unix milliseconds, then random bits, so ids sort by creation time.
    public static func timeOrdered(at date: Date = Date()) -> UUID {
        var generator = SystemRandomNumberGenerator()
        return timeOrdered(at: date, using: &generator)
    }

    public static func timeOrdered<G: RandomNumberGenerator>(at date: Date, using generator: inout G) -> UUID {
        let millis = UInt64(max(0, (date.timeIntervalSince1970 * 1000).rounded(.down)))
        var bytes = [UInt8](repeating: 0, count: 16)
        for index in 0..<6 {
            bytes[index] = UInt8(truncatingIfNeeded: millis >> (8 * (5 - UInt64(index))))
        }
        for index in 6..<16 {
            bytes[index] = UInt8.random(in: 0...255, using: &generator)
        }
        bytes[6] = (bytes[6] & 0x0F) | 0x70  // version 7
        bytes[8] = (bytes[8] & 0x3F) | 0x80  // RFC 4122 variant
        return UUID(uuid: (
            bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
            bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
        ))
    }

    /// The creation time encoded in a version 7 UUID, or nil for other versions.
    public var timeOrderedDate: Date? {
        let bytes = uuid
        guard bytes.6 >> 4 == 7 else { return nil }
        let parts: [UInt8] = [bytes.0, bytes.1, bytes.2, bytes.3, bytes.4, bytes.5]
        let millis = parts.reduce(UInt64(0)) { ($0 << 8) | UInt64($1) }
        return Date(timeIntervalSince1970: Double(millis) / 1000)
    }
}

/// Every byte's two hex digits (high digit in the high byte), for `UUID.writeCanonical`.
private enum UUIDHexPairs {
    static let lower = table(letters: 87)  // 10 + 87 = "a"
    static let upper = table(letters: 55)  // 10 + 55 = "A"

    private static func table(letters: UInt8) -> [UInt16] {
        (0...255).map { (byte: Int) -> UInt16 in
            func digit(_ value: Int) -> UInt16 { UInt16(value < 10 ? 48 + value : Int(letters) + value) }
            return digit(byte >> 4) << 8 | digit(byte & 0x0F)
        }
    }
}
