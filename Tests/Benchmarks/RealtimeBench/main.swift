import AsyncHTTPClient
import ChatService
import ColonyModels
import ColonyPlatform
import ColonyStorage
import ColonyTesting
import Foundation
import HummingbirdWSClient
import Logging
import RealtimeService
import Synchronization

// colony-realtime-bench: the realtime service (release) next to chat on the local Postgres and broker:
//   1. joins/s: N sockets (default 10,000) connect and join a channel with a verified token, held open;
//      memory per connection = RSS growth / N (this process also holds the client ends, so it is an upper bound);
//   2. fan-out: S of them (default 1,000) are members of one chat group subscribed to its `message`
//      INSERTs; M messages go through chat's API; latency from the POST to each delivery, p50/p99.
// Run through scripts/bench.   colony-realtime-bench [--connections N] [--subscribers S] [--messages M]

let (connections, subscribers, messages): (Int, Int, Int) = {
var connections = 10_000, subscribers = 1_000, messages = 30
var arguments = CommandLine.arguments.dropFirst().makeIterator()
while let argument = arguments.next() {
    switch (argument, arguments.next().flatMap(Int.init)) {
    case ("--connections", let value?) where value > 0: connections = value
    case ("--subscribers", let value?) where value > 0: subscribers = value
    case ("--messages", let value?) where value > 0: messages = value
    default:
        FileHandle.standardError.write(Data("usage: colony-realtime-bench [--connections N] [--subscribers S] [--messages M]\n".utf8))
        exit(2)
    }
}
return (connections, min(subscribers, connections), messages)
}()
var limit = rlimit()
getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
limit.rlim_cur = limit.rlim_max
setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)

func residentBytes() -> Int {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
          let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
          let kb = Int(line.split(separator: " ").dropFirst().first ?? "")
    else { return 0 }
    return kb * 1024
}

/// A held client socket: counts deliveries and notes when each message id arrived.
final class BenchState: Sendable {
    let joined = Atomic<Bool>(false)
    let arrivals = Mutex<[String: UInt64]>([:])
}

