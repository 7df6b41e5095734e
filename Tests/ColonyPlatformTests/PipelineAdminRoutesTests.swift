import AsyncHTTPClient
import ColonyKafka
import ColonyTesting
import Foundation
import Hummingbird
import NIOCore
import NIOHTTP1
import PostgresNIO
import Synchronization
import Testing

@testable import ColonyPlatform

/// The console's pipeline routes every service gets from `ServiceHost`: the pipeline at a glance,
/// the dead letters listed, retried and dropped through the service, and who may call them.
@Suite("Pipeline admin routes for the console", .serialized)
struct PipelineAdminRoutesTests {
    static let operatorEmail = "ops@colony.test"
    let consoleKey = InternalKey(Self.randomKey())
    let internalKey = InternalKey(Self.randomKey())

    static func randomKey() -> String {
        (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
    }

    var console: [(String, String)] { ConsoleCaller.headers(key: consoleKey, operatorEmail: Self.operatorEmail, app: nil) }

    /// The sequences the pings handler fails for (as a bug would), changed while it runs.
    final class Failing: Sendable {
        let sequences: Mutex<Set<Int>>
        init(_ sequences: Set<Int>) { self.sequences = Mutex(sequences) }
        func contains(_ sequence: Int) -> Bool { sequences.withLock { $0.contains(sequence) } }
        func fix(_ sequence: Int) { _ = sequences.withLock { $0.remove(sequence) } }
    }

    /// A pings service: `POST /habits/v1/pings?sequence=N` writes a ping and publishes a
    /// `test_ping` in one transaction. With `failing`, it consumes its own topic: the handler
    /// records each sequence in `seen`, and fails for the sequences `failing` holds.
    func pingsDefinition(failing: Failing? = nil) -> ServiceDefinition {
        var handler: ServiceEventHandler?
        if let failing {
            handler = { event, connection, _ in
                guard event.type == TestPing.eventType else { return }
                let sequence = try event.decode(TestPing.self).payload.sequence
                if failing.contains(sequence) {
                    struct HandlerBug: Error, CustomStringConvertible { var description: String { "no rule for this ping" } }
                    throw HandlerBug()
                }
                try await connection.query("INSERT INTO seen (sequence) VALUES (\(sequence))", logger: TestEnvironment.logger)
            }
        }
        var definition = ServiceDefinition(
            migrations: [Migration(version: 1, name: "pings", sql: """
                CREATE TABLE pings (sequence int NOT NULL); CREATE TABLE seen (sequence int NOT NULL);
                CREATE TABLE notes (id uuid PRIMARY KEY, owner uuid NOT NULL, readers uuid[] NOT NULL, text text NOT NULL);
                """)],
            consumes: failing == nil ? [] : [.habits],
            handleEvent: handler,
            addRoutes: { router, service in
                router.group("habits/v1").add(middleware: service.tokenMiddleware).post("pings") { request, context -> Response in
                    let user = try context.requireUser()
                    let sequence = Int(request.uri.queryParameters.get("sequence") ?? "0") ?? 0
                    try await service.database.transaction { connection in
                        try await connection.query("INSERT INTO pings (sequence) VALUES (\(sequence))", logger: context.logger)
                        let event = EventEnvelope(app: .habithive, aggregateId: "pings", actor: user.id, payload: TestPing(key: "p", sequence: sequence))
                        try await service.outbox.publish(event, on: connection, logger: context.logger)
                    }
                    return Response(status: .accepted)
                }
            }
        )
        // The moderation routes are in the same document (domain services take reports).
        definition.reports = { _ in ReportDeskTests.Notes() }
        return definition
    }

    func configure(_ configuration: inout ServiceConfiguration) {
        configuration.consoleKey = consoleKey
        configuration.internalKey = internalKey
        configuration.logLevel = .error
        configuration.pipeline = PipelineSettings(maxHandlerAttempts: 2, handlerRetryDelay: .milliseconds(20))
    }

    /// A request to a service started here (not through `withRunningService`), its JSON object.
    func http(_ method: HTTPMethod, _ url: String, headers: [(String, String)] = []) async throws -> (status: Int, body: [String: JSONValue]) {
        var request = HTTPClientRequest(url: url)
        request.method = method
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
        let body = try await response.body.collect(upTo: 1 << 20)
        return (Int(response.status.code), (try? JSONDecoder().decode([String: JSONValue].self, from: Data(buffer: body))) ?? [:])
    }

    func count(_ service: RunningService, _ sql: String) async throws -> Int {
        try await service.withDatabase { try await $0.query(PostgresQuery(unsafeSQL: sql)).firstValue(Int.self) ?? 0 }
    }

    func deadLetters(_ service: RunningService, _ query: String = "") async throws -> [[String: JSONValue]] {
        let reply = try await service.request(.GET, "\(service.base)\(PipelineAdminRoutes.deadLettersPath)\(query)", as: nil, headers: console)
        #expect(reply.status == 200, "\(reply.body)")
        return reply.body["dead_letters"]?.arrayValue?.compactMap(\.objectValue) ?? []
    }

    @Test("a dead letter made by a failing handler is listed with and without its event, retried once the handler is fixed (its effect appears), and another is dropped")
    func deadLettersThroughTheConsole() async throws {
        let failing = Failing([1, 2])
        try await withRunningService(.habits, app: .habithive, apiPrefix: "/habits/v1", configure: { configure(&$0) },
                                     definition: { _ in pingsDefinition(failing: failing) }) { service in
            let user = try await service.user()
            for sequence in 1...3 {
                #expect(try await service.request(.POST, "/pings?sequence=\(sequence)", as: user).status == 202)
            }
            // Two attempts each (COLONY_CONSUMER_MAX_ATTEMPTS), then set aside; 3 is applied.
            try await waitUntil(timeout: .seconds(90)) { try await deadLetters(service, "?stage=consume").count == 2 }
            try await waitUntil(timeout: .seconds(30)) { try await count(service, "SELECT count(*) FROM seen") == 1 }

            let listed = try await deadLetters(service)
            #expect(listed.count == 2)
            for letter in listed {
                #expect(letter["stage"] == .string("consume") && letter["event_type"] == .string("test_ping"), "\(letter)")
                #expect(letter["attempts"] == .number(2) && letter["error"]?.stringValue?.contains("no rule for this ping") == true, "\(letter)")
                #expect(letter["event_id"]?.stringValue.flatMap { UUID(canonical: $0) } != nil)
                #expect(letter["topic"] == .string(EventTopics.topic(for: .habits, prefix: service.topicPrefix)))
                #expect(letter["first_failed_at"]?.stringValue.flatMap(ISO8601.parse) != nil && letter["last_failed_at"]?.stringValue.flatMap(ISO8601.parse) != nil)
                #expect(letter["partition"] != nil && letter["offset"] != nil && (letter["payload_bytes"]?.intValue ?? 0) > 0)
                #expect(letter["retry_requested_at"] == nil)
                #expect(letter["payload"] == nil && letter["payload_base64"] == nil, "no event without include_payload")
            }
            #expect(listed.compactMap { $0["id"]?.intValue } == listed.compactMap { $0["id"]?.intValue }.sorted(), "oldest first")
            #expect(try await deadLetters(service, "?include_payload=false&limit=1").count == 1)
            #expect(try await deadLetters(service, "?stage=publish").isEmpty)

            // With the event: the envelope, whose payload says which ping it was.
            let withPayload = try await deadLetters(service, "?include_payload=true")
            var bySequence: [Int: Int] = [:]
            for letter in withPayload {
                let envelope = try #require(letter["payload"]?.objectValue, "\(letter)")
                #expect(envelope["id"] == letter["event_id"] && envelope["type"] == .string("test_ping"))
                let sequence = try #require(envelope["payload"]?["sequence"]?.intValue)
                bySequence[sequence] = letter["id"]?.intValue
            }
            let retried = try #require(bySequence[1]), dropped = try #require(bySequence[2])

            let pipeline = try await service.request(.GET, "\(service.base)\(PipelineAdminRoutes.pipelinePath)", as: nil, headers: console)
            #expect(pipeline.status == 200)
            #expect(pipeline.body["dead_letters"] == .object(["publish": .number(0), "consume": .number(2)]), "\(pipeline.body)")
            #expect(pipeline.body["service"] == .string("habits") && pipeline.body["broker"] == .string("ok") && pipeline.body["database"] == .string("ok"))

            // The handler is fixed; the console asks for a retry and the retrier applies it.
            failing.fix(1)
            let retry = try await service.request(.POST, "\(service.base)\(PipelineAdminRoutes.deadLettersPath)/\(retried)/retry", as: nil, headers: console)
            #expect(retry.status == 202, "\(retry.body)")
            #expect(retry.body == ["id": .number(Double(retried)), "stage": .string("consume"), "republished": .number(0), "requested": .number(1)])
            try await waitUntil(timeout: .seconds(90)) {
                try await count(service, "SELECT count(*) FROM seen WHERE sequence = 1") == 1
            }
            try await waitUntil(timeout: .seconds(30)) { try await deadLetters(service).compactMap { $0["id"]?.intValue } == [dropped] }

            // The other is dropped: gone from the list and the table, and a second drop or a retry is 404.
            let drop = try await service.request(.DELETE, "\(service.base)\(PipelineAdminRoutes.deadLettersPath)/\(dropped)", as: nil, headers: console)
            #expect(drop.status == 204 && drop.bytes.readableBytes == 0)
            #expect(try await deadLetters(service).isEmpty)
            #expect(try await count(service, "SELECT count(*) FROM dead_letters") == 0)
            #expect(try await count(service, "SELECT count(*) FROM seen WHERE sequence = 2") == 0, "a dropped event is not applied")
            for (method, path) in [(HTTPMethod.DELETE, "\(dropped)"), (.POST, "\(dropped)/retry"), (.POST, "\(retried)/retry")] {
                let again = try await service.request(method, "\(service.base)\(PipelineAdminRoutes.deadLettersPath)/\(path)", as: nil, headers: console)
                #expect(again.status == 404 && again.code == "dead_letter_not_found", "\(method) \(path): \(again.status) \(again.body)")
            }

            // The consumer's lag, from its statistics (every 5 s): its partitions, all caught up.
            try await waitUntil(timeout: .seconds(60)) {
                let reply = try await service.request(.GET, "\(service.base)\(PipelineAdminRoutes.pipelinePath)", as: nil, headers: console)
                let consumers = reply.body["consumers"]?.arrayValue ?? []
                return !consumers.isEmpty && consumers.allSatisfy {
                    $0["topic"] == .string(EventTopics.topic(for: .habits, prefix: service.topicPrefix)) && $0["partition"]?.intValue != nil && $0["lag"] == .number(0)
                }
            }
        }
    }

    @Test("with the broker stopped the pipeline answer counts the outbox's pending rows and their oldest, and says the broker is unavailable")
    func pipelineWithTheBrokerStopped() async throws {
        let broker = try BrokerProcess()
        defer { broker.stop() }
        try await broker.start()
        let tokens = TestTokens()
        let port = try freePort()
        try await withTestSchema { databaseConfiguration in
            var configuration = ServiceConfiguration(
                service: .habits, app: .habithive, httpHost: "127.0.0.1", httpPort: port, logLevel: .error,
                database: databaseConfiguration, kafkaBrokers: broker.bootstrapServers, topicPrefix: TestKafka.topicPrefix(),
                tokens: tokens.verifierConfiguration(audience: .habithive)
            )
            configure(&configuration)
            let definition = pingsDefinition(failing: Failing([]))
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { [configuration] in try await ServiceHost.run(definition, configuration: configuration) }
                defer { group.cancelAll() }
                let base = "http://127.0.0.1:\(port)"
                try await waitUntil(timeout: .seconds(60)) { (try? await http(.GET, "\(base)/ready").status) == 200 }
                func pipeline() async throws -> [String: JSONValue] {
                    let reply = try await http(.GET, "\(base)\(PipelineAdminRoutes.pipelinePath)", headers: console)
                    #expect(reply.status == 200, "\(reply.body)")
                    return reply.body
                }
                let before = try await pipeline()
                #expect(before["broker"] == .string("ok") && before["outbox"] == .object(["pending": .number(0)]), "\(before)")

                broker.stop()
                let token = try await tokens.token(user: UUID(), app: .habithive)
                let started = Date()
                for sequence in 1...5 {
                    #expect(try await http(.POST, "\(base)/habits/v1/pings?sequence=\(sequence)", headers: [("Authorization", "Bearer \(token)")]).status == 202)
                }
                let answer = try await pipeline()
                #expect(answer["service"] == .string("habits") && answer["database"] == .string("ok"))
                #expect(answer["broker"] == .string("unavailable"), "\(answer)")
                let outbox = try #require(answer["outbox"]?.objectValue)
                #expect(outbox["pending"] == .number(5), "\(answer)")
                let oldest = try #require(outbox["oldest_pending_at"]?.stringValue.flatMap(ISO8601.parse))
                #expect(oldest >= started.addingTimeInterval(-1) && oldest <= Date().addingTimeInterval(1))
                #expect(answer["dead_letters"] == .object(["publish": .number(0), "consume": .number(0)]))
                #expect(answer["consumers"]?.arrayValue != nil)
            }
        }
    }

