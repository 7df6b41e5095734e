import ColonyModels
import ColonyPlatform
import Foundation
import Logging
import PostgresNIO

/// A user's own habits: CRUD, logging by user-local day, insights. Every operation runs on the
/// caller's transaction (so an idempotent replay can store its answer in the same commit).
struct Habits: Sendable {
    let outbox: Outbox
    let logger: Logger
    var store: HabitStore { HabitStore(logger: logger) }
    var profiles: ProfileStore { ProfileStore(logger: logger) }
    var activity: ActivityStore { ActivityStore(logger: logger) }

    func create(_ draft: HabitDraft, userID: UUID, on connection: PostgresConnection) async throws -> HabitRow {
        let draft = try draft.validated()
        _ = try await profiles.require(userID, on: connection)
        return try await store.insert(draft, userID: userID, on: connection)
    }

    func get(_ habitID: UUID, userID: UUID, on connection: PostgresConnection) async throws -> HabitRow {
        guard let habit = try await store.find(habitID, userID: userID, on: connection) else { throw HabitsErrors.habitNotFound }
        return habit
    }

    /// Applies the changes to the stored habit and validates the result as a whole.
    func update(_ habitID: UUID, userID: UUID, change: (inout HabitDraft) -> Void, on connection: PostgresConnection) async throws -> HabitRow {
        guard let habit = try await store.find(habitID, userID: userID, forUpdate: true, on: connection) else { throw HabitsErrors.habitNotFound }
        var draft = HabitDraft(name: habit.name, emoji: habit.emoji, colorHex: habit.colorHex, type: habit.type, targetPerDay: habit.targetPerDay,
                               scheduleDaily: habit.scheduleDaily, scheduleWeekmask: habit.scheduleWeekmask, reminderTimes: habit.reminderTimes)
        let before = draft
        change(&draft)
        // A type or a target sent against the habit's stored other one conflicts with the habit.
        if draft.type == .checkbox, draft.targetPerDay != 1, (draft.type == before.type) != (draft.targetPerDay == before.targetPerDay) {
            throw HabitsErrors.checkboxTarget
        }
        guard let updated = try await store.update(habitID, userID: userID, try draft.validated(), on: connection) else { throw HabitsErrors.habitNotFound }
        return updated
    }

    func setActive(_ habitID: UUID, userID: UUID, active: Bool, on connection: PostgresConnection) async throws -> HabitRow {
        guard let habit = try await store.setActive(habitID, userID: userID, active: active, on: connection) else { throw HabitsErrors.habitNotFound }
        return habit
    }

    func delete(_ habitID: UUID, userID: UUID, on connection: PostgresConnection) async throws {
        guard try await store.delete(habitID, userID: userID, on: connection) else { throw HabitsErrors.habitNotFound }
    }

    /// What the client asks to log: a value, for today (optionally "today as of `at`", for an
    /// offline queue) or for an explicit past day from the month view.
    struct LogRequest: Sendable {
        var value: Int = 1
        var at: Date?
        var date: LocalDate?
    }

    /// Writes the day's log (the seed's `log_habit`): value capped at the target, one row per
    /// day. Only a real change publishes `habit_logged`, and the "completed" feed line is
    /// written once per day, so replays change nothing. A habit made into a hive counts the log
    /// for the hive too (while the day is open there).
    func log(_ habitID: UUID, userID: UUID, _ request: LogRequest, now: Date = Date(), on connection: PostgresConnection) async throws -> HabitLogRow {
        guard let (habit, clock) = try await store.findWithClock(habitID, userID: userID, on: connection) else { throw HabitsErrors.habitNotFound }
        let today = clock.localDay(at: now)
        if let at = request.at, at > now.addingTimeInterval(300) { throw HabitsErrors.validation("at cannot be in the future") }
        let day = request.date ?? clock.localDay(at: request.at ?? now)
        try HabitRules.checkLoggable(day, today: today)
        guard request.value >= 1 else { throw HabitsErrors.validation("value must be at least 1") }
        // The hive is locked before the log is written: the order logging the hive takes too.
        let hives = Hives(outbox: outbox, logger: logger)
        var linked: HiveDayCloser.Candidate?
        if let hiveID = habit.hiveId { linked = try await hives.closer.lockCandidates([hiveID], on: connection).first }
        let log = try await write(habit, userID: userID, day: day, value: request.value, source: request.date == nil ? "api" : "manual", clock: clock, now: now, on: connection)
        if let linked, linked.members[userID] != nil, day > linked.lastClosedOn {
            _ = try await hives.record(linked, userID: userID, day: day, value: request.value, now: now, on: connection)
        }
        return log
    }

