import AsyncHTTPClient
import CirclesService
import HabitsService
import ColonyModels
import ColonyPlatform
import ColonyStorage
import ColonyTesting
import Foundation
import Testing
@testable import RealtimeService

/// The deployment's service credential in these tests.
let testInternalKey = InternalKey("rt-internal-key-6f1c0a9e4b7d2853aa1e90c4d7b6f2e1")

/// Realtime and circles on one token key, realtime asking circles about memberships its
/// projection lacks. `brokerUp: false` points both at a broker port nobody listens on: nothing
/// published reaches realtime, so every membership it honours came from circles' answer.
func withRealtimeAskingCircles(brokerUp: Bool, owners: MembershipOwners = MembershipOwners(),
                               _ body: @Sendable (_ realtime: RunningService, _ circles: RunningService) async throws -> Void) async throws {
    let prefix = TestKafka.topicPrefix()
    let tokens = TestTokens()
    let deadBroker = "127.0.0.1:\(try freePort())"
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("colony-rt-ryw-\(UUID().uuidString)").path
    defer { try? FileManager.default.removeItem(atPath: root) }
    try await withRunningService(.circles, app: .mycirclee, apiPrefix: "/circles/v1", configure: { configuration in
        configuration.internalKey = testInternalKey
        if !brokerUp { configuration.kafkaBrokers = deadBroker }
    }, topicPrefix: prefix, tokens: tokens, definition: { base in
        let storage = Storage(backend: FileSystemStorageBackend(root: root), publicBaseURL: base, signingKey: Array("rt-tests-signing-key-0123456789abcdef".utf8))
        return CirclesService.definition(settings: CirclesSettings(), storage: storage)
    }) { circles in
        var settings = RealtimeSettings()
        settings.owners = owners
        settings.owners.urls = [.circle: circles.base]
        let configured = settings
        try await withRunningService(.realtime, app: .unify, apiPrefix: "/realtime/v1", configure: { configuration in
            configuration.app = nil
            configuration.tokens.audience = nil
            configuration.internalKey = testInternalKey
            if !brokerUp { configuration.kafkaBrokers = deadBroker }
        }, topicPrefix: prefix, tokens: tokens, definition: { _ in RealtimeService.definition(settings: configured) }) { realtime in
            if brokerUp { try await waitForConsumerAssignment(base: realtime.base, group: "-live-") }
            try await body(realtime, circles)
        }
    }
}

/// Realtime and habits with the broker unreachable: realtime asks habits about hives.
func withRealtimeAskingHabitsBrokerDown(_ body: @Sendable (_ realtime: RunningService, _ habits: RunningService) async throws -> Void) async throws {
    let prefix = TestKafka.topicPrefix()
    let tokens = TestTokens()
    let deadBroker = "127.0.0.1:\(try freePort())"
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("colony-rt-habits-\(UUID().uuidString)").path
    defer { try? FileManager.default.removeItem(atPath: root) }
    try await withRunningService(.habits, app: .habithive, apiPrefix: "/habits/v1", configure: { configuration in
        configuration.internalKey = testInternalKey
        configuration.kafkaBrokers = deadBroker
    }, topicPrefix: prefix, tokens: tokens, definition: { _ in
        HabitsService.definition(settings: HabitsSettings(phonePepper: "rt-tests-pepper"), exports: FileSystemStorageBackend(root: root))
    }) { habits in
        var settings = RealtimeSettings()
        settings.owners.urls = [.hive: habits.base]
        let configured = settings
        try await withRunningService(.realtime, app: .unify, apiPrefix: "/realtime/v1", configure: { configuration in
            configuration.app = nil
            configuration.tokens.audience = nil
            configuration.internalKey = testInternalKey
            configuration.kafkaBrokers = deadBroker
        }, topicPrefix: prefix, tokens: tokens, definition: { _ in RealtimeService.definition(settings: configured) }) { realtime in
            try await body(realtime, habits)
        }
    }
}

