import AsyncHTTPClient
import ColonyKafka
import ColonyModels
import ColonyPlatform
import Foundation
import NIOCore
import NIOHTTP1
import Synchronization

/// A domain service running as `ServiceHost` runs it, on a fresh schema and topic prefix, with a
/// token minter for its app's users and a producer for auth's events. Each service's tests wrap
/// it in a one-line harness (`withRunningHabits`, `withRunningChat`, …).
public struct RunningService: Sendable {
    public let base: String
    public let apiPrefix: String
    public let app: App
    public let tokens: TestTokens
    public let database: DatabaseConfiguration
    public let topicPrefix: String
    public let brokers: String

    public var apiURL: String { "\(base)\(apiPrefix)" }

    public struct Reply: Sendable {
        public var status: Int
        public var body: [String: JSONValue]
        public var array: [JSONValue]
        public var headers: HTTPHeaders
        public var bytes: ByteBuffer
        public var code: String? { body["code"]?.stringValue }
    }

    /// A user with a token for the service's app.
    public struct User: Sendable {
        public let id: UUID
        public let token: String

        public init(id: UUID, token: String) {
            self.id = id
            self.token = token
        }
    }

    public func user(_ id: UUID = UUID(), app: App? = nil, email: String? = nil) async throws -> User {
        User(id: id, token: try await tokens.token(user: id, app: app ?? self.app, email: email))
    }

    /// A request to `path` under the API prefix (or a full URL): a JSON object, raw JSON text, or
    /// raw bytes with their content type.
    public func request(_ method: HTTPMethod, _ path: String, as user: User?, json: [String: Any]? = nil, raw: String? = nil,
                        bytes: ByteBuffer? = nil, contentType: String? = nil, headers: [(String, String)] = []) async throws -> Reply {
        var request = HTTPClientRequest(url: path.hasPrefix("http") ? path : "\(apiURL)\(path)")
        request.method = method
        if let user { request.headers.add(name: "Authorization", value: "Bearer \(user.token)") }
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let json {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(data: try JSONSerialization.data(withJSONObject: json)))
        } else if let raw {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(string: raw))
        } else if let bytes {
            if let contentType { request.headers.add(name: "Content-Type", value: contentType) }
            request.body = .bytes(bytes)
        }
        // The deadline counts the wait for one of the pool's connections too: a test that fires 400
        // requests at once on a busy 2-core CI machine queued past 30 s (ProjectsKarmaTests).
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(120))
        let collected = try await response.body.collect(upTo: 64 << 20)
        let value = try? JSONDecoder().decode(JSONValue.self, from: Data(buffer: collected))
        var body: [String: JSONValue] = [:]
        var array: [JSONValue] = []
        if case .object(let object) = value { body = object }
        if case .array(let items) = value { array = items }
        return Reply(status: Int(response.status.code), body: body, array: array, headers: response.headers, bytes: collected)
    }

    /// Publishes an auth event on the auth topic, as the auth service's relay would.
    public func publishAuthEvent<Payload: EventPayload>(_ payload: Payload, user: UUID, app: App? = nil) async throws {
        try await publish(EventEnvelope(app: app ?? self.app, aggregateId: user.uuidString.lowercased(), actor: user, payload: payload))
    }

    /// Publishes an event on its source service's topic (under this service's topic prefix), as
    /// that service's outbox relay would.
    public func publish<Payload: EventPayload>(_ envelope: EventEnvelope<Payload>) async throws {
        let producer = try KafkaProducer(configuration: TestKafka.producer(brokers: brokers), logger: TestEnvironment.logger)
        do {
            try await producer.send(KafkaOutgoingMessage(topic: envelope.topic(prefix: topicPrefix), key: Array(envelope.aggregateId.utf8), value: try envelope.encoded()))
        } catch {
            await producer.close()
            throw error
        }
        await producer.close()
    }

    /// Where the service's OpenAPI document and what it serves disagree: a document not served at
    /// `<api>/openapi.json`, and any documented operation that is not routed or answers 5xx when
    /// called as `user` (a random id for each path parameter, or the value `values` names, e.g.
    /// `["date": "2026-01-01"]`). Empty when they agree. (The generated code registers exactly the
    /// document's operations; this calls each one through the router as it stands.)
    public func openAPIProblems(_ document: OpenAPIDocument, as user: User, values: [String: String] = [:]) async throws -> [String] {
        var problems: [String] = []
        let documented = try document.operations()
        let served = try await request(.GET, "\(apiURL)/openapi.json", as: nil)
        if served.status != 200 || served.body["openapi"]?.stringValue != "3.1.0" { problems.append("the document is not served at \(apiPrefix)/openapi.json") }
        for operation in documented.sorted() {
            var path = operation.path
            for (name, value) in values { path = path.replacingOccurrences(of: "{\(name)}", with: value) }
            path = path.replacingOccurrences(of: #"\{[a-z_]+\}"#, with: UUID().uuidString.lowercased(), options: .regularExpression)
            let reply = try await request(HTTPMethod(rawValue: operation.method), "\(base)\(path)", as: user)
            if reply.code == "route_not_found" || reply.code == "method_not_allowed" { problems.append("\(operation) is not routed") }
            if reply.status >= 500 { problems.append("\(operation) answered \(reply.status): \(reply.body)") }
        }
        return problems
    }

    /// Runs `body` with the service's database (its own role), for jobs and direct checks.
    public func withDatabase<Result: Sendable>(_ body: (Database) async throws -> Result) async throws -> Result {
        let database = Database(configuration: database, logger: TestEnvironment.logger)
        return try await withRunning(database) { try await body(database) }
    }

    /// The events the service published to its topic, from the start, until `until` holds.
    public func events(of service: ColonyService, until: @escaping @Sendable ([ReceivedEvent]) -> Bool, timeout: Duration = .seconds(30)) async throws -> [ReceivedEvent] {
        try await collectEvents(brokers: brokers, topic: EventTopics.topic(for: service, prefix: topicPrefix), timeout: timeout, until: until)
    }
}

