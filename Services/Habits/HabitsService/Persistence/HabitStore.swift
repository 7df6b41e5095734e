import ColonyPlatform
import ColonyModels
import Foundation
import Logging
import PostgresNIO

/// `habits` and `habit_logs`. Every statement names the owner, so another user's habit is
/// simply not found.
struct HabitStore: Sendable {
    let logger: Logger

    func insert(_ draft: HabitDraft, userID: UUID, on connection: PostgresConnection) async throws -> HabitRow {
        try await connection.query("""
            INSERT INTO habits (user_id, name, emoji, color_hex, type, target_per_day, schedule_daily, schedule_weekmask, reminder_times)
            VALUES (\(userID), \(draft.name), \(draft.emoji), \(draft.colorHex), \(draft.type.rawValue)::habit_type, \(draft.targetPerDay),
                    \(draft.scheduleDaily), \(draft.scheduleWeekmask), \(draft.reminderTimes)::text[])
            RETURNING \(unescaped: HabitRow.columns)
            """, logger: logger).collect().first.map(HabitRow.init(row:))!
    }

    func list(userID: UUID, includeArchived: Bool, on connection: PostgresConnection) async throws -> [HabitRow] {
        try await connection.query("""
            SELECT \(unescaped: HabitRow.columns) FROM habits
            WHERE user_id = \(userID) AND (is_active OR \(includeArchived))
            ORDER BY created_at DESC, id
            """, logger: logger).collect().map(HabitRow.init(row:))
    }

    func find(_ habitID: UUID, userID: UUID, forUpdate: Bool = false, on connection: PostgresConnection) async throws -> HabitRow? {
        try await connection.query("""
            SELECT \(unescaped: HabitRow.columns) FROM habits WHERE id = \(habitID) AND user_id = \(userID) \(unescaped: forUpdate ? "FOR UPDATE" : "")
            """, logger: logger).collect().first.map(HabitRow.init(row:))
    }

    /// The habit with its owner's clock, in one round trip (what logging needs).
    func findWithClock(_ habitID: UUID, userID: UUID, on connection: PostgresConnection) async throws -> (habit: HabitRow, clock: UserClock)? {
        var rows: [PostgresRow] = []
        for try await row in try await connection.execute(FindHabitWithClock(habitID: habitID, userID: userID), logger: logger) { rows.append(row) }
        guard let row = rows.first else { return nil }
        var cells = RowCells(row)
        let habit = try HabitRow(cells: &cells)
        let clock = UserClock(timeZoneIdentifier: try cells.next(String.self), dayStartHour: try cells.next(Int.self)) ?? .utc
        return (habit, clock)
    }

    func update(_ habitID: UUID, userID: UUID, _ draft: HabitDraft, on connection: PostgresConnection) async throws -> HabitRow? {
        try await connection.query("""
            UPDATE habits SET name = \(draft.name), emoji = \(draft.emoji), color_hex = \(draft.colorHex), type = \(draft.type.rawValue)::habit_type,
                target_per_day = \(draft.targetPerDay), schedule_daily = \(draft.scheduleDaily), schedule_weekmask = \(draft.scheduleWeekmask),
                reminder_times = \(draft.reminderTimes)::text[], updated_at = now()
            WHERE id = \(habitID) AND user_id = \(userID)
            RETURNING \(unescaped: HabitRow.columns)
            """, logger: logger).collect().first.map(HabitRow.init(row:))
    }

    func setActive(_ habitID: UUID, userID: UUID, active: Bool, on connection: PostgresConnection) async throws -> HabitRow? {
        try await connection.query("""
            UPDATE habits SET is_active = \(active), updated_at = now() WHERE id = \(habitID) AND user_id = \(userID)
            RETURNING \(unescaped: HabitRow.columns)
            """, logger: logger).collect().first.map(HabitRow.init(row:))
    }

