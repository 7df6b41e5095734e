import AsyncHTTPClient
import ChatService
import CirclesService
import HabitsService
import ProjectsService
import ColonyModels
import ColonyPlatform
import ColonyStorage
import ColonyTesting
import Foundation
import HummingbirdWSClient
import Logging
import NearbyService
import Synchronization
import Testing
@testable import RealtimeService

/// Realtime running as `ServiceHost` runs it (tokens of every app), optionally next to chat on the
/// same topic prefix and token key.
func withRunningRealtime(settings: RealtimeSettings = RealtimeSettings(), topicPrefix: String? = nil, tokens: TestTokens? = nil,
                         _ body: @Sendable (RunningService) async throws -> Void) async throws {
    try await withRunningService(.realtime, app: .unify, apiPrefix: "/realtime/v1", configure: { configuration in
        configuration.app = nil
        configuration.tokens.audience = nil
    }, topicPrefix: topicPrefix, tokens: tokens, definition: { _ in RealtimeService.definition(settings: settings) }) { realtime in
        // Its sockets get what is published once its live consumer has its partitions.
        try await waitForConsumerAssignment(base: realtime.base, group: "-live-")
        try await body(realtime)
    }
}

/// Realtime and chat on one topic prefix and token key.
func withRealtimeAndChat(settings: RealtimeSettings = RealtimeSettings(), _ body: @Sendable (_ realtime: RunningService, _ chat: RunningService) async throws -> Void) async throws {
    let prefix = TestKafka.topicPrefix()
    let tokens = TestTokens()
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("colony-rt-chat-\(UUID().uuidString)").path
    defer { try? FileManager.default.removeItem(atPath: root) }
    try await withRunningRealtime(settings: settings, topicPrefix: prefix, tokens: tokens) { realtime in
        try await withRunningService(.chat, app: .unify, apiPrefix: "/chat/v1", topicPrefix: prefix, tokens: tokens, definition: { base in
            let storage = Storage(backend: FileSystemStorageBackend(root: root), publicBaseURL: base, signingKey: Array("rt-tests-signing-key-0123456789abcdef".utf8))
            return ChatService.definition(settings: ChatSettings(), storage: storage)
        }) { chat in
            try await body(realtime, chat)
        }
    }
}

/// Realtime and circles on one topic prefix and token key.
func withRealtimeAndCircles(settings: RealtimeSettings = RealtimeSettings(), _ body: @Sendable (_ realtime: RunningService, _ circles: RunningService) async throws -> Void) async throws {
    let prefix = TestKafka.topicPrefix()
    let tokens = TestTokens()
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("colony-rt-circles-\(UUID().uuidString)").path
    defer { try? FileManager.default.removeItem(atPath: root) }
    try await withRunningRealtime(settings: settings, topicPrefix: prefix, tokens: tokens) { realtime in
        try await withRunningService(.circles, app: .mycirclee, apiPrefix: "/circles/v1", topicPrefix: prefix, tokens: tokens, definition: { base in
            let storage = Storage(backend: FileSystemStorageBackend(root: root), publicBaseURL: base, signingKey: Array("rt-tests-signing-key-0123456789abcdef".utf8))
            return CirclesService.definition(settings: CirclesSettings(), storage: storage)
        }) { circles in
            try await body(realtime, circles)
        }
    }
}

/// Realtime and nearby on one topic prefix and token key.
func withRealtimeAndNearby(settings: NearbySettings, _ body: @Sendable (_ realtime: RunningService, _ nearby: RunningService) async throws -> Void) async throws {
    let prefix = TestKafka.topicPrefix()
    let tokens = TestTokens()
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("colony-rt-nearby-\(UUID().uuidString)").path
    defer { try? FileManager.default.removeItem(atPath: root) }
    try await withRunningRealtime(topicPrefix: prefix, tokens: tokens) { realtime in
        try await withRunningService(.nearby, app: .socialspot, apiPrefix: "/nearby/v1", extensions: NearbyService.extensions, topicPrefix: prefix, tokens: tokens,
                                     definition: { base in
            let storage = Storage(backend: FileSystemStorageBackend(root: root), publicBaseURL: base, signingKey: Array("rt-tests-signing-key-0123456789abcdef".utf8))
            return NearbyService.definition(settings: settings, storage: storage)
        }) { nearby in
            try await body(realtime, nearby)
        }
    }
}

