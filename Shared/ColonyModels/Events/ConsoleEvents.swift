import Foundation

extension EventType {
    public static let operatorAction: EventType = "operator_action"
}

/// An operator did something in the Colony Console, or tried to (`outcome`): signed in, banned a
/// user, retried a dead letter. The console's audit log keeps the same entry; the event lets a
/// deployment ship operator actions to its own log store or SIEM.
public struct OperatorAction: EventPayload {
    public static let eventType = EventType.operatorAction
    public static let source = ColonyService.console

    public var entryId: Int64
    public var operatorId: UUID?
    public var operatorEmail: String
    public var role: String?
    /// What was done: `sign_in`, `ban_user`, `retry_dead_letter`...
    public var action: String
    public var app: App?
    /// What it was done to (a user's id, an operator's email, a service's dead letter), if anything.
    public var target: String?
    /// `ok`, `refused` (the rights or the checks said no) or `failed` (a service could not do it).
    public var outcome: String
    public var ipAddress: String?
    public var at: Date

    public init(entryId: Int64, operatorId: UUID?, operatorEmail: String, role: String?, action: String, app: App?, target: String?, outcome: String, ipAddress: String?, at: Date) {
        self.entryId = entryId
        self.operatorId = operatorId
        self.operatorEmail = operatorEmail
        self.role = role
        self.action = action
        self.app = app
        self.target = target
        self.outcome = outcome
        self.ipAddress = ipAddress
        self.at = at
    }
}

extension EventType {
    public static let contentRemoved: EventType = "content_removed"
    public static let reportResolved: EventType = "report_resolved"
    public static let userWarned: EventType = "user_warned"
}

/// A moderator removed reported content: the service that held it deleted it as its owner would
/// (and published its own event, `post_deleted`, `message_deleted`...); this says who decided and why.
public struct ContentRemoved: EventPayload {
    public static let eventType = EventType.contentRemoved
    public static let source = ColonyService.console

    public var app: App
    public var objectType: String
    public var objectId: UUID
    /// Whose it was.
    public var ownerId: UUID
    /// The reporters' categories, most reported first.
    public var categories: [ReportCategory]
    public var removedAt: Date

    public init(app: App, objectType: String, objectId: UUID, ownerId: UUID, categories: [ReportCategory], removedAt: Date) {
        self.app = app
        self.objectType = objectType
        self.objectId = objectId
        self.ownerId = ownerId
        self.categories = categories
        self.removedAt = removedAt
    }
}

/// A report was acted on: its reporter hears the outcome in the app (notifications' in-app list).
/// One per reporter, keyed by them.
public struct ReportResolved: EventPayload {
    public static let eventType = EventType.reportResolved
    public static let source = ColonyService.console

    public var reporterId: UUID
    public var app: App
    public var objectType: String
    public var objectId: UUID
    /// The reports' new status: `dismissed`, `removed`, `warned` or `suspended`.
    public var outcome: String
    public var resolvedAt: Date

    public init(reporterId: UUID, app: App, objectType: String, objectId: UUID, outcome: String, resolvedAt: Date) {
        self.reporterId = reporterId
        self.app = app
        self.objectType = objectType
        self.objectId = objectId
        self.outcome = outcome
        self.resolvedAt = resolvedAt
    }
}

/// A moderator warned a user about something they published: an in-app notification to them.
public struct UserWarned: EventPayload {
    public static let eventType = EventType.userWarned
    public static let source = ColonyService.console

    public var userId: UUID
    public var app: App
    public var objectType: String
    public var objectId: UUID
    /// The reporters' categories, most reported first.
    public var categories: [ReportCategory]
    public var warnedAt: Date

    public init(userId: UUID, app: App, objectType: String, objectId: UUID, categories: [ReportCategory], warnedAt: Date) {
        self.userId = userId
        self.app = app
        self.objectType = objectType
        self.objectId = objectId
        self.categories = categories
        self.warnedAt = warnedAt
    }
}
