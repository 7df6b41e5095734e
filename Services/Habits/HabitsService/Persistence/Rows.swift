import ColonyPlatform
import ColonyModels
import Foundation
import PostgresNIO

// The service's own rows (the shared ones live in ColonyModels), each with the column list its
// SELECTs and RETURNINGs use and the decoder for that list.

/// `profiles`, as the user sees their own.
public struct ProfileRow: Codable, Sendable, Equatable {
    public var id: UUID
    public var displayName: String
    public var avatarUrl: String?
    public var timezone: String
    public var dayStartHour: Int
    public var theme: String
    public var createdAt: Date
    public var updatedAt: Date

    static let columns = "id, display_name, avatar_url, timezone, day_start_hour, theme, created_at, updated_at"

    init(row: PostgresRow) throws {
        var cells = RowCells(row)
        id = try cells.next(); displayName = try cells.next(); avatarUrl = try cells.next(String?.self); timezone = try cells.next()
        dayStartHour = try cells.next(Int.self); theme = try cells.next(); createdAt = try cells.next(); updatedAt = try cells.next()
    }

    /// The user's clock; UTC at 0 h if stored values are somehow unusable.
    var clock: UserClock { UserClock(timeZoneIdentifier: timezone, dayStartHour: dayStartHour) ?? .utc }
}

/// `habits`.
public struct HabitRow: Codable, Sendable, Equatable {
    public var id: UUID
    public var userId: UUID
    public var name: String
    public var emoji: String?
    public var colorHex: String
    public var type: HabitType
    public var targetPerDay: Int
    public var scheduleDaily: Bool
    public var scheduleWeekmask: Int
    public var reminderTimes: [String]
    public var isActive: Bool
    /// The hive this habit was converted into, if any (logging either counts for both).
    public var hiveId: UUID?
    public var createdAt: Date
    public var updatedAt: Date

    static let columns = "id, user_id, name, emoji, color_hex, type::text, target_per_day, schedule_daily, schedule_weekmask, reminder_times, is_active, created_at, updated_at, hive_id"

    init(row: PostgresRow) throws {
        var cells = RowCells(row)
        try self.init(cells: &cells)
    }

    /// The habit's columns (`columns`), cell by cell from where `cells` stands (a log reads the
    /// habit first: the variadic decode looked up generic metadata for each of its cells).
    init(cells: inout RowCells) throws {
        id = try cells.next(); userId = try cells.next(); name = try cells.next(); emoji = try cells.next(); colorHex = try cells.next()
        type = HabitType(rawValue: try cells.next(String.self)) ?? .checkbox
        targetPerDay = try cells.next(); scheduleDaily = try cells.next(); scheduleWeekmask = try cells.next(); reminderTimes = try cells.next()
        isActive = try cells.next(); createdAt = try cells.next(); updatedAt = try cells.next(); hiveId = try cells.next()
    }

    var schedule: Schedule { Schedule(daily: scheduleDaily, weekmask: scheduleWeekmask) }
}

extension HabitLogRow {
    static let columns = "id, habit_id, user_id, log_date, value, source, created_at"

    init(row: PostgresRow) throws {
        var cells = RowCells(row)
        try self.init(cells: &cells)
    }

    /// The log's columns (`columns`), cell by cell from where `cells` stands.
    init(cells: inout RowCells) throws {
        self.init(id: try cells.next(), habitId: try cells.next(), userId: try cells.next(), logDate: try cells.next(), value: try cells.next(),
                  source: try cells.next(), createdAt: try cells.next())
    }
}

extension HiveRow {
    static let columns = "id, name, owner_id, color_hex, type::text, target_per_day, rule, threshold, schedule_daily, schedule_weekmask, current_length, last_advanced_on, created_at, source_habit_id"

    init(row: PostgresRow) throws {
        var cells = RowCells(row)
        try self.init(cells: &cells)
    }

    /// The hive's columns (`columns`), cell by cell from where `cells` stands (what a statement
    /// selects after them is read next).
    init(cells c: inout RowCells) throws {
        self.init(id: try c.next(), name: try c.next(), ownerId: try c.next(), colorHex: try c.next(),
                  type: HabitType(rawValue: try c.next(String.self)) ?? .checkbox, targetPerDay: try c.next(Int.self), rule: try c.next(String.self),
                  threshold: try c.next(Int?.self), scheduleDaily: try c.next(Bool.self), scheduleWeekmask: try c.next(Int.self), currentLength: try c.next(Int.self),
                  lastAdvancedOn: try c.next(LocalDate?.self), createdAt: try c.next(Date.self), sourceHabitId: try c.next(UUID?.self))
    }

