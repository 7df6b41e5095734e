import ColonyModels
import ColonyPlatform

/// The projects service's errors, one place for their codes and messages. A project the caller
/// may not see (someone else's unpublished one, or one whose builder they blocked) is a 404, as
/// are its posts and milestones: outsiders learn nothing about it. On a project they can see,
/// another user's change is a 403.
enum ProjectsErrors {
    static let projectNotFound = APIError.notFound("project not found", code: "project_not_found")
    static let postNotFound = APIError.notFound("post not found", code: "post_not_found")
    static let milestoneNotFound = APIError.notFound("milestone not found", code: "milestone_not_found")
    static let builderNotFound = APIError.notFound("builder not found", code: "builder_not_found")
    static let accountDeleted = APIError.unauthorized("this account was deleted", code: "account_deleted")

    static let notProjectOwner = APIError.forbidden("only the project's owner can do that", code: "not_project_owner")

    static let slugTaken = APIError.conflict("this public_slug is already taken", code: "slug_taken")
    static let ownProject = APIError.forbidden("you cannot send support to your own project", code: "own_project")
    // An image the body names that is not this project's is a conflict with its state, not a broken rule.
    static let unknownImage = APIError.conflict(
        "images must be pictures uploaded to this project (POST /projects/v1/projects/{project_id}/images) or already in this post", code: "unknown_image")

    static func validation(_ message: String) -> APIError { .unprocessable(message) }

    static func supportRateLimited(retryAfterSeconds: Int, limit: Int, windowSeconds: Int) -> APIError {
        .tooManyRequests(retryAfterSeconds: retryAfterSeconds, message: "at most \(limit) support messages per \(windowSeconds) seconds; try again later")
    }
}
