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

// colony-realtime-bench: the realtime service (release) next to chat on the local Postgres and broker.
// The client ends of the sockets live in a child process (this binary with `--client FILE`), so this
// process's RSS growth is the server side only (plus chat, idle meanwhile):
//   1. joins/s: N sockets (default 10,000) connect and join a channel with a verified token, held open;
//      memory per connection = server RSS growth / N;
//   2. fan-out: S of them (default 1,000) are members of one chat group subscribed to its `message`
//      INSERTs; M messages go through chat's API; latency from just before the POST to each delivery
//      (CLOCK_MONOTONIC, shared by both processes), p50/p99.
// colony-realtime-bench [--connections N] [--subscribers S] [--messages M]

func raiseFileLimit() {
    var limit = rlimit()
    getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
    limit.rlim_cur = limit.rlim_max
    setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
}

func residentBytes() -> Int {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
          let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
          let kb = Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
    else { return 0 }
    return kb * 1024
}

/// Runs blocking I/O off the cooperative pool.
func blocking<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        Thread.detachNewThread { continuation.resume(returning: body()) }
    }
}

/// Blocking line reader over a file handle.
final class LineReader: @unchecked Sendable {
    let handle: FileHandle
    var buffer = Data()
    init(_ handle: FileHandle) { self.handle = handle }
    func readLine() -> String? {
        while true {
            if let index = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[buffer.startIndex..<index], as: UTF8.self)
                buffer = Data(buffer[(index + 1)...])
                return line
            }
            let chunk = handle.availableData
            if chunk.isEmpty { return nil }
            buffer.append(chunk)
        }
    }
}

func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

struct ClientPlan: Codable {
    var url: String
    var subscribers: Int
    var group: String
    var tokens: [String]
}

// MARK: - client process

/// A held client socket: notes when each message marker arrived.
final class BenchSocket: Sendable {
    let joined = Atomic<Bool>(false)
    let arrivals = Mutex<[String: UInt64]>([:])

    init(url: String, topic: String, token: String, config: String, onJoin: @escaping @Sendable () -> Void, onFail: @escaping @Sendable () -> Void) {
        let (stream, continuation) = AsyncStream<String>.makeStream()
        continuation.yield(#"{"topic":"\#(topic)","event":"phx_join","payload":{"config":\#(config),"access_token":"\#(token)"},"ref":"1","join_ref":"1"}"#)
        let state = self
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
                        if text.contains("postgres_changes"), let range = text.range(of: "bench-"),
                           let end = text[range.upperBound...].firstIndex(of: "\"") {
                            let now = monotonicNanoseconds()
                            state.arrivals.withLock { $0[String(text[range.upperBound..<end])] = now }
                        } else if !state.joined.load(ordering: .relaxed), text.contains("phx_reply"), text.contains("\"ok\"") {
                            state.joined.store(true, ordering: .relaxed)
                            onJoin()
                        }
                    }
                    group.cancelAll()
                }
            }
            if !state.joined.load(ordering: .relaxed) { onFail() }
        }
    }
}

