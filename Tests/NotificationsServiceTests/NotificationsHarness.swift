import AsyncHTTPClient
import ColonyClientTesting
import ColonyModels
import ColonyPlatform
import ColonyStorage
import ColonyTesting
import Foundation
import Synchronization
@testable import NotificationsService

/// Each app's bundle id, as the stand-in and the service know it.
let bundleIDs: [App: String] = [
    .mycirclee: "com.example.mycirclee", .unify: "com.example.unify", .habithive: "com.example.habithive",
    .socialspot: "com.example.socialspot", .ibelieveinyou: "com.example.ibelieveinyou",
]

/// A clock a test can move (quiet hours).
final class TestClock: Sendable {
    private let offset = Mutex<TimeInterval>(0)
    func advance(by seconds: TimeInterval) { offset.withLock { $0 += seconds } }
    func set(_ date: Date) { offset.withLock { $0 = date.timeIntervalSinceNow } }
    var clock: NotificationClock { NotificationClock { [self] in Date().addingTimeInterval(self.offset.withLock { $0 }) } }
}

/// The notifications service (tokens of every app) pushing to a local APNs stand-in.
struct RunningNotifications: Sendable {
    let service: RunningService
    let apns: APNsStandIn
    let clock: TestClock
    /// Where the service writes its parts of data exports.
    let exports: FileSystemStorageBackend

    /// A user of `app` with a registered device token (hex).
    struct Device: Sendable {
        let user: RunningService.User
        let id: UUID
        let token: String
    }

    func user(_ app: App) async throws -> RunningService.User {
        try await service.user(UUID(), app: app)
    }

    /// The generated client as `user` (nil: no token).
    func api(_ user: RunningService.User?) -> NotificationsClient { service.notificationsClient(as: user) }

    /// `user`'s registered devices and Live Activities.
    func devices(of user: RunningService.User) async throws -> [Schemas.Device] {
        try await api(user).listDevices().ok.body.json.devices
    }

    /// `user`'s delivery log, newest first.
    func deliveries(of user: RunningService.User) async throws -> [Schemas.Delivery] {
        try await api(user).listDeliveries().ok.body.json.deliveries
    }

    /// `user`'s in-app notifications (a page of `limit`, after `cursor`).
    func notifications(of user: RunningService.User, limit: Int? = nil, cursor: String? = nil) async throws -> Schemas.NotificationPage {
        try await api(user).listNotifications(query: .init(cursor: cursor, limit: limit)).ok.body.json
    }

    func device(_ app: App, user: RunningService.User? = nil, environment: String = "production") async throws -> Device {
        let user = if let user { user } else { try await self.user(app) }
        let token = Self.randomToken()
        let registration = Schemas.DeviceRegistration(token: token, environment: .init(rawValue: environment), appVersion: "1.0", locale: "en-US")
        let reply = try await answer { try await api(user).registerDevice(body: .json(registration)) }
        guard reply.status == 200 else { throw TestSetupError("device registration failed: \(reply.status) \(reply.body)") }
        return Device(user: user, id: user.id, token: token)
    }

