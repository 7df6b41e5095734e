import ColonyModels

/// What a push is about. Users switch kinds off per app (`preferences.disabled_kinds`); the
/// in-app list shows the alert kinds.
public enum NotificationKind: String, Codable, Sendable, CaseIterable {
    // MyCirclee
    case circlePost = "circle_post"
    case directMessage = "dm"
    case eventRSVP = "event_rsvp"
    /// Silent: a circle member's status changed, so widgets reload.
    case presence
    /// Live Activity updates for an upcoming event (countdown, RSVP count).
    case eventActivity = "event_activity"
    // Unify
    case groupMessage = "group_message"
    // HabitHive
    case hiveAdvanced = "hive_advanced"
    case streakMilestone = "streak_milestone"
    case hiveAtRisk = "hive_at_risk"
    case hiveJoined = "hive_joined"
    /// The owner of a hive invited me (a contact match).
    case hiveInvitation = "hive_invitation"
    // I Believe In You
    case supportMessage = "support_message"
    case newFollower = "new_follower"

    public var app: App {
        switch self {
        case .circlePost, .directMessage, .eventRSVP, .presence, .eventActivity: .mycirclee
        case .groupMessage: .unify
        case .hiveAdvanced, .streakMilestone, .hiveAtRisk, .hiveJoined, .hiveInvitation: .habithive
        case .supportMessage, .newFollower: .ibelieveinyou
        }
    }

    /// Alerts show up on the lock screen and in the in-app list; the others are silent.
    public var isAlert: Bool {
        switch self {
        case .presence, .eventActivity: false
        default: true
        }
    }

    public static func kinds(of app: App) -> [NotificationKind] {
        allCases.filter { $0.app == app }
    }
}

/// APNs' push types (`apns-push-type`).
public enum PushType: String, Codable, Sendable {
    case alert
    case background
    case liveactivity

    /// `apns-priority`: background pushes must be 5; alerts and Live Activity updates go at once.
    public var priority: Int {
        switch self {
        case .alert, .liveactivity: 10
        case .background: 5
        }
    }
}

/// A device token's APNs environment: development builds get sandbox tokens.
public enum APNsEnvironment: String, Codable, Sendable, CaseIterable {
    case sandbox
    case production

    /// The environment a client names: these names, or the seeds' (`device_tokens.environment`
    /// defaults to `prod`; Xcode calls the sandbox `development`), exactly as written here (the
    /// document's enum).
    public static func named(_ text: String) -> APNsEnvironment? {
        switch text {
        case "production", "prod": .production
        case "sandbox", "development", "dev": .sandbox
        default: nil
        }
    }

    /// What a client may send, for error messages and the API document.
    public static let acceptedNames = ["production", "prod", "sandbox", "development", "dev"]
}
