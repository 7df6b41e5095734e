import ColonyModels
import ColonyPlatform
import Foundation
import Logging
import PostgresNIO

/// The notifications service's operations: the caller's tokens, preferences, in-app list and
/// delivery log; the Live Activity countdown; erasure.
struct Notifications: Sendable {
    let settings: NotificationsSettings
    let logger: Logger
    /// Circles, asked when the projection cannot vouch for a Live Activity's event (nil: not asked).
    var eventPosts: EventPostOwner? = nil

    var devices: DeviceStore { DeviceStore(logger: logger) }
    var preferences: PreferenceStore { PreferenceStore(logger: logger) }
    var notifications: NotificationStore { NotificationStore(logger: logger) }
    var deliveries: DeliveryStore { DeliveryStore(logger: logger) }
    var projections: ProjectionStore { ProjectionStore(logger: logger) }
    var memberships: MembershipProjection { MembershipProjection(logger: logger) }
    var fanOut: FanOut { FanOut(clock: settings.clock, logger: logger) }
    var now: Date { settings.clock.now() }

    // MARK: devices

    /// Registers an install's token; beyond the per-user cap the least recently registered go.
    func register(_ device: NotificationsRules.Device, caller: AuthenticatedUser, on connection: PostgresConnection) async throws -> RegisteredDevice {
        let row = try await devices.register(device, app: caller.app, user: caller.id, now: now, on: connection)
        try await devices.keepNewest(settings.maxDevicesPerUser, kind: "device", app: caller.app, user: caller.id, on: connection)
        return try RegisteredDevice(row)
    }

    func devices(of caller: AuthenticatedUser, on connection: PostgresConnection) async throws -> DeviceList {
        DeviceList(devices: try await devices.list(app: caller.app, user: caller.id, on: connection).map(RegisteredDevice.init))
    }

    func unregister(token: String, caller: AuthenticatedUser, on connection: PostgresConnection) async throws {
        guard let token = NotificationsRules.token(token), try await devices.remove(token: token, app: caller.app, user: caller.id, on: connection) else {
            throw NotificationsErrors.deviceNotFound
        }
    }

    /// A Live Activity for an upcoming MyCirclee event the caller can see (a member of its circle).
    func registerActivity(_ activityID: String, post: UUID, token: String, environment: APNsEnvironment, caller: AuthenticatedUser,
                          on connection: PostgresConnection) async throws -> RegisteredDevice {
        guard caller.app == .mycirclee else { throw NotificationsErrors.liveActivitiesMyCircleeOnly }
        let known = try await projections.eventPostState(post, on: connection)
        if let known, known.ended {
            throw NotificationsErrors.eventNotFound
        } else if let event = known?.post, try await memberships.isMember(caller.id, of: .circle, event.circleID, on: connection) {
            // The projection vouches.
        } else if await eventPosts?.vouches(for: caller.id, post: post, logger: logger) != true {
            throw NotificationsErrors.eventNotFound
        }
        let row = try await devices.registerActivity(activityID, post: post, token: token, environment: environment, app: caller.app, user: caller.id, now: now, on: connection)
        try await devices.keepNewest(settings.maxLiveActivitiesPerUser, kind: "live_activity", app: caller.app, user: caller.id, on: connection)
        return try RegisteredDevice(row)
    }

    func unregisterActivity(_ activityID: String, caller: AuthenticatedUser, on connection: PostgresConnection) async throws {
        guard try await devices.removeActivity(activityID, app: caller.app, user: caller.id, on: connection) else { throw NotificationsErrors.activityNotFound }
    }

    // MARK: preferences

    func preferences(of caller: AuthenticatedUser, on connection: PostgresConnection) async throws -> PreferencesView {
        try await preferences.get(user: caller.id, app: caller.app, on: connection).view(app: caller.app)
    }

    func updatePreferences(kinds: [String: Bool]?, quietHours: NotificationsRules.QuietHoursInput??, caller: AuthenticatedUser,
                           on connection: PostgresConnection) async throws -> PreferencesView {
        let current = try await preferences.get(user: caller.id, app: caller.app, on: connection)
        let updated = try NotificationsRules.preferences(app: caller.app, current: current, kinds: kinds, quietHours: quietHours)
        try await preferences.save(updated, user: caller.id, app: caller.app, on: connection)
        return updated.view(app: caller.app)
    }

    // MARK: the in-app list and the delivery log

