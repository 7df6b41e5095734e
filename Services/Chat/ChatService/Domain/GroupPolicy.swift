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
        let trimmed = name.trimmingCharacters(in: .whitespacesAndNewlines)
        guard (1...maxGroupName).contains(trimmed.count) else { throw ChatErrors.validation("name must be 1–\(maxGroupName) characters") }
        return trimmed
    }

    static func displayName(_ name: String) throws -> String {
        let trimmed = name.trimmingCharacters(in: .whitespacesAndNewlines)
        guard (1...maxDisplayName).contains(trimmed.count) else { throw ChatErrors.validation("display_name must be 1–\(maxDisplayName) characters") }
        return trimmed
    }

    /// Message text: not blank, at most `maxMessageLength` characters (kept as written).
    static func messageContent(_ content: String) throws -> String {
        guard !content.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else { throw ChatErrors.validation("content must not be empty") }
        guard content.count <= maxMessageLength else { throw ChatErrors.validation("content must be at most \(maxMessageLength) characters") }
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
            let trimmed = email.trimmingCharacters(in: .whitespacesAndNewlines)
            guard isEmail(trimmed) else { throw ChatErrors.validation("\(trimmed.isEmpty ? "an empty address" : trimmed) is not an email address") }
            if seen.insert(trimmed.lowercased()).inserted { result.append(trimmed) }
        }
        return result
    }

    static func isEmail(_ text: String) -> Bool {
        let parts = text.split(separator: "@", omittingEmptySubsequences: false)
        return text.count <= 320 && parts.count == 2 && !parts[0].isEmpty && parts[1].contains(".") && !parts[1].hasPrefix(".") && !parts[1].hasSuffix(".")
            && !text.contains(where: { $0.isWhitespace })
    }

    struct EventDraft: Sendable {
        var title: String
        var details: String?
        var startsAt: Date
        var endsAt: Date
    }

    static func event(_ draft: EventDraft) throws -> EventDraft {
        var errors = ValidationErrors()
        let title = draft.title.trimmingCharacters(in: .whitespacesAndNewlines)
        errors.check((1...maxEventTitle).contains(title.count), "title must be 1–\(maxEventTitle) characters")
        errors.check((draft.details?.count ?? 0) <= maxEventDetails, "details must be at most \(maxEventDetails) characters")
        errors.check(draft.endsAt >= draft.startsAt, "ends_at must not be before starts_at")
        try errors.throwIfAny()
        return EventDraft(title: title, details: draft.details, startsAt: draft.startsAt, endsAt: draft.endsAt)
    }
}