@Suite("Realtime: a membership committed before a join is honoured at it (read-your-writes)", .serialized)
struct RealtimeReadYourWritesTests {
    static func profiles(_ users: [RunningService.User], on circles: RunningService) async throws {
        for user in users { _ = try await circles.circlesAPI(as: user).getProfile().ok }
    }

    @Test("with the broker down, a member who claimed an invite joins circle:{id} at once; a stranger and a member who left are refused")
    func joinDuringBrokerOutage() async throws {
        try await withRealtimeAskingCircles(brokerUp: false) { realtime, circles in
            let owner = try await circles.user(), member = try await circles.user(), leaver = try await circles.user(), stranger = try await circles.user()
            try await Self.profiles([owner, member, leaver, stranger], on: circles)
            let circle = try await circles.circle(owner: owner, members: [member])
            let key = try await realtime.tokens.apiKey(app: .mycirclee)
            let socket = TestSocket(base: realtime.base, apiKey: key)
            defer { socket.close() }

            // Realtime's projection has never heard of this circle: the broker is unreachable.
            let projected = try await realtime.withDatabase { db in
                try await db.query("SELECT count(*) FROM memberships WHERE scope = 'circle' AND scope_id = \(circle)").collect().first?.decode(Int.self) ?? -1
            }
            #expect(projected == 0)

            let joined = try await socket.join("realtime:circle:\(circle.lowercased)", token: member.token)
            #expect(joined.payload["status"] == "ok", "\(joined.payload)")
            let owners = try await socket.join("realtime:circle:\(circle.lowercased):typing", token: owner.token)
            #expect(owners.payload["status"] == "ok", "\(owners.payload)")

            let refused = try await socket.join("realtime:circle:\(circle.lowercased)", token: stranger.token)
            #expect(refused.payload["status"] == "error")
            #expect(refused.payload["response"]?["reason"]?.stringValue?.hasPrefix("Unauthorized") == true, "\(refused.payload)")

            // Claimed and left before joining: circles says no, so the join is refused.
            try await circles.claimInvite(to: circle, of: owner, as: leaver)
            _ = try await circles.circlesAPI(as: leaver).leaveCircle(path: .init(circleId: circle.lowercased)).noContent
            let leaverJoin = try await socket.join("realtime:circle:\(circle.lowercased)", token: leaver.token)
            #expect(leaverJoin.payload["status"] == "error", "\(leaverJoin.payload)")
        }
    }

    @Test("with the broker down, a member who joined a hive by its code joins hive:{id} at once; a stranger is refused")
    func hiveJoinDuringBrokerOutage() async throws {
        try await withRealtimeAskingHabitsBrokerDown { realtime, habits in
            let owner = try await habits.user(), member = try await habits.user()
            for user in [owner, member] { _ = try await habits.habitsAPI(as: user).getProfile().ok }
            let created = try await habits.habitsAPI(as: owner).createHive(body: .json(.init(name: "Morning run", emoji: "🏃"))).created.body.json
            let hive = try #require(UUID(uuidString: created.hive.id))
            let invite = try await habits.habitsAPI(as: owner).createHiveInvite(path: .init(hiveId: hive.lowercased), body: .json(.init(maxUses: 5))).created.body.json
            _ = try await habits.habitsAPI(as: member).joinHive(body: .json(.init(code: invite.code))).ok

            let socket = TestSocket(base: realtime.base, apiKey: try await realtime.tokens.apiKey(app: .habithive))
            defer { socket.close() }
            let topic = "realtime:hive:\(hive.lowercased)"
            let joined = try await socket.join(topic, token: member.token)
            #expect(joined.payload["status"] == "ok", "\(joined.payload)")
            let owners = try await socket.join(topic + ":chat", token: owner.token)
            #expect(owners.payload["status"] == "ok", "\(owners.payload)")

            let stranger = try await habits.user()
            let refused = try await socket.join(topic, token: stranger.token)
            #expect(refused.payload["status"] == "error", "\(refused.payload)")
        }
    }