func runClient(planFile: String) async throws {
    raiseFileLimit()
    let plan = try JSONDecoder().decode(ClientPlan.self, from: Data(contentsOf: URL(fileURLWithPath: planFile)))
    let rssBefore = residentBytes()
    let joinedCount = Atomic<Int>(0)
    let failedCount = Atomic<Int>(0)
    var sockets: [BenchSocket] = []
    let start = monotonicNanoseconds()
    for (index, token) in plan.tokens.enumerated() {
        let subscriber = index < plan.subscribers
        let config = subscriber
            ? #"{"postgres_changes":[{"event":"INSERT","schema":"public","table":"message","filter":"group_id=eq.\#(plan.group)"}]}"#
            : #"{"broadcast":{"self":false}}"#
        sockets.append(BenchSocket(url: plan.url, topic: subscriber ? "realtime:group_chat" : "realtime:idle-\(index % 100)", token: token, config: config) {
            joinedCount.add(1, ordering: .relaxed)
        } onFail: {
            failedCount.add(1, ordering: .relaxed)
        })
        // keep the number of handshakes in flight bounded
        while index + 1 - joinedCount.load(ordering: .relaxed) - failedCount.load(ordering: .relaxed) > 500 {
            try await Task.sleep(for: .milliseconds(2))
        }
    }
    let deadline = ContinuousClock.now + .seconds(300)
    while joinedCount.load(ordering: .relaxed) + failedCount.load(ordering: .relaxed) < sockets.count, ContinuousClock.now < deadline {
        try await Task.sleep(for: .milliseconds(10))
    }
    let seconds = Double(monotonicNanoseconds() - start) / 1e9
    try await Task.sleep(for: .seconds(1))
    let failed = failedCount.load(ordering: .relaxed)
    say("joined \(joinedCount.load(ordering: .relaxed)) \(failed) \(seconds) \(residentBytes() - rssBefore)")

    let stdin = LineReader(FileHandle.standardInput)
    let subscribers = Array(sockets.prefix(plan.subscribers))
    while let line = await blocking({ stdin.readLine() }) {
        let parts = line.split(separator: " ")
        guard parts.count == 3, parts[0] == "wait", let sent = UInt64(parts[2]) else { break }
        let marker = String(parts[1])
        let until = ContinuousClock.now + .seconds(30)
        while subscribers.contains(where: { $0.arrivals.withLock { $0[marker] == nil } }), ContinuousClock.now < until {
            try await Task.sleep(for: .milliseconds(1))
        }
        let latencies = subscribers.compactMap { socket in socket.arrivals.withLock { $0[marker] }.map { Double(Int64($0) - Int64(sent)) / 1e6 } }
        say("lat \(subscribers.count - latencies.count) " + latencies.map { format($0, 3) }.joined(separator: ","))
    }
    exit(0)
}

// MARK: - server process

let arguments = Array(CommandLine.arguments.dropFirst())
if arguments.first == "--client", arguments.count == 2 {
    try await runClient(planFile: arguments[1])
}

