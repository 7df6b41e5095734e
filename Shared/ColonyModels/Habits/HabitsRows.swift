import Foundation

// HabitHive's rows in the seed's shape (`habithive.md`): the habits service answers with them
// and its events carry them, so the realtime service can present them as row changes.

public enum HabitType: String, Codable, Sendable, CaseIterable {
    case checkbox
    case counter
}

/// `habit_logs`: one per habit and user-local day.
public struct HabitLogRow: Codable, Sendable, Equatable {
    public var id: UUID
    public var habitId: UUID
    public var userId: UUID
    public var logDate: LocalDate
    public var value: Int
    public var source: String
    public var createdAt: Date

    public init(id: UUID, habitId: UUID, userId: UUID, logDate: LocalDate, value: Int, source: String, createdAt: Date) {
        self.id = id
        self.habitId = habitId
        self.userId = userId
        self.logDate = logDate
        self.value = value
        self.source = source
        self.createdAt = createdAt
    }
}

/// `hives`: a group of 2–10 keeping one shared streak.
public struct HiveRow: Codable, Sendable, Equatable {
    public var id: UUID
    public var name: String
    public var ownerId: UUID
    public var colorHex: String
    public var type: HabitType
    public var targetPerDay: Int
    public var rule: String
    public var threshold: Int?
    public var scheduleDaily: Bool
    public var scheduleWeekmask: Int
    public var currentLength: Int
    public var lastAdvancedOn: LocalDate?
    /// The habit this hive was converted from, if any (its owner's habit).
    public var sourceHabitId: UUID?
    public var createdAt: Date

    public init(id: UUID, name: String, ownerId: UUID, colorHex: String, type: HabitType, targetPerDay: Int, rule: String, threshold: Int?, scheduleDaily: Bool, scheduleWeekmask: Int, currentLength: Int, lastAdvancedOn: LocalDate?, createdAt: Date, sourceHabitId: UUID? = nil) {
        self.id = id
        self.name = name
        self.ownerId = ownerId
        self.colorHex = colorHex
        self.type = type
        self.targetPerDay = targetPerDay
        self.rule = rule
        self.threshold = threshold
        self.scheduleDaily = scheduleDaily
        self.scheduleWeekmask = scheduleWeekmask
        self.currentLength = currentLength
        self.lastAdvancedOn = lastAdvancedOn
        self.sourceHabitId = sourceHabitId
        self.createdAt = createdAt
    }
}

/// `hive_members`.
public struct HiveMemberRow: Codable, Sendable, Equatable {
    public var hiveId: UUID
    public var userId: UUID
    public var role: String
    public var joinedAt: Date

    public init(hiveId: UUID, userId: UUID, role: String, joinedAt: Date) {
        self.hiveId = hiveId
        self.userId = userId
        self.role = role
        self.joinedAt = joinedAt
    }
}

/// `hive_member_days`: a member's value for one of their local days; done when value > 0.
public struct HiveMemberDayRow: Codable, Sendable, Equatable {
    public var hiveId: UUID
    public var userId: UUID
    public var dayDate: LocalDate
    public var value: Int
    public var done: Bool

    public init(hiveId: UUID, userId: UUID, dayDate: LocalDate, value: Int) {
        self.hiveId = hiveId
        self.userId = userId
        self.dayDate = dayDate
        self.value = value
        self.done = value > 0
    }
}

/// `hive_days`: the hive's tally for one day and whether it advanced the shared streak.
public struct HiveDayRow: Codable, Sendable, Equatable {
    public var hiveId: UUID
    public var dayDate: LocalDate
    public var completeCount: Int
    public var requiredCount: Int
    public var advanced: Bool

    public init(hiveId: UUID, dayDate: LocalDate, completeCount: Int, requiredCount: Int, advanced: Bool) {
        self.hiveId = hiveId
        self.dayDate = dayDate
        self.completeCount = completeCount
        self.requiredCount = requiredCount
        self.advanced = advanced
    }
}

/// The seed's `activity_type`, plus `hive_left` so the feed shows departures.
public enum ActivityType: String, Codable, Sendable, CaseIterable {
    case habitCompleted = "habit_completed"
    case streakMilestone = "streak_milestone"
    case hiveJoined = "hive_joined"
    case hiveLeft = "hive_left"
    case hiveAdvanced = "hive_advanced"
    case hiveBroken = "hive_broken"
}

/// `activity_events`: one line of a hive's feed.
public struct ActivityEventRow: Codable, Sendable, Equatable {
    public var id: UUID
    public var actorId: UUID?
    public var hiveId: UUID?
    public var habitId: UUID?
    public var type: ActivityType
    public var data: [String: JSONValue]
    public var createdAt: Date

    public init(id: UUID, actorId: UUID?, hiveId: UUID?, habitId: UUID?, type: ActivityType, data: [String: JSONValue], createdAt: Date) {
        self.id = id
        self.actorId = actorId
        self.hiveId = hiveId
        self.habitId = habitId
        self.type = type
        self.data = data
        self.createdAt = createdAt
    }
}

public enum HiveInvitationStatus: String, Codable, Sendable, CaseIterable {
    case pending
    case accepted
    case declined
}

/// `hive_invitations` (an addition): the owner invites one of their contact matches; the
/// invitee accepts (and joins) or declines.
public struct HiveInvitationRow: Codable, Sendable, Equatable {
    public var id: UUID
    public var hiveId: UUID
    public var userId: UUID
    public var invitedBy: UUID
    public var status: HiveInvitationStatus
    public var createdAt: Date
    public var decidedAt: Date?

    public init(id: UUID, hiveId: UUID, userId: UUID, invitedBy: UUID, status: HiveInvitationStatus, createdAt: Date, decidedAt: Date?) {
        self.id = id
        self.hiveId = hiveId
        self.userId = userId
        self.invitedBy = invitedBy
        self.status = status
        self.createdAt = createdAt
        self.decidedAt = decidedAt
    }
}
