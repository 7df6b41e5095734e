import AsyncHTTPClient
import ColonyModels
import ColonyPlatform
import ColonyTesting
import Foundation
import Testing
@testable import RealtimeService

/// Who may open a socket, join a topic, broadcast and track presence on it, and the quotas each
/// client lives within, against the running service. (The same attacks through the nginx
/// gateway are in Tests/EndToEnd/test_realtime_attacks.py.)
@Suite("Realtime: channel authorization and quotas", .serialized)
struct RealtimeAuthorizationTests {
    /// A circle owned by `owner` with `members`, once realtime's projection has all of them.
    func circle(_ circles: RunningService, _ realtime: RunningService, owner: RunningService.User, members: [RunningService.User]) async throws -> UUID {
        for user in [owner] + members { _ = try await circles.circlesAPI(as: user).getProfile().ok }
        let circle = try await circles.circle(owner: owner, members: members)
        try await waitUntil {
            try await realtime.withDatabase { db in
                try await db.query("SELECT count(*) FROM memberships WHERE scope = 'circle' AND scope_id = \(circle)").collect().first?.decode(Int.self) == members.count + 1
            }
        }
        return circle
    }

    static let track: JSONValue = .object(["type": "presence", "event": "track", "payload": .object(["status": "free"])])
    static let wave: JSONValue = .object(["type": "broadcast", "event": "wave", "payload": .object(["n": .number(1)])])
    static let presenceAndAck: JSONValue = .object(["broadcast": .object(["self": .bool(false), "ack": .bool(true)]), "presence": .object(["key": .string("")])])

    @Test("the socket's apikey must be one of the pools' keys: a made-up one, a user's token, another issuer's key and none are refused")
    func apiKeys() async throws {
        try await withRunningRealtime { realtime in
            let url = "\(realtime.base)/realtime/v1/websocket"
            func status(_ query: String) async throws -> (Int, String?) {
                // Realtime's socket route over plain HTTP: it is no OpenAPI service, so a raw request.
                let reply = try await realtime.request(.GET, url + query, as: nil)
                return (reply.status, reply.code)
            }
            let forged = try await TestTokens().apiKey(app: .mycirclee)  // signed by a key nobody trusts
            let userToken = try await realtime.tokens.token(user: UUID(), app: .mycirclee)
            let otherIssuer = try await realtime.tokens.apiKey(app: .mycirclee, issuer: "someone-else")
            let role = try await realtime.tokens.apiKey(app: .mycirclee, role: "authenticated")
            #expect(try await status("") == (401, "no_api_key"))
            for key in ["made-up-key", forged, userToken, otherIssuer, role] {
                #expect(try await status("?apikey=\(key)") == (401, "invalid_api_key"), "\(key.prefix(20))")
                let socket = TestSocket(base: realtime.base, apiKey: key)
                try await waitUntil { socket.isClosed }  // the upgrade was refused
            }
            let good = try await realtime.tokens.apiKey(app: .mycirclee)
            #expect(try await status("?apikey=\(good)") == (400, "websocket_required"), "a real key over plain HTTP is only told to upgrade")
            let socket = TestSocket(base: realtime.base, apiKey: good)
            let ref = socket.send(topic: "phoenix", event: "heartbeat", payload: .object([:]))
            _ = try await socket.wait { $0.ref == ref && $0.payload["status"] == "ok" }
            // joins need a token of the key's app
            let unify = try await realtime.tokens.token(user: UUID(), app: .unify)
            let refused = try await socket.join("realtime:anything", token: unify)
            #expect(refused.payload["status"] == "error" && refused.payload["response"]?["reason"]?.stringValue?.contains("another app") == true)
        }
    }

