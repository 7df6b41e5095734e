import Foundation

// The habits service's events (topic `colony.habits`). Hive events are keyed by hive id, so a
// hive's story stays in order; `habit_logged` is keyed by user id. Each carries the changed
// rows in the seed's shape for the realtime service, and the member ids the notifications
// service pushes to.

extension EventType {
    public static let habitLogged: EventType = "habit_logged"
    public static let hiveCreated: EventType = "hive_created"
    public static let hiveJoined: EventType = "hive_joined"
    public static let hiveLeft: EventType = "hive_left"
    public static let hiveDeleted: EventType = "hive_deleted"
    public static let hiveDayLogged: EventType = "hive_day_logged"
    public static let hiveAdvanced: EventType = "hive_advanced"
    public static let hiveBroken: EventType = "hive_broken"
    public static let hiveAtRisk: EventType = "hive_at_risk"
    public static let streakMilestone: EventType = "streak_milestone"
    public static let hiveUpdated: EventType = "hive_updated"
    public static let hiveInvited: EventType = "hive_invited"
    public static let hiveInvitationAnswered: EventType = "hive_invitation_answered"
    public static let habitStreakMilestone: EventType = "habit_streak_milestone"
}

/// A habit log was written, changed or deleted (`habit_logs`).
public struct HabitLogged: EventPayload {
    public static let eventType = EventType.habitLogged
    public static let source = ColonyService.habits

    public var operation: RowOperation
    public var log: HabitLogRow
    /// Whether the day's value reached the habit's target.
    public var completed: Bool

    public init(operation: RowOperation, log: HabitLogRow, completed: Bool) {
        self.operation = operation
        self.log = log
        self.completed = completed
    }
}

public struct HiveCreated: EventPayload {
    public static let eventType = EventType.hiveCreated
    public static let source = ColonyService.habits

    public var hive: HiveRow
    public var owner: HiveMemberRow

    public init(hive: HiveRow, owner: HiveMemberRow) {
        self.hive = hive
        self.owner = owner
    }
}

public struct HiveJoined: EventPayload {
    public static let eventType = EventType.hiveJoined
    public static let source = ColonyService.habits

    public var member: HiveMemberRow
    public var hiveName: String
    public var memberIds: [UUID]
    public var activity: ActivityEventRow

    public init(member: HiveMemberRow, hiveName: String, memberIds: [UUID], activity: ActivityEventRow) {
        self.member = member
        self.hiveName = hiveName
        self.memberIds = memberIds
        self.activity = activity
    }
}

/// Why a member is no longer in a hive.
public enum HiveLeaveReason: String, Codable, Sendable {
    case left
    case removed
    case accountDeleted = "account_deleted"
}

public struct HiveLeft: EventPayload {
    public static let eventType = EventType.hiveLeft
    public static let source = ColonyService.habits

    public var member: HiveMemberRow
    public var reason: HiveLeaveReason
    public var hiveName: String
    /// The members who remain.
    public var memberIds: [UUID]

    public init(member: HiveMemberRow, reason: HiveLeaveReason, hiveName: String, memberIds: [UUID]) {
        self.member = member
        self.reason = reason
        self.hiveName = hiveName
        self.memberIds = memberIds
    }
}

/// The owner deleted the hive (or the owner's account was deleted): its members are told.
/// `members` are their rows (absent in events before it was added).
public struct HiveDeleted: EventPayload {
    public static let eventType = EventType.hiveDeleted
    public static let source = ColonyService.habits

    public var hive: HiveRow
    public var memberIds: [UUID]
    public var reason: HiveLeaveReason
    public var members: [HiveMemberRow]?

    public init(hive: HiveRow, memberIds: [UUID], reason: HiveLeaveReason, members: [HiveMemberRow]? = nil) {
        self.hive = hive
        self.memberIds = memberIds
        self.reason = reason
        self.members = members
    }
}

/// The owner edited the hive (name, colour, schedule, target).
public struct HiveUpdated: EventPayload {
    public static let eventType = EventType.hiveUpdated
    public static let source = ColonyService.habits

    public var hive: HiveRow
    public var previous: HiveRow
    public var memberIds: [UUID]

    public init(hive: HiveRow, previous: HiveRow, memberIds: [UUID]) {
        self.hive = hive
        self.previous = previous
        self.memberIds = memberIds
    }
}

/// The owner invited one of their contact matches (`hive_invitations` INSERT); the invitee is
/// pushed.
public struct HiveInvited: EventPayload {
    public static let eventType = EventType.hiveInvited
    public static let source = ColonyService.habits

    public var invitation: HiveInvitationRow
    public var hiveName: String
    public var invitedByName: String

    public init(invitation: HiveInvitationRow, hiveName: String, invitedByName: String) {
        self.invitation = invitation
        self.hiveName = hiveName
        self.invitedByName = invitedByName
    }
}