    func list(_ caller: AuthenticatedUser, before cursor: KeysetCursor?, limit: Int, on connection: PostgresConnection) async throws -> NotificationPage {
        let page = try await notifications.list(user: caller.id, app: caller.app, before: cursor, limit: limit + 1, on: connection)
        let unread = try await notifications.unreadCount(user: caller.id, app: caller.app, on: connection)
        return NotificationPage(notifications: try page.prefix(limit).map { try Components.Schemas.Notification($0.0) }, unreadCount: unread,
                                nextCursor: page.count > limit ? page[limit - 1].1.text : nil)
    }

    func markRead(_ id: UUID, caller: AuthenticatedUser, on connection: PostgresConnection) async throws -> UnreadCount {
        guard try await notifications.markRead(id, user: caller.id, app: caller.app, at: now, on: connection) else { throw NotificationsErrors.notificationNotFound }
        return UnreadCount(unreadCount: try await notifications.unreadCount(user: caller.id, app: caller.app, on: connection))
    }

    func markAllRead(_ caller: AuthenticatedUser, on connection: PostgresConnection) async throws -> UnreadCount {
        _ = try await notifications.markAllRead(user: caller.id, app: caller.app, at: now, on: connection)
        return UnreadCount(unreadCount: 0)
    }

    func deliveryLog(_ user: UUID, app: App?, limit: Int, on connection: PostgresConnection) async throws -> DeliveryLog {
        DeliveryLog(deliveries: try await deliveries.log(app: app, user: user, limit: limit, on: connection).map(Components.Schemas.Delivery.init))
    }

    // MARK: membership

    /// Someone left or was removed from a group, circle or hive, or it was deleted: pushes still
    /// queued for them about it are dropped, and their Live Activities of its events forgotten.
    func membershipsChanged(_ event: ReceivedEvent, on connection: PostgresConnection) async throws {
        for change in try Memberships.changes(for: event) {
            switch change {
            case .add:
                continue
            case .remove(let scope, let id, let user):
                try await deliveries.dropQueued(scope: scope, id, user: user, on: connection)
                if scope == .circle { try await devices.removeActivities(circle: id, user: user, on: connection) }
            case .removeAll(let scope, let id):
                try await deliveries.dropQueued(scope: scope, id, user: nil, on: connection)
                if scope == .circle { try await devices.removeActivities(circle: id, user: nil, on: connection) }
            }
        }
    }

    // MARK: jobs and erasure

    /// Live Activities of events that have begun get a last update (the countdown reached zero),
    /// and an end an hour later; tokens of finished activities are then forgotten.
    func liveActivityCountdown(database: Database) async throws {
        try await database.transaction { connection in
            let due = try await projections.dueActivities(now: now, endAfter: settings.liveActivityEndAfter, on: connection)
            for post in due.started {
                var state = post.contentState
                state["started"] = .bool(true)
                try await fanOut.liveActivity(LiveActivityPlan(postID: post.postID, event: .update, contentState: state, dismissalDate: nil, staleDate: nil),
                                              event: UUID.timeOrdered(at: now), occurredAt: now, on: connection)
            }
            for post in due.ended {
                var state = post.contentState
                state["started"] = .bool(true)
                try await fanOut.liveActivity(LiveActivityPlan(postID: post.postID, event: .end, contentState: state, dismissalDate: now, staleDate: nil),
                                              event: UUID.timeOrdered(at: now), occurredAt: now, on: connection)
            }
            try await devices.removeFinishedActivities(on: connection)
            try await projections.removeFinishedEventPosts(on: connection)
        }
    }

    func sweep(database: Database) async throws {
        let swept = try await database.transaction { connection in
            try await deliveries.sweep(now: now, retention: settings.retention(of:), on: connection)
        }
        Retention.deleted(swept.deliveries, kind: "push_deliveries")
        Retention.deleted(swept.notifications, kind: "notification_history")
    }

    /// `user_deleted`: the account's tokens, preferences, notifications, delivery log and
    /// memberships go, and so do the words it left in others' lists and its event posts.
    func erase(_ user: UUID, on connection: PostgresConnection) async throws {
        try await devices.eraseUser(user, on: connection)
        try await deliveries.eraseUser(user, on: connection)
        try await notifications.eraseUser(user, on: connection)
        try await preferences.eraseUser(user, on: connection)
        try await memberships.removeUser(user, on: connection)
        try await projections.eraseAuthor(user, on: connection)
    }
}
