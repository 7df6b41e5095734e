import Foundation

// Rows `colony-admin import supabase` brought over from an app's Supabase project. They tell the
// services that keep projections of others' data (realtime's and notifications' memberships,
// notifications' names and event posts) what was imported, so imported members get realtime
// changes and pushes at once. They describe history, not something that just happened: nothing
// is pushed or delivered to sockets for them.

extension EventType {
    public static let circleMemberImported: EventType = "circle_member_imported"
    public static let eventPostImported: EventType = "event_post_imported"
    public static let groupMemberImported: EventType = "group_member_imported"
    public static let hiveMemberImported: EventType = "hive_member_imported"
    public static let projectImported: EventType = "project_imported"
}

/// A circle membership, with the circle's name (for push texts). Keyed by circle.
public struct CircleMemberImported: EventPayload {
    public static let eventType: EventType = .circleMemberImported
    public static let source: ColonyService = .circles
    public var member: CircleMemberRow
    public var circleName: String

    public init(member: CircleMemberRow, circleName: String) {
        self.member = member
        self.circleName = circleName
    }
}

/// A live MyCirclee event post (RSVP alerts and Live Activities refer to it). Keyed by circle.
public struct EventPostImported: EventPayload {
    public static let eventType: EventType = .eventPostImported
    public static let source: ColonyService = .circles
    public var post: PostRow

    public init(post: PostRow) {
        self.post = post
    }
}

/// A Unify group membership, with the group's name. Keyed by group.
public struct GroupMemberImported: EventPayload {
    public static let eventType: EventType = .groupMemberImported
    public static let source: ColonyService = .chat
    public var member: GroupMemberRow
    public var groupName: String

    public init(member: GroupMemberRow, groupName: String) {
        self.member = member
        self.groupName = groupName
    }
}

/// A hive membership, with the hive's name. Keyed by hive.
public struct HiveMemberImported: EventPayload {
    public static let eventType: EventType = .hiveMemberImported
    public static let source: ColonyService = .habits
    public var member: HiveMemberRow
    public var hiveName: String

    public init(member: HiveMemberRow, hiveName: String) {
        self.member = member
        self.hiveName = hiveName
    }
}

/// An I Believe In You project: its title names it in push texts. Keyed by project.
public struct ProjectImported: EventPayload {
    public static let eventType: EventType = .projectImported
    public static let source: ColonyService = .projects
    public var projectId: UUID
    public var title: String

    public init(projectId: UUID, title: String) {
        self.projectId = projectId
        self.title = title
    }
}