    @Test("with the broker up, a join in the millisecond the claim returns is accepted; once removed, the channel closes and a new join is refused")
    func joinBeforeTheEventAndRemoval() async throws {
        try await withRealtimeAskingCircles(brokerUp: true) { realtime, circles in
            let owner = try await circles.user(), member = try await circles.user()
            try await Self.profiles([owner, member], on: circles)
            let key = try await realtime.tokens.apiKey(app: .mycirclee)
            let socket = TestSocket(base: realtime.base, apiKey: key)
            defer { socket.close() }
            let circle = try await circles.circle(owner: owner, members: [member])
            let topic = "realtime:circle:\(circle.lowercased)"
            let joined = try await socket.join(topic, token: member.token)
            #expect(joined.payload["status"] == "ok", "\(joined.payload)")

            // The owner removes the member: the removal event closes the channel (the answer kept
            // from circles is dropped with it), and a new join is refused.
            _ = try await circles.circlesAPI(as: owner).removeMember(path: .init(circleId: circle.lowercased, userId: member.id.lowercased)).noContent
            _ = try await socket.wait(timeout: .seconds(60)) { $0.topic == topic && $0.event == "phx_close" }
            let again = try await socket.join(topic, token: member.token)
            #expect(again.payload["status"] == "error", "\(again.payload)")
        }
    }

    @Test("the internal membership route answers the service credential only: users' tokens, anon and service-role keys, other keys get 401")
    func internalRouteRefusesEverythingElse() async throws {
        try await withRealtimeAskingCircles(brokerUp: false) { realtime, circles in
            let owner = try await circles.user(), member = try await circles.user()
            try await Self.profiles([owner, member], on: circles)
            let circle = try await circles.circle(owner: owner, members: [member])
            let url = "\(circles.base)/internal/v1/members/circle/\(circle.lowercased)/\(member.id.lowercased)"
            let attempts: [(String, [(String, String)])] = [
                ("no credential", []),
                ("a member's access token", [("Authorization", "Bearer \(member.token)")]),
                ("the anon key", [("Authorization", "Bearer \(try await realtime.tokens.apiKey(app: .mycirclee))"), ("apikey", try await realtime.tokens.apiKey(app: .mycirclee))]),
                ("the service-role key", [("Authorization", "Bearer \(try await realtime.tokens.serviceKey(app: .mycirclee))")]),
                ("another key", [("Authorization", "Bearer rt-internal-key-6f1c0a9e4b7d2853aa1e90c4d7b6f2e2")]),
                ("the key as apikey", [("apikey", "rt-internal-key-6f1c0a9e4b7d2853aa1e90c4d7b6f2e1")]),
            ]
            // The internal route is in no OpenAPI document (services call it, apps never do): raw requests.
            for (name, headers) in attempts {
                let reply = try await circles.request(.GET, url, as: nil, headers: headers)
                #expect(reply.status == 401, "\(name): \(reply.status) \(reply.body)")
                #expect(reply.code == "invalid_service_credential", "\(name): \(reply.body)")
            }
            let granted = try await circles.request(.GET, url, as: nil, headers: [("Authorization", testInternalKey.authorization)])
            #expect(granted.status == 200)
            #expect(granted.body["member"] == .bool(true), "\(granted.body)")
            let stranger = try await circles.request(.GET, "\(circles.base)/internal/v1/members/circle/\(circle.lowercased)/\(UUID().lowercased)", as: nil,
                                                     headers: [("Authorization", testInternalKey.authorization)])
            #expect(stranger.body["member"] == .bool(false), "\(stranger.body)")
            let otherScope = try await circles.request(.GET, "\(circles.base)/internal/v1/members/group/\(circle.lowercased)/\(member.id.lowercased)", as: nil,
                                                       headers: [("Authorization", testInternalKey.authorization)])
            #expect(otherScope.status == 404)
        }
    }
}

@Suite("Realtime: answers kept from owning services")
struct MembershipCacheTests {
    let circle = UUID(), user = UUID()