    /// Writes the habit's log for `day` (capped at its target) with its feed line, event and,
    /// when the day completes a scheduled run of 7, 30, 100 or 365 days, the streak milestone.
    func write(_ habit: HabitRow, userID: UUID, day: LocalDate, value requested: Int, source: String, clock: UserClock, now: Date,
               on connection: PostgresConnection) async throws -> HabitLogRow {
        let value = HabitRules.cappedValue(requested, target: habit.targetPerDay)
        let log: HabitLogRow
        let operation: RowOperation
        let wasComplete: Bool
        switch try await store.writeLog(habitID: habit.id, userID: userID, day: day, value: value, source: source, on: connection) {
        case .unchanged(let existing):
            return existing
        case .inserted(let row):
            (log, operation, wasComplete) = (row, .insert, false)
        case .updated(let row, let previous):
            (log, operation, wasComplete) = (row, .update, previous >= habit.targetPerDay)
        }
        let completed = log.value >= habit.targetPerDay
        if completed && !wasComplete {
            try await activity.record([.init(actor: userID, hive: nil, habit: habit.id, type: .habitCompleted, data: ["log_date": .string(day.description)],
                                             dedupeKey: "habit_completed:\(habit.id):\(day)", at: now)], on: connection)
        }
        try await outbox.publish(EventEnvelope(app: .habithive, aggregateId: userID.lowercased, actor: userID, payload: HabitLogged(operation: operation, log: log, completed: completed)),
                                 on: connection, logger: logger)
        if completed && !wasComplete && habit.schedule.isScheduled(day) {
            try await milestone(habit, userID: userID, day: day, clock: clock, now: now, on: connection)
        }
        return log
    }

    /// A personal streak milestone: the run of done scheduled days ending on `day` reached 7,
    /// 30, 100 or 365. Once per habit and day (the feed line's key), pushed to the user.
    func milestone(_ habit: HabitRow, userID: UUID, day: LocalDate, clock: UserClock, now: Date, on connection: PostgresConnection) async throws {
        // Read in widening windows (HabitRules.streak): reading every log of the habit on every
        // completion was most of this request's database time once a habit had a year of logs.
        let streak = try await HabitRules.streak(endingOn: day, schedule: habit.schedule, target: habit.targetPerDay, createdOn: clock.localDay(at: habit.createdAt)) { since in
            try await store.recentValues(habitID: habit.id, userID: userID, since: since, through: day, on: connection)
        }
        guard HiveRules.milestones.contains(streak) else { return }
        let entry = ActivityStore.Entry(actor: userID, hive: nil, habit: habit.id, type: .streakMilestone,
                                        data: ["length": .number(Double(streak)), "day": .string(day.description)],
                                        dedupeKey: "habit_streak_milestone:\(habit.id):\(day)", at: now)
        guard let written = try await activity.record([entry], on: connection).first else { return }
        try await outbox.publish(EventEnvelope(app: .habithive, aggregateId: userID.lowercased, actor: nil,
                                               payload: HabitStreakMilestone(userId: userID, habitId: habit.id, habitName: habit.name, emoji: habit.emoji,
                                                                             length: streak, dayDate: day, activity: written)),
                                 on: connection, logger: logger)
    }

