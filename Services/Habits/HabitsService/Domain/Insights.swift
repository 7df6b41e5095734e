import ColonyModels
import Foundation

/// Streaks and completion for one habit, computed from its logs. A day counts as done when
/// its value reached the target; only scheduled days count, so a Mon/Wed/Fri habit keeps its
/// streak over the weekend. Today not being done yet does not break the current streak.
public struct HabitHistory: Sendable {
    public let values: [LocalDate: Int]
    public let target: Int
    public let schedule: Schedule
    /// The first day that counts (the habit's creation day, or an earlier logged day).
    public let start: LocalDate

    public init(values: [LocalDate: Int], target: Int, schedule: Schedule, createdOn: LocalDate) {
        self.values = values
        self.target = target
        self.schedule = schedule
        self.start = min(createdOn, values.keys.min() ?? createdOn)
    }

    public func isDone(_ day: LocalDate) -> Bool { (values[day] ?? 0) >= target }

    public func currentStreak(today: LocalDate) -> Int {
        var streak = 0
        var day = today
        if schedule.isScheduled(today) && !isDone(today) { day = today.adding(days: -1) }
        while day >= start {
            if schedule.isScheduled(day) {
                guard isDone(day) else { break }
                streak += 1
            }
            day = day.adding(days: -1)
        }
        return streak
    }

    public func longestStreak(today: LocalDate) -> Int {
        var longest = 0
        var run = 0
        var day = start
        while day <= today {
            if schedule.isScheduled(day) {
                if isDone(day) {
                    run += 1
                    longest = max(longest, run)
                } else if day != today {
                    run = 0
                }
            }
            day = day.adding(days: 1)
        }
        return longest
    }

    /// Done and scheduled days among the last `days` days up to today (today only counts once
    /// done, so the morning does not lower the rate).
    public func tally(lastDays days: Int, today: LocalDate) -> (done: Int, scheduled: Int) {
        var done = 0
        var scheduled = 0
        var day = max(start, today.adding(days: -(days - 1)))
        while day <= today {
            if schedule.isScheduled(day) {
                let isDone = isDone(day)
                if day != today || isDone {
                    scheduled += 1
                    if isDone { done += 1 }
                }
            }
            day = day.adding(days: 1)
        }
        return (done, scheduled)
    }

    /// Every day of `year` with its value (0 when not logged).
    public func heatmap(year: Int) -> [HeatmapDay] {
        guard let first = LocalDate(year: year, month: 1, day: 1), let last = LocalDate(year: year, month: 12, day: 31) else { return [] }
        return (first.dayNumber...last.dayNumber).map { number in
            let day = LocalDate(dayNumber: number)
            let value = values[day] ?? 0
            return HeatmapDay(date: day, value: value, done: value >= target)
        }
    }
}

public struct HeatmapDay: Codable, Sendable, Equatable {
    public var date: LocalDate
    public var value: Int
    public var done: Bool
}

/// Completion windows the Insights screen filters by.
public enum InsightWindow: Int, CaseIterable, Sendable {
    case week = 7
    case month = 30
    case year = 365
}

/// A completion rate: done of scheduled days, and the percentage (nil with nothing scheduled yet).
public struct Completion: Codable, Sendable, Equatable {
    public var done: Int
    public var scheduled: Int
    public var percent: Double?

    public init(done: Int, scheduled: Int) {
        self.done = done
        self.scheduled = scheduled
        self.percent = scheduled == 0 ? nil : (Double(done) * 1000 / Double(scheduled)).rounded() / 10
    }
}