    func delete(_ habitID: UUID, userID: UUID, on connection: PostgresConnection) async throws -> Bool {
        try await connection.query("DELETE FROM habits WHERE id = \(habitID) AND user_id = \(userID) RETURNING id", logger: logger).collect().count == 1
    }

    /// The outcome of writing a day's log.
    enum LogWrite {
        case inserted(HabitLogRow)
        case updated(HabitLogRow, previousValue: Int)
        /// Same value as stored: nothing changed (a replay).
        case unchanged(HabitLogRow)
    }

    /// One log per habit and day: inserts, or sets the new value; a write of the value already
    /// stored changes nothing, so replays leave no trace.
    func writeLog(habitID: UUID, userID: UUID, day: LocalDate, value: Int, source: String, on connection: PostgresConnection) async throws -> LogWrite {
        var rows: [PostgresRow] = []
        for try await row in try await connection.execute(WriteHabitLog(habitID: habitID, userID: userID, day: day, value: value, source: source), logger: logger) { rows.append(row) }
        if let row = rows.first {
            var cells = RowCells(row)
            let log = try HabitLogRow(cells: &cells)
            let previous = try cells.next(Int?.self)
            return previous.map { .updated(log, previousValue: $0) } ?? .inserted(log)
        }
        let existing = try await connection.query("SELECT \(unescaped: HabitLogRow.columns) FROM habit_logs WHERE habit_id = \(habitID) AND log_date = \(day)", logger: logger)
            .collect().first.map(HabitLogRow.init(row:))
        guard let existing else { throw HabitsErrors.habitNotFound }
        return .unchanged(existing)
    }

    /// One habit's values from `since` through `through` (prepared: every completed log reads them).
    func recentValues(habitID: UUID, userID: UUID, since: LocalDate, through: LocalDate, on connection: PostgresConnection) async throws -> [LocalDate: Int] {
        var values: [LocalDate: Int] = [:]
        for try await (day, value) in try await connection.execute(RecentValues(habitID: habitID, userID: userID, since: since, through: through), logger: logger) { values[day] = value }
        return values
    }

    func logs(habitID: UUID, userID: UUID, from: LocalDate?, to: LocalDate?, on connection: PostgresConnection) async throws -> [HabitLogRow] {
        try await connection.query("""
            SELECT \(unescaped: HabitLogRow.columns) FROM habit_logs
            WHERE habit_id = \(habitID) AND user_id = \(userID)
              AND (\(from)::date IS NULL OR log_date >= \(from)) AND (\(to)::date IS NULL OR log_date <= \(to))
            ORDER BY log_date
            """, logger: logger).collect().map(HabitLogRow.init(row:))
    }

    /// Every log of the user's habits since `since`, for insights.
    func values(userID: UUID, habitID: UUID?, since: LocalDate?, on connection: PostgresConnection) async throws -> [UUID: [LocalDate: Int]] {
        var result: [UUID: [LocalDate: Int]] = [:]
        let rows = try await connection.query("""
            SELECT habit_id, log_date, value FROM habit_logs
            WHERE user_id = \(userID) AND (\(habitID)::uuid IS NULL OR habit_id = \(habitID)) AND (\(since)::date IS NULL OR log_date >= \(since))
            """, logger: logger)
        for try await row in rows {
            let (habit, day, value) = try row.read { c in (try c.next(UUID.self), try c.next(LocalDate.self), try c.next(Int.self)) }
            result[habit, default: [:]][day] = value
        }
        return result
    }

    func deleteLog(habitID: UUID, userID: UUID, day: LocalDate, on connection: PostgresConnection) async throws -> HabitLogRow? {
        try await connection.query("""
            DELETE FROM habit_logs WHERE habit_id = \(habitID) AND user_id = \(userID) AND log_date = \(day)
            RETURNING \(unescaped: HabitLogRow.columns)
            """, logger: logger).collect().first.map(HabitLogRow.init(row:))
    }
}