/// Realtime and habits on one topic prefix and token key.
func withRealtimeAndHabits(_ body: @Sendable (_ realtime: RunningService, _ habits: RunningService) async throws -> Void) async throws {
    let prefix = TestKafka.topicPrefix()
    let tokens = TestTokens()
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("colony-rt-habits-\(UUID().uuidString)").path
    defer { try? FileManager.default.removeItem(atPath: root) }
    try await withRunningRealtime(topicPrefix: prefix, tokens: tokens) { realtime in
        try await withRunningService(.habits, app: .habithive, apiPrefix: "/habits/v1", topicPrefix: prefix, tokens: tokens, definition: { _ in
            HabitsService.definition(settings: HabitsSettings(phonePepper: "rt-tests-pepper"), exports: FileSystemStorageBackend(root: root))
        }) { habits in
            try await body(realtime, habits)
        }
    }
}

/// Realtime and projects on one topic prefix and token key.
func withRealtimeAndProjects(_ body: @Sendable (_ realtime: RunningService, _ projects: RunningService) async throws -> Void) async throws {
    let prefix = TestKafka.topicPrefix()
    let tokens = TestTokens()
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("colony-rt-projects-\(UUID().uuidString)").path
    defer { try? FileManager.default.removeItem(atPath: root) }
    try await withRunningRealtime(topicPrefix: prefix, tokens: tokens) { realtime in
        try await withRunningService(.projects, app: .ibelieveinyou, apiPrefix: "/projects/v1", topicPrefix: prefix, tokens: tokens, definition: { base in
            let storage = Storage(backend: FileSystemStorageBackend(root: root), publicBaseURL: base, signingKey: Array("rt-tests-signing-key-0123456789abcdef".utf8))
            return ProjectsService.definition(settings: ProjectsSettings(), storage: storage)
        }) { projects in
            try await body(realtime, projects)
        }
    }
}

/// Runs one app's conformance script (`Tests/RealtimeClientTests/conformance_<app>.py`) against
/// realtime and the app's service: `users` users with tokens (emails `<id>@example.com`), and
/// auth's `user_deleted` published whenever the script asks for an account's erasure.
func runConformance(_ script: String, realtime: RunningService, service: RunningService, users count: Int,
                    environment extra: [String: String] = [:], prepare: @Sendable ([RunningService.User]) async throws -> Void = { _ in }) async throws {
    var users: [RunningService.User] = []
    for _ in 0..<count {
        let id = UUID()
        users.append(try await service.user(id, email: "\(id.uuidString.lowercased())@example.com"))
    }
    try await prepare(users)
    let signals = FileManager.default.temporaryDirectory.appendingPathComponent("colony-rt-signals-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: signals, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: signals) }
    var environment: [String: String?] = [
        "COLONY_REALTIME_URL": "\(realtime.base)/realtime/v1",
        "COLONY_API_KEY": try await realtime.tokens.apiKey(app: service.app),
        "COLONY_API_URL": service.apiURL,
        "COLONY_USERS": users.map { "\($0.id.uuidString.lowercased()):\($0.token)" }.joined(separator: ";"),
        "COLONY_SIGNAL_DIR": signals.path,
    ]
    for (name, value) in extra { environment[name] = value }
    let configured = environment
    let (status, output) = try await withThrowingTaskGroup(of: (Int32, String)?.self) { group in
        // The script's requests for auth's events, as the auth service would publish them.
        group.addTask {
            while !Task.isCancelled {
                for name in (try? FileManager.default.contentsOfDirectory(atPath: signals.path)) ?? [] where name.hasPrefix("erase-") {
                    guard let id = UUID(uuidString: String(name.dropFirst(6))) else { continue }
                    try await service.publishAuthEvent(UserDeleted(userId: id, app: service.app, deletedAt: Date()), user: id)
                    try FileManager.default.removeItem(at: signals.appendingPathComponent(name))
                }
                try? await Task.sleep(for: .milliseconds(100))
            }
            return nil
        }
        group.addTask { try await PythonClient.run([PythonClient.path("Tests/RealtimeClientTests/\(script)")], environment: configured) }
        while let result = try await group.next() {
            if let result {
                group.cancelAll()
                return result
            }
        }
        throw TestSetupError("the conformance script did not run")
    }
    #expect(status == 0, "\(script) failed:\n\(output)")
}

/// A second realtime replica on the first one's schema and topics.
func withSecondReplica(of first: RunningService, settings: RealtimeSettings = RealtimeSettings(), _ body: @Sendable (_ base: String) async throws -> Void) async throws {
    let port = try freePort()
    var configuration = ServiceConfiguration(service: .realtime, app: nil, httpHost: "127.0.0.1", httpPort: port, logLevel: TestEnvironment.logger.logLevel,
                                             database: first.database, kafkaBrokers: first.brokers, topicPrefix: first.topicPrefix,
                                             tokens: first.tokens.verifierConfiguration(audience: nil))
    configuration.app = nil
    let configured = configuration
    try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { try await ServiceHost.run(RealtimeService.definition(settings: settings), configuration: configured) }
        defer { group.cancelAll() }
        try await waitUntil(timeout: .seconds(30)) {
            let response = try? await HTTPClient.shared.execute(HTTPClientRequest(url: "http://127.0.0.1:\(port)/ready"), timeout: .seconds(2))
            return response?.status == .ok
        }
        try await waitForConsumerAssignment(base: "http://127.0.0.1:\(port)", group: "-live-")
        try await body("http://127.0.0.1:\(port)")
    }
}

