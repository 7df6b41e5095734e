import ColonyClientTesting
import ColonyModels
import ColonyPlatform
import ColonyStorage
import ColonyTesting
import Foundation
import Hummingbird
import Testing
@testable import NotificationsService

/// The console's push routes (`ConsolePushRoutes`, `PushAdmin`): a user's devices and deliveries,
/// the app's delivery log and a test push, through a replica started with the console's
/// credential beside the harness's (same schema, queue and APNs stand-in), read as the console
/// reads them (`ColonyJSON.decoder()`).
@Suite("Notifications: the console's push routes")
struct ConsolePushRoutesTests {
    static let operatorEmail = "support@colony.test"
    let consoleKey = InternalKey(RunningNotifications.randomToken())

    /// The console's headers acting in `app` (nil: no `X-Colony-App`).
    func console(_ app: App?, key: InternalKey? = nil) -> [(String, String)] {
        ConsoleCaller.headers(key: key ?? consoleKey, operatorEmail: Self.operatorEmail, app: app)
    }

    /// `n`'s service again, with the console's credential: a second replica, as a deployment runs them.
    func withConsoleReplica(_ n: RunningNotifications, _ body: @Sendable (RunningService) async throws -> Void) async throws {
        let apns = n.apns
        let settings = NotificationsSettings(
            apns: APNsSettings(teamID: apns.teamID, keyID: apns.keyID, privateKey: apns.providerKey, topics: bundleIDs,
                               productionURL: apns.url, sandboxURL: apns.url, additionalTrustRootsPEM: apns.caPEM),
            concurrency: 16, jobInterval: .seconds(1), pollInterval: .milliseconds(200), clock: n.clock.clock
        )
        let definition = try NotificationsService.definition(settings: settings, exports: n.exports)
        let key = consoleKey
        try await withRunningTwin(of: n.service, .notifications, configure: { configuration in
            configuration.app = nil
            configuration.tokens.audience = nil
            configuration.consoleKey = key
        }, definition: { _ in definition }, body)
    }

    func get(_ service: RunningService, _ path: String, _ headers: [(String, String)], as user: RunningService.User? = nil) async throws -> RunningService.Reply {
        try await service.request(.GET, "\(service.base)\(path)", as: user, headers: headers)
    }

    func post(_ service: RunningService, _ path: String, _ headers: [(String, String)], as user: RunningService.User? = nil) async throws -> RunningService.Reply {
        try await service.request(.POST, "\(service.base)\(path)", as: user, headers: headers)
    }

    /// An answer as the console decodes it.
    func decode<Answer: Decodable>(_ type: Answer.Type, _ reply: RunningService.Reply) throws -> Answer {
        guard reply.status / 100 == 2 else { throw TestSetupError("expected a 2xx, got \(reply.status) \(reply.body)") }
        return try ColonyJSON.decoder().decode(Answer.self, from: Data(buffer: reply.bytes))
    }

    func userPush(_ service: RunningService, _ user: UUID, app: App, limit: Int? = nil) async throws -> PushAdmin.UserPush {
        try decode(PushAdmin.UserPush.self, try await get(service, PushAdmin.userPath(user) + (limit.map { "?limit=\($0)" } ?? ""), console(app)))
    }

    func log(_ service: RunningService, app: App, query: String = "") async throws -> [PushAdmin.Delivery] {
        try decode(PushAdmin.DeliveryLog.self, try await get(service, PushAdmin.deliveriesPath + query, console(app))).deliveries
    }

