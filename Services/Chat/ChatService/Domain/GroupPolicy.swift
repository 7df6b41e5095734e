import ColonyModels
import ColonyPlatform
import Foundation

/// Who may do what in a group (the seed's role logic, section 5): every member reads, sends and
/// creates events; admins also add and remove users, change the picture, delete any message and
/// manage any event; the owner does everything, and alone renames, deletes, changes roles and
/// transfers ownership. Outsiders never get here: a non-member's request is a 404 before this.
enum GroupPolicy {
    enum Action: Equatable, Sendable {
        case rename
        case deleteGroup
        case changeRoles
        case transferOwnership
        case changePicture
        case addMembers
        case removeMember(targetRole: GroupRole)
        case editMessage(own: Bool)
        case deleteMessage(own: Bool)
        case manageEvent(createdByMe: Bool)
    }

    static func allows(_ role: GroupRole, _ action: Action) -> Bool {
        switch action {
        case .rename, .deleteGroup, .changeRoles, .transferOwnership:
            return role == .owner
        case .changePicture, .addMembers:
            return role != .user
        case .removeMember(let target):
            switch role {
            case .owner: return target != .owner
            case .admin: return target == .user
            case .user: return false
            }
        case .editMessage(let own):
            return own
        case .deleteMessage(let own), .manageEvent(let own):
            return own || role != .user
        }
    }

    /// `allows`, or the error that says why not.
    static func require(_ role: GroupRole, _ action: Action) throws {
        guard !allows(role, action) else { return }
        switch action {
        case .rename, .deleteGroup, .changeRoles, .transferOwnership: throw ChatErrors.notGroupOwner
        case .changePicture, .addMembers: throw ChatErrors.notGroupAdmin
        case .removeMember: throw ChatErrors.cannotRemoveMember
        case .editMessage, .deleteMessage: throw ChatErrors.notYourMessage
        case .manageEvent: throw ChatErrors.notEventManager
        }
    }
}

/// Input rules, in one place so tests reach them without HTTP.
enum ChatRules {
    static let maxGroupName = 100
    static let maxMessageLength = 4000
    static let maxEventTitle = 200
    static let maxEventDetails = 4000
    static let maxMembersPerRequest = 100
    static let maxDisplayName = 60

    /// A trimmed group name, or a validation error.
    static func groupName(_ name: String) throws -> String {
        guard TextRules.fits(name, 1...maxGroupName) else { throw ChatErrors.validation("name must be 1–\(maxGroupName) characters, not blank") }
        return TextRules.trimmed(name)
    }

    static func displayName(_ name: String) throws -> String {
        guard TextRules.fits(name, 1...maxDisplayName) else { throw ChatErrors.validation("display_name must be 1–\(maxDisplayName) characters, not blank") }
        return TextRules.trimmed(name)
    }

    /// Message text: not blank, at most `maxMessageLength` characters (kept as written).
    static func messageContent(_ content: String) throws -> String {
        guard TextRules.fits(content, 1...maxMessageLength) else { throw ChatErrors.validation("content must be 1–\(maxMessageLength) characters, not blank") }
        return content
    }

    static func voiceDuration(_ seconds: Double?, max: Double) throws -> Double {
        guard let seconds, seconds.isFinite, seconds > 0, seconds <= max else {
            throw ChatErrors.validation("duration must be a number of seconds between 0 and \(Int(max))")
        }
        return seconds
    }

    /// Emails: well-formed, at most `maxMembersPerRequest`, deduplicated case-insensitively.
    static func emails(_ emails: [String]) throws -> [String] {
        guard emails.count <= maxMembersPerRequest else { throw ChatErrors.validation("at most \(maxMembersPerRequest) emails per request") }
        var seen = Set<String>()
        var result: [String] = []
        for email in emails {
            let trimmed = TextRules.trimmed(email)
            guard isEmail(email) else { throw ChatErrors.validation("\(trimmed.isEmpty ? "an empty address" : trimmed) is not an email address") }
            if seen.insert(trimmed.lowercased()).inserted { result.append(trimmed) }
        }
        return result
    }

    /// An address as sent, at most 320 characters, less the whitespace around it: one `@` with
    /// something before it and a domain with a dot neither first nor last, no whitespace inside
    /// (the document's pattern).
    static let emailPattern = "[^@\(TextRules.whitespace)]+@[^@.\(TextRules.whitespace)][^@\(TextRules.whitespace)]*\\.[^@\(TextRules.whitespace)]*[^@.\(TextRules.whitespace)]"

    static func isEmail(_ text: String) -> Bool {
        TextRules.length(text) <= 320 && TextRules.matches(text, emailPattern)
    }

    struct EventDraft: Sendable {
        var title: String
        var details: String?
        var startsAt: Date
        var endsAt: Date
    }

    static func event(_ draft: EventDraft) throws -> EventDraft {
        var errors = ValidationErrors()
        let title = TextRules.trimmed(draft.title)
        errors.check(TextRules.fits(draft.title, 1...maxEventTitle), "title must be 1–\(maxEventTitle) characters, not blank")
        errors.check(TextRules.length(draft.details ?? "") <= maxEventDetails, "details must be at most \(maxEventDetails) characters")
        errors.check(draft.endsAt >= draft.startsAt, "ends_at must not be before starts_at")
        try errors.throwIfAny()
        return EventDraft(title: title, details: draft.details, startsAt: draft.startsAt, endsAt: draft.endsAt)
    }
}