    @Test("only the console's credential with an operator is taken; bad ids, limits, stages and flags are 400, never 500; every documented operation is routed")
    func refusals() async throws {
        let wrongKey = InternalKey(Self.randomKey())
        try await withRunningService(.habits, app: .habithive, apiPrefix: "/habits/v1", configure: { configure(&$0) },
                                     definition: { _ in pingsDefinition() }) { service in
            let user = try await service.user()
            let operations: [(HTTPMethod, String)] = [
                (.GET, PipelineAdminRoutes.pipelinePath), (.GET, PipelineAdminRoutes.deadLettersPath),
                (.POST, "\(PipelineAdminRoutes.deadLettersPath)/1/retry"), (.DELETE, "\(PipelineAdminRoutes.deadLettersPath)/1"),
                (.GET, ModerationAdminRoutes.reportsPath), (.GET, ModerationAdminRoutes.objectPath("note", UUID())),
                (.POST, "\(ModerationAdminRoutes.objectPath("note", UUID()))/resolve"),
            ]
            let operatorHeader = [("X-Colony-Operator", Self.operatorEmail)]
            let refused: [(String, [(String, String)], RunningService.User?)] = [
                ("no credential", operatorHeader, nil),
                ("a user's token", operatorHeader, user),
                ("the internal key", [("Authorization", internalKey.authorization)] + operatorHeader, nil),
                ("a wrong console key", ConsoleCaller.headers(key: wrongKey, operatorEmail: Self.operatorEmail, app: nil), nil),
                ("the console key in another scheme", [("Authorization", consoleKey.authorization.replacingOccurrences(of: "Bearer", with: "Basic"))] + operatorHeader, nil),
            ]
            for (method, path) in operations {
                for (what, headers, caller) in refused {
                    let reply = try await service.request(method, "\(service.base)\(path)", as: caller, headers: headers)
                    #expect(reply.status == 401 && reply.code == "invalid_console_credential", "\(method) \(path) with \(what): \(reply.status) \(reply.body)")
                }
                for (what, email) in [("no operator", nil), ("an operator that is no address", "ops"), ("an operator with a space", "o ps@colony.test")] as [(String, String?)] {
                    var headers = [("Authorization", consoleKey.authorization)]
                    if let email { headers.append(("X-Colony-Operator", email)) }
                    let reply = try await service.request(method, "\(service.base)\(path)", as: nil, headers: headers)
                    #expect(reply.status == 400 && reply.code == "operator_required", "\(method) \(path) with \(what): \(reply.status) \(reply.body)")
                }
                let unknownApp = try await service.request(method, "\(service.base)\(path)", as: nil, headers: console + [("X-Colony-App", "nope")])
                #expect(unknownApp.status == 400 && unknownApp.code == "unknown_app")
            }

            // Bad input: 400 with its code.
            let bad: [(HTTPMethod, String, String)] = [
                (.GET, "?limit=0", "invalid_limit"), (.GET, "?limit=501", "invalid_limit"), (.GET, "?limit=abc", "invalid_limit"),
                (.GET, "?limit=1.5", "invalid_limit"), (.GET, "?limit=-1", "invalid_limit"), (.GET, "?limit=", "invalid_limit"),
                (.GET, "?limit=99999999999999999999", "invalid_limit"), (.GET, "?limit=1e300", "invalid_limit"),
                (.GET, "?stage=nope", "invalid_stage"), (.GET, "?stage=PUBLISH", "invalid_stage"), (.GET, "?stage=", "invalid_stage"),
                (.GET, "?include_payload=yes", "invalid_include_payload"), (.GET, "?include_payload=1", "invalid_include_payload"),
            ] + ["abc", "0", "-1", "1.5", "%2B1", "99999999999999999999", "9223372036854775808", "1e3", "%20"].flatMap { id in
                [(HTTPMethod.POST, "/\(id)/retry", "invalid_id"), (.DELETE, "/\(id)", "invalid_id")]
            }
            for (method, suffix, code) in bad {
                let reply = try await service.request(method, "\(service.base)\(PipelineAdminRoutes.deadLettersPath)\(suffix)", as: nil, headers: console)
                #expect(reply.status == 400 && reply.code == code, "\(method) \(suffix): \(reply.status) \(reply.body)")
            }
            for (method, path) in [(HTTPMethod.POST, "/9223372036854775807/retry"), (.DELETE, "/9223372036854775807"), (.POST, "/7/retry")] {
                let reply = try await service.request(method, "\(service.base)\(PipelineAdminRoutes.deadLettersPath)\(path)", as: nil, headers: console)
                #expect(reply.status == 404 && reply.code == "dead_letter_not_found", "\(method) \(path): \(reply.status) \(reply.body)")
            }
            #expect(try await deadLetters(service, "?stage=consume&limit=500&include_payload=true").isEmpty)

            // A service that consumes nothing, with an empty outbox: nothing pending, no oldest, no lag.
            let pipeline = try await service.request(.GET, "\(service.base)\(PipelineAdminRoutes.pipelinePath)", as: nil, headers: console)
            #expect(pipeline.status == 200)
            #expect(pipeline.body == [
                "service": .string("habits"), "outbox": .object(["pending": .number(0)]), "dead_letters": .object(["publish": .number(0), "consume": .number(0)]),
                "consumers": .array([]), "broker": .string("ok"), "database": .string("ok"),
            ], "\(pipeline.body)")

