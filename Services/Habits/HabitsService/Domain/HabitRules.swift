import ColonyModels
import ColonyPlatform
import Foundation

/// When a habit or hive is due: every day, or the weekdays in the mask (bit 0 = Monday …
/// bit 6 = Sunday, 127 = all; the seed's "Mon..Sun").
public struct Schedule: Sendable, Equatable {
    public var daily: Bool
    public var weekmask: Int

    public init(daily: Bool, weekmask: Int) {
        self.daily = daily
        self.weekmask = weekmask
    }

    public static let everyDay = Schedule(daily: true, weekmask: 127)

    public func isScheduled(_ day: LocalDate) -> Bool {
        isScheduled(dayNumber: day.dayNumber)
    }

    /// The same for a day by its number (`LocalDate.dayNumber`), for walks over many days.
    public func isScheduled(dayNumber: Int) -> Bool {
        daily || weekmask & (1 << LocalDate.weekdayIndex(ofDayNumber: dayNumber)) != 0
    }
}

/// The habit fields a client sends on create and update, validated together.
public struct HabitDraft: Sendable, Equatable {
    public var name: String
    public var emoji: String?
    public var colorHex: String
    public var type: HabitType
    public var targetPerDay: Int
    public var scheduleDaily: Bool
    public var scheduleWeekmask: Int
    public var reminderTimes: [String]

    public init(name: String, emoji: String? = nil, colorHex: String = "#FF9F1C", type: HabitType = .checkbox, targetPerDay: Int = 1, scheduleDaily: Bool = true, scheduleWeekmask: Int = 127, reminderTimes: [String] = []) {
        self.name = name
        self.emoji = emoji
        self.colorHex = colorHex
        self.type = type
        self.targetPerDay = targetPerDay
        self.scheduleDaily = scheduleDaily
        self.scheduleWeekmask = scheduleWeekmask
        self.reminderTimes = reminderTimes
    }

    public var schedule: Schedule { Schedule(daily: scheduleDaily, weekmask: scheduleWeekmask) }

    /// Trims the name and reports every problem at once (422).
    public func validated() throws -> HabitDraft {
        var draft = self
        draft.name = TextRules.trimmed(name)
        draft.emoji = emoji.flatMap { $0.isEmpty ? nil : $0 }
        draft.colorHex = colorHex.uppercased()
        var errors = ValidationErrors()
        errors.check(TextRules.fits(name, 1...100), "name must be 1–100 characters, not blank")
        errors.check(TextRules.length(emoji ?? "") <= 8, "emoji must be at most 8 characters")
        errors.check(HabitRules.isColorHex(colorHex), "color_hex must look like #RRGGBB")
        errors.check((1...1000).contains(targetPerDay), "target_per_day must be between 1 and 1000")
        errors.check(type == .counter || targetPerDay == 1, "a checkbox habit has target_per_day 1")
        errors.check((1...127).contains(scheduleWeekmask), "schedule_weekmask must name at least one weekday (1–127, bit 0 = Monday)")
        errors.check(reminderTimes.count <= 10, "at most 10 reminder_times")
        errors.check(reminderTimes.allSatisfy(HabitRules.isReminderTime), "reminder_times are HH:MM (24-hour)")
        try errors.throwIfAny()
        return draft
    }
}

public enum HabitRules {
    /// The run of done scheduled days ending on `day`, as far as milestones need it: values are
    /// read (`read(since)`) window by window (`streakWindows`), and a run shorter than its window
    /// is the whole run; a run of more than 365 scheduled days comes back as 366.
    public static func streak(endingOn day: LocalDate, schedule: Schedule, target: Int, createdOn: LocalDate,
                              read: (LocalDate) async throws -> [LocalDate: Int]) async throws -> Int {
        var streak = 0
        for window in streakWindows(endingOn: day, schedule: schedule) {
            let values = try await read(window.since)
            streak = HabitHistory(values: values, target: target, schedule: schedule, createdOn: createdOn).currentStreak(today: day)
            if streak < window.scheduledDays { break }
        }
        return streak
    }

    /// The windows a streak ending on `day` is read in, shortest first: each holds one scheduled
    /// day more than a milestone (7, 30, 100, 365), so a run that does not fill a window is known
    /// whole, and a run of exactly a milestone is told from a longer one. `since` is the window's
    /// first calendar day.
    public static func streakWindows(endingOn day: LocalDate, schedule: Schedule) -> [(since: LocalDate, scheduledDays: Int)] {
        guard schedule.daily || schedule.weekmask & 0x7F != 0 else { return [] }
        let sizes = HiveRules.milestones.sorted().map { $0 + 1 }
        var windows: [(since: LocalDate, scheduledDays: Int)] = []
        var counted = 0
        // By day number: a year of days walked as dates was a few percent of a log's CPU.
        var current = day.dayNumber
        while windows.count < sizes.count {
            if schedule.isScheduled(dayNumber: current) {
                counted += 1
                if counted == sizes[windows.count] { windows.append((LocalDate(dayNumber: current), counted)) }
            }
            current -= 1
        }
        return windows
    }

    /// `#RRGGBB`.
    public static func isColorHex(_ text: String) -> Bool {
        let characters = Array(text.utf8)
        guard characters.count == 7, characters[0] == UInt8(ascii: "#") else { return false }
        return characters.dropFirst().allSatisfy { ($0 >= 48 && $0 <= 57) || ($0 >= 65 && $0 <= 70) || ($0 >= 97 && $0 <= 102) }
    }

    /// `HH:MM`, 00:00–23:59.
    public static func isReminderTime(_ text: String) -> Bool {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0].count == 2, parts[1].count == 2, text.utf8.allSatisfy({ $0 == UInt8(ascii: ":") || (48...57).contains($0) }),
              let hour = Int(parts[0]), let minute = Int(parts[1]) else { return false }
        return (0...23).contains(hour) && (0...59).contains(minute)
    }

    /// The value actually stored for a log: at least 1, at most the target (the seed's cap).
    public static func cappedValue(_ requested: Int, target: Int) -> Int {
        min(max(requested, 1), target)
    }

    /// How far back a past day may be logged or adjusted from the month view.
    public static let pastDaysEditable = 365

    /// A log for `day` is allowed when it is not in the user's future and not too old.
    public static func checkLoggable(_ day: LocalDate, today: LocalDate) throws {
        guard day <= today else { throw HabitsErrors.validation("cannot log a day in the future (today is \(today))") }
        guard today.days(since: day) <= pastDaysEditable else { throw HabitsErrors.validation("cannot log a day more than \(pastDaysEditable) days ago") }
    }

    public static let themes: Set<String> = ["honey", "mint", "night"]
}
