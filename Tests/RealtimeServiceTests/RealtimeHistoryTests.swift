import ChatService
import ColonyKafka
import ColonyModels
import ColonyPlatform
import ColonyStorage
import ColonyTesting
import Foundation
import Testing
@testable import ColonyPlatform
@testable import RealtimeService

/// A new replica's sockets are new: it must not replay the topics' history to them as if it were
/// news, nor push anything older than its maximum event age.
@Suite("Realtime: no history replayed as news", .serialized)
struct RealtimeHistoryTests {
    /// A copy of a `message_sent` event with a new id, content and time.
    static func copy(of event: ReceivedEvent, content: String, occurredAt: Date) throws -> [UInt8] {
        var envelope = try #require(try JSONSerialization.jsonObject(with: Data(event.bytes)) as? [String: Any])
        envelope["id"] = UUID.timeOrdered().uuidString.lowercased()
        envelope["occurred_at"] = ISO8601.format(occurredAt)
        var payload = try #require(envelope["payload"] as? [String: Any])
        var message = try #require(payload["message"] as? [String: Any])
        message["id"] = UUID().uuidString.lowercased()
        message["content"] = content
        payload["message"] = message
        envelope["payload"] = payload
        return Array(try JSONSerialization.data(withJSONObject: envelope))
    }

    @Test("a replica started on topics with history delivers none of it to a socket joined afterwards, and never an event older than its maximum age")
    func noHistoryReplayed() async throws {
        let prefix = TestKafka.topicPrefix()
        let tokens = TestTokens()
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("colony-rt-history-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        // Chat runs alone first: a group and two messages become history on its topic.
        try await withRunningService(.chat, app: .unify, apiPrefix: "/chat/v1", topicPrefix: prefix, tokens: tokens, definition: { base in
            let storage = Storage(backend: FileSystemStorageBackend(root: root), publicBaseURL: base, signingKey: Array("rt-tests-signing-key-0123456789abcdef".utf8))
            return ChatService.definition(settings: ChatSettings(), storage: storage)
        }) { chat in
            let ownerEmail = "\(uniqueName("u"))@example.com"
            let memberEmail = "\(uniqueName("u"))@example.com"
            let owner = try await chat.user(email: ownerEmail)
            let member = try await chat.user(email: memberEmail)
            for user in [owner, member] { _ = try await chat.chatAPI(as: user).getMe().ok }
            let group = try await chat.chatGroup(owner: owner, memberEmails: [memberEmail], name: "History")
            for text in ["old one", "old two"] { try await chat.sendText(text, in: group, as: owner) }
            let history = try await chat.events(of: .chat) { events in events.filter { $0.type == .messageSent }.count >= 2 }
            let oldMessage = try #require(history.first { $0.type == .messageSent })
            // Recent history, as a busy group leaves it: thousands of messages of the last
            // minute, which a replica reading from the start would still be working through
            // when a socket joins.
            let topic = EventTopics.topic(for: .chat, prefix: prefix)
            let key = Array(oldMessage.header.aggregateId.utf8)
            let producer = try KafkaProducer(configuration: TestKafka.producer(brokers: chat.brokers), logger: TestEnvironment.logger)
            let results = await producer.send(try (0..<3000).map { KafkaOutgoingMessage(topic: topic, key: key, value: try Self.copy(of: oldMessage, content: "history \($0)", occurredAt: Date())) })
            #expect(results.allSatisfy { (try? $0.get()) != nil })

            // A maximum age a busy machine meets: the replica starts inside the history batch
            // (Tansu's "latest"), and "new one" must not age out while it works through it. The
            // stale replay, 300 s old, is older still. The test's socket sends no heartbeats while
            // it waits for that work (minutes in a CI run): the heartbeat timeout is longer than
            // the waits, or the socket is closed as silent before "new one" (a fresh-clone CI failure).
            try await withRunningRealtime(settings: RealtimeSettings(heartbeatTimeout: .seconds(900), maxEventAge: .seconds(240)), topicPrefix: prefix, tokens: tokens) { realtime in
                // The shared consumer group works through history: the membership is known...
                try await waitUntil(timeout: .seconds(60)) {
                    try await realtime.withDatabase { db in
                        try await db.query("SELECT count(*) FROM memberships WHERE scope = 'group' AND scope_id = \(group)").collect().first?.decode(Int.self) == 2
                    }
                }
                let socket = TestSocket(base: realtime.base, apiKey: try await realtime.tokens.apiKey(app: .unify))
                let filter = ["event": "*", "schema": "public", "table": "message", "filter": "group_id=eq.\(group.uuidString)"]
                #expect(try await socket.join("realtime:group_chat_\(group)", token: member.token, config: .changes([filter])).payload["status"] == "ok")
                _ = try await socket.wait(timeout: .seconds(30)) { $0.event == "system" && $0.payload["message"] == "Subscribed to PostgreSQL" }

                // ...an old event published now (a producer replaying history) is not pushed...
                try await producer.send(KafkaOutgoingMessage(topic: topic, key: key, value: try Self.copy(of: oldMessage, content: "stale replay", occurredAt: Date().addingTimeInterval(-300))))
                await producer.close()

                // The replica's live consumer has worked through the history it started inside
                // (each event applied once to the projection, then skipped): on a busy machine that
                // took over two minutes in CI, so the wait is for it, not for a fixed time.
                try await waitUntil(timeout: .seconds(300)) {
                    let metrics = String(buffer: try await realtime.request(.GET, "\(realtime.base)/metrics", as: nil).bytes)
                    let liveLag = metrics.split(separator: "\n").filter { $0.hasPrefix("colony_consumer_lag_events{group=\"\(prefix)-realtime-live-") }
                    return !liveLag.isEmpty && liveLag.allSatisfy { $0.hasSuffix(" 0.0") || $0.hasSuffix(" 0") }
                }

                // ...and what is new arrives.
                try await chat.sendText("new one", in: group, as: owner)
                _ = try await socket.wait(timeout: .seconds(120)) { $0.event == "postgres_changes" && $0.payload["data"]?["record"]?["content"] == "new one" }
                let delivered = socket.messages.filter { $0.event == "postgres_changes" }.compactMap { $0.payload["data"]?["record"]?["content"]?.stringValue }
                #expect(delivered == ["new one"], "history or a stale event reached the socket: \(delivered)")
                // Realtime's own metrics route: no OpenAPI document has it.
                let metrics = try await realtime.request(.GET, "\(realtime.base)/metrics", as: nil)
                #expect(String(buffer: metrics.bytes).contains(#"colony_live_events_skipped_total{reason="before_start"}"#))
            }
        }
    }
}

@Suite("Realtime: which consumed events reach sockets")
struct LiveEventFilterTests {
    @Test("events from before the replica started and events older than the maximum age are skipped; the rest are delivered")
    func rule() {
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        let filter = LiveEventFilter(startedAt: start, maxEventAge: .seconds(60))
        #expect(filter.decide(occurredAt: start.addingTimeInterval(-0.001), now: start.addingTimeInterval(1)) == .skip(.beforeStart))
        #expect(filter.decide(occurredAt: start, now: start.addingTimeInterval(1)) == .deliver)
        #expect(filter.decide(occurredAt: start.addingTimeInterval(100), now: start.addingTimeInterval(160)) == .deliver)
        #expect(filter.decide(occurredAt: start.addingTimeInterval(100), now: start.addingTimeInterval(160.5)) == .skip(.tooOld))
    }