/// The invitee accepted (a `hive_joined` follows) or declined (`hive_invitations` UPDATE).
public struct HiveInvitationAnswered: EventPayload {
    public static let eventType = EventType.hiveInvitationAnswered
    public static let source = ColonyService.habits

    public var invitation: HiveInvitationRow
    public var previous: HiveInvitationRow

    public init(invitation: HiveInvitationRow, previous: HiveInvitationRow) {
        self.invitation = invitation
        self.previous = previous
    }
}

/// A habit's own streak reached 7, 30, 100 or 365 scheduled days: pushed to its owner.
public struct HabitStreakMilestone: EventPayload {
    public static let eventType = EventType.habitStreakMilestone
    public static let source = ColonyService.habits

    public var userId: UUID
    public var habitId: UUID
    public var habitName: String
    public var emoji: String?
    public var length: Int
    public var dayDate: LocalDate
    public var activity: ActivityEventRow

    public init(userId: UUID, habitId: UUID, habitName: String, emoji: String?, length: Int, dayDate: LocalDate, activity: ActivityEventRow) {
        self.userId = userId
        self.habitId = habitId
        self.habitName = habitName
        self.emoji = emoji
        self.length = length
        self.dayDate = dayDate
        self.activity = activity
    }
}

/// A member logged (or changed) their day in a hive (`hive_member_days`).
public struct HiveDayLogged: EventPayload {
    public static let eventType = EventType.hiveDayLogged
    public static let source = ColonyService.habits

    public var operation: RowOperation
    public var day: HiveMemberDayRow
    public var activity: ActivityEventRow?

    public init(operation: RowOperation, day: HiveMemberDayRow, activity: ActivityEventRow?) {
        self.operation = operation
        self.day = day
        self.activity = activity
    }
}

/// Every member was done on `day.day_date`: the shared streak grew to `hive.current_length`.
/// `completedBy` is the member whose log completed the day (nil when the day job advanced it);
/// the envelope's actor is that member too, so they are not told what they just did.
public struct HiveAdvanced: EventPayload {
    public static let eventType = EventType.hiveAdvanced
    public static let source = ColonyService.habits

    public var hive: HiveRow
    public var day: HiveDayRow
    public var memberIds: [UUID]
    public var activity: ActivityEventRow
    public var completedBy: UUID?

    public init(hive: HiveRow, day: HiveDayRow, memberIds: [UUID], activity: ActivityEventRow, completedBy: UUID? = nil) {
        self.hive = hive
        self.day = day
        self.memberIds = memberIds
        self.activity = activity
        self.completedBy = completedBy
    }
}

/// A scheduled day closed without every member done: the shared streak was reset.
public struct HiveBroken: EventPayload {
    public static let eventType = EventType.hiveBroken
    public static let source = ColonyService.habits

    public var hive: HiveRow
    public var day: HiveDayRow
    public var previousLength: Int
    public var memberIds: [UUID]
    public var activity: ActivityEventRow

    public init(hive: HiveRow, day: HiveDayRow, previousLength: Int, memberIds: [UUID], activity: ActivityEventRow) {
        self.hive = hive
        self.day = day
        self.previousLength = previousLength
        self.memberIds = memberIds
        self.activity = activity
    }
}

/// Around 20:00 in the missing members' local time, some members are done and these are not.
public struct HiveAtRisk: EventPayload {
    public static let eventType = EventType.hiveAtRisk
    public static let source = ColonyService.habits

    public var hiveId: UUID
    public var hiveName: String
    public var dayDate: LocalDate
    public var missingUserIds: [UUID]
    public var doneUserIds: [UUID]

    public init(hiveId: UUID, hiveName: String, dayDate: LocalDate, missingUserIds: [UUID], doneUserIds: [UUID]) {
        self.hiveId = hiveId
        self.hiveName = hiveName
        self.dayDate = dayDate
        self.missingUserIds = missingUserIds
        self.doneUserIds = doneUserIds
    }
}

/// The shared streak reached 7, 30, 100 or 365 days.
public struct StreakMilestone: EventPayload {
    public static let eventType = EventType.streakMilestone
    public static let source = ColonyService.habits

    public var hiveId: UUID
    public var hiveName: String
    public var length: Int
    public var dayDate: LocalDate
    public var memberIds: [UUID]
    public var activity: ActivityEventRow

    public init(hiveId: UUID, hiveName: String, length: Int, dayDate: LocalDate, memberIds: [UUID], activity: ActivityEventRow) {
        self.hiveId = hiveId
        self.hiveName = hiveName
        self.length = length
        self.dayDate = dayDate
        self.memberIds = memberIds
        self.activity = activity
    }
}
