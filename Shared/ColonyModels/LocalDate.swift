import Foundation

/// A calendar day without a time or zone (`2026-11-22`), as Postgres `date` holds it: a user's
/// local day for habit logs, a hive's day. Ordered and countable so ranges of days are easy.
public struct LocalDate: Codable, Sendable, Hashable, Comparable, CustomStringConvertible {
    public let year: Int
    public let month: Int
    public let day: Int

    /// Days since 1970-01-01 (proleptic Gregorian), for arithmetic and ordering.
    public let dayNumber: Int

    public init?(year: Int, month: Int, day: Int) {
        guard (1...9999).contains(year), (1...12).contains(month), (1...LocalDate.daysIn(month: month, year: year)).contains(day) else { return nil }
        self.year = year
        self.month = month
        self.day = day
        self.dayNumber = LocalDate.dayNumber(year: year, month: month, day: day)
    }

    public init(dayNumber: Int) {
        // Civil-from-days (Howard Hinnant's algorithm).
        let z = dayNumber + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        self.year = yoe + era * 400 + (month <= 2 ? 1 : 0)
        self.month = month
        self.day = day
        self.dayNumber = dayNumber
    }

    /// The UTC calendar day containing `instant`.
    public static func utcDay(of instant: Date) -> LocalDate {
        LocalDate(dayNumber: Int((instant.timeIntervalSince1970 / 86_400).rounded(.down)))
    }

    /// Parses `YYYY-MM-DD`; nil for anything else or an impossible day.
    public init?(_ text: some StringProtocol) {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
              let year = Int(parts[0]), let month = Int(parts[1]), let day = Int(parts[2]) else { return nil }
        self.init(year: year, month: month, day: day)
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let date = LocalDate(text) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "expected a date as YYYY-MM-DD, got \(text)")
        }
        self = date
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }

    public var description: String {
        func pad(_ value: Int, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))"
    }

    public func adding(days: Int) -> LocalDate { LocalDate(dayNumber: dayNumber + days) }

    public func days(since other: LocalDate) -> Int { dayNumber - other.dayNumber }

    /// Monday = 0 … Sunday = 6 (the seed's weekmask bit order, Mon..Sun).
    public var weekdayIndex: Int { Self.weekdayIndex(ofDayNumber: dayNumber) }

    /// The weekday of a day by its number, without making the date (walks over many days).
    public static func weekdayIndex(ofDayNumber dayNumber: Int) -> Int {
        // 1970-01-01 was a Thursday (index 3).
        ((dayNumber % 7) + 7 + 3) % 7
    }

    public static func < (lhs: LocalDate, rhs: LocalDate) -> Bool { lhs.dayNumber < rhs.dayNumber }
    public static func == (lhs: LocalDate, rhs: LocalDate) -> Bool { lhs.dayNumber == rhs.dayNumber }
    public func hash(into hasher: inout Hasher) { hasher.combine(dayNumber) }

    static func isLeap(_ year: Int) -> Bool { (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: isLeap(year) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    static func dayNumber(year: Int, month: Int, day: Int) -> Int {
        // Days-from-civil (Howard Hinnant's algorithm).
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }
}
