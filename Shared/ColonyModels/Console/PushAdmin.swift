import Foundation

/// The notifications service's routes for the Colony Console's Push page and a user's page
/// (`ConsolePushRoutes` serves them, the console's `PushClient` calls them): a user's push devices
/// and last deliveries, the app's delivery log, and a test push to one of the user's devices.
/// Only the console's credential, in one app (`X-Colony-App`); documented by notifications'
/// `push-admin.openapi.json`.
///
/// The answers are written and read with `ColonyJSON` (snake_case keys: `deviceId` is
/// `device_id`); no type here spells its keys out, so the console's `ColonyJSON.decoder()` reads
/// exactly what the service's encoder wrote. Optional fields without a value are left out.
public enum PushAdmin {
    public static let prefix = "/internal/v1/console/push"

    /// `GET`: the user's devices and last deliveries in the app (`UserPush`).
    public static func userPath(_ user: UUID) -> String { "\(prefix)/users/\(user.lowercased)" }

    /// `POST`: a test push to one of the user's app installs (`TestPush`).
    public static func testPath(user: UUID, device: UUID) -> String { "\(prefix)/users/\(user.lowercased)/devices/\(device.lowercased)/test" }

    /// `GET`: the app's delivery log (`DeliveryLog`).
    public static let deliveriesPath = "\(prefix)/deliveries"

    /// `limit` of the user route (its deliveries): 1...100, 20 when absent.
    public static let userLimits = 1...100
    public static let defaultUserLimit = 20
    /// `limit` of the delivery log: 1...500, 100 when absent.
    public static let logLimits = 1...500
    public static let defaultLogLimit = 100

    /// A delivery's status: `pending` (queued, or waiting to be tried again), `sent` (APNs took it),
    /// `failed` (APNs refused it, or every try went unanswered), `dropped` (not sent: the token
    /// moved or was removed, the push expired, the recipient left the group it was about),
    /// `skipped` (not sent: APNs is not configured, or has no topic for the app).
    public static let statuses = ["pending", "sent", "failed", "dropped", "skipped"]

    /// A registered push token of the user in the app: an app install (`device`) or one Live
    /// Activity (`live_activity`). The token itself is not shown, only its end.
    public struct Device: Codable, Sendable, Equatable {
        public var id: UUID
        /// `device` or `live_activity`.
        public var kind: String
        public var platform: String?
        /// `production` or `sandbox` (a development build's token).
        public var environment: String
        public var appVersion: String?
        public var locale: String?
        /// The token's last 8 hex digits.
        public var tokenSuffix: String
        public var createdAt: Date
        /// When the token was last registered (apps register again at every launch).
        public var updatedAt: Date
        /// When the newest push to this device was queued; absent when none is in the log.
        public var lastPushAt: Date?
        /// That push's status (`PushAdmin.statuses`).
        public var lastPushStatus: String?

        public init(id: UUID, kind: String, platform: String?, environment: String, appVersion: String?, locale: String?, tokenSuffix: String,
                    createdAt: Date, updatedAt: Date, lastPushAt: Date?, lastPushStatus: String?) {
            self.id = id
            self.kind = kind
            self.platform = platform
            self.environment = environment
            self.appVersion = appVersion
            self.locale = locale
            self.tokenSuffix = tokenSuffix
            self.createdAt = createdAt
            self.updatedAt = updatedAt
            self.lastPushAt = lastPushAt
            self.lastPushStatus = lastPushStatus
        }
    }

    /// One push to one token, as the delivery log keeps it. `id` is also the `apns-id` it was
    /// sent with, which Apple's tools know it by.
    public struct Delivery: Codable, Sendable, Equatable {
        public var id: UUID
        public var userId: UUID
        /// Absent once the token was removed.
        public var deviceId: UUID?
        /// The domain event that made it (a fresh one for a test push).
        public var eventId: UUID
        public var app: String
        /// What it is about (`circle_post`, `dm`, …; `test_push` for the console's test push).
        public var kind: String
        /// `alert`, `background` or `liveactivity`.
        public var pushType: String
        /// One of `PushAdmin.statuses`.
        public var status: String
        /// Tries so far.
        public var attempts: Int
        /// APNs' HTTP status of the last try.
        public var lastStatus: Int?
        /// APNs' reason (`Unregistered`, `BadDeviceToken`, …) or ours (`token_moved`, `expired`, `apns_not_configured`, …).
        public var lastReason: String?
        /// The token's last 8 hex digits.
        public var tokenSuffix: String
        /// Held for the recipient's quiet hours until then.
        public var heldUntil: Date?
        /// When it was queued.
        public var createdAt: Date
        /// When APNs took it.
        public var sentAt: Date?

        public init(id: UUID, userId: UUID, deviceId: UUID?, eventId: UUID, app: String, kind: String, pushType: String, status: String, attempts: Int,
                    lastStatus: Int?, lastReason: String?, tokenSuffix: String, heldUntil: Date?, createdAt: Date, sentAt: Date?) {
            self.id = id
            self.userId = userId
            self.deviceId = deviceId
            self.eventId = eventId
            self.app = app
            self.kind = kind
            self.pushType = pushType
            self.status = status
            self.attempts = attempts
            self.lastStatus = lastStatus
            self.lastReason = lastReason
            self.tokenSuffix = tokenSuffix
            self.heldUntil = heldUntil
            self.createdAt = createdAt
            self.sentAt = sentAt
        }
    }

    /// `GET userPath`: the user's devices in the app (both kinds) and their last deliveries, newest first.
    public struct UserPush: Codable, Sendable, Equatable {
        public var devices: [Device]
        public var deliveries: [Delivery]

        public init(devices: [Device], deliveries: [Delivery]) {
            self.devices = devices
            self.deliveries = deliveries
        }
    }

    /// `GET deliveriesPath`: the app's delivery log, newest first.
    public struct DeliveryLog: Codable, Sendable, Equatable {
        public var deliveries: [Delivery]

        public init(deliveries: [Delivery]) {
            self.deliveries = deliveries
        }
    }

    /// `POST testPath` (202): the push queued; its outcome shows in the log under `deliveryId`.
    public struct TestPush: Codable, Sendable, Equatable {
        public var deliveryId: UUID
        /// `pending` when queued.
        public var status: String

        public init(deliveryId: UUID, status: String) {
            self.deliveryId = deliveryId
            self.status = status
        }
    }
}