let (connections, subscribers, messages): (Int, Int, Int) = {
    var connections = 10_000, subscribers = 1_000, messages = 30
    var iterator = arguments.makeIterator()
    while let argument = iterator.next() {
        switch (argument, iterator.next().flatMap(Int.init)) {
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
raiseFileLimit()

let prefix = TestKafka.topicPrefix()
let tokens = TestTokens()
let root = FileManager.default.temporaryDirectory.appendingPathComponent("colony-rt-bench-\(UUID().uuidString)").path
let planFile = FileManager.default.temporaryDirectory.appendingPathComponent("colony-rt-bench-plan-\(UUID().uuidString).json").path
// Every client socket comes from this machine's one address, and the idle ones are users of their own.
let settings = RealtimeSettings(socketBufferMessages: 4096, quotas: RealtimeQuotas(socketsPerAddress: 1_000_000))
try await withRunningService(.realtime, app: .unify, apiPrefix: "/realtime/v1", configure: { $0.app = nil; $0.tokens.audience = nil; $0.logLevel = .warning },
                             topicPrefix: prefix, tokens: tokens, definition: { _ in RealtimeService.definition(settings: settings) }) { realtime in
    try await withRunningService(.chat, app: .unify, apiPrefix: "/chat/v1", configure: { $0.logLevel = .warning }, topicPrefix: prefix, tokens: tokens, definition: { base in
        // One owner adds every subscriber by email: past chat's budget of member lookups (100 an hour).
        ChatService.definition(settings: ChatSettings(memberEmailLookups: Quota(1_000_000, perSeconds: 3600)), storage: Storage(backend: FileSystemStorageBackend(root: root), publicBaseURL: base,
                                                                          signingKey: Array("rt-bench-signing-key-0123456789abcdef".utf8)))
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
        // chat takes at most 100 emails per request
        let emails = users.map(\.1)
        let created = try await chat.request(.POST, "/groups", as: owner, json: ["name": "Bench", "member_emails": Array(emails.prefix(100))])
        guard let group = created.body["id"]?.stringValue else { fatalError("group not created: \(created.body)") }
        for start in stride(from: 100, to: emails.count, by: 100) {
            let added = try await chat.request(.POST, "/groups/\(group)/members", as: owner, json: ["emails": Array(emails[start..<min(start + 100, emails.count)])])
            guard added.status < 300 else { fatalError("members not added: \(added.status) \(added.body)") }
        }
        try await waitUntil(timeout: .seconds(120)) {
            try await realtime.withDatabase { db in
                try await db.query("SELECT count(*) FROM memberships WHERE scope_id = \(UUID(uuidString: group)!)").collect().first?.decode(Int.self) == subscribers + 1
            }
        }
        var allTokens = users.map(\.0.token)
        for _ in subscribers..<connections { allTokens.append(try await tokens.token(user: UUID(), app: .unify)) }
        let url = realtime.base.replacingOccurrences(of: "http://", with: "ws://") + "/realtime/v1/websocket?apikey=\(try await tokens.apiKey(app: .unify))&vsn=1.0.0"
        try JSONEncoder().encode(ClientPlan(url: url, subscribers: subscribers, group: group.lowercased(), tokens: allTokens)).write(to: URL(fileURLWithPath: planFile))
        defer { try? FileManager.default.removeItem(atPath: planFile) }

        // 1. connections and joins (clients in a child process)
        let child = Process()
        child.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
        child.arguments = ["--client", planFile]
        let toChild = Pipe(), fromChild = Pipe()
        child.standardInput = toChild
        child.standardOutput = fromChild
        let childLines = LineReader(fromChild.fileHandleForReading)
        try await Task.sleep(for: .seconds(1))
        let rssBefore = residentBytes()
        try child.run()
        defer { child.terminate() }
        guard let joinedLine = await blocking({ childLines.readLine() }) else { fatalError("client process ended") }
        let joined = joinedLine.split(separator: " ")
        guard joined.count == 5, let count = Int(joined[1]), let failures = Int(joined[2]), let joinSeconds = Double(joined[3]), let clientGrowth = Int(joined[4])
        else { fatalError("client process: \(joinedLine)") }
        try await Task.sleep(for: .seconds(2))
        let serverGrowth = residentBytes() - rssBefore
        print("connections joined: \(count) of \(connections) (\(failures) failed)")
        print("joins/s (connect + phx_join with token verification, up to 500 handshakes in flight): \(format(Double(count) / joinSeconds, 0)) (\(format(joinSeconds, 2)) s)")
        print("server memory per connection (server process RSS growth / N; clients in another process): \(format(Double(serverGrowth) / Double(max(count, 1)) / 1024, 1)) KB (target <= 75 KB)")
        print("  server RSS \(format(Double(rssBefore) / 1_048_576, 1)) MB -> \(format(Double(residentBytes()) / 1_048_576, 1)) MB; client process growth \(format(Double(clientGrowth) / Double(max(count, 1)) / 1024, 1)) KB per connection")

        // 2. fan-out latency
        var latencies: [Double] = []
        var missing = 0
        for index in 0..<messages {
            let marker = "\(index)-\(UUID().uuidString.prefix(8))"
            let sent = monotonicNanoseconds()
            let reply = try await chat.request(.POST, "/groups/\(group)/messages", as: owner, json: ["content": "bench-\(marker)"])
            guard reply.status < 300 else { fatalError("send failed: \(reply.status) \(reply.body)") }
            toChild.fileHandleForWriting.write(Data("wait \(marker) \(sent)\n".utf8))
            guard let line = await blocking({ childLines.readLine() }), line.hasPrefix("lat ") else { fatalError("client process ended") }
            let parts = line.dropFirst(4).split(separator: " ", maxSplits: 1)
            missing += Int(parts[0]) ?? 0
            if parts.count > 1 { latencies += parts[1].split(separator: ",").compactMap { Double($0) } }
        }
        latencies.sort()
        print("fan-out to \(subscribers) subscribers, \(messages) messages (\(latencies.count) deliveries, \(missing) missing): p50 \(format(percentile(latencies, 0.5))) ms, p99 \(format(percentile(latencies, 0.99))) ms, max \(format(latencies.last ?? .nan)) ms (target p99 <= 100 ms)")
        try? toChild.fileHandleForWriting.close()
        _ = realtime
    }
}
try? FileManager.default.removeItem(atPath: root)
