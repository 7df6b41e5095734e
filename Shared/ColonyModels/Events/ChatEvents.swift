import Foundation

// The chat service's events (topic `colony.chat`). Group, member and message events are keyed by
// group id, so one group's story stays in order; a personal calendar event is keyed by its
// creator. Each carries the row in the seed's shape for the realtime service; membership events
// let realtime and notifications keep their own projection of who is in which group.

extension EventType {
    public static let groupCreated: EventType = "group_created"
    public static let groupUpdated: EventType = "group_updated"
    public static let groupDeleted: EventType = "group_deleted"
    public static let groupMemberAdded: EventType = "group_member_added"
    public static let groupMemberRemoved: EventType = "group_member_removed"
    public static let groupRoleChanged: EventType = "group_role_changed"
    public static let messageSent: EventType = "message_sent"
    public static let messageEdited: EventType = "message_edited"
    public static let messageDeleted: EventType = "message_deleted"
    public static let calendarEventCreated: EventType = "calendar_event_created"
    public static let calendarEventUpdated: EventType = "calendar_event_updated"
    public static let calendarEventDeleted: EventType = "calendar_event_deleted"
    public static let userErased: EventType = "user_erased"
}

/// A new group with its first members (the owner, and anyone added at creation).
public struct GroupCreated: EventPayload {
    public static let eventType = EventType.groupCreated
    public static let source = ColonyService.chat

    public var group: GroupRow
    public var members: [GroupMemberRow]

    public init(group: GroupRow, members: [GroupMemberRow]) {
        self.group = group
        self.members = members
    }
}

/// Renamed, new picture, or a new owner; `previous` is the row before (absent in events
/// before it was added).
public struct GroupUpdated: EventPayload {
    public static let eventType = EventType.groupUpdated
    public static let source = ColonyService.chat

    public var group: GroupRow
    public var previous: GroupRow?

    public init(group: GroupRow, previous: GroupRow? = nil) {
        self.group = group
        self.previous = previous
    }
}

/// The group is gone with its messages, files and events; `memberIds` were its members and
/// `members` their rows (absent in events before it was added).
public struct GroupDeleted: EventPayload {
    public static let eventType = EventType.groupDeleted
    public static let source = ColonyService.chat

    public var group: GroupRow
    public var memberIds: [UUID]
    public var members: [GroupMemberRow]?

    public init(group: GroupRow, memberIds: [UUID], members: [GroupMemberRow]? = nil) {
        self.group = group
        self.memberIds = memberIds
        self.members = members
    }
}

/// An account was erased: its `user` row went, with every message it sent. Keyed by the user;
/// `sharedWith` are those who were in a group with it, whose apps drop its messages.
public struct UserErased: EventPayload {
    public static let eventType = EventType.userErased
    public static let source = ColonyService.chat

    public var userId: UUID
    public var displayName: String
    public var sharedWith: [UUID]

    public init(userId: UUID, displayName: String, sharedWith: [UUID]) {
        self.userId = userId
        self.displayName = displayName
        self.sharedWith = sharedWith
    }
}

public struct GroupMemberAdded: EventPayload {
    public static let eventType = EventType.groupMemberAdded
    public static let source = ColonyService.chat

    public var member: GroupMemberRow
    public var groupName: String

    public init(member: GroupMemberRow, groupName: String) {
        self.member = member
        self.groupName = groupName
    }
}

/// Why a member is no longer in a group.
public enum GroupLeaveReason: String, Codable, Sendable {
    case left
    case removed
    case accountDeleted = "account_deleted"
}

public struct GroupMemberRemoved: EventPayload {
    public static let eventType = EventType.groupMemberRemoved
    public static let source = ColonyService.chat

    public var member: GroupMemberRow
    public var reason: GroupLeaveReason

    public init(member: GroupMemberRow, reason: GroupLeaveReason) {
        self.member = member
        self.reason = reason
    }
}

/// A member's role changed (promotion, demotion, or either side of an ownership transfer).
public struct GroupRoleChanged: EventPayload {
    public static let eventType = EventType.groupRoleChanged
    public static let source = ColonyService.chat

    public var member: GroupMemberRow
    public var previousRole: GroupRole

    public init(member: GroupMemberRow, previousRole: GroupRole) {
        self.member = member
        self.previousRole = previousRole
    }
}

/// A new message; `senderDisplayName` is the seed's `user!sent_by` join, so clients need no lookup.
public struct MessageSent: EventPayload {
    public static let eventType = EventType.messageSent
    public static let source = ColonyService.chat

    public var message: MessageRow
    public var senderDisplayName: String

    public init(message: MessageRow, senderDisplayName: String) {
        self.message = message
        self.senderDisplayName = senderDisplayName
    }
}

/// `previous` is the row before the edit (absent in events before it was added).
public struct MessageEdited: EventPayload {
    public static let eventType = EventType.messageEdited
    public static let source = ColonyService.chat

    public var message: MessageRow
    public var previous: MessageRow?

    public init(message: MessageRow, previous: MessageRow? = nil) {
        self.message = message
        self.previous = previous
    }
}

/// The deleted row as it was.
public struct MessageDeleted: EventPayload {
    public static let eventType = EventType.messageDeleted
    public static let source = ColonyService.chat

    public var message: MessageRow
    public var deletedBy: UUID?

    public init(message: MessageRow, deletedBy: UUID?) {
        self.message = message
        self.deletedBy = deletedBy
    }
}

public struct CalendarEventCreated: EventPayload {
    public static let eventType = EventType.calendarEventCreated
    public static let source = ColonyService.chat

    public var event: CalendarEventRow

    public init(event: CalendarEventRow) {
        self.event = event
    }
}

/// `previous` is the row before the change (absent in events before it was added).
public struct CalendarEventUpdated: EventPayload {
    public static let eventType = EventType.calendarEventUpdated
    public static let source = ColonyService.chat

    public var event: CalendarEventRow
    public var previous: CalendarEventRow?

    public init(event: CalendarEventRow, previous: CalendarEventRow? = nil) {
        self.event = event
        self.previous = previous
    }
}

/// The deleted row as it was.
public struct CalendarEventDeleted: EventPayload {
    public static let eventType = EventType.calendarEventDeleted
    public static let source = ColonyService.chat

    public var event: CalendarEventRow

    public init(event: CalendarEventRow) {
        self.event = event
    }
}
