import ColonyPlatform

/// The habits service's errors, one place for their codes and messages.
enum HabitsErrors {
    static let habitNotFound = APIError.notFound("habit not found", code: "habit_not_found")
    static let hiveNotFound = APIError.notFound("hive not found", code: "hive_not_found")
    static let memberNotFound = APIError.notFound("not a member of this hive", code: "member_not_found")
    static let userNotFound = APIError.notFound("user not found", code: "user_not_found")
    static let logNotFound = APIError.notFound("no log for that day", code: "log_not_found")
    static let profileGone = APIError.unauthorized("this account was deleted", code: "account_deleted")

    static let ownerOnly = APIError.forbidden("only the hive's owner can do that", code: "owner_only")
    static let ownerCannotLeave = APIError.conflict("the owner cannot leave the hive; delete it instead", code: "owner_cannot_leave")
    static let cannotRemoveOwner = APIError.conflict("the owner cannot be removed", code: "cannot_remove_owner")

    static let inviteInvalid = APIError.notFound("invalid invite code", code: "invite_invalid")
    static let inviteExpired = APIError.conflict("this invite has expired", code: "invite_expired")
    static let inviteExhausted = APIError.conflict("this invite has been used up", code: "invite_exhausted")
    static let alreadyMember = APIError.conflict("you are already a member of this hive", code: "already_member")
    static let hiveFull = APIError.conflict("this hive is full (10 members)", code: "hive_full")
    static let habitHasHive = APIError.conflict("this habit was already made into a hive", code: "habit_has_hive")
    static let invitationNotFound = APIError.notFound("invitation not found", code: "invitation_not_found")
    /// 409, not 404: the path's hive exists; what the body names is refused (the documents' rule).
    static let contactNotFound = APIError.conflict("not one of your contact matches", code: "contact_not_found")
    static let invitationPending = APIError.conflict("this person already has a pending invitation to this hive", code: "invitation_pending")
    static let invitationAnswered = APIError.conflict("this invitation was already answered", code: "invitation_answered")

    static let idempotencyKeyReused = APIError(.unprocessableContent, code: "idempotency_key_reused", message: "this Idempotency-Key was used with a different request")
    static let idempotencyKeyInvalid = APIError.badRequest("Idempotency-Key must be 1–255 printable characters", code: "invalid_idempotency_key")

    static let checkboxTarget = APIError.conflict("a checkbox habit has target_per_day 1: change type and target together", code: "checkbox_target")
    static let checkboxHiveTarget = APIError.conflict("a checkbox hive keeps target_per_day 1", code: "checkbox_target")

    static func validation(_ message: String) -> APIError { .unprocessable(message) }
}
