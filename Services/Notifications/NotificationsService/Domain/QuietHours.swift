import Foundation

/// A user's quiet hours: a daily window in their own time zone during which alert pushes are
/// held and delivered when it ends. `start == end` means no window; a window may cross midnight
/// (22:00–07:00).
public struct QuietHours: Sendable, Equatable, Codable {
    /// Minutes after local midnight.
    public var start: Int
    public var end: Int
    public var timeZone: String

    public init(start: Int, end: Int, timeZone: String) {
        self.start = start
        self.end = end
        self.timeZone = timeZone
    }

    /// "HH:MM" (24 h) to minutes after midnight.
    public static func minutes(_ text: String) -> Int? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0].count == 2, parts[1].count == 2, text.utf8.allSatisfy({ $0 == UInt8(ascii: ":") || (48...57).contains($0) }),
              let hours = Int(parts[0]), let minutes = Int(parts[1]), (0..<24).contains(hours), (0..<60).contains(minutes)
        else { return nil }
        return hours * 60 + minutes
    }

    public static func text(_ minutes: Int) -> String {
        String(format: "%02d:%02d", minutes / 60, minutes % 60)
    }

    /// When the window around `date` ends, or nil when `date` is outside it. DST is the zone's:
    /// an end time that a clock change skips is taken as the first moment after it.
    public func heldUntil(_ date: Date) -> Date? {
        guard start != end, let zone = TimeZone(identifier: timeZone) else { return nil }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let parts = calendar.dateComponents([.hour, .minute], from: date)
        let now = (parts.hour ?? 0) * 60 + (parts.minute ?? 0)
        let inside = start < end ? (now >= start && now < end) : (now >= start || now < end)
        guard inside else { return nil }
        // The end is today (local) if it is still ahead, else tomorrow.
        let dayOffset = now < end ? 0 : 1
        let midnight = calendar.startOfDay(for: date)
        guard let day = calendar.date(byAdding: .day, value: dayOffset, to: midnight),
              let ends = calendar.date(bySettingHour: end / 60, minute: end % 60, second: 0, of: day, matchingPolicy: .nextTime, repeatedTimePolicy: .first, direction: .forward)
        else { return nil }
        return ends > date ? ends : nil
    }
}