    @Test("an event consumed twice within the window is delivered once")
    func duplicatesWithinTheWindow() {
        let recent = RecentEventIDs(window: .seconds(60), capacity: .max)
        let id = UUID()
        let now = ContinuousClock.now
        #expect(recent.insert(id, now: now))
        #expect(!recent.insert(id, now: now + .seconds(59)))
        #expect(recent.contains(id, now: now + .seconds(59)))
        #expect(recent.insert(UUID(), now: now + .seconds(61)))
        #expect(!recent.contains(id, now: now + .seconds(61)))
        #expect(recent.insert(id, now: now + .seconds(62)), "forgotten once older than the window")
    }

    @Test("ids beyond the capacity are forgotten, the oldest first")
    func capacity() {
        let recent = RecentEventIDs(window: .seconds(3600), capacity: 3)
        let ids = (0..<5).map { _ in UUID() }
        let now = ContinuousClock.now
        for (offset, id) in ids.enumerated() { #expect(recent.insert(id, now: now + .seconds(offset))) }
        #expect(!recent.contains(ids[0], now: now + .seconds(5)))
        #expect(!recent.contains(ids[1], now: now + .seconds(5)))
        #expect(ids[2...].allSatisfy { recent.contains($0, now: now + .seconds(5)) })
        // Many more than the capacity: still only the newest three.
        for offset in 0..<5_000 { _ = recent.insert(UUID(), now: now + .seconds(6) + .milliseconds(offset)) }
        #expect(!recent.contains(ids[4], now: now + .seconds(20)))
    }
}