            // Every documented operation is routed (a method the document does not list is 405).
            for operation in try PipelineAdminRoutes.document.operations().sorted() {
                let reply = try await service.request(HTTPMethod(rawValue: operation.method), "\(service.base)\(operation.path.replacingOccurrences(of: "{id}", with: "1").replacingOccurrences(of: "{user_id}", with: UUID().lowercased).replacingOccurrences(of: "{object_type}", with: "note").replacingOccurrences(of: "{object_id}", with: UUID().lowercased))",
                                                      as: nil, headers: console)
                #expect(reply.status < 500 && reply.code != "route_not_found" && reply.code != "method_not_allowed", "\(operation): \(reply.status) \(reply.body)")
            }
            let wrongMethod = try await service.request(.GET, "\(service.base)\(PipelineAdminRoutes.deadLettersPath)/1", as: nil, headers: console)
            #expect(wrongMethod.status == 405 && wrongMethod.headers.first(name: "Allow") == "DELETE")

            // A replica without COLONY_CONSOLE_KEY refuses the console.
            try await withRunningTwin(of: service, .habits, configure: { $0.consoleKey = nil }, definition: { _ in pingsDefinition() }) { twin in
                for (method, path) in operations {
                    let reply = try await twin.request(method, "\(twin.base)\(path)", as: nil, headers: console)
                    #expect(reply.status == 401 && reply.code == "invalid_console_credential", "\(method) \(path) without a console key: \(reply.status)")
                }
            }
        }
    }

    @Test("the routes registered are exactly the document's operations, and each answers the errors every route can give")
    func documentMatchesRoutes() throws {
        let router = Router(context: ColonyRequestContext.self)
        let database = Database(configuration: DatabaseConfiguration(host: "127.0.0.1", port: 5432, database: "colony", user: "none", password: "none", schema: "habits"),
                                logger: TestEnvironment.logger)
        PipelineAdminRoutes.add(to: router, service: .habits, key: consoleKey, database: database, brokerReachable: { true }, consumerLag: ConsumerLagSource())
        // The stats route (`StatsAdminRoutes`) is in the same document: the console's, for every service.
        StatsAdminRoutes.add(to: router, service: .habits, key: consoleKey, database: database, stats: [])
        // And the holdings route (`HoldingsAdminRoutes`).
        HoldingsAdminRoutes.add(to: router, service: .habits, key: consoleKey, database: database, holdings: [])
        // And, on the domain services, the moderation routes (`ModerationAdminRoutes`).
        ModerationAdminRoutes.add(to: router, service: .habits, key: consoleKey, database: database,
                                  desk: ReportDesk(app: .habithive, content: ReportDeskTests.Notes(), quota: Quota(1, perSeconds: 1), logger: TestEnvironment.logger))
        let registered = Set(router.routes.map { RouteKey(method: $0.method.rawValue, path: "/" + $0.path.description.split(separator: "/").joined(separator: "/")) })
        let document = PipelineAdminRoutes.document
        let documented = try document.operations()
        #expect(registered == documented, "registered \(registered.sorted()), documented \(documented.sorted())")
        #expect(documented.count == 9)

        struct Document: Decodable { let openapi: String; let paths: [String: [String: JSONValue]] }
        let parsed = try JSONDecoder().decode(Document.self, from: Data(document.json.utf8))
        #expect(parsed.openapi == "3.1.0")
        for (path, item) in parsed.paths {
            for (method, operation) in item {
                let statuses = Set(operation["responses"]?.objectValue?.keys.map { $0 } ?? [])
                #expect(statuses.isSuperset(of: ["400", "401", "422", "503"]), "\(method) \(path): \(statuses.sorted())")
                #expect(path.hasPrefix(PipelineAdminRoutes.prefix + "/"))
            }
        }
    }
}
