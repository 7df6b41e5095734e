import CirclesService
import ColonyClientTesting
import ColonyModels
import ColonyPlatform
import ColonyStorage
import ColonyTesting
import Foundation
import Testing
@testable import NotificationsService

/// The deployment's service credential in these tests.
let liveActivityInternalKey = InternalKey("ntf-internal-key-2b7e151628aed2a6abf7158809cf4f3c")

/// Circles and notifications on one token key with the broker unreachable: nothing circles
/// publishes reaches notifications, so a Live Activity it accepts was vouched for by circles.
func withNotificationsAskingCircles(_ body: @Sendable (_ notifications: RunningService, _ circles: RunningService) async throws -> Void) async throws {
    let prefix = TestKafka.topicPrefix()
    let tokens = TestTokens()
    let deadBroker = "127.0.0.1:\(try freePort())"
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("colony-ntf-ryw-\(UUID().uuidString)").path
    defer { try? FileManager.default.removeItem(atPath: root) }
    try await withRunningService(.circles, app: .mycirclee, apiPrefix: "/circles/v1", configure: { configuration in
        configuration.internalKey = liveActivityInternalKey
        configuration.kafkaBrokers = deadBroker
    }, topicPrefix: prefix, tokens: tokens, definition: { base in
        let storage = Storage(backend: FileSystemStorageBackend(root: root), publicBaseURL: base, signingKey: Array("ntf-tests-signing-key-0123456789abcdef".utf8))
        return CirclesService.definition(settings: CirclesSettings(), storage: storage)
    }) { circles in
        var settings = NotificationsSettings()
        settings.circlesURL = circles.base
        let configured = settings
        try await withRunningService(.notifications, app: .mycirclee, apiPrefix: "/notifications/v1", configure: { configuration in
            configuration.app = nil
            configuration.tokens.audience = nil
            configuration.internalKey = liveActivityInternalKey
            configuration.kafkaBrokers = deadBroker
        }, topicPrefix: prefix, tokens: tokens, definition: { _ in
            try! NotificationsService.definition(settings: configured, exports: FileSystemStorageBackend(root: root))
        }) { notifications in
            try await body(notifications, circles)
        }
    }
}

@Suite("Notifications: a Live Activity for an event just created or a circle just joined is accepted at once (read-your-writes)", .serialized)
struct LiveActivityReadYourWritesTests {
    /// `user`'s registration of a Live Activity for `post`, through the generated client.
    static func register(_ notifications: RunningService, _ user: RunningService.User, post: String) async throws -> Answer<ClientOperations.RegisterLiveActivity.Output> {
        let registration = Schemas.LiveActivityRegistration(activityId: "act-\(UUID().uuidString.prefix(8))", postId: post,
                                                            token: RunningNotifications.randomToken(), environment: .sandbox)
        return try await answer { try await notifications.notificationsClient(as: user).registerLiveActivity(body: .json(registration)) }
    }

    @Test("with the broker down: the event's author and a member who just claimed an invite register at once; a stranger and a leaver get 404")
    func registerDuringBrokerOutage() async throws {
        try await withNotificationsAskingCircles { notifications, circles in
            let owner = try await circles.user(), member = try await circles.user(), stranger = try await circles.user(), leaver = try await circles.user()
            for user in [owner, member, stranger, leaver] { _ = try await circles.circlesClient(as: user).getProfile().ok }
            let owners = circles.circlesClient(as: owner)
            let circle = try await owners.createCircle(body: .json(.init(name: "Hikers"))).created.body.json.id
            let event = try await owners.createPost(path: .init(circleId: circle), body: .json(.init(_type: .event, body: "Hike", startsAt: ISO8601.parse("2030-01-01T09:00:00Z"))))
                .created.body.json.id

            // Notifications' projection has heard of neither the circle nor the post.
            let projected = try await notifications.withDatabase { db in
                try await db.query("SELECT count(*)::int FROM event_posts").collect().first?.decode(Int.self) ?? -1
            }
            #expect(projected == 0)

            let authors = try await Self.register(notifications, owner, post: event)
            #expect(authors.status == 200, "\(authors.body)")
            let code = try await owners.createInvite(path: .init(circleId: circle)).created.body.json.code
            _ = try await circles.circlesClient(as: member).claimInvite(body: .json(.init(code: code))).ok
            let members = try await Self.register(notifications, member, post: event)
            #expect(members.status == 200, "\(members.body)")
            // A second registration is answered from the kept yes, as the first.
            #expect(try await Self.register(notifications, member, post: event).status == 200)

            let strangers = try await Self.register(notifications, stranger, post: event)
            #expect(strangers.status == 404 && strangers.code == "event_not_found", "\(strangers.body)")
            let unknown = try await Self.register(notifications, owner, post: UUID().uuidString.lowercased())
            #expect(unknown.status == 404, "\(unknown.body)")

            // Claimed and left before registering: circles says no.
            let again = try await owners.createInvite(path: .init(circleId: circle)).created.body.json.code
            let leavers = circles.circlesClient(as: leaver)
            _ = try await leavers.claimInvite(body: .json(.init(code: again))).ok
            #expect(try await answer { try await leavers.leaveCircle(path: .init(circleId: circle)) }.status < 300)
            let leaversRegistration = try await Self.register(notifications, leaver, post: event)
            #expect(leaversRegistration.status == 404, "\(leaversRegistration.body)")
        }
    }

    @Test("circles' internal event-post route answers the service credential only")
    func internalRouteRefusesEverythingElse() async throws {
        try await withNotificationsAskingCircles { _, circles in
            let owner = try await circles.user()
            let owners = circles.circlesClient(as: owner)
            _ = try await owners.getProfile().ok
            let circle = try await owners.createCircle(body: .json(.init(name: "Internal"))).created.body.json.id
            let event = try await owners.createPost(path: .init(circleId: circle), body: .json(.init(_type: .event, body: "Hike", startsAt: ISO8601.parse("2030-01-01T09:00:00Z"))))
                .created.body.json.id
            // Raw: the internal route is not in the document (the gateway never routes /internal/).
            let url = "\(circles.base)\(InternalEventPostRoute.path)/\(event.lowercased())/members/\(owner.id.lowercased)"
            let anon = try await circles.tokens.apiKey(app: .mycirclee)
            let attempts: [(String, [(String, String)])] = [
                ("no credential", []),
                ("a user's access token", [("Authorization", "Bearer \(owner.token)")]),
                ("the anon key", [("Authorization", "Bearer \(anon)"), ("apikey", anon)]),
                ("the service-role key", [("Authorization", "Bearer \(try await circles.tokens.serviceKey(app: .mycirclee))")]),
                ("another key", [("Authorization", "Bearer ntf-internal-key-2b7e151628aed2a6abf7158809cf4f3d")]),
            ]
            for (name, headers) in attempts {
                let reply = try await circles.request(.GET, url, as: nil, headers: headers)
                #expect(reply.status == 401 && reply.code == "invalid_service_credential", "\(name): \(reply.status) \(reply.body)")
            }
            let granted = try await circles.request(.GET, url, as: nil, headers: [("Authorization", liveActivityInternalKey.authorization)])
            #expect(granted.status == 200 && granted.body["member"] == .bool(true), "\(granted.body)")
            let stranger = try await circles.request(.GET, "\(circles.base)\(InternalEventPostRoute.path)/\(event.lowercased())/members/\(UUID().lowercased)",
                                                     as: nil, headers: [("Authorization", liveActivityInternalKey.authorization)])
            #expect(stranger.body["member"] == .bool(false), "\(stranger.body)")
        }
    }
}
