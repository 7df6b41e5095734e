import ColonyModels
import ColonyPlatform
import Foundation

/// The circles service's errors. Anything in a circle the caller is not in is a 404, so an
/// outsider learns nothing about what exists.
enum CirclesErrors {
    static let circleNotFound = APIError.notFound("circle not found", code: "circle_not_found")
    static let postNotFound = APIError.notFound("post not found", code: "post_not_found")
    static let threadNotFound = APIError.notFound("conversation not found", code: "thread_not_found")
    static let messageNotFound = APIError.notFound("message not found", code: "message_not_found")
    static let memberNotFound = APIError.notFound("not a member of this circle", code: "member_not_found")
    static let userNotFound = APIError.notFound("no such user", code: "user_not_found")
    static let requestNotFound = APIError.notFound("add request not found", code: "add_request_not_found")
    static let optionNotFound = APIError.unprocessable("option_id is not an option of this poll", code: "validation_failed")
    static let accountDeleted = APIError.unauthorized("this account was deleted", code: "account_deleted")

    static let ownerOnly = APIError.forbidden("only the circle's owner can do that", code: "owner_only")
    static let authorOnly = APIError.forbidden("only the post's author can do that", code: "author_only")
    static let dmNotAllowed = APIError.forbidden("this person does not accept direct messages from you", code: "dm_not_allowed")
    static let requestNotYours = APIError.forbidden("only the circle's owner or the invitee can answer this request", code: "not_allowed")
    static let inviteeMustAccept = APIError.forbidden("only the person invited can accept; the owner may approve or decline the request", code: "invitee_must_accept")

    static let inviteInvalid = APIError.notFound("invalid invite code", code: "invite_invalid")
    static let inviteExpired = APIError(.gone, code: "invite_expired", message: "this invite code has expired")
    static let inviteUsed = APIError(.gone, code: "invite_used", message: "this invite code has already been used")
    static let alreadyMember = APIError.conflict("already a member of this circle", code: "already_member")
    static let requestDecided = APIError.conflict("this request was already answered", code: "add_request_decided")
    static let requestPending = APIError.conflict("there is already a pending request for this person", code: "add_request_pending")
    static let handleTaken = APIError.conflict("this handle is taken", code: "handle_taken")
    static let notAPoll = APIError.unprocessable("this post is not a poll", code: "validation_failed")
    static let notAnEvent = APIError.unprocessable("this post is not an event", code: "validation_failed")

    static func validation(_ message: String) -> APIError { .unprocessable(message) }
}

/// Who may DM whom (the seed's three levels), per recipient: `anyone` in a shared circle;
/// `reciprocal`, only people who accept DMs themselves (both must opt in); `nobody`.
enum DMPolicy {
    static func allows(sender: DMPrivacy, recipient: DMPrivacy) -> Bool {
        switch recipient {
        case .anyone: true
        case .reciprocal: sender != .nobody
        case .nobody: false
        }
    }
}

/// Input rules, testable without HTTP.
enum CirclesRules {
    static let postLifetime: TimeInterval = 24 * 3600
    static let inviteLifetime: TimeInterval = 48 * 3600
    static let maxBody = 2000
    static let maxDM = 4000
    static let pollOptions = 2...10

    static func circleName(_ name: String) throws -> String {
        let trimmed = name.trimmingCharacters(in: .whitespacesAndNewlines)
        guard (1...60).contains(trimmed.count) else { throw CirclesErrors.validation("name must be 1–60 characters") }
        return trimmed
    }

    /// Handles: 3–30 of a–z, 0–9, `_` and `.`, stored lowercase.
    static func handle(_ handle: String) throws -> String {
        let lowered = handle.trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
        let trimmed = lowered.hasPrefix("@") ? String(lowered.dropFirst()) : lowered
        guard trimmed.range(of: #"^[a-z0-9_.]{3,30}$"#, options: .regularExpression) != nil else {
            throw CirclesErrors.validation("handle must be 3–30 letters, digits, _ or .")
        }
        return trimmed
    }

