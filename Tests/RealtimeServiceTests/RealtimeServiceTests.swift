import AsyncHTTPClient
import ColonyModels
import ColonyPlatform
import ColonyTesting
import Foundation
import NIOCore
import NIOPosix
import Synchronization
import Testing
@testable import RealtimeService

@Suite("Realtime: the running service", .serialized)
struct RealtimeServiceTests {
    /// Creates a chat group owned by `owner` with `members` (who must be known to chat), waits until
    /// realtime's projection has them all.
    func makeGroup(_ chat: RunningService, _ realtime: RunningService, owner: RunningService.User, members: [(RunningService.User, String)]) async throws -> UUID {
        for user in [owner] + members.map(\.0) { _ = try await chat.chatAPI(as: user).getMe().ok }
        let group = try await chat.chatGroup(owner: owner, memberEmails: members.map(\.1), name: "Room")
        try await waitUntil {
            try await realtime.withDatabase { db in
                try await db.query("SELECT count(*) FROM memberships WHERE scope = 'group' AND scope_id = \(group)").collect().first?.decode(Int.self) == members.count + 1
            }
        }
        return group
    }

    func chatUser(_ chat: RunningService) async throws -> (RunningService.User, String) {
        let email = "\(uniqueName("u"))@example.com"
        return (try await chat.user(email: email), email)
    }

    @Test("members receive a group's messages (both serializers); an outsider filtering on the group gets nothing; removal stops delivery at once")
    func deliveryFollowsMembership() async throws {
        try await withRealtimeAndChat { realtime, chat in
            let (owner, _) = try await chatUser(chat)
            let (member, memberEmail) = try await chatUser(chat)
            let (outsider, _) = try await chatUser(chat)
            let group = try await makeGroup(chat, realtime, owner: owner, members: [(member, memberEmail)])
            let filter = ["event": "INSERT", "schema": "public", "table": "message", "filter": "group_id=eq.\(group.uuidString)"]

            let key = try await realtime.tokens.apiKey(app: .unify)
            let memberSocket = TestSocket(base: realtime.base, apiKey: key, vsn: .v2)
            let joined = try await memberSocket.join("realtime:group_chat_\(group)", token: member.token, config: .changes([filter]))
            #expect(joined.payload["status"] == "ok")
            let id = try #require(joined.payload["response"]?["postgres_changes"]?.arrayValue?.first?["id"])
            _ = try await memberSocket.wait { $0.event == "system" && $0.payload["message"] == "Subscribed to PostgreSQL" }
            let ownerSocket = TestSocket(base: realtime.base, apiKey: key)
            #expect(try await ownerSocket.join("realtime:unread", token: owner.token, config: .changes([["event": "*", "schema": "public", "table": "message"]])).payload["status"] == "ok")
            let outsiderSocket = TestSocket(base: realtime.base, apiKey: key)
            #expect(try await outsiderSocket.join("realtime:spy", token: outsider.token, config: .changes([filter])).payload["status"] == "ok")

            try await chat.sendText("hello realtime", in: group, as: owner)
            let change = try await memberSocket.wait { $0.event == "postgres_changes" }
            #expect(change.topic == "realtime:group_chat_\(group)")
            #expect(change.payload["ids"] == .array([id]))
            let data = try #require(change.payload["data"])
            #expect(data["table"] == "message" && data["schema"] == "public" && data["eventType"] == "INSERT")
            #expect(data["new"]?["content"] == "hello realtime" && data["record"]?["group_id"] == .string(group.uuidString.lowercased()))
            _ = try await ownerSocket.wait { $0.event == "postgres_changes" && $0.payload["data"]?["new"]?["content"] == "hello realtime" }
            try await Task.sleep(for: .seconds(1))
            #expect(!outsiderSocket.messages.contains { $0.event == "postgres_changes" })

            // Removal: the member's next message never arrives; the owner's socket still gets it.
            _ = try await chat.chatAPI(as: owner).removeMember(path: .init(groupId: group.lowercased, userId: member.id.lowercased)).noContent
            try await chat.sendText("after removal", in: group, as: owner)
            _ = try await ownerSocket.wait { $0.event == "postgres_changes" && $0.payload["data"]?["new"]?["content"] == "after removal" }
            try await Task.sleep(for: .milliseconds(500))
            #expect(!memberSocket.messages.contains { $0.payload["data"]?["new"]?["content"] == "after removal" })
            #expect(!outsiderSocket.messages.contains { $0.event == "postgres_changes" })
        }
    }

