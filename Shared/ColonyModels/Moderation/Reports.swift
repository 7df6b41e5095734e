import Foundation

/// Why someone reports a thing (Apple's guideline 1.2 asks every app with user content for it).
public enum ReportCategory: String, Codable, Sendable, CaseIterable {
    case spam
    case harassment
    case hate
    case sexual
    case violence
    case selfHarm = "self_harm"
    case illegal
    case other
}

/// What a moderator did with the reports on one object. A report is `open` until then, and its
/// status is the action's (`dismissed`, `removed`, `warned`, `suspended`).
public enum ModerationAction: String, Codable, Sendable, CaseIterable {
    /// Nothing wrong: the reports are closed and the object stays.
    case dismiss
    /// The object is deleted as its owner would delete it.
    case remove
    /// The owner gets an in-app warning; the object stays.
    case warn
    /// The owner's account is suspended (auth bans it); the object stays unless also removed.
    case suspend

    /// The status the object's open reports take.
    public var reportStatus: String {
        switch self {
        case .dismiss: "dismissed"
        case .remove: "removed"
        case .warn: "warned"
        case .suspend: "suspended"
        }
    }
}
