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
