import ColonyModels
import ColonyPlatform
import Foundation
import Hummingbird
import Logging
import PostgresNIO

/// The Colony Console's push routes (`PushAdmin`, documented by `push-admin.openapi.json`): a
/// user's devices and last deliveries, the app's delivery log, and a test push to one of a user's
/// app installs, for its user page and its Push page.
///
/// Only the console's credential (`ConsoleCaller`: 401 `invalid_console_credential` otherwise),
/// always in one app (`X-Colony-App`, 400 `app_required` without it), which scopes every row read
/// or written. Like the platform's console routes, reached on the service's own port: the
/// gateway and the Ingress never route `/internal/`.
struct ConsolePushRoutes: Sendable {
    let database: Database
    let settings: NotificationsSettings
    /// The sender's: a test push goes out at once rather than at its next poll.
    let signal: WakeSignal
    /// `COLONY_CONSOLE_KEY`; nil: every call is refused.
    let key: InternalKey?

    /// The delivery log's kind for a test push: no domain kind, so no preference switches it off.
    static let testKind = "test_push"
    /// APNs stops trying to deliver a test push after an hour: support is waiting for it now.
    static let testExpiry: TimeInterval = 3600

    /// What the device shows: who sent it and why, nothing of the user.
    static let testPayload: [String: JSONValue] = [
        "aps": .object([
            "alert": .object([
                "title": .string("Test notification"),
                "body": .string("The app's support team sent this to check that notifications reach this device. There is nothing you need to do."),
            ]),
            "sound": .string("default"),
        ]),
        "kind": .string(testKind),
        "data": .object([:]),
    ]

    func add(to router: Router<ColonyRequestContext>) {
        router.get(RouterPath("\(PushAdmin.prefix)/users/{user_id}")) { request, context -> Response in
            try await userPush(request, context)
        }
        router.get(RouterPath(PushAdmin.deliveriesPath)) { request, context -> Response in
            try await deliveryLog(request, context)
        }
        router.post(RouterPath("\(PushAdmin.prefix)/users/{user_id}/devices/{device_id}/test")) { request, context -> Response in
            try await testPush(request, context)
        }
    }

    /// `GET /internal/v1/console/push/users/{user_id}?limit=20`: the user's devices in the app and
    /// their last `limit` deliveries there, newest first; empty lists for a user it has none of.
    func userPush(_ request: Request, _ context: ColonyRequestContext) async throws -> Response {
        let app = try ConsoleCaller.required(request, key: key).requiredApp()
        let user = try ConsoleCaller.pathID(context, "user_id", of: "user")
        let limit = try Self.limit(request, range: PushAdmin.userLimits, default: PushAdmin.defaultUserLimit)
        let logger = context.logger
        let answer = try await readOnly(logger: logger) { connection in
            PushAdmin.UserPush(devices: try await DeviceStore(logger: logger).consoleList(app: app, user: user, on: connection),
                               deliveries: try await DeliveryStore(logger: logger).log(app: app, user: user, status: nil, limit: limit, on: connection))
        }
        return try RouteSupport.json(answer, status: .ok)
    }

    /// `GET /internal/v1/console/push/deliveries?limit=100&status=`: the app's delivery log,
    /// newest first, of one status or all.
    func deliveryLog(_ request: Request, _ context: ColonyRequestContext) async throws -> Response {
        let app = try ConsoleCaller.required(request, key: key).requiredApp()
        let limit = try Self.limit(request, range: PushAdmin.logLimits, default: PushAdmin.defaultLogLimit)
        let status = try PipelineAdminRoutes.query(request, "status", code: "invalid_status",
                                                   "status must be one of \(PushAdmin.statuses.joined(separator: ", "))") { PushAdmin.statuses.contains($0) ? $0 : nil }
        let logger = context.logger
        let deliveries = try await readOnly(logger: logger) { connection in
            try await DeliveryStore(logger: logger).log(app: app, user: nil, status: status, limit: limit, on: connection)
        }
        return try RouteSupport.json(PushAdmin.DeliveryLog(deliveries: deliveries), status: .ok)
    }

    /// `POST /internal/v1/console/push/users/{user_id}/devices/{device_id}/test`: one alert to the
    /// user's app install, queued like any push (so the log shows what APNs answered) but sent now
    /// whatever the user's quiet hours and preferences say: support asked for it. 404
    /// `device_not_found` for anything but an app install of this user in this app.
    func testPush(_ request: Request, _ context: ColonyRequestContext) async throws -> Response {
        let caller = try ConsoleCaller.required(request, key: key)
        let app = try caller.requiredApp()
        let user = try ConsoleCaller.pathID(context, "user_id", of: "user")
        let device = try ConsoleCaller.pathID(context, "device_id", of: "device")
        let logger = context.logger
        let now = settings.clock.now()
        let delivery = try await PipelineAdminRoutes.reading {
            try await database.transaction { connection -> UUID? in
                guard let token = try await DeviceStore(logger: logger).installToken(device, app: app, user: user, on: connection) else { return nil }
                let push = DeliveryStore.Queued(device: device, user: user, token: token, payload: try APNsPayload.encode(Self.testPayload), notBefore: now, held: false)
                // A fresh event: nothing can have reached the device for it yet, so the push is queued.
                guard let queued = try await DeliveryStore(logger: logger).enqueue([push], event: UUID.timeOrdered(at: now), app: app, kind: Self.testKind,
                                                                                  pushType: .alert, collapseID: nil, expiresAt: now.addingTimeInterval(Self.testExpiry),
                                                                                  now: now, on: connection).first
                else { throw APIError.internalError }
                return queued
            }
        }
        guard let delivery else { throw NotificationsErrors.deviceNotFound }
        signal.wake()
        logger.notice("test push queued by an operator through the console", metadata: [
            "operator": .string(caller.operatorEmail), "app": .string(app.rawValue), "user_id": .string(user.lowercased),
            "device_id": .string(device.lowercased), "delivery_id": .string(delivery.lowercased),
        ])
        return try RouteSupport.json(PushAdmin.TestPush(deliveryId: delivery, status: "pending"), status: .accepted)
    }

    /// Reads in one read-only transaction, as the platform's console routes do: nothing here can
    /// write, and the reads agree with each other.
    private func readOnly<Value: Sendable>(logger: Logger, _ body: (PostgresConnection) async throws -> Value) async throws -> Value {
        try await PipelineAdminRoutes.reading {
            try await database.transaction { connection in
                try await connection.query("SET TRANSACTION READ ONLY", logger: logger)
                return try await body(connection)
            }
        }
    }

    /// `limit` within `range` (`default` when absent), else 400 `invalid_limit`.
    static func limit(_ request: Request, range: ClosedRange<Int>, default defaultValue: Int) throws -> Int {
        try PipelineAdminRoutes.query(request, "limit", code: "invalid_limit", "limit must be a whole number from \(range.lowerBound) to \(range.upperBound)") { text in
            // Digits only: `Int` would take "+5".
            guard !text.isEmpty, text.utf8.count <= 3, text.utf8.allSatisfy({ (48...57).contains($0) }), let limit = Int(text), range.contains(limit) else { return nil }
            return limit
        } ?? defaultValue
    }
}
