import ColonyModels
import ColonyPlatform

/// The chat service's errors, one place for their codes and messages. A group, message or event
/// the caller may not see is a 404: outsiders learn nothing about what exists.
enum ChatErrors {
    static let groupNotFound = APIError.notFound("group not found", code: "group_not_found")
    static let messageNotFound = APIError.notFound("message not found", code: "message_not_found")
    static let eventNotFound = APIError.notFound("event not found", code: "event_not_found")
    static let memberNotFound = APIError.notFound("not a member of this group", code: "member_not_found")
    static let userNotFound = APIError.notFound("user not found", code: "user_not_found")
    static let accountDeleted = APIError.unauthorized("this account was deleted", code: "account_deleted")

    static let notGroupOwner = APIError.forbidden("only the group's owner can do that", code: "not_group_owner")
    static let notGroupAdmin = APIError.forbidden("only the group's owner or an admin can do that", code: "not_group_admin")
    static let notYourMessage = APIError.forbidden("you can only change your own messages", code: "not_your_message")
    static let notEventManager = APIError.forbidden("only the event's creator, a group admin or the owner can change this event", code: "not_event_manager")
    static let cannotRemoveMember = APIError.forbidden("admins can remove users, not admins or the owner", code: "cannot_remove_member")

    static let successorRequired = APIError.conflict("the owner cannot leave without naming a successor (successor_id), or delete the group", code: "cannot_leave_as_owner_without_successor")
    // What a body or path names that is not as the group is: a conflict with its state.
    static let successorNotMember = APIError.conflict("the successor must be another member of the group", code: "invalid_successor")
    static let useLeave = APIError.conflict("to leave a group, use leave", code: "use_leave")
    static let endsBeforeStarts = APIError.conflict("the event would end before it starts", code: "ends_before_starts")
    static let cannotChangeOwnerRole = APIError.conflict("the owner's role changes only by transferring ownership", code: "owner_role_fixed")
    static let voiceNotEditable = APIError.conflict("voice messages cannot be edited", code: "voice_not_editable")

    static func unknownEmails(_ emails: [String]) -> APIError {
        APIError(.conflict, code: "unknown_emails", message: "no Unify account for: \(emails.joined(separator: ", "))",
                 details: ["unknown_emails": .array(emails.map(JSONValue.string))])
    }

    static func validation(_ message: String) -> APIError { .unprocessable(message) }
}