/// Starts the service `definition` makes (given the base URL it will answer on) and runs `body` against it once `/ready` answers.
public func withRunningService(
    _ service: ColonyService, app: App, apiPrefix: String, extensions: [String] = [],
    configure: @Sendable (inout ServiceConfiguration) -> Void = { _ in },
    topicPrefix: String? = nil, tokens sharedTokens: TestTokens? = nil,
    definition: @escaping @Sendable (_ baseURL: String) -> ServiceDefinition,
    _ body: @Sendable (RunningService) async throws -> Void
) async throws {
    // Services tested together (realtime with chat) share a topic prefix and a token key.
    let prefix = topicPrefix ?? TestKafka.topicPrefix()
    let tokens = sharedTokens ?? TestTokens()
    try await withTestSchema(extensions: extensions) { databaseConfiguration in
        try await runService(service, app: app, apiPrefix: apiPrefix, configure: configure, topicPrefix: prefix, tokens: tokens,
                             database: databaseConfiguration, definition: definition, body)
    }
}

/// A second instance of `running`'s service on its schema, topic prefix and token key (another
/// replica, as a deployment runs them), configured by `configure`: the same requests to both
/// compare two configurations on the same data (fast paths on and off, say).
public func withRunningTwin(
    of running: RunningService, _ service: ColonyService,
    configure: @Sendable (inout ServiceConfiguration) -> Void = { _ in },
    definition: @escaping @Sendable (_ baseURL: String) -> ServiceDefinition,
    _ body: @Sendable (RunningService) async throws -> Void
) async throws {
    try await runService(service, app: running.app, apiPrefix: running.apiPrefix, configure: configure, topicPrefix: running.topicPrefix,
                         tokens: running.tokens, database: running.database, definition: definition, body)
}

