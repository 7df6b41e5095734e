import ColonyModels

/// What an operator may do. Rights are checked on the server for every page and action, and
/// for every app: an operator limited to some apps sees and touches nothing of the others.
public enum OperatorRole: String, Sendable, CaseIterable, Codable {
    /// Everything, on every app, including managing operators.
    case owner
    /// Every action on users, reports and the pipeline of their apps; not operators.
    case admin
    /// Looks users up (personal data included) and helps them: ban, sign out, links, factors, test pushes.
    case support
    /// Works the moderation queue (dismiss, remove, warn, suspend), bans and unbans (trust and
    /// safety), sees what is needed for that; not who sent an anonymous message.
    case moderator
    /// Reads the overview, users (without their addresses) and the pipeline; acts on nothing.
    case viewer

    public var title: String { rawValue.prefix(1).uppercased() + rawValue.dropFirst() }
}

public enum OperatorRight: String, Sendable, CaseIterable {
    case viewOverview
    case viewUsers
    /// Email addresses, phone numbers, metadata, sessions' addresses, events' payloads.
    case viewPersonalData
    case banUsers
    case signOutUsers
    case sendUserLinks
    case removeFactors
    case deleteUsers
    /// A subject access request: the user's data exported and sent to them.
    case requestExports
    case viewPipeline
    case retryDeadLetters
    case sendTestPush
    case viewAuditLog
    case manageOperators
    /// The moderation queue: reports of users' content, and dismiss, remove, warn, suspend.
    case moderateContent
    /// Who sent an anonymous support message (I Believe In You), when it is reported.
    case viewAnonymousAuthors
}

/// An operator's role and apps, and the one place that says what they allow.
public struct OperatorRights: Sendable, Equatable {
    public var role: OperatorRole
    /// Empty: every app.
    public var apps: [App]

    public init(role: OperatorRole, apps: [App]) {
        self.role = role
        self.apps = role == .owner ? [] : apps
    }

    public func allows(_ right: OperatorRight) -> Bool {
        switch role {
        case .owner: true
        case .admin: right != .manageOperators
        case .support:
            [.viewOverview, .viewUsers, .viewPersonalData, .banUsers, .signOutUsers, .sendUserLinks, .removeFactors, .requestExports, .sendTestPush, .viewPipeline, .viewAuditLog].contains(right)
        case .moderator:
            [.viewOverview, .viewUsers, .viewPersonalData, .banUsers, .viewAuditLog, .moderateContent].contains(right)
        case .viewer:
            [.viewOverview, .viewUsers, .viewPipeline].contains(right)
        }
    }

    public func covers(_ app: App) -> Bool {
        apps.isEmpty || apps.contains(app)
    }

    /// `right` on `app`: both must hold.
    public func allows(_ right: OperatorRight, on app: App) -> Bool {
        allows(right) && covers(app)
    }

    /// The apps the operator works on, in the catalogue's order.
    public var visibleApps: [App] {
        App.allCases.filter(covers)
    }
}