    @Test("a kept yes is dropped by the member's removal, the scope's deletion, and the add event that puts them in the projection")
    func keptAnswersGiveWayToEvents() {
        let cache = MembershipCache(positiveLifetime: .seconds(60), negativeLifetime: .seconds(1))
        for change in [MembershipChange.remove(.circle, circle, user), .removeAll(.circle, circle), .add(.circle, circle, [user])] {
            #expect(cache.finish(cache.begin(), user, .circle, circle, isMember: true))
            #expect(cache.answer(user, .circle, circle) == true)
            #expect(cache.members(.circle, circle) == [user])
            cache.learn(change)
            #expect(cache.answer(user, .circle, circle) == nil, "\(change)")
        }
    }

    @Test("a yes that was in flight when the member's removal arrived is neither kept nor trusted")
    func removalDuringLookup() {
        let cache = MembershipCache(positiveLifetime: .seconds(60), negativeLifetime: .seconds(1))
        let ticket = cache.begin()
        cache.learn(.remove(.circle, circle, user))
        #expect(!cache.finish(ticket, user, .circle, circle, isMember: true))
        #expect(cache.answer(user, .circle, circle) == nil)
        // Another member's removal does not spoil this one's answer; the circle's deletion does.
        let second = cache.begin()
        cache.learn(.remove(.circle, circle, UUID()))
        #expect(cache.finish(second, user, .circle, circle, isMember: true))
        let third = cache.begin()
        cache.learn(.removeAll(.circle, circle))
        #expect(!cache.finish(third, user, .circle, circle, isMember: true))
        // With nothing in flight, the removals are forgotten: a new lookup is trusted.
        #expect(cache.finish(cache.begin(), user, .circle, circle, isMember: true))
    }

    @Test("a no is kept for the negative lifetime only, a yes for the positive one")
    func lifetimes() {
        let cache = MembershipCache(positiveLifetime: .seconds(10), negativeLifetime: .seconds(1))
        let start = ContinuousClock.now
        let other = UUID()
        #expect(cache.finish(cache.begin(), user, .circle, circle, isMember: false, now: start))
        #expect(cache.finish(cache.begin(), other, .circle, circle, isMember: true, now: start))
        #expect(cache.answer(user, .circle, circle, now: start + .milliseconds(900)) == false)
        #expect(cache.answer(user, .circle, circle, now: start + .milliseconds(1001)) == nil)
        #expect(cache.answer(other, .circle, circle, now: start + .seconds(9)) == true)
        #expect(cache.answer(other, .circle, circle, now: start + .seconds(11)) == nil)
    }

    @Test("settings: owners' URLs and lifetimes from the environment; the negative lifetime is at most two seconds")
    func settings() throws {
        let owners = try MembershipOwners.load(environment: EnvironmentReader([
            "COLONY_CIRCLES_URL": "http://circles:8080", "COLONY_CHAT_URL": "http://chat:8080", "COLONY_REALTIME_MEMBERSHIP_CACHE_SECONDS": "30",
        ]))
        #expect(owners.urls == [.circle: "http://circles:8080", .group: "http://chat:8080"])
        #expect(owners.positiveLifetime == .seconds(30))
        #expect(owners.negativeLifetime == .seconds(1))
        #expect(throws: ConfigurationError.self) {
            try MembershipOwners.load(environment: EnvironmentReader(["COLONY_REALTIME_MEMBERSHIP_NEGATIVE_CACHE_MS": "5000"]))
        }
        #expect(try InternalKey.load(environment: EnvironmentReader([:])) == nil)
        #expect(throws: ConfigurationError.self) { try InternalKey.load(environment: EnvironmentReader(["COLONY_INTERNAL_KEY": "short"])) }
        let key = try #require(try InternalKey.load(environment: EnvironmentReader(["COLONY_INTERNAL_KEY": "rt-internal-key-6f1c0a9e4b7d2853aa1e90c4d7b6f2e1"])))
        #expect(key.matches("rt-internal-key-6f1c0a9e4b7d2853aa1e90c4d7b6f2e1"))
        #expect(!key.matches("rt-internal-key-6f1c0a9e4b7d2853aa1e90c4d7b6f2e"))
        #expect(!key.matches("rt-internal-key-6f1c0a9e4b7d2853aa1e90c4d7b6f2e11"))
        #expect(!key.matches(""))
    }
}
