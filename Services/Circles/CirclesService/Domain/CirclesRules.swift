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
    // What a body names that does not exist (or is not in this circle) is a conflict with the
    // circle's state: 404 stays for what the path names.
    static let optionNotFound = APIError.conflict("option_id is not an option of this poll", code: "option_not_found")
    static let notAMember = APIError.conflict("that person is not a member of this circle", code: "member_not_found")
    static let handleNotFound = APIError.conflict("nobody has this handle", code: "user_not_found")
    static let replyNotFound = APIError.conflict("reply_to_id must be a message of this conversation", code: "reply_not_found")
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
    // The post's type is the post's state, not the request's: a well-formed request for the wrong type is a conflict.
    static let notAPoll = APIError.conflict("this post is not a poll", code: "not_a_poll")
    static let notAnEvent = APIError.conflict("this post is not an event", code: "not_an_event")
    static let notAnAsk = APIError.conflict("this post is not an ask", code: "not_an_ask")

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
        guard TextRules.fits(name, 1...60) else { throw CirclesErrors.validation("name must be 1–60 characters, not blank") }
        return TextRules.trimmed(name)
    }

    /// Handles as sent, less the whitespace around them: an optional `@`, then 3–30 ASCII letters,
    /// digits, `_` and `.` (the document's pattern); stored lowercase without the `@`.
    static let handlePattern = "@?[A-Za-z0-9_.]{3,30}"

    static func handle(_ handle: String) throws -> String {
        guard TextRules.matches(handle, handlePattern) else { throw CirclesErrors.validation("handle must be 3–30 letters, digits, _ or .") }
        let lowered = TextRules.trimmed(handle).lowercased()
        return lowered.hasPrefix("@") ? String(lowered.dropFirst()) : lowered
    }

    /// A starting handle from a name or email (its ASCII letters and digits) and the first six
    /// hex digits of the user id, so two new users practically never collide; users change it.
    static func suggestedHandle(from text: String?, userID: UUID) -> String {
        let base = (text ?? "").lowercased().unicodeScalars.filter { CharacterSet.alphanumerics.contains($0) && $0.isASCII }
        let stem = String(String.UnicodeScalarView(base).prefix(20))
        return (stem.count >= 3 ? stem : "user") + "_" + String(userID.uuidString.lowercased().prefix(6))
    }

    /// Reactions: 1–32 code points as sent with no whitespace, control character, ASCII letter
    /// or digit, or kana, hangul or CJK ideograph, and at least one at U+2000 or above (the symbol
    /// and emoji blocks): an emoji, not text. The document states this same pattern.
    static let emojiPattern = #"(?=[\s\S]*[^\u0000-\u1FFF])[^\u0000-\u0020\u007F-\u00A0\u0030-\u0039\u0041-\u005A\u0061-\u007A\u1680\u2000-\u200B\u2028\u2029\u202F\u205F\u3000\u3040-\u30FF\u3400-\u4DBF\u4E00-\u9FFF\uAC00-\uD7AF]+"#

    static func emoji(_ emoji: String) throws -> String {
        guard (1...32).contains(TextRules.length(emoji)), emoji.range(of: "^(?:\(emojiPattern))$", options: .regularExpression) != nil else {
            throw CirclesErrors.validation("emoji must be an emoji")
        }
        return emoji
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
        errors.check(TextRules.fits(draft.body, 1...maxBody), "body must be 1–\(maxBody) characters, not blank")
        draft.body = TextRules.trimmed(draft.body)
        errors.check(TextRules.length(draft.mood ?? "") <= 40, "mood must be at most 40 characters")
        errors.check(TextRules.length(draft.category ?? "") <= 40, "category must be at most 40 characters")
        errors.check(TextRules.length(draft.location ?? "") <= 200, "location must be at most 200 characters")
        errors.check((draft.latitude == nil) == (draft.longitude == nil), "latitude and longitude come together")
        if let latitude = draft.latitude { errors.check(latitude.isFinite && (-90...90).contains(latitude), "latitude must be between -90 and 90") }
        if let longitude = draft.longitude { errors.check(longitude.isFinite && (-180...180).contains(longitude), "longitude must be between -180 and 180") }
        switch draft.type {
        case .event:
            errors.check(draft.startsAt != nil, "an event needs starts_at")
        case .ask:
            if draft.urgency == nil { draft.urgency = .medium }
        case .poll:
            errors.check(pollOptions.contains(draft.pollOptions.count), "a poll has 2–10 options")
            errors.check(draft.pollOptions.allSatisfy { TextRules.fits($0, 1...100) }, "each poll option is 1–100 characters, not blank")
            draft.pollOptions = draft.pollOptions.map(TextRules.trimmed)
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
        guard TextRules.fits(body, 1...maxDM) else {
            throw CirclesErrors.validation("body must be 1–\(maxDM) characters")
        }
        return body
    }
}
