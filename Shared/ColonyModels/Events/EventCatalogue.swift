/// Every event type Colony knows, by publishing service. It grows as each service lands; a
/// consumer can check that a type it subscribes to is one someone publishes.
public enum EventCatalogue {
    public static let types: [ColonyService: [EventType]] = [
        .auth: [.userRegistered, .userUpdated, .userDeleted],
        .habits: [.habitLogged, .hiveCreated, .hiveJoined, .hiveLeft, .hiveDeleted, .hiveDayLogged, .hiveAdvanced, .hiveBroken, .hiveAtRisk, .streakMilestone],
        .chat: [
            .groupCreated, .groupUpdated, .groupDeleted, .groupMemberAdded, .groupMemberRemoved, .groupRoleChanged,
            .messageSent, .messageEdited, .messageDeleted, .calendarEventCreated, .calendarEventUpdated, .calendarEventDeleted,
        ],
        .nearby: [.locationUpdated, .locationRemoved, .profileUpdated],
        .projects: [
            .builderUpdated, .projectCreated, .projectUpdated, .projectDeleted, .projectFollowed, .projectUnfollowed,
            .projectPostCreated, .postLiked, .supportSent, .milestoneCompleted, .karmaLevelUp,
        ],
        .circles: [
            .circleCreated, .circleMemberJoined, .circleMemberLeft, .circleDeleted, .postCreated, .postUpdated, .postDeleted, .postExpired,
            .postReacted, .pollVoted, .eventRsvped, .dmSent, .dmRead, .presenceChanged,
        ],
    ]

    public static func source(of type: EventType) -> ColonyService? {
        types.first { $0.value.contains(type) }?.key
    }
}