    var schedule: Schedule { Schedule(daily: scheduleDaily, weekmask: scheduleWeekmask) }
    var streak: SharedStreak { SharedStreak(currentLength: currentLength, lastAdvancedOn: lastAdvancedOn) }
}

extension HiveMemberRow {
    static let columns = "hive_id, user_id, role, joined_at"

    init(row: PostgresRow) throws {
        var cells = RowCells(row)
        try self.init(cells: &cells)
    }

    /// The member's columns (`columns`), cell by cell from where `cells` stands.
    init(cells c: inout RowCells) throws {
        self.init(hiveId: try c.next(UUID.self), userId: try c.next(UUID.self), role: try c.next(String.self), joinedAt: try c.next(Date.self))
    }
}

extension HiveMemberDayRow {
    static let columns = "hive_id, user_id, day_date, value"

    init(row: PostgresRow) throws {
        var cells = RowCells(row)
        try self.init(cells: &cells)
    }

    /// The member day's columns (`columns`), cell by cell from where `cells` stands.
    init(cells c: inout RowCells) throws {
        self.init(hiveId: try c.next(UUID.self), userId: try c.next(UUID.self), dayDate: try c.next(LocalDate.self), value: try c.next(Int.self))
    }
}

extension HiveDayRow {
    static let columns = "hive_id, day_date, complete_count, required_count, advanced"

    init(row: PostgresRow) throws {
        var c = RowCells(row)
        self.init(hiveId: try c.next(UUID.self), dayDate: try c.next(LocalDate.self), completeCount: try c.next(Int.self), requiredCount: try c.next(Int.self),
                  advanced: try c.next(Bool.self))
    }
}

/// `hive_invites`.
public struct HiveInviteRow: Codable, Sendable, Equatable {
    public var id: UUID
    public var hiveId: UUID
    public var code: String
    public var createdBy: UUID
    public var expiresAt: Date
    public var maxUses: Int
    public var useCount: Int
    public var createdAt: Date

    static let columns = "id, hive_id, code, created_by, expires_at, max_uses, use_count, created_at"

    init(row: PostgresRow) throws {
        var cells = RowCells(row)
        id = try cells.next(); hiveId = try cells.next(); code = try cells.next(); createdBy = try cells.next(); expiresAt = try cells.next()
        maxUses = try cells.next(Int.self); useCount = try cells.next(Int.self); createdAt = try cells.next()
    }
}

extension HiveInvitationRow {
    static let columns = "id, hive_id, user_id, invited_by, status::text, created_at, decided_at"

    init(row: PostgresRow) throws {
        var cells = RowCells(row)
        try self.init(cells: &cells)
    }

    /// The invitation's columns (`columns`), cell by cell from where `cells` stands.
    init(cells c: inout RowCells) throws {
        self.init(id: try c.next(UUID.self), hiveId: try c.next(UUID.self), userId: try c.next(UUID.self), invitedBy: try c.next(UUID.self),
                  status: HiveInvitationStatus(rawValue: try c.next(String.self)) ?? .pending, createdAt: try c.next(Date.self), decidedAt: try c.next(Date?.self))
    }
}

extension ActivityEventRow {
    static let columns = "id, actor_id, hive_id, habit_id, type::text, data::text, created_at"

    init(row: PostgresRow) throws {
        var cells = RowCells(row)
        let id: UUID = try cells.next(), actorId: UUID? = try cells.next(), hiveId: UUID? = try cells.next(), habitId: UUID? = try cells.next()
        let typeName: String = try cells.next(), data: String = try cells.next(), createdAt: Date = try cells.next()
        let object = (try? JSONDecoder().decode([String: JSONValue].self, from: Data(data.utf8))) ?? [:]
        self.init(id: id, actorId: actorId, hiveId: hiveId, habitId: habitId, type: ActivityType(rawValue: typeName) ?? .habitCompleted, data: object, createdAt: createdAt)
    }
}