private func runService(
    _ service: ColonyService, app: App, apiPrefix: String, configure: @Sendable (inout ServiceConfiguration) -> Void,
    topicPrefix prefix: String, tokens: TestTokens, database databaseConfiguration: DatabaseConfiguration,
    definition: @escaping @Sendable (_ baseURL: String) -> ServiceDefinition,
    _ body: @Sendable (RunningService) async throws -> Void
) async throws {
    let environment = try TestEnvironment.current()
    let port = try freePort()
    do {
        var configuration = ServiceConfiguration(
            service: service, app: app, httpHost: "127.0.0.1", httpPort: port, logLevel: TestEnvironment.logger.logLevel,
            database: databaseConfiguration, kafkaBrokers: environment.kafkaBrokers, topicPrefix: prefix,
            tokens: tokens.verifierConfiguration(audience: app)
        )
        configure(&configuration)
        let running = RunningService(base: "http://127.0.0.1:\(port)", apiPrefix: apiPrefix, app: app, tokens: tokens, database: databaseConfiguration,
                                     topicPrefix: prefix, brokers: environment.kafkaBrokers)
        let configured = configuration
        // A service that fails to start (a bad migration, say) ends the wait with its error.
        let failure = StartFailure()
        let stopped = StopWatch()
        defer { stopped.set() }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                do {
                    try await ServiceHost.run(definition(running.base), configuration: configured)
                } catch {
                    failure.message.withLock { $0 = String(reflecting: error) }
                    throw error
                }
            }
            defer { group.cancelAll() }
            // Starting runs the service's migrations on its fresh schema and meets the broker: with the
            // whole suite starting services at once on 2 cores that took over 30 s (CI: four services
            // not ready, each test 278 s in), so the wait is the test request's 120 s.
            try await waitUntil(timeout: .seconds(120)) {
                if let message = failure.message.withLock({ $0 }) { throw TestSetupError("\(service) did not start: \(message)") }
                let response = try? await HTTPClient.shared.execute(HTTPClientRequest(url: "\(running.base)/ready"), timeout: .seconds(2))
                return response?.status == .ok
            }
            // Stopping is quick unless something is wedged: say which service, so a hung run names it.
            defer { StopWatch.warn(after: .seconds(60), unless: stopped, "\(service) (topic prefix \(prefix)) has not stopped 60 s after its test ended") }
            do {
                try await body(running)
            } catch {
                await running.reportPipelineState(after: error)
                throw error
            }
        }
    }
}

/// Whether a service under test has stopped; a warning names it when it takes too long.
final class StopWatch: Sendable {
    private let done = Mutex(false)

    func set() { done.withLock { $0 = true } }

    /// Prints `message` to stderr after `delay` unless `watch` was set by then (a detached task:
    /// the stopping service's cancellation must not cancel the watch).
    static func warn(after delay: Duration, unless watch: StopWatch, _ message: String) {
        Task.detached {
            try? await Task.sleep(for: delay)
            if !watch.done.withLock({ $0 }) { FileHandle.standardError.write(Data("warning: \(message)\n".utf8)) }
        }
    }
}

extension RunningService {
    /// Prints what the service's `/metrics` says of its event pipeline (consumer assignment, lag,
    /// time since the last poll, outbox backlog, broker reachability, live events skipped and why)
    /// to stderr: a test that timed out waiting for an event leaves the state that explains it.
    func reportPipelineState(after error: any Error) async {
        var lines = ["pipeline state of \(base) (topic prefix \(topicPrefix)) after: \(error)"]
        if let response = try? await HTTPClient.shared.execute(HTTPClientRequest(url: "\(base)/metrics"), timeout: .seconds(10)),
           let body = try? await response.body.collect(upTo: 8 << 20) {
            lines += String(buffer: body).split(separator: "\n").filter { line in
                !line.hasPrefix("#") && ["colony_consumer_", "colony_broker_up", "colony_outbox_", "colony_dead_letters", "colony_event_handler_failures", "colony_live_events_"].contains { line.hasPrefix($0) }
            }.map { "  \($0)" }
        } else {
            lines.append("  /metrics did not answer")
        }
        FileHandle.standardError.write(Data((lines.joined(separator: "\n") + "\n").utf8))
    }
}

/// Why a service under test stopped before it was ready, if it did.
final class StartFailure: Sendable {
    let message = Mutex<String?>(nil)
}
