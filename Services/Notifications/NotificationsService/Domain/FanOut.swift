import ColonyModels
import Foundation
import Logging
import PostgresNIO

/// Turns plans into rows, inside the event's inbox transaction: for an alert, one in-app
/// notification per recipient and one queued push per recipient's device, held to the end of
/// the recipient's quiet hours; for a Live Activity, one push per registered activity token.
/// Kinds a recipient switched off get nothing (but `moderation_warning`, which cannot be); the
/// actor is never a recipient; a suspended account gets no moderators' kind at all.
struct FanOut: Sendable {
    let clock: NotificationClock
    let logger: Logger

    var deliveries: DeliveryStore { DeliveryStore(logger: logger) }
    var notifications: NotificationStore { NotificationStore(logger: logger) }

    /// Alert pushes expire after a day unless the plan says otherwise.
    static let defaultExpiry: TimeInterval = 24 * 3600
    static let liveActivityExpiry: TimeInterval = 3600

    /// An event whose push would already have expired (history replayed to a new deployment, a
    /// long outage) updates the projections and pushes nothing, not even to the in-app list.
    func push(_ plan: PushPlan, event: UUID, occurredAt: Date, actor: UUID?, on connection: PostgresConnection) async throws {
        let app = plan.app
        let now = clock.now()
        let expiresAt = plan.expiresAt ?? occurredAt.addingTimeInterval(Self.defaultExpiry)
        guard expiresAt > now else { return }
        let recipients = try await deliveries.recipients(plan.recipients, app: app, excludingSuspended: plan.kind.isModeration, on: connection)
            .filter { !plan.excluding.contains($0.user) && !(plan.kind.canBeSwitchedOff && $0.preferences.disabledKinds.contains(plan.kind)) }
        guard !recipients.isEmpty else { return }
        var notificationIDs: [UUID: UUID] = [:]
        if plan.kind.isAlert {
            for recipient in recipients { notificationIDs[recipient.user] = UUID.timeOrdered(at: now) }
            try await notifications.insert(recipients.map { NotificationStore.New(id: notificationIDs[$0.user]!, user: $0.user) }, event: event, actor: actor, app: app,
                                           kind: plan.kind, title: plan.title, body: plan.body, data: plan.data, at: now, on: connection)
        }
        let heldUntil: [UUID: Date] = plan.kind.isAlert
            ? Dictionary(uniqueKeysWithValues: recipients.compactMap { recipient in recipient.preferences.quietHours?.heldUntil(now).map { (recipient.user, $0) } })
            : [:]
        let tokens = try await deliveries.deviceTokens(app: app, users: recipients.map(\.user), on: connection)
        var payloads: [UUID: String] = [:]
        let queued = try tokens.map { token in
            if payloads[token.user] == nil {
                payloads[token.user] = try APNsPayload.encode(APNsPayload.push(plan, notificationID: notificationIDs[token.user]))
            }
            let held = heldUntil[token.user]
            return DeliveryStore.Queued(device: token.device, user: token.user, token: token.token, payload: payloads[token.user]!, notBefore: held ?? now, held: held != nil)
        }
        var scope: (MembershipScope, UUID)?
        if case .members(let kind, let id) = plan.recipients { scope = (kind, id) }
        try await deliveries.enqueue(queued, event: event, app: app, kind: plan.kind, pushType: plan.pushType, collapseID: plan.collapseID,
                                     expiresAt: expiresAt, now: now, scope: scope, on: connection)
    }

    /// Live Activity pushes go to the tokens of the event's circle members only, and are held to
    /// membership when sent.
    func liveActivity(_ plan: LiveActivityPlan, event: UUID, occurredAt: Date, on connection: PostgresConnection) async throws {
        let now = clock.now()
        let expiresAt = occurredAt.addingTimeInterval(Self.liveActivityExpiry)
        guard expiresAt > now else { return }
        let (circle, tokens) = try await deliveries.activityTokens(post: plan.postID, on: connection)
        guard let circle, !tokens.isEmpty else { return }
        let payload = try APNsPayload.encode(APNsPayload.liveActivity(plan, at: now))
        let queued = tokens.map { DeliveryStore.Queued(device: $0.device, user: $0.user, token: $0.token, payload: payload, notBefore: now, held: false) }
        try await deliveries.enqueue(queued, event: event, app: .mycirclee, kind: .eventActivity, pushType: .liveactivity, collapseID: nil,
                                     expiresAt: expiresAt, now: now, scope: (.circle, circle), on: connection)
    }
}

/// The time the service goes by: the system's, or a test's (quiet hours, retries).
public struct NotificationClock: Sendable {
    public var now: @Sendable () -> Date

    public init(now: @escaping @Sendable () -> Date) {
        self.now = now
    }

    public static let system = NotificationClock { Date() }
}