/// A Phoenix client over a real WebSocket that records everything it receives.
final class TestSocket: Sendable {
    let serializer: PhoenixSerializer
    private final class Inbox: Sendable {
        let received = Mutex<[PhoenixMessage]>([])
        let closed = Mutex<Bool>(false)
    }
    private let inbox = Inbox()
    private let outgoing: AsyncStream<String>.Continuation
    private let task: Task<Void, Never>
    private let refs = Atomic<Int>(0)

    init(base: String, apiKey: String, vsn: PhoenixSerializer = .v1) {
        serializer = vsn
        let (stream, continuation) = AsyncStream<String>.makeStream()
        outgoing = continuation
        let url = base.replacingOccurrences(of: "http://", with: "ws://") + "/realtime/v1/websocket?apikey=\(apiKey)" + (vsn == .v2 ? "&vsn=2.0.0" : "")
        let inbox = self.inbox
        task = Task {
            _ = try? await WebSocketClient.connect(url: url, logger: Logger(label: "test-socket")) { inbound, outbound, _ in
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask { for await text in stream { try await outbound.write(.text(text)) } }
                    for try await message in inbound.messages(maxSize: 1 << 22) {
                        if case .text(let text) = message, let decoded = try? vsn.decode(text) {
                            inbox.received.withLock { $0.append(decoded) }
                        }
                    }
                    group.cancelAll()
                }
            }
            inbox.closed.withLock { $0 = true }
        }
    }

    deinit { outgoing.finish(); task.cancel() }

    var isClosed: Bool { inbox.closed.withLock { $0 } }
    var messages: [PhoenixMessage] { inbox.received.withLock { $0 } }

    func nextRef() -> String { String(refs.add(1, ordering: .relaxed).newValue) }

    @discardableResult
    func send(topic: String, event: String, payload: JSONValue, joinRef: String? = nil) -> String {
        let ref = nextRef()
        outgoing.yield(serializer.encode(PhoenixMessage(joinRef: joinRef, ref: ref, topic: topic, event: event, payload: payload)))
        return ref
    }

    /// Joins and waits for the reply; returns it.
    func join(_ topic: String, token: String, config: JSONValue = .object([:])) async throws -> PhoenixMessage {
        let ref = nextRef()
        outgoing.yield(serializer.encode(PhoenixMessage(joinRef: ref, ref: ref, topic: topic, event: "phx_join",
                                                        payload: .object(["config": config, "access_token": .string(token)]))))
        return try await wait { $0.event == "phx_reply" && $0.ref == ref }
    }

    func wait(timeout: Duration = .seconds(60), _ predicate: @Sendable (PhoenixMessage) -> Bool) async throws -> PhoenixMessage {
        var found: PhoenixMessage?
        do {
            try await waitUntil(timeout: timeout) {
                found = messages.first(where: predicate)
                return found != nil
            }
        } catch {
            // What did arrive says more than the timeout.
            throw TestSetupError("\(error); received: \(messages.suffix(8).map { "\($0.topic) \($0.event) \(JSONText.encode($0.payload).prefix(300))" })")
        }
        return found!
    }

    func close() { outgoing.finish(); task.cancel() }
}

extension JSONValue {
    static func changes(_ bindings: [[String: String]]) -> JSONValue {
        .object(["postgres_changes": .array(bindings.map { .object($0.mapValues(JSONValue.string)) })])
    }
}

// Readable expectations: `payload["status"] == "ok"`.
extension JSONValue: ExpressibleByStringLiteral {
    public init(stringLiteral value: String) { self = .string(value) }
}