    @Test("heartbeats are answered; a silent socket is closed after the heartbeat timeout")
    func heartbeatTimeout() async throws {
        try await withRunningRealtime(settings: RealtimeSettings(heartbeatTimeout: .seconds(5))) { realtime in
            let key = try await realtime.tokens.apiKey(app: .unify)
            let chatty = TestSocket(base: realtime.base, apiKey: key, vsn: .v2)
            let silent = TestSocket(base: realtime.base, apiKey: key)
            let ref = chatty.send(topic: "phoenix", event: "heartbeat", payload: .object([:]))
            let reply = try await chatty.wait { $0.event == "phx_reply" && $0.ref == ref }
            #expect(reply.topic == "phoenix" && reply.payload["status"] == "ok")
            // The chatty socket keeps beating (every 400 ms, a tenth of the 5 s, so a loaded machine's
            // scheduling delays cannot starve it) until the silent one is closed: a deadline, not a
            // fixed wait, so a busy machine only takes longer.
            var lastBeat = ContinuousClock.now - .seconds(1)
            try await waitUntil(timeout: .seconds(60)) {
                if ContinuousClock.now - lastBeat >= .milliseconds(400) {
                    chatty.send(topic: "phoenix", event: "heartbeat", payload: .object([:]))
                    lastBeat = .now
                }
                return silent.isClosed
            }
            #expect(!chatty.isClosed)
        }
    }