    static func randomToken() -> String {
        (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
    }

    /// Publishes a domain event as its service would (`actor` is who acted).
    func publish<Payload: EventPayload>(_ payload: Payload, app: App, aggregate: UUID, actor: UUID?, id: UUID = .timeOrdered(), at date: Date = Date()) async throws {
        try await service.publish(EventEnvelope(id: id, app: app, aggregateId: aggregate.uuidString.lowercased(), occurredAt: date, actor: actor, payload: payload))
    }

    /// Pushes received for `token`.
    func pushes(to token: String) -> [APNsStandIn.Received] { apns.received.filter { $0.token == token } }

    /// Waits until the stand-in has `count` pushes for each of `tokens`; returns all received.
    @discardableResult
    func waitForPushes(_ tokens: [String], count: Int = 1, timeout: Duration = .seconds(30)) async throws -> [APNsStandIn.Received] {
        do {
            try await waitUntil(timeout: timeout) { tokens.allSatisfy { pushes(to: $0).count >= count } }
        } catch {
            let missing = tokens.filter { pushes(to: $0).count < count }.map { "\($0.prefix(8))…" }
            throw TestSetupError("no push to \(missing.joined(separator: ", ")) within \(timeout)")
        }
        return apns.received
    }

    /// Waits a moment for pushes that must not come (the ones that must came first, so the
    /// queue is worked off; this catches stragglers).
    func settle() async throws {
        try await Task.sleep(for: .milliseconds(600))
    }
}

func withRunningNotifications(maxAttempts: Int = 8, topicPrefix: String? = nil, tokens: TestTokens? = nil,
                              appRetention: [App: NotificationsSettings.AppRetention] = [:], sweepInterval: Duration = .seconds(3600),
                              _ body: @Sendable (RunningNotifications) async throws -> Void) async throws {
    let apns = try APNsStandIn(bundleIDs: Set(bundleIDs.values))
    let clock = TestClock()
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("colony-notifications-\(UUID().uuidString)").path
    defer { try? FileManager.default.removeItem(atPath: root) }
    let exports = FileSystemStorageBackend(root: root)
    try await apns.run { apns in
        var settings = NotificationsSettings(
            apns: APNsSettings(teamID: apns.teamID, keyID: apns.keyID, privateKey: apns.providerKey, topics: bundleIDs,
                               productionURL: apns.url, sandboxURL: apns.url, additionalTrustRootsPEM: apns.caPEM),
            concurrency: 16, maxAttempts: maxAttempts, jobInterval: .seconds(1), pollInterval: .milliseconds(200), clock: clock.clock
        )
        settings.appRetention = appRetention
        settings.sweepInterval = sweepInterval
        let configured = settings
        try await withRunningService(.notifications, app: .mycirclee, apiPrefix: "/notifications/v1", configure: { configuration in
            configuration.app = nil
            configuration.tokens.audience = nil
        }, topicPrefix: topicPrefix, tokens: tokens, definition: { _ in
            try! NotificationsService.definition(settings: configured, exports: exports)
        }) { service in
            try await body(RunningNotifications(service: service, apns: apns, clock: clock, exports: exports))
        }
    }
}

// MARK: domain rows for the events

enum Rows {
    static let now = Date()

    static func circle(_ id: UUID, name: String, owner: UUID) -> CircleRow {
        CircleRow(id: id, name: name, createdBy: owner, createdAt: now)
    }

    static func circleMember(_ circle: UUID, _ user: UUID, role: CircleRole = .member) -> CircleMemberRow {
        CircleMemberRow(circleId: circle, userId: user, role: role, joinedAt: now)
    }

    static func post(_ id: UUID = UUID(), circle: UUID, author: UUID, type: PostType = .note, body: String = "Dinner at mine?", startsAt: Date? = nil) -> PostRow {
        PostRow(id: id, circleId: circle, authorId: author, type: type, body: body, mood: nil, category: nil, urgency: nil, location: type == .event ? "Café Luna" : nil,
                latitude: nil, longitude: nil, startsAt: startsAt, photoUrl: nil, expiresAt: now.addingTimeInterval(86_400), createdAt: now, updatedAt: now)
    }

    static func group(_ id: UUID, name: String, owner: UUID) -> GroupRow {
        GroupRow(id: id, name: name, ownerId: owner, pictureUrl: nil, createdAt: now, updatedAt: now)
    }

    static func groupMember(_ group: UUID, _ user: UUID, role: GroupRole = .user) -> GroupMemberRow {
        GroupMemberRow(groupId: group, userId: user, role: role, joinedAt: now, lastReadAt: now)
    }

    static func message(group: UUID, sender: UUID, text: String = "Hallo zusammen") -> MessageRow {
        MessageRow(id: UUID(), groupId: group, content: text, sentBy: sender, sentAt: now, isEdited: false, messageType: .text, voiceDuration: nil, voiceUrl: nil)
    }

    static let today = LocalDate(year: 2026, month: 11, day: 24)!

    static func hive(_ id: UUID, name: String = "Morning run", owner: UUID, length: Int = 1) -> HiveRow {
        HiveRow(id: id, name: name, ownerId: owner, colorHex: "#FFB300", type: .checkbox, targetPerDay: 1, rule: "all", threshold: nil,
                scheduleDaily: true, scheduleWeekmask: 127, currentLength: length, lastAdvancedOn: today, createdAt: now)
    }

    static func hiveMember(_ hive: UUID, _ user: UUID, role: String = "member") -> HiveMemberRow {
        HiveMemberRow(hiveId: hive, userId: user, role: role, joinedAt: now)
    }

    static func activity(hive: UUID, actor: UUID?, type: ActivityType) -> ActivityEventRow {
        ActivityEventRow(id: UUID(), actorId: actor, hiveId: hive, habitId: nil, type: type, data: [:], createdAt: now)
    }

    static func project(_ id: UUID, title: String, builder: UUID) -> ProjectRow {
        ProjectRow(id: id, builderId: builder, title: title, tagline: nil, description: nil, coverImageUrl: nil, publicSlug: "p-\(id.uuidString.prefix(6).lowercased())",
                   mood: .green, followerCount: 0, isPublished: true, createdAt: now, updatedAt: now)
    }
}
