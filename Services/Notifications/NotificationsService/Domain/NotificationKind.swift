import ColonyModels

/// What a push is about. Users switch kinds off per app (`preferences.disabled_kinds`), but for
/// `moderation_warning`; the in-app list shows the alert kinds. Most kinds belong to one app;
/// the moderators' kinds (`report_outcome`, `moderation_warning`) are in every app, and their
/// plans name the app (`PushPlan.app`).
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
    // Every app: the console's moderation (issue 39)
    /// A report I filed was resolved: what the moderators did, never who was reported.
    case reportOutcome = "report_outcome"
    /// A moderator warned me about something I published. Cannot be switched off.
    case moderationWarning = "moderation_warning"

    /// The one app whose users get this kind; nil: every app's (the plan names which).
    public var app: App? {
        switch self {
        case .circlePost, .directMessage, .eventRSVP, .presence, .eventActivity: .mycirclee
        case .groupMessage: .unify
        case .hiveAdvanced, .streakMilestone, .hiveAtRisk, .hiveJoined, .hiveInvitation: .habithive
        case .supportMessage, .newFollower: .ibelieveinyou
        case .reportOutcome, .moderationWarning: nil
        }
    }

    /// Whether a user may switch it off. A moderator's warning always reaches the user it is
    /// for: preferences neither list nor accept it, and a `disabled_kinds` that names it anyway
    /// is not obeyed.
    public var canBeSwitchedOff: Bool { self != .moderationWarning }

    /// The moderators' kinds: nothing reaches a suspended account, not even the in-app list.
    public var isModeration: Bool { self == .reportOutcome || self == .moderationWarning }

    /// Alerts show up on the lock screen and in the in-app list; the others are silent.
    public var isAlert: Bool {
        switch self {
        case .presence, .eventActivity: false
        default: true
        }
    }

    /// Every kind `app`'s users may get.
    public static func kinds(of app: App) -> [NotificationKind] {
        allCases.filter { $0.app == nil || $0.app == app }
    }

    /// The kinds `app`'s preferences list and switch (`GET|PATCH /preferences`).
    public static func preferenceKinds(of app: App) -> [NotificationKind] {
        kinds(of: app).filter(\.canBeSwitchedOff)
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