    func logs(_ habitID: UUID, userID: UUID, from: LocalDate?, to: LocalDate?, on connection: PostgresConnection) async throws -> [HabitLogRow] {
        _ = try await get(habitID, userID: userID, on: connection)
        return try await store.logs(habitID: habitID, userID: userID, from: from, to: to, on: connection)
    }

    func deleteLog(_ habitID: UUID, userID: UUID, day: LocalDate, on connection: PostgresConnection) async throws {
        let habit = try await get(habitID, userID: userID, on: connection)
        guard let log = try await store.deleteLog(habitID: habitID, userID: userID, day: day, on: connection) else { throw HabitsErrors.logNotFound }
        try await outbox.publish(EventEnvelope(app: .habithive, aggregateId: userID.lowercased, actor: userID, payload: HabitLogged(operation: .delete, log: log, completed: log.value >= habit.targetPerDay)),
                                 on: connection, logger: logger)
    }

    // MARK: insights

    // The answers are the document's types (Domain/Schemas.swift).
    typealias HabitInsights = Components.Schemas.HabitInsights

    func insights(_ habitID: UUID, userID: UUID, year: Int?, now: Date = Date(), on connection: PostgresConnection) async throws -> HabitInsights {
        guard let (habit, clock) = try await store.findWithClock(habitID, userID: userID, on: connection) else { throw HabitsErrors.habitNotFound }
        let today = clock.localDay(at: now)
        let values = try await store.values(userID: userID, habitID: habitID, since: nil, on: connection)[habitID] ?? [:]
        let history = HabitHistory(values: values, target: habit.targetPerDay, schedule: habit.schedule, createdOn: clock.localDay(at: habit.createdAt))
        let year = year ?? today.year
        guard (2000...2100).contains(year) else { throw HabitsErrors.validation("year must be between 2000 and 2100") }
        return HabitInsights(
            habitId: habitID.lowercased, today: today.description,
            currentStreak: history.currentStreak(today: today), longestStreak: history.longestStreak(today: today),
            completion: Self.completion(of: [history], today: today), year: year, heatmap: history.heatmap(year: year).map(Components.Schemas.HeatmapDay.init)
        )
    }

    typealias OverallInsights = Components.Schemas.OverallInsights

    /// Completion across all active habits, and each habit's current streak.
    func overallInsights(userID: UUID, now: Date = Date(), on connection: PostgresConnection) async throws -> OverallInsights {
        let clock = try await profiles.require(userID, on: connection).clock
        let today = clock.localDay(at: now)
        let habits = try await store.list(userID: userID, includeArchived: false, on: connection)
        let values = try await store.values(userID: userID, habitID: nil, since: nil, on: connection)
        let histories = habits.map { HabitHistory(values: values[$0.id] ?? [:], target: $0.targetPerDay, schedule: $0.schedule, createdOn: clock.localDay(at: $0.createdAt)) }
        let summaries = zip(habits, histories).map { habit, history in
            Components.Schemas.HabitInsightSummary(habitId: habit.id.lowercased, name: habit.name, emoji: habit.emoji, currentStreak: history.currentStreak(today: today), completion: Self.completion(of: [history], today: today))
        }
        return OverallInsights(today: today.description, completion: Self.completion(of: histories, today: today), habits: summaries)
    }

    /// Done of scheduled days over the last week, month and year.
    static func completion(of histories: [HabitHistory], today: LocalDate) -> Components.Schemas.CompletionWindows {
        func window(_ window: InsightWindow) -> Components.Schemas.Completion {
            let tallies = histories.map { $0.tally(lastDays: window.rawValue, today: today) }
            return .init(Completion(done: tallies.map(\.done).reduce(0, +), scheduled: tallies.map(\.scheduled).reduce(0, +)))
        }
        return .init(week: window(.week), month: window(.month), year: window(.year))
    }
}
