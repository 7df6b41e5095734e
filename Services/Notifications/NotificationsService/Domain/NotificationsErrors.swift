import ColonyPlatform

/// The notifications service's errors, one place for their codes and messages.
enum NotificationsErrors {
    static let deviceNotFound = APIError.notFound("no such device token for this user", code: "device_not_found")
    static let activityNotFound = APIError.notFound("no such Live Activity for this user", code: "activity_not_found")
    /// A post the caller cannot see is indistinguishable from no post.
    static let eventNotFound = APIError.notFound("no such upcoming event", code: "event_not_found")
    static let notificationNotFound = APIError.notFound("no such notification", code: "notification_not_found")
    static let liveActivitiesMyCircleeOnly = APIError.unprocessable("Live Activities exist for MyCirclee's events only", code: "validation_failed")
}