    @Test("circle topics: members join, broadcast and track; an outsider's join is refused and nothing reaches them; a removed member's channel is closed with Supabase's error")
    func circleTopics() async throws {
        try await withRealtimeAndCircles { realtime, circles in
            let owner = try await circles.user(), member = try await circles.user(), outsider = try await circles.user()
            let circle = try await circle(circles, realtime, owner: owner, members: [member])
            let topic = "realtime:circle:\(circle.uuidString)"  // upper-case: the same channel as lower-case
            let key = try await realtime.tokens.apiKey(app: .mycirclee)
            let ownerSocket = TestSocket(base: realtime.base, apiKey: key)
            let memberSocket = TestSocket(base: realtime.base, apiKey: key, vsn: .v2)
            let outsiderSocket = TestSocket(base: realtime.base, apiKey: key)
            #expect(try await ownerSocket.join("realtime:circle:\(circle.lowercased)", token: owner.token, config: Self.presenceAndAck).payload["status"] == "ok")
            #expect(try await memberSocket.join(topic, token: member.token, config: Self.presenceAndAck).payload["status"] == "ok")

            // The outsider: join refused (Supabase's words), then broadcast and presence on the topic go nowhere.
            let refused = try await outsiderSocket.join(topic, token: outsider.token, config: Self.presenceAndAck)
            #expect(refused.payload["status"] == "error")
            #expect(refused.payload["response"]?["reason"] == .string("Unauthorized: You do not have permissions to read from this Channel topic: circle:\(circle.uuidString)"))
            let spyBroadcast = outsiderSocket.send(topic: topic, event: "broadcast", payload: .object(["type": "broadcast", "event": "spy", "payload": .object([:])]))
            let spyTrack = outsiderSocket.send(topic: topic, event: "presence", payload: Self.track)
            _ = try await outsiderSocket.wait { $0.ref == spyBroadcast && $0.payload["status"] == "error" }
            _ = try await outsiderSocket.wait { $0.ref == spyTrack && $0.payload["status"] == "error" }
            // Another app's user, and a private join, are refused too.
            let unifySocket = TestSocket(base: realtime.base, apiKey: try await realtime.tokens.apiKey(app: .unify))
            let unifyUser = try await realtime.tokens.token(user: outsider.id, app: .unify)
            #expect(try await unifySocket.join("realtime:circle:\(circle.lowercased)", token: unifyUser).payload["status"] == "error")

            // Members: broadcast (acknowledged) and presence reach each other.
            let waved = memberSocket.send(topic: topic, event: "broadcast", payload: Self.wave)
            _ = try await memberSocket.wait { $0.ref == waved && $0.payload["status"] == "ok" }
            _ = try await ownerSocket.wait { $0.event == "broadcast" && $0.payload["event"] == "wave" }
            let tracked = memberSocket.send(topic: topic, event: "presence", payload: Self.track)
            _ = try await memberSocket.wait { $0.ref == tracked && $0.payload["status"] == "ok" }
            _ = try await ownerSocket.wait { $0.event == "presence_diff" }
            try await Task.sleep(for: .milliseconds(300))
            #expect(!outsiderSocket.messages.contains { ["broadcast", "presence_diff", "presence_state"].contains($0.event) })

            // Removal: the member's channel is closed (system error, phx_close); a rejoin is refused.
            _ = try await circles.circlesAPI(as: owner).removeMember(path: .init(circleId: circle.lowercased, userId: member.id.lowercased)).noContent
            let system = try await memberSocket.wait(timeout: .seconds(60)) { $0.topic == topic && $0.event == "system" }
            #expect(system.payload["status"] == "error")
            #expect(system.payload["message"] == .string("You no longer have permission to read from this Channel topic: circle:\(circle.uuidString)"))
            _ = try await memberSocket.wait { $0.topic == topic && $0.event == "phx_close" }
            #expect(try await memberSocket.join(topic, token: member.token).payload["status"] == "error")
            let after = ownerSocket.send(topic: "realtime:circle:\(circle.lowercased)", event: "broadcast", payload: .object(["type": "broadcast", "event": "after", "payload": .object([:])]))
            _ = try await ownerSocket.wait { $0.ref == after }
            try await Task.sleep(for: .milliseconds(300))
            #expect(!memberSocket.messages.contains { $0.payload["event"] == "after" })
        }
    }

    @Test("unscoped topics: postgres_changes only by default (broadcast and presence refused), a private one is refused, `deny` refuses the join")
    func unscopedTopics() async throws {
        let settings = RealtimeSettings(topics: TopicRules(unscoped: [.unify: .deny]))
        try await withRunningRealtime(settings: settings) { realtime in
            let user = try await realtime.tokens.token(user: UUID(), app: .mycirclee)
            let socket = TestSocket(base: realtime.base, apiKey: try await realtime.tokens.apiKey(app: .mycirclee))
            let changes: JSONValue = .object(["broadcast": .object(["ack": .bool(true)]), "presence": .object(["key": .string("me")]),
                                              "postgres_changes": .array([.object(["event": "*", "schema": "public", "table": "posts"])])])
            #expect(try await socket.join("realtime:posts", token: user, config: changes).payload["status"] == "ok")
            let broadcast = socket.send(topic: "realtime:posts", event: "broadcast", payload: Self.wave)
            let reply = try await socket.wait { $0.ref == broadcast }
            #expect(reply.payload["status"] == "error" && reply.payload["response"]?["reason"] == .string("Unauthorized: You do not have permissions to write to this Channel topic: posts"))
            let track = socket.send(topic: "realtime:posts", event: "presence", payload: Self.track)
            #expect(try await socket.wait { $0.ref == track }.payload["status"] == "error")
            #expect(!socket.messages.contains { $0.event == "presence_state" })

            let privateJoin = try await socket.join("realtime:secret", token: user, config: .object(["private": .bool(true)]))
            #expect(privateJoin.payload["response"]?["reason"] == .string("Unauthorized: You do not have permissions to read from this Channel topic: secret"))
            #expect(try await socket.join("realtime:circle:not-a-uuid", token: user).payload["status"] == "error")

            let unify = TestSocket(base: realtime.base, apiKey: try await realtime.tokens.apiKey(app: .unify))
            #expect(try await unify.join("realtime:lobby", token: try await realtime.tokens.token(user: UUID(), app: .unify)).payload["status"] == "error")
        }
    }

