import Foundation

/// Colony's one JSON convention: snake_case keys (the seeds' field names), ISO 8601 UTC times
/// with milliseconds. Every HTTP body and every event uses these coders.
public enum ColonyJSON {
    /// A `JSONEncoder` with Colony's settings that writes through `encodeTree`, so UUIDs come out
    /// lower case (Foundation's own encoder writes them upper case and has no setting for it).
    public static func encoder() -> JSONEncoder {
        let encoder = ColonyJSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(ISO8601.format(date))
        }
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }

    /// A Swift name as the wire spells it (`lastReadAt` → `last_read_at`). The decoder's
    /// conversion also camel-cases the keys of decoded dictionaries; for keys that are lower
    /// snake case (kind names, say) this turns them back exactly.
    public static func snakeCase(_ name: String) -> String {
        var result = ""
        for character in name {
            if character.isUppercase {
                result += "_" + character.lowercased()
            } else {
                result.append(character)
            }
        }
        return result
    }

    public static func decoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        decoder.dateDecodingStrategy = .custom { decoder in
            let container = try decoder.singleValueContainer()
            let text = try container.decode(String.self)
            guard let date = ISO8601.parse(text) else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "expected an ISO 8601 time, got \(text)")
            }
            return date
        }
        return decoder
    }
}

/// `ColonyJSON.encoder()`: Colony's writer in Foundation's shape (Hummingbird's response encoder,
/// commands that print JSON). Settings other than Colony's are Foundation's to write, from the
/// writer's output: pretty printing (support commands) re-formats it, so ids stay lower case.
final class ColonyJSONEncoder: JSONEncoder, @unchecked Sendable {
    override func encode<T: Encodable>(_ value: T) throws -> Data {
        guard case .convertToSnakeCase = keyEncodingStrategy, case .custom = dateEncodingStrategy else { return try super.encode(value) }
        let compact = Data(try ColonyJSON.encodeTree(value))
        if outputFormatting == [.sortedKeys] { return compact }
        var options: JSONSerialization.WritingOptions = [.fragmentsAllowed]
        if outputFormatting.contains(.prettyPrinted) { options.insert(.prettyPrinted) }
        if outputFormatting.contains(.sortedKeys) { options.insert(.sortedKeys) }
        if outputFormatting.contains(.withoutEscapingSlashes) { options.insert(.withoutEscapingSlashes) }
        return try JSONSerialization.data(withJSONObject: JSONSerialization.jsonObject(with: compact, options: [.fragmentsAllowed]), options: options)
    }
}

/// ISO 8601 formatting and parsing in UTC with millisecond precision (`2026-11-22T04:11:32.123Z`).
/// Times are kept to whole milliseconds so a value survives a round trip unchanged.
public enum ISO8601 {
    public static func format(_ date: Date) -> String {
        let milliseconds = Int64((date.timeIntervalSince1970 * 1000).rounded())
        var seconds = time_t(milliseconds.floorDivided(by: 1000))
        let fraction = Int(milliseconds - milliseconds.floorDivided(by: 1000) * 1000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func pad(_ value: Int32, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1, 2))-\(pad(parts.tm_mday, 2))T\(pad(parts.tm_hour, 2)):\(pad(parts.tm_min, 2)):\(pad(parts.tm_sec, 2)).\(pad(Int32(fraction), 3))Z"
    }

    /// An RFC 3339 `date-time` (what OpenAPI's `format: date-time` means): `YYYY-MM-DDTHH:MM:SS`,
    /// optional fraction, then `Z` or `±HH:MM`; `T` and `Z` in either case. Nothing else: the
    /// documents promise exactly this. (No leap second `:60`: JSON Schema validators refuse most.)
    public static func parse(_ text: String) -> Date? {
        let bytes = Array(text.utf8)
        var index = 0
        func number(_ digits: Int) -> Int? {
            guard index + digits <= bytes.count else { return nil }
            var value = 0
            for byte in bytes[index..<index + digits] {
                guard (48...57).contains(byte) else { return nil }
                value = value * 10 + Int(byte - 48)
            }
            index += digits
            return value
        }
        func expect(_ characters: String) -> Bool {
            guard index < bytes.count, characters.utf8.contains(bytes[index]) else { return false }
            index += 1
            return true
        }
        guard let year = number(4), expect("-"), let month = number(2), expect("-"), let day = number(2), expect("Tt"),
              let hour = number(2), expect(":"), let minute = number(2), expect(":"), let second = number(2),
              (1...12).contains(month), (1...LocalDate.daysIn(month: month, year: year)).contains(day),
              (0...23).contains(hour), (0...59).contains(minute), (0...59).contains(second) else { return nil }
        var fraction = 0.0
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            var scale = 0.1
            let start = index
            while index < bytes.count, (48...57).contains(bytes[index]) {
                fraction += Double(bytes[index] - 48) * scale
                scale /= 10
                index += 1
            }
            guard index > start else { return nil }
        }
        var offset = 0
        if expect("Zz") {
            offset = 0
        } else {
            guard index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") else { return nil }
            let sign = bytes[index] == UInt8(ascii: "-") ? -1 : 1
            index += 1
            guard let hours = number(2), expect(":"), let minutes = number(2), (0...23).contains(hours), (0...59).contains(minutes) else { return nil }
            offset = sign * (hours * 60 + minutes) * 60
        }
        guard index == bytes.count else { return nil }
        let days = LocalDate.dayNumber(year: year, month: month, day: day)
        let seconds = Double(days * 86_400 + hour * 3600 + minute * 60 + second - offset) + fraction
        return wholeMilliseconds(Date(timeIntervalSince1970: seconds))
    }

    /// The date rounded to whole milliseconds, the precision Colony stores and sends.
    public static func wholeMilliseconds(_ date: Date) -> Date {
        Date(timeIntervalSince1970: (date.timeIntervalSince1970 * 1000).rounded() / 1000)
    }
}

extension Int64 {
    func floorDivided(by divisor: Int64) -> Int64 {
        let quotient = self / divisor
        return (self % divisor < 0) ? quotient - 1 : quotient
    }
}
