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
    /// The operators' web console (issue 38): no app's data of its own, only operators and their audit log.
    case console
}

extension App {
    /// The service that keeps the app's own data (its domain); auth and notifications serve every app.
    public var domainService: ColonyService {
        switch self {
        case .mycirclee: .circles
        case .unify: .chat
        case .habithive: .habits
        case .socialspot: .nearby
        case .ibelieveinyou: .projects
        }
    }
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
    /// by arithmetic: what `lowercased` and the JSON writer's UUIDs (lower case too) share.
    /// Four bytes at a time become eight digits in one word (`HexWord`), stored around the dashes:
    /// a table lookup per byte cost about 500 instructions a UUID, three a message in a history page.
    public func writeCanonical(into buffer: UnsafeMutableBufferPointer<UInt8>, from start: Int, upperCase: Bool) {
        precondition(start >= 0 && buffer.count - start >= 36)
        let out = UnsafeMutableRawPointer(buffer.baseAddress! + start)
        let letters: UInt64 = upperCase ? 7 : 39  // from "9" + 1 to "A" or "a"
        withUnsafeBytes(of: uuid) { bytes in
            func word(_ index: Int) -> UInt64 {
                HexWord.digits(UInt32(bigEndian: bytes.loadUnaligned(fromByteOffset: index * 4, as: UInt32.self)), letters: letters)
            }
            let words = (word(0), word(1), word(2), word(3))
            // Digits 0-7 | dash | 8-11 | dash | 12-15 | dash | 16-19 | dash | 20-31.
            out.storeBytes(of: words.0.bigEndian, toByteOffset: 0, as: UInt64.self)
            out.storeBytes(of: UInt8(ascii: "-"), toByteOffset: 8, as: UInt8.self)
            out.storeBytes(of: UInt32(truncatingIfNeeded: words.1 >> 32).bigEndian, toByteOffset: 9, as: UInt32.self)
            out.storeBytes(of: UInt8(ascii: "-"), toByteOffset: 13, as: UInt8.self)
            out.storeBytes(of: UInt32(truncatingIfNeeded: words.1).bigEndian, toByteOffset: 14, as: UInt32.self)
            out.storeBytes(of: UInt8(ascii: "-"), toByteOffset: 18, as: UInt8.self)
            out.storeBytes(of: UInt32(truncatingIfNeeded: words.2 >> 32).bigEndian, toByteOffset: 19, as: UInt32.self)
            out.storeBytes(of: UInt8(ascii: "-"), toByteOffset: 23, as: UInt8.self)
            out.storeBytes(of: UInt32(truncatingIfNeeded: words.2).bigEndian, toByteOffset: 24, as: UInt32.self)
            out.storeBytes(of: words.3.bigEndian, toByteOffset: 28, as: UInt64.self)
        }
    }

    /// A version 7 UUID (RFC 9562): 48 bits of Unix milliseconds, then random bits, so ids sort by creation time.
    public static func timeOrdered(at date: Date = Date()) -> UUID {
        var generator = SystemRandomNumberGenerator()
        return timeOrdered(at: date, using: &generator)
    }

    public static func timeOrdered<G: RandomNumberGenerator>(at date: Date, using generator: inout G) -> UUID {
        // Clamped to the 48 bits the id holds: `UInt64(_:)` traps on a time past 2^64 ms or NaN.
        let milliseconds = (date.timeIntervalSince1970 * 1000).rounded(.down)
        let millis = milliseconds >= 0 ? UInt64(min(milliseconds, Double(0xFFFF_FFFF_FFFF))) : 0
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

/// Hex digits by word arithmetic, for `UUID.writeCanonical`.
private enum HexWord {
    /// The eight hex digits of `value` as ASCII in one word, the first digit in the highest byte:
    /// the nibbles spread one to a byte, then each raised to "0" and, past 9, on by `letters`.
    @inline(__always)
    static func digits(_ value: UInt32, letters: UInt64) -> UInt64 {
        var word = UInt64(value)
        word = (word | word << 16) & 0x0000_FFFF_0000_FFFF
        word = (word | word << 8) & 0x00FF_00FF_00FF_00FF
        word = (word | word << 4) & 0x0F0F_0F0F_0F0F_0F0F
        let pastNine = ((word &+ 0x0606_0606_0606_0606) >> 4) & 0x0101_0101_0101_0101
        return word &+ 0x3030_3030_3030_3030 &+ pastNine &* letters
    }
}