    @Test("quotas: channels per socket, bindings per channel, broadcast size, presence meta size and rate, sockets per user and per address, message rate")
    func quotas() async throws {
        let quotas = RealtimeQuotas(socketsPerUser: 2, socketsPerAddress: 4, channelsPerSocket: 5, bindingsPerChannel: 3, messagesPerSecond: 20,
                                    broadcastBytes: 256, presenceMetaBytes: 128, presenceEvents: 2, presenceWindowSeconds: 60)
        let settings = RealtimeSettings(quotas: quotas, topics: TopicRules(unscoped: [.mycirclee: .open]))
        try await withRunningRealtime(settings: settings) { realtime in
            let key = try await realtime.tokens.apiKey(app: .mycirclee)
            let user = try await realtime.tokens.token(user: UUID(), app: .mycirclee)
            let socket = TestSocket(base: realtime.base, apiKey: key)
            for index in 0..<5 { #expect(try await socket.join("realtime:room-\(index)", token: user).payload["status"] == "ok") }
            let sixth = try await socket.join("realtime:room-5", token: user)
            #expect(sixth.payload["status"] == "error" && sixth.payload["response"]?["reason"] == "ChannelRateLimitReached: Too many channels")
            let left = socket.send(topic: "realtime:room-4", event: "phx_leave", payload: .object([:]))
            _ = try await socket.wait { $0.ref == left }
            let bindings: JSONValue = .changes(Array(repeating: ["event": "*", "schema": "public", "table": "posts"], count: 4))
            #expect(try await socket.join("realtime:room-6", token: user, config: bindings).payload["response"]?["reason"]?.stringValue?.hasPrefix("Too many postgres_changes bindings") == true)

            // An acknowledged broadcast over the size gets Supabase's `payload_size_exceeded`; one within it is sent.
            #expect(try await socket.join("realtime:acked", token: user, config: .object(["broadcast": .object(["ack": .bool(true)])])).payload["status"] == "ok")
            let big = socket.send(topic: "realtime:acked", event: "broadcast", payload: .object(["type": "broadcast", "event": "x",
                                                                                                "payload": .object(["x": .string(String(repeating: "x", count: 300))])]))
            let tooBig = try await socket.wait { $0.ref == big }
            #expect(tooBig.payload == .object(["status": "error", "response": "payload_size_exceeded"]))
            let small = socket.send(topic: "realtime:acked", event: "broadcast", payload: Self.wave)
            #expect(try await socket.wait { $0.ref == small }.payload["status"] == "ok")

            // Presence: a meta over the size ends the channel before anything is stored ("Track message size exceeded").
            socket.send(topic: "realtime:room-1", event: "presence", payload: .object(["type": "presence", "event": "track",
                                                                                     "payload": .object(["bio": .string(String(repeating: "y", count: 200))])]))
            let sizeClosed = try await socket.wait { $0.topic == "realtime:room-1" && $0.event == "system" }
            #expect(sizeClosed.payload["status"] == "error" && sizeClosed.payload["message"] == "Track message size exceeded")
            _ = try await socket.wait { $0.topic == "realtime:room-1" && $0.event == "phx_close" }
            #expect(try await realtime.withDatabase { try await $0.query("SELECT count(*)::int FROM presences").collect()[0].decode(Int.self) } == 0)
            // More presence events than the rate allows end the channel too.
            for _ in 0..<3 { socket.send(topic: "realtime:room-2", event: "presence", payload: Self.track) }
            let rateClosed = try await socket.wait { $0.topic == "realtime:room-2" && $0.event == "system" }
            #expect(rateClosed.payload["message"] == "Client presence rate limit exceeded")

            // A flood (frames written at once, faster than the rate): every channel ends with Supabase's
            // message, then the server closes the socket.
            let port = try #require(URL(string: realtime.base)?.port)
            let flood = try RawWebSocket(port: port, path: "/realtime/v1/websocket?apikey=\(key)")
            defer { flood.close() }
            try flood.sendText(#"{"topic":"realtime:room-0","event":"phx_join","payload":{"access_token":"\#(user)"},"ref":"1","join_ref":"1"}"#)
            try flood.readUntil("phx_reply")
            try flood.sendTexts(Array(repeating: #"{"topic":"phoenix","event":"heartbeat","payload":{},"ref":"h"}"#, count: 200))
            try flood.readUntil("Too many messages per second")
            #expect(flood.drainsToEnd(), "the server closed the flooding socket")
            #expect(!socket.isClosed)

            // Sockets: two per user (a third socket's join as them is refused), four per address (a fifth is not upgraded).
            // (Realtime's socket route is no OpenAPI service: plain HTTP requests to it are raw.)
            try await waitUntil { try await realtime.request(.GET, "\(realtime.base)/realtime/v1/websocket?apikey=\(key)", as: nil).status == 400 }
            let second = TestSocket(base: realtime.base, apiKey: key)
            #expect(try await second.join("realtime:room-0", token: user).payload["status"] == "ok")
            let third = TestSocket(base: realtime.base, apiKey: key)
            #expect(try await third.join("realtime:room-0", token: user).payload["response"]?["reason"] == "ConnectionRateLimitReached: Too many connected users")
            let fourth = TestSocket(base: realtime.base, apiKey: key)
            let ping = fourth.send(topic: "phoenix", event: "heartbeat", payload: .object([:]))
            _ = try await fourth.wait { $0.ref == ping }
            let fifth = TestSocket(base: realtime.base, apiKey: key)
            try await waitUntil { fifth.isClosed }
            let refused = try await realtime.request(.GET, "\(realtime.base)/realtime/v1/websocket?apikey=\(key)", as: nil)
            #expect(refused.status == 429 && refused.code == "too_many_connections")
        }
    }
}

@Suite("Realtime: topic rules and rate counters without a socket")
struct RealtimeTopicRulesTests {
    @Test("scoped topics need the scope's app and a UUID; private channels need a scope; unscoped ones follow the app's policy")
    func topicRules() {
        let id = UUID()
        let rules = TopicRules(unscoped: [.unify: .deny, .habithive: .open])
        #expect(rules.access(topic: "realtime:circle:\(id)", app: .mycirclee, isPrivate: true) == .success(.members(.circle, id)))
        #expect(rules.access(topic: "realtime:circle:\(id.uuidString):typing", app: .mycirclee, isPrivate: false) == .success(.members(.circle, id)))
        #expect(rules.access(topic: "realtime:group:\(id)", app: .unify, isPrivate: false) == .success(.members(.group, id)))
        #expect(rules.access(topic: "realtime:hive:\(id)", app: .habithive, isPrivate: false) == .success(.members(.hive, id)))
        #expect(rules.access(topic: "realtime:circle:\(id)", app: .unify, isPrivate: false) == .failure(.unauthorized("realtime:circle:\(id)")))
        #expect(rules.access(topic: "realtime:hive:x", app: .habithive, isPrivate: false) == .failure(.unauthorized("realtime:hive:x")))
        #expect(rules.access(topic: "realtime:posts", app: .mycirclee, isPrivate: false) == .success(.unscoped(.changes)))
        #expect(rules.access(topic: "realtime:posts", app: .mycirclee, isPrivate: true) == .failure(.unauthorized("realtime:posts")))
        #expect(rules.access(topic: "realtime:lobby", app: .unify, isPrivate: false) == .failure(.unauthorized("realtime:lobby")))
        #expect(rules.access(topic: "realtime:lobby", app: .habithive, isPrivate: false) == .success(.unscoped(.open)))
        #expect(TopicRules.canonicalName(of: "realtime:CIRCLE:\(id.uuidString):x") == "circle:\(id.lowercased):x")
        #expect(!TopicAccess.unscoped(.changes).allowsBroadcastAndPresence && TopicAccess.members(.hive, id).allowsBroadcastAndPresence)
    }

    @Test("a token bucket allows its burst, then its rate; a window counter its limit per window")
    func counters() {
        let start = ContinuousClock.now
        var bucket = TokenBucket(rate: 10, burst: 20, now: start)
        var taken = 0
        for _ in 0..<25 where bucket.take(now: start) { taken += 1 }
        #expect(taken == 20)
        let refilled = bucket.take(now: start + .milliseconds(100))
        let overdrawn = bucket.take(now: start + .milliseconds(100))
        #expect(refilled && !overdrawn)
        var window = WindowCounter(limit: 2, window: .seconds(30))
        let results = [window.take(now: start), window.take(now: start + .seconds(1)), window.take(now: start + .seconds(29)), window.take(now: start + .seconds(31))]
        #expect(results == [true, true, false, true])
    }
}