final class BenchSocket: Sendable {
    let state = BenchState()
    let out: AsyncStream<String>.Continuation
    init(url: String, topic: String, token: String, config: String, onJoin: @escaping @Sendable () -> Void) {
        let (stream, continuation) = AsyncStream<String>.makeStream()
        out = continuation
        continuation.yield(#"{"topic":"\#(topic)","event":"phx_join","payload":{"config":\#(config),"access_token":"\#(token)"},"ref":"1","join_ref":"1"}"#)
        let state = self.state
        Task {
            _ = try? await WebSocketClient.connect(url: url, logger: Logger(label: "bench")) { inbound, outbound, _ in
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask { for await text in stream { try await outbound.write(.text(text)) } }
                    group.addTask {
                        while !Task.isCancelled {
                            try await Task.sleep(for: .seconds(20))
                            continuation.yield(#"{"topic":"phoenix","event":"heartbeat","payload":{},"ref":"h"}"#)
                        }
                    }
                    for try await message in inbound.messages(maxSize: 1 << 20) {
                        guard case .text(let text) = message else { continue }
                        if !state.joined.load(ordering: .relaxed), text.contains("phx_reply"), text.contains("\"ok\"") {
                            state.joined.store(true, ordering: .relaxed)
                            onJoin()
                        } else if text.contains("postgres_changes"), let range = text.range(of: "bench-"),
                                  let end = text[range.upperBound...].firstIndex(of: "\"") {
                            let now = monotonicNanoseconds()
                            state.arrivals.withLock { $0[String(text[range.upperBound..<end])] = now }
                        }
                    }
                    group.cancelAll()
                }
            }
        }
    }
}

let prefix = TestKafka.topicPrefix()
let tokens = TestTokens()
let root = FileManager.default.temporaryDirectory.appendingPathComponent("colony-rt-bench-\(UUID().uuidString)").path
let settings = RealtimeSettings(socketBufferMessages: 4096)
try await withRunningService(.realtime, app: .unify, apiPrefix: "/realtime/v1", configure: { $0.app = nil; $0.tokens.audience = nil; $0.logLevel = .warning },
                             topicPrefix: prefix, tokens: tokens, definition: { _, _ in RealtimeService.definition(settings: settings) }) { realtime in
    try await withRunningService(.chat, app: .unify, apiPrefix: "/chat/v1", configure: { $0.logLevel = .warning }, topicPrefix: prefix, tokens: tokens, definition: { catalog, base in
        ChatService.definition(settings: ChatSettings(), storage: Storage(backend: FileSystemStorageBackend(root: root), publicBaseURL: base,
                                                                          signingKey: Array("rt-bench-signing-key-0123456789abcdef".utf8)), catalog: catalog)
    }) { chat in
        // Group members: the first `subscribers` users, known to chat, in one group.
        var users: [(RunningService.User, String)] = []
        for index in 0..<subscribers {
            let email = "m\(index)-\(uniqueName("b"))@example.com"
            let user = try await chat.user(email: email)
            _ = try await chat.request(.GET, "/me", as: user)
            users.append((user, email))
        }
        let owner = try await chat.user(email: "owner-\(uniqueName("b"))@example.com")
        _ = try await chat.request(.GET, "/me", as: owner)
        let created = try await chat.request(.POST, "/groups", as: owner, json: ["name": "Bench", "member_emails": users.map(\.1)])
        guard let group = created.body["id"]?.stringValue else { fatalError("group not created: \(created.body)") }
        try await waitUntil(timeout: .seconds(120)) {
            try await realtime.withDatabase { db in
                try await db.query("SELECT count(*) FROM memberships WHERE scope_id = \(UUID(uuidString: group)!)").collect().first?.decode(Int.self) == subscribers + 1
            }
        }

        // 1. connections and joins
        let url = realtime.base.replacingOccurrences(of: "http://", with: "ws://") + "/realtime/v1/websocket?apikey=bench&vsn=1.0.0"
        let rssBefore = residentBytes()
        let joinedCount = Atomic<Int>(0)
        var sockets: [BenchSocket] = []
        let start = monotonicNanoseconds()
        for index in 0..<connections {
            let token = index < subscribers ? users[index].0.token : try await tokens.token(user: UUID(), app: .unify)
            let config = index < subscribers
                ? #"{"postgres_changes":[{"event":"INSERT","schema":"public","table":"message","filter":"group_id=eq.\#(group)"}]}"#
                : #"{"broadcast":{"self":false}}"#
            sockets.append(BenchSocket(url: url, topic: index < subscribers ? "realtime:group_chat" : "realtime:idle-\(index % 100)", token: token, config: config) {
                joinedCount.add(1, ordering: .relaxed)
            })
            if index % 500 == 499 { try await Task.sleep(for: .milliseconds(20)) }
        }
        try await waitUntil(timeout: .seconds(300)) { joinedCount.load(ordering: .relaxed) == connections }
        let joinSeconds = Double(monotonicNanoseconds() - start) / 1e9
        try await Task.sleep(for: .seconds(2))
        let perConnection = Double(residentBytes() - rssBefore) / Double(connections)
        print("connections held: \(connections), joins/s (with token verification): \(format(Double(connections) / joinSeconds, 0))")
        print("memory per connection (RSS growth / N, client and server ends in one process): \(format(perConnection / 1024, 1)) KB (target <= 75 KB, server side)")

        // 2. fan-out latency
        var latencies: [Double] = []
        for index in 0..<messages {
            let marker = "\(index)-\(UUID().uuidString.prefix(8))"
            let sent = monotonicNanoseconds()
            _ = try await chat.request(.POST, "/groups/\(group)/messages", as: owner, json: ["content": "bench-\(marker)"])
            try await waitUntil(timeout: .seconds(30)) {
                sockets.prefix(subscribers).allSatisfy { $0.state.arrivals.withLock { $0[marker] != nil } }
            }
            for socket in sockets.prefix(subscribers) {
                let arrived = socket.state.arrivals.withLock { $0[marker]! }
                latencies.append(Double(arrived - sent) / 1e6)
            }
        }
        latencies.sort()
        print("fan-out to \(subscribers) subscribers, \(messages) messages: p50 \(format(percentile(latencies, 0.5))) ms, p99 \(format(percentile(latencies, 0.99))) ms (target p99 <= 100 ms)")
        _ = realtime
    }
}
try? FileManager.default.removeItem(atPath: root)