    /// A starting handle from a name or email (its ASCII letters and digits) and the first six
    /// hex digits of the user id, so two new users practically never collide; users change it.
    static func suggestedHandle(from text: String?, userID: UUID) -> String {
        let base = (text ?? "").lowercased().unicodeScalars.filter { CharacterSet.alphanumerics.contains($0) && $0.isASCII }
        let stem = String(String.UnicodeScalarView(base).prefix(20))
        return (stem.count >= 3 ? stem : "user") + "_" + String(userID.uuidString.lowercased().prefix(6))
    }

    /// Emoji for reactions: 1–8 characters of symbols only (no letters, digits, spaces or
    /// controls) with at least one from the symbol and emoji blocks — a reaction, not text.
    static func emoji(_ emoji: String) throws -> String {
        let trimmed = emoji.trimmingCharacters(in: .whitespacesAndNewlines)
        // (Not CharacterSet.letters: it includes marks, and emoji carry variation selectors.)
        let forbidden = CharacterSet.whitespacesAndNewlines.union(.controlCharacters)
        guard (1...8).contains(trimmed.count), trimmed.unicodeScalars.count <= 32,
              !trimmed.unicodeScalars.contains(where: { $0.properties.isAlphabetic || $0.properties.numericType != nil || forbidden.contains($0) }),
              trimmed.unicodeScalars.contains(where: { $0.value >= 0x2000 }) else {
            throw CirclesErrors.validation("emoji must be an emoji")
        }
        return trimmed
    }

    struct PostDraft: Sendable {
        var type: PostType
        var body: String
        var mood: String?
        var category: String?
        var urgency: AskUrgency?
        var location: String?
        var latitude: Double?
        var longitude: Double?
        var startsAt: Date?
        var pollOptions: [String]
    }

    /// Checks a post as the compose form shapes it per type: events have a start time (and may
    /// have a place), asks an urgency, polls 2–10 distinct options; the rest have none of these.
    static func post(_ draft: PostDraft) throws -> PostDraft {
        var draft = draft
        var errors = ValidationErrors()
        draft.body = draft.body.trimmingCharacters(in: .whitespacesAndNewlines)
        errors.check(!draft.body.isEmpty, "body must not be empty")
        errors.check(draft.body.count <= maxBody, "body must be at most \(maxBody) characters")
        errors.check((draft.mood?.count ?? 0) <= 40, "mood must be at most 40 characters")
        errors.check((draft.category?.count ?? 0) <= 40, "category must be at most 40 characters")
        errors.check((draft.location?.count ?? 0) <= 200, "location must be at most 200 characters")
        errors.check((draft.latitude == nil) == (draft.longitude == nil), "latitude and longitude come together")
        if let latitude = draft.latitude { errors.check(latitude.isFinite && (-90...90).contains(latitude), "latitude must be between -90 and 90") }
        if let longitude = draft.longitude { errors.check(longitude.isFinite && (-180...180).contains(longitude), "longitude must be between -180 and 180") }
        switch draft.type {
        case .event:
            errors.check(draft.startsAt != nil, "an event needs starts_at")
        case .ask:
            if draft.urgency == nil { draft.urgency = .medium }
        case .poll:
            draft.pollOptions = draft.pollOptions.map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
            errors.check(pollOptions.contains(draft.pollOptions.count), "a poll has 2–10 options")
            errors.check(draft.pollOptions.allSatisfy { (1...100).contains($0.count) }, "each poll option is 1–100 characters")
            errors.check(Set(draft.pollOptions.map { $0.lowercased() }).count == draft.pollOptions.count, "poll options must differ")
        case .note:
            break
        }
        if draft.type != .event { errors.check(draft.startsAt == nil, "only events have starts_at") }
        if draft.type != .ask { errors.check(draft.urgency == nil, "only asks have an urgency") }
        if draft.type != .poll { errors.check(draft.pollOptions.isEmpty, "only polls have options") }
        try errors.throwIfAny()
        return draft
    }

    static func dmBody(_ body: String) throws -> String {
        guard !body.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty, body.count <= maxDM else {
            throw CirclesErrors.validation("body must be 1–\(maxDM) characters")
        }
        return body
    }
}
