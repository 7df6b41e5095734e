/// Every event type Colony knows, by publishing service. It grows as each service lands; a
/// consumer can check that a type it subscribes to is one someone publishes.
public enum EventCatalogue {
    public static let types: [ColonyService: [EventType]] = [
        .auth: [.userRegistered, .userUpdated, .userDeleted, .userExportRequested, .userSuspended, .userReinstated],
        .habits: [.habitLogged, .hiveCreated, .hiveJoined, .hiveLeft, .hiveDeleted, .hiveDayLogged, .hiveAdvanced, .hiveBroken, .hiveAtRisk, .streakMilestone,
                  .hiveUpdated, .hiveInvited, .hiveInvitationAnswered, .habitStreakMilestone, .hiveMemberImported],
        .chat: [
            .groupCreated, .groupUpdated, .groupDeleted, .groupMemberAdded, .groupMemberRemoved, .groupRoleChanged,
            .messageSent, .messageEdited, .messageDeleted, .calendarEventCreated, .calendarEventUpdated, .calendarEventDeleted, .userErased, .groupMemberImported,
        ],
        .nearby: [.locationUpdated, .locationRemoved, .profileUpdated],
        .projects: [
            .builderUpdated, .projectCreated, .projectUpdated, .projectDeleted, .projectFollowed, .projectUnfollowed,
            .projectPostCreated, .postLiked, .supportSent, .milestoneCompleted, .karmaLevelUp, .projectImported,
        ],
        .circles: [
            .circleCreated, .circleMemberJoined, .circleMemberLeft, .circleDeleted, .postCreated, .postUpdated, .postDeleted, .postExpired,
            .postReacted, .pollVoted, .eventRsvped, .dmSent, .dmRead, .dmDeleted, .presenceChanged,
            .circleUpdated, .circleMemberUpdated, .dmReacted, .circleMemberImported, .eventPostImported,
        ],
        .console: [.operatorAction, .contentRemoved, .reportResolved, .userWarned],
    ]

    /// Whose events each service consumes: its `ServiceDefinition.consumes`, and what
    /// `colony-admin consumers lag` reports on.
    public static let subscriptions: [ColonyService: [ColonyService]] = [
        .circles: [.auth], .chat: [.auth], .habits: [.auth], .nearby: [.auth], .projects: [.auth],
        .realtime: [.chat, .circles, .habits, .nearby],
        .notifications: [.auth, .circles, .chat, .habits, .projects, .console],
    ]

    public static func subscriptions(of service: ColonyService) -> [ColonyService] {
        subscriptions[service] ?? []
    }

    /// The newest `schema_version` of each event type this build reads, where it is above 1. A
    /// consumer sets aside (as a dead letter) an event of a newer version than it knows.
    public static let schemaVersions: [EventType: Int] = [:]

    public static func schemaVersion(of type: EventType) -> Int {
        schemaVersions[type] ?? 1
    }

    public static func source(of type: EventType) -> ColonyService? {
        types.first { $0.value.contains(type) }?.key
    }
}
