import ColonyModels
import Foundation

/// A user's clock: their IANA time zone and the hour their day starts. The user-local day is
/// the wall-clock date in that zone after subtracting `day_start_hour` hours (the seed's
/// `user_local_date`), so with a 4 am start, 02:30 on Tuesday still counts as Monday.
public struct UserClock: Sendable, Equatable {
    public let timeZone: TimeZone
    public let dayStartHour: Int

    public init(timeZone: TimeZone, dayStartHour: Int) {
        self.timeZone = timeZone
        self.dayStartHour = dayStartHour
    }

    /// nil when the zone is not a known IANA identifier or the hour is outside 0–23.
    public init?(timeZoneIdentifier: String, dayStartHour: Int) {
        guard UserClock.isValidTimeZone(timeZoneIdentifier), (0...23).contains(dayStartHour),
              let zone = TimeZone(identifier: timeZoneIdentifier) else { return nil }
        self.init(timeZone: zone, dayStartHour: dayStartHour)
    }

    public static let utc = UserClock(timeZone: TimeZone(identifier: "UTC")!, dayStartHour: 0)

    /// An IANA zone name (`Region/City`, or `UTC`) that the zone database knows. ICU's list of
    /// known identifiers leaves out aliases such as Asia/Kolkata, so the database decides.
    public static func isValidTimeZone(_ identifier: String) -> Bool {
        (identifier == "UTC" || identifier.contains("/")) && identifier.count <= 64 && TimeZone(identifier: identifier) != nil
    }

    private var calendar: Calendar {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        return calendar
    }

    /// The wall-clock date and time at `instant` in the user's zone.
    func wallClock(at instant: Date) -> (date: LocalDate, minutes: Int) {
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute], from: instant)
        let date = LocalDate(year: parts.year!, month: parts.month!, day: parts.day!)!
        return (date, parts.hour! * 60 + parts.minute!)
    }

    /// The user-local day that contains `instant`.
    public func localDay(at instant: Date) -> LocalDate {
        let (date, minutes) = wallClock(at: instant)
        return minutes < dayStartHour * 60 ? date.adding(days: -1) : date
    }

    /// Minutes of the user's current day that have passed at `instant` (0 ..< 1440, measured on
    /// the wall clock, so a DST change does not shift it).
    public func minutesIntoDay(at instant: Date) -> Int {
        let (_, minutes) = wallClock(at: instant)
        return (minutes - dayStartHour * 60 + 1440) % 1440
    }
}
