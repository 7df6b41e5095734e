import ColonyPlatform

/// The nearby service's errors, one place for their codes and messages.
enum NearbyErrors {
    static let accountDeleted = APIError.unauthorized("this account was deleted", code: "account_deleted")
    /// Someone not in range (or blocked, or not sharing) is indistinguishable from nobody.
    static let userNotFound = APIError.notFound("no such user nearby", code: "user_not_found")
    static let sharingOff = APIError.conflict("turn on share_location before reporting a position", code: "sharing_off")
    static let noiseKeyMissing = APIError(.serviceUnavailable, code: "not_ready", message: "the location offset key is missing; the schema's migrations did not run")
    static let implausibleJump = APIError.conflict("this position is farther from your last one than anyone could have travelled since", code: "implausible_location")
}
