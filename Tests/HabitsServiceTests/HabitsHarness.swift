import AsyncHTTPClient
import ColonyKafka
import ColonyModels
import ColonyPlatform
import ColonyTesting
import Foundation
import HabitsService
import NIOCore
import NIOHTTP1
import Testing

/// A running habits service on a fresh schema and topic prefix, as `ServiceHost` runs it, with
/// a token minter for habithive users and a producer for auth's events.
struct RunningHabits: Sendable {
    let base: String
    let tokens: TestTokens
    let database: DatabaseConfiguration
    let topicPrefix: String
    let brokers: String
    let catalog: RouteCatalog

    var apiURL: String { "\(base)/habits/v1" }

    struct Reply: Sendable {
        var status: Int
        var body: [String: JSONValue]
        var array: [JSONValue]
        var headers: HTTPHeaders
        var code: String? { body["code"]?.stringValue }
    }

    /// A user with a token for the habithive app.
    struct User: Sendable {
        let id: UUID
        let token: String
    }

    func user(_ id: UUID = UUID(), app: App = .habithive) async throws -> User {
        User(id: id, token: try await tokens.token(user: id, app: app))
    }

    /// A user whose profile exists with the given clock.
    func user(timezone: String, dayStartHour: Int = 4) async throws -> User {
        let user = try await user()
        let reply = try await request(.PATCH, "/profile", as: user, json: ["timezone": timezone, "day_start_hour": dayStartHour])
        #expect(reply.status == 200, "\(reply.body)")
        return user
    }

    func request(_ method: HTTPMethod, _ path: String, as user: User?, json: [String: Any]? = nil, raw: String? = nil, headers: [(String, String)] = []) async throws -> Reply {
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
        }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
        let bytes = try await response.body.collect(upTo: 8 << 20)
        let value = try? JSONDecoder().decode(JSONValue.self, from: Data(buffer: bytes))
        var body: [String: JSONValue] = [:]
        var array: [JSONValue] = []
        if case .object(let object) = value { body = object }
        if case .array(let items) = value { array = items }
        return Reply(status: Int(response.status.code), body: body, array: array, headers: response.headers)
    }

    /// Publishes an auth event on the auth topic, as the auth service's relay would.
    func publishAuthEvent<Payload: EventPayload>(_ payload: Payload, user: UUID, app: App = .habithive) async throws {
        let producer = try KafkaProducer(configuration: TestKafka.producer(brokers: brokers), logger: TestEnvironment.logger)
        defer { producer.shutdown() }
        let envelope = EventEnvelope(app: app, aggregateId: user.uuidString.lowercased(), actor: user, payload: payload)
        try await producer.send(KafkaOutgoingMessage(topic: envelope.topic(prefix: topicPrefix), key: Array(envelope.aggregateId.utf8), value: try envelope.encoded()))
    }

    /// Runs `body` with the service's database (its own role), for the jobs and direct checks.
    func withDatabase<Result: Sendable>(_ body: (Database) async throws -> Result) async throws -> Result {
        let database = Database(configuration: database, logger: TestEnvironment.logger)
        return try await withRunning(database) { try await body(database) }
    }

    func jobs(_ database: Database) -> HiveJobs {
        HiveJobs(database: database, outbox: Outbox(schema: database.schema, topicPrefix: topicPrefix), logger: TestEnvironment.logger, chunkSize: 50)
    }
}

/// Starts the habits service and runs `body` against it.
func withRunningHabits(_ body: @Sendable (RunningHabits) async throws -> Void) async throws {
    let environment = try TestEnvironment.current()
    let port = try freePort()
    let prefix = TestKafka.topicPrefix()
    let tokens = TestTokens()
    let catalog = RouteCatalog()
    try await withTestSchema { databaseConfiguration in
        let configuration = ServiceConfiguration(
            service: .habits, app: .habithive, httpHost: "127.0.0.1", httpPort: port, logLevel: TestEnvironment.logger.logLevel,
            database: databaseConfiguration, kafkaBrokers: environment.kafkaBrokers, topicPrefix: prefix,
            tokens: tokens.verifierConfiguration(audience: .habithive)
        )
        let running = RunningHabits(base: "http://127.0.0.1:\(port)", tokens: tokens, database: databaseConfiguration, topicPrefix: prefix, brokers: environment.kafkaBrokers, catalog: catalog)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                try await ServiceHost.run(HabitsService.definition(settings: HabitsSettings(phonePepper: "test-pepper"), catalog: catalog), configuration: configuration)
            }
            defer { group.cancelAll() }
            try await waitUntil(timeout: .seconds(30)) {
                let response = try? await HTTPClient.shared.execute(HTTPClientRequest(url: "\(running.base)/ready"), timeout: .seconds(2))
                return response?.status == .ok
            }
            try await body(running)
        }
    }
}

extension JSONValue {
    var stringValue: String? { if case .string(let value) = self { value } else { nil } }
    var intValue: Int? { if case .number(let value) = self { Int(value) } else { nil } }
    var boolValue: Bool? { if case .bool(let value) = self { value } else { nil } }
    var objectValue: [String: JSONValue]? { if case .object(let value) = self { value } else { nil } }
    var arrayValue: [JSONValue]? { if case .array(let value) = self { value } else { nil } }
    subscript(key: String) -> JSONValue? { objectValue?[key] }
}