    /// "HH:MM" in UTC, `offset` seconds from now.
    static func utcClock(_ offset: TimeInterval) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(secondsFromGMT: 0) ?? calendar.timeZone
        let parts = calendar.dateComponents([.hour, .minute], from: Date().addingTimeInterval(offset))
        return String(format: "%02d:%02d", parts.hour ?? 0, parts.minute ?? 0)
    }

    @Test("a user's device shows in their push; a test push in their quiet hours reaches APNs at once and is logged sent; another app's header sees none of it")
    func testPush() async throws {
        try await withRunningNotifications { n in
            try await withConsoleReplica(n) { replica in
                let phone = try await n.device(.unify)
                let quiet = try await answer {
                    try await n.api(phone.user).updatePreferences(body: .json(.init(quietHours: .init(start: Self.utcClock(-3600), end: Self.utcClock(7200), timezone: "UTC"))))
                }
                #expect(quiet.status == 200, "\(quiet.body)")

                let before = try await userPush(replica, phone.user.id, app: .unify)
                #expect(before.deliveries.isEmpty)
                let device = try #require(before.devices.first)
                #expect(before.devices.count == 1)
                #expect(device.kind == "device" && device.environment == "production" && device.platform == "ios")
                #expect(device.appVersion == "1.0" && device.locale == "en-US")
                #expect(device.tokenSuffix == String(phone.token.suffix(8)))
                #expect(device.lastPushAt == nil && device.lastPushStatus == nil)

                // The test push: queued, sent at once although the user is in their quiet hours.
                let queuedAt = Date()
                let sent = try await post(replica, PushAdmin.testPath(user: phone.user.id, device: device.id), console(.unify))
                #expect(sent.status == 202, "\(sent.body)")
                let test = try decode(PushAdmin.TestPush.self, sent)
                #expect(test.status == "pending")
                try await n.waitForPushes([phone.token])
                let received = try #require(n.pushes(to: phone.token).first)
                #expect(received.alertTitle == "Test notification")
                #expect(received.alertBody?.contains("support") == true)
                #expect(received.kind == "test_push" && received.pushType == "alert" && received.topic == bundleIDs[.unify])
                #expect(received.apnsID?.lowercased() == test.deliveryId.lowercased)
                // APNs stops trying after an hour.
                let expiration = try #require(received.expiration.flatMap { Double($0) })
                #expect(abs(expiration - queuedAt.addingTimeInterval(3600).timeIntervalSince1970) < 120, "\(expiration)")

                // The log shows what APNs answered, in the user's push and the app's log.
                try await waitUntil { try await userPush(replica, phone.user.id, app: .unify).deliveries.first?.status == "sent" }
                let after = try await userPush(replica, phone.user.id, app: .unify)
                let delivery = try #require(after.deliveries.first)
                #expect(after.deliveries.count == 1)
                #expect(delivery.id == test.deliveryId && delivery.userId == phone.user.id && delivery.deviceId == device.id)
                #expect(delivery.app == "unify" && delivery.kind == "test_push" && delivery.pushType == "alert")
                #expect(delivery.attempts == 1 && delivery.lastStatus == 200 && delivery.sentAt != nil && delivery.heldUntil == nil)
                #expect(delivery.tokenSuffix == device.tokenSuffix)
                #expect(after.devices.first?.lastPushAt == delivery.createdAt && after.devices.first?.lastPushStatus == "sent")
                #expect(try await log(replica, app: .unify).contains(delivery))
                #expect(try await log(replica, app: .unify, query: "?status=sent").contains(delivery))
                #expect(try await !log(replica, app: .unify, query: "?status=failed").contains { $0.id == delivery.id })
                // The user's own log has it too; their in-app list does not.
                #expect(try await n.deliveries(of: phone.user).contains { $0.id.lowercased() == delivery.id.lowercased })
                #expect(try await n.notifications(of: phone.user).notifications.isEmpty)

                // A second one is newest; `limit` keeps the newest.
                let again = try decode(PushAdmin.TestPush.self, try await post(replica, PushAdmin.testPath(user: phone.user.id, device: device.id), console(.unify)))
                #expect(again.deliveryId != test.deliveryId)
                try await n.waitForPushes([phone.token], count: 2)
                #expect(try await userPush(replica, phone.user.id, app: .unify, limit: 1).deliveries.map(\.id) == [again.deliveryId])
                #expect(try await log(replica, app: .unify, query: "?limit=1").map(\.id) == [again.deliveryId])

                // Another app's header sees none of it, and cannot push to the device.
                let elsewhere = try await userPush(replica, phone.user.id, app: .habithive)
                #expect(elsewhere.devices.isEmpty && elsewhere.deliveries.isEmpty)
                #expect(try await !log(replica, app: .habithive).contains { $0.userId == phone.user.id })
                let refused = try await post(replica, PushAdmin.testPath(user: phone.user.id, device: device.id), console(.habithive))
                #expect(refused.status == 404 && refused.code == "device_not_found", "\(refused.status) \(refused.body)")
                // An unknown user: empty lists.
                let nobody = try await userPush(replica, UUID(), app: .unify)
                #expect(nobody.devices.isEmpty && nobody.deliveries.isEmpty)
                try await n.settle()
                #expect(n.pushes(to: phone.token).count == 2)
            }
        }
    }

    @Test("a Live Activity's token, another user's device and an unknown one are 404; only the console's credential in an app is taken; bad limits, statuses and ids are 400")
    func refusals() async throws {
        try await withRunningNotifications { n in
            try await withConsoleReplica(n) { replica in
                let host = try await n.device(.mycirclee), guest = try await n.user(.mycirclee)
                let circle = UUID()
                try await n.publish(CircleCreated(circle: Rows.circle(circle, name: "Book club", owner: host.id), owner: Rows.circleMember(circle, host.id, role: .owner)),
                                    app: .mycirclee, aggregate: circle, actor: host.id)
                try await n.publish(CircleMemberJoined(member: Rows.circleMember(circle, guest.id), circleName: "Book club", via: "invite"),
                                    app: .mycirclee, aggregate: circle, actor: guest.id)
                let event = Rows.post(circle: circle, author: host.id, type: .event, body: "Chapter 3", startsAt: Date().addingTimeInterval(7200))
                try await n.publish(PostCreated(post: event, pollOptions: []), app: .mycirclee, aggregate: circle, actor: host.id)
                let activityToken = RunningNotifications.randomToken()
                try await waitUntil {
                    try await answer {
                        try await n.api(guest).registerLiveActivity(body: .json(.init(activityId: "a1", postId: event.id.lowercased, token: activityToken, environment: .sandbox)))
                    }.status == 200
                }
                let activity = try #require(try await userPush(replica, guest.id, app: .mycirclee).devices.first)
                #expect(activity.kind == "live_activity" && activity.environment == "sandbox" && activity.tokenSuffix == String(activityToken.suffix(8)))
                let hostDevice = try #require(try await userPush(replica, host.id, app: .mycirclee).devices.first)

                for (what, user, device) in [("a Live Activity", guest.id, activity.id), ("another user's device", guest.id, hostDevice.id),
                                             ("an unknown device", host.id, UUID()), ("the device under an unknown user", UUID(), hostDevice.id)] {
                    let reply = try await post(replica, PushAdmin.testPath(user: user, device: device), console(.mycirclee))
                    #expect(reply.status == 404 && reply.code == "device_not_found", "\(what): \(reply.status) \(reply.body)")
                }

                // Who may call: the console's credential only, with an operator, in an app.
                let operations: [(String, String)] = [
                    ("GET", PushAdmin.userPath(host.id)), ("GET", PushAdmin.deliveriesPath), ("POST", PushAdmin.testPath(user: host.id, device: hostDevice.id)),
                ]
                func call(_ method: String, _ path: String, _ headers: [(String, String)], as user: RunningService.User? = nil, on service: RunningService? = nil) async throws -> RunningService.Reply {
                    if method == "POST" { return try await post(service ?? replica, path, headers, as: user) }
                    return try await get(service ?? replica, path, headers, as: user)
                }
                let operatorHeaders = [("X-Colony-Operator", Self.operatorEmail), ("X-Colony-App", "mycirclee")]
                let refused: [(String, [(String, String)], RunningService.User?)] = [
                    ("no credential", operatorHeaders, nil),
                    ("an app user's token", operatorHeaders, host.user),
                    ("a wrong console key", console(.mycirclee, key: InternalKey(RunningNotifications.randomToken())), nil),
                    ("the console key in another scheme", [("Authorization", consoleKey.authorization.replacingOccurrences(of: "Bearer", with: "Basic"))] + operatorHeaders, nil),
                ]
                for (method, path) in operations {
                    for (what, headers, user) in refused {
                        let reply = try await call(method, path, headers, as: user)
                        #expect(reply.status == 401 && reply.code == "invalid_console_credential", "\(method) \(path) with \(what): \(reply.status) \(reply.body)")
                    }
                    let noApp = try await call(method, path, console(nil))
                    #expect(noApp.status == 400 && noApp.code == "app_required", "\(method) \(path): \(noApp.status) \(noApp.body)")
                    let unknownApp = try await call(method, path, console(nil) + [("X-Colony-App", "nope")])
                    #expect(unknownApp.status == 400 && unknownApp.code == "unknown_app", "\(method) \(path): \(unknownApp.status) \(unknownApp.body)")
                    let noOperator = try await call(method, path, [("Authorization", consoleKey.authorization), ("X-Colony-App", "mycirclee")])
                    #expect(noOperator.status == 400 && noOperator.code == "operator_required", "\(method) \(path): \(noOperator.status) \(noOperator.body)")
                    // The harness's replica has no COLONY_CONSOLE_KEY: it refuses the console.
                    let keyless = try await call(method, path, console(.mycirclee), on: n.service)
                    #expect(keyless.status == 401 && keyless.code == "invalid_console_credential", "\(method) \(path) without a console key: \(keyless.status)")
                }
                // Nothing was pushed by any of it.
                try await n.settle()
                #expect(n.pushes(to: activityToken).isEmpty && n.pushes(to: host.token).isEmpty)

                // Bad input: 400 with its code, never a 500.
                let badLimits = ["0", "-1", "+5", "1.5", "1e2", "", "abc", "%201", "0x10", "99999999999999999999"]
                var bad: [(String, String, String)] = []
                bad += (badLimits + ["101"]).map { ("GET", "\(PushAdmin.userPath(host.id))?limit=\($0)", "invalid_limit") }
                bad += (badLimits + ["501"]).map { ("GET", "\(PushAdmin.deliveriesPath)?limit=\($0)", "invalid_limit") }
                bad += ["nope", "SENT", "", "sent%20", "pending,sent"].map { ("GET", "\(PushAdmin.deliveriesPath)?status=\($0)", "invalid_status") }
                let badIDs = ["abc", "1", "\(host.id.lowercased)0", "%20", "g\(host.id.lowercased.dropFirst())"]
                bad += badIDs.map { ("GET", "\(PushAdmin.prefix)/users/\($0)", "invalid_id") }
                bad += badIDs.map { ("POST", "\(PushAdmin.prefix)/users/\($0)/devices/\(hostDevice.id.lowercased)/test", "invalid_id") }
                bad += badIDs.map { ("POST", "\(PushAdmin.prefix)/users/\(host.id.lowercased)/devices/\($0)/test", "invalid_id") }
                for (method, path, code) in bad {
                    let reply = try await call(method, path, console(.mycirclee))
                    #expect(reply.status == 400 && reply.code == code, "\(method) \(path): \(reply.status) \(reply.body)")
                }
                // The bounds themselves, every status, and ids in upper case are taken.
                let good = ["\(PushAdmin.userPath(host.id))?limit=1", "\(PushAdmin.userPath(host.id))?limit=100", "\(PushAdmin.prefix)/users/\(host.id.uuidString.uppercased())",
                            "\(PushAdmin.deliveriesPath)?limit=1", "\(PushAdmin.deliveriesPath)?limit=500"]
                    + PushAdmin.statuses.map { "\(PushAdmin.deliveriesPath)?status=\($0)" }
                for path in good {
                    let reply = try await get(replica, path, console(.mycirclee))
                    #expect(reply.status == 200, "\(path): \(reply.status) \(reply.body)")
                }
                #expect(try await userPush(replica, host.id, app: .mycirclee).devices.map(\.id) == [hostDevice.id])
            }
        }
    }

    @Test("the routes registered are exactly the document's operations, each with the errors every route can give")
    func documentMatchesRoutes() throws {
        let router = Router(context: ColonyRequestContext.self)
        let database = Database(configuration: DatabaseConfiguration(host: "127.0.0.1", port: 5432, database: "colony", user: "none", password: "none", schema: "notifications"),
                                logger: TestEnvironment.logger)
        ConsolePushRoutes(database: database, settings: NotificationsSettings(), signal: WakeSignal(), key: consoleKey).add(to: router)
        let registered = Set(router.routes.map { RouteKey(method: $0.method.rawValue, path: "/" + $0.path.description.split(separator: "/").joined(separator: "/")) })
        let document = NotificationsService.pushAdminDocument
        let documented = try document.operations()
        #expect(registered == documented, "registered \(registered.sorted()), documented \(documented.sorted())")
        #expect(documented.count == 3)

        struct Document: Decodable { let openapi: String; let paths: [String: [String: JSONValue]] }
        let parsed = try JSONDecoder().decode(Document.self, from: Data(document.json.utf8))
        #expect(parsed.openapi == "3.1.0")
        for (path, item) in parsed.paths {
            #expect(path.hasPrefix(PushAdmin.prefix + "/"))
            for (method, operation) in item {
                let statuses = Set(operation["responses"]?.objectValue?.keys.map { $0 } ?? [])
                #expect(statuses.isSuperset(of: ["400", "401", "422", "503"]), "\(method) \(path): \(statuses.sorted())")
            }
        }
    }
}