    @Test("a client that never answers the close frame does not hold up the shutdown: its socket is closed and the service stops")
    func shutdownWithUnresponsiveClient() async throws {
        let environment = try TestEnvironment.current()
        let tokens = TestTokens()
        let port = try freePort()
        try await withTestSchema { databaseConfiguration in
            var configuration = ServiceConfiguration(
                service: .realtime, app: nil, httpHost: "127.0.0.1", httpPort: port, logLevel: .critical,
                database: databaseConfiguration, kafkaBrokers: environment.kafkaBrokers, topicPrefix: TestKafka.topicPrefix(),
                tokens: tokens.verifierConfiguration(audience: nil)
            )
            // Far longer than the wait below: the socket must end on its own, not by the grace.
            configuration.shutdownGrace = .seconds(600)
            let finished = Atomic<Bool>(false)
            let host = Task {
                try? await ServiceHost.run(RealtimeService.definition(settings: RealtimeSettings()), configuration: configuration)
                finished.store(true, ordering: .relaxed)
            }
            defer { host.cancel() }
            let base = "http://127.0.0.1:\(port)"
            try await waitUntil(timeout: .seconds(60)) { (try? await HTTPClient.shared.execute(HTTPClientRequest(url: "\(base)/ready"), timeout: .seconds(5)).status) == .ok }
            // A raw client: it upgrades, reads the server's answer once, then never reads or
            // answers anything again.
            let key = try await tokens.apiKey(app: .unify)
            let received = ReceivedBytes()
            let client = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .channelOption(ChannelOptions.autoRead, value: false)
                .channelInitializer { channel in channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(received) } }
                .connect(host: "127.0.0.1", port: port).get()
            defer { client.close(promise: nil) }
            let upgrade = "GET /realtime/v1/websocket?apikey=\(key)&vsn=1.0.0 HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
            try await client.writeAndFlush(ByteBuffer(string: upgrade)).get()
            client.read()
            try await waitUntil(timeout: .seconds(60)) { received.text.hasPrefix("HTTP/1.1 101") }
            host.cancel()  // a graceful shutdown, as SIGTERM
            try await waitUntil(timeout: .seconds(120)) { finished.load(ordering: .relaxed) }
        }
    }

    @Test("an expired token is refused; a channel whose token expires is closed with Supabase's error; access_token keeps it open")
    func tokenExpiryAndRefresh() async throws {
        try await withRunningRealtime { realtime in
            let user = UUID()
            let socket = TestSocket(base: realtime.base, apiKey: try await realtime.tokens.apiKey(app: .mycirclee))
            let expired = try await realtime.tokens.token(user: user, app: .mycirclee, expiresIn: -30)
            let refused = try await socket.join("realtime:old", token: expired)
            #expect(refused.payload["status"] == "error")
            #expect(refused.payload["response"]?["reason"]?.stringValue?.hasPrefix("Token has expired") == true)
            #expect(try await socket.join("realtime:bad", token: "not-a-token").payload["status"] == "error")

            let short = try await realtime.tokens.token(user: user, app: .mycirclee, expiresIn: 2)
            #expect(try await socket.join("realtime:expiring", token: short).payload["status"] == "ok")
            #expect(try await socket.join("realtime:refreshed", token: short).payload["status"] == "ok")
            let fresh = try await realtime.tokens.token(user: user, app: .mycirclee, expiresIn: 3600)
            socket.send(topic: "realtime:refreshed", event: "access_token", payload: .object(["access_token": .string(fresh)]))
            let system = try await socket.wait(timeout: .seconds(60)) { $0.topic == "realtime:expiring" && $0.event == "system" }
            #expect(system.payload["status"] == "error" && system.payload["message"]?.stringValue?.hasPrefix("Token has expired") == true)
            _ = try await socket.wait { $0.topic == "realtime:expiring" && $0.event == "phx_close" }
            try await Task.sleep(for: .seconds(2))
            #expect(!socket.messages.contains { $0.topic == "realtime:refreshed" && ($0.event == "phx_close" || $0.event == "system") })
            #expect(!socket.isClosed)
        }
    }

    @Test("broadcast (self, ack) and presence between two clients on two replicas, on a topic an app opened to everyone")
    func broadcastAndPresenceAcrossReplicas() async throws {
        // mycirclee's unscoped topics are open here (a public lobby); the default keeps them to postgres_changes.
        let settings = RealtimeSettings(topics: TopicRules(unscoped: [.mycirclee: .open, .unify: .open]))
        try await withRunningRealtime(settings: settings) { first in
            var secondSettings = settings
            secondSettings.replicaID = RealtimeSettings.randomReplicaID()  // a replica of its own
            try await withSecondReplica(of: first, settings: secondSettings) { second in
                let alice = try await first.tokens.token(user: UUID(), app: .mycirclee)
                let bob = try await first.tokens.token(user: UUID(), app: .mycirclee)
                let key = try await first.tokens.apiKey(app: .mycirclee)
                let a = TestSocket(base: first.base, apiKey: key)
                let b = TestSocket(base: second, apiKey: key, vsn: .v2)
                let config: JSONValue = .object(["broadcast": .object(["self": .bool(false), "ack": .bool(true)]), "presence": .object(["key": .string("alice")])])
                #expect(try await a.join("realtime:room", token: alice, config: config).payload["status"] == "ok")
                let bConfig: JSONValue = .object(["broadcast": .object(["self": .bool(true), "ack": .bool(true)]), "presence": .object(["key": .string("bob")])])
                #expect(try await b.join("realtime:room", token: bob, config: bConfig).payload["status"] == "ok")
                _ = try await b.wait { $0.event == "presence_state" }

                // presence: alice tracks on replica 1, bob sees the diff on replica 2
                let trackRef = a.send(topic: "realtime:room", event: "presence", payload: .object([
                    "type": "presence", "event": "track", "payload": .object(["status": "online"]),
                ]), joinRef: "1")
                _ = try await a.wait { $0.event == "phx_reply" && $0.ref == trackRef }
                let diff = try await b.wait { $0.event == "presence_diff" }
                #expect(diff.payload["joins"]?["alice"]?["metas"]?.arrayValue?.first?["status"] == "online")

                // a late joiner on replica 2 gets alice in presence_state
                let carol = TestSocket(base: second, apiKey: key)
                #expect(try await carol.join("realtime:room", token: bob, config: .object(["presence": .object(["key": .string("carol")])])).payload["status"] == "ok")
                let state = try await carol.wait { $0.event == "presence_state" }
                #expect(state.payload["alice"]?["metas"]?.arrayValue?.count == 1)

                // broadcast: alice → bob (ack to alice, not to herself); bob → alice and himself (self)
                let sendRef = a.send(topic: "realtime:room", event: "broadcast", payload: .object(["type": "broadcast", "event": "wave", "payload": .object(["n": .number(1)])]))
                _ = try await a.wait { $0.event == "phx_reply" && $0.ref == sendRef && $0.payload["status"] == "ok" }
                let got = try await b.wait { $0.event == "broadcast" }
                #expect(got.payload["event"] == "wave" && got.payload["payload"]?["n"] == .number(1))
                b.send(topic: "realtime:room", event: "broadcast", payload: .object(["type": "broadcast", "event": "back", "payload": .object([:])]))
                _ = try await a.wait { $0.event == "broadcast" && $0.payload["event"] == "back" }
                _ = try await b.wait { $0.event == "broadcast" && $0.payload["event"] == "back" }
                try await Task.sleep(for: .milliseconds(300))
                #expect(!a.messages.contains { $0.event == "broadcast" && $0.payload["event"] == "wave" })

                // another app's client on the same topic name is in another channel
                let other = TestSocket(base: second, apiKey: try await first.tokens.apiKey(app: .unify))
                let unify = try await first.tokens.token(user: UUID(), app: .unify)
                #expect(try await other.join("realtime:room", token: unify, config: .object(["presence": .object(["key": .string("x")])])).payload["status"] == "ok")
                let otherState = try await other.wait { $0.event == "presence_state" }
                #expect(otherState.payload == .object([:]))
            }
        }
    }

    @Test("the official Supabase Python realtime client receives a chat message through a postgres_changes eq filter")
    func pythonClient() async throws {
        try await withRealtimeAndChat { realtime, chat in
            let (owner, _) = try await chatUser(chat)
            let (member, email) = try await chatUser(chat)
            let group = try await makeGroup(chat, realtime, owner: owner, members: [(member, email)])
            let (status, output) = try await PythonClient.run([PythonClient.path("Tests/RealtimeClientTests/receive_chat_message.py")], environment: [
                "COLONY_REALTIME_URL": "\(realtime.base)/realtime/v1",
                "COLONY_API_KEY": try await realtime.tokens.apiKey(app: .unify),
                "COLONY_CHAT_URL": chat.apiURL,
                "COLONY_MEMBER_TOKEN": member.token,
                "COLONY_SENDER_TOKEN": owner.token,
                "COLONY_GROUP_ID": group.uuidString.lowercased(),
            ])
            #expect(status == 0, "python client failed:\n\(output)")
        }
    }
}

/// What a raw test client has read, as text.
final class ReceivedBytes: ChannelInboundHandler, Sendable {
    typealias InboundIn = ByteBuffer
    private let bytes = Mutex<[UInt8]>([])

    var text: String { String(decoding: bytes.withLock { $0 }, as: UTF8.self) }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let buffer = unwrapInboundIn(data)
        bytes.withLock { $0 += buffer.readableBytesView }
    }
}
