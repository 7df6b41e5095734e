import Foundation

/// Colony's one JSON convention: snake_case keys (the seeds' field names), ISO 8601 UTC times
/// with milliseconds. Every HTTP body and every event uses these coders.
public enum ColonyJSON {
    public static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
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

    public static func parse(_ text: String) -> Date? {
        let parsed = (try? Date(text, strategy: .iso8601.year().month().day().dateSeparator(.dash).time(includingFractionalSeconds: true).timeSeparator(.colon).timeZone(separator: .omitted)))
            ?? (try? Date(text, strategy: .iso8601))
        return parsed.map(wholeMilliseconds)
    }

    /// The date rounded to whole milliseconds, the precision Colony stores and sends.
    public static func wholeMilliseconds(_ date: Date) -> Date {
        Date(timeIntervalSince1970: (date.timeIntervalSince1970 * 1000).rounded() / 1000)
    }
}

extension Int64 {
    fileprivate func floorDivided(by divisor: Int64) -> Int64 {
        let quotient = self / divisor
        return (self % divisor < 0) ? quotient - 1 : quotient
    }
}
