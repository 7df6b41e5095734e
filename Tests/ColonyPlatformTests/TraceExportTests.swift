import AsyncHTTPClient
import ColonyModels
import ColonyPlatform
import ColonyTesting
import Foundation
import Hummingbird
import NIOCore
import Synchronization
import Testing

/// Traces leave the process over OTLP/HTTP: the services run as their own processes (the
/// executables an operator runs, so the process's one tracer is bootstrapped as in production),
/// with `OTEL_EXPORTER_OTLP_ENDPOINT` naming a receiver this test runs, as a collector would.
@Suite("Traces exported over OTLP")
struct TraceExportTests {
    @Test("a request's span reaches the collector, in the caller's trace, with the service's name and route; a shutdown flushes it")
    func requestSpanExported() async throws {
        let environment = try TestEnvironment.current()
        let tokens = TestTokens()
        try await withOTLPReceiver { receiver in
            try await withJWKSServer({ [tokens] in [tokens] }) { jwksURL in
                try await withTestSchema { database in
                    // Batches wait 10 minutes: only the shutdown's flush can send this one in time.
                    let habits = try await ServiceProcess.start("colony-habits", environment: Self.settings(
                        environment, database: database, prefix: TestKafka.topicPrefix(), jwksURL: jwksURL, receiver: receiver,
                        extra: ["OTEL_BSP_SCHEDULE_DELAY": "600000"]))
                    defer { habits.stop() }
                    let trace = TraceParent.random()
                    // A query string may carry a token (storage links, auth's verification links): it stays home.
                    let reply = try await Self.call(habits, "POST", "/habits/v1/hives?token=query-secret-0123", token: try await tokens.token(user: UUID(), app: .habithive),
                                                    json: ["name": "Stretch"], traceParent: trace)
                    #expect(reply == 201, "POST /hives answered \(reply)")
                    habits.stop()

                    let span = try await receiver.waitForSpan(timeout: .seconds(30)) { $0.traceID == trace.traceID && $0.kind == .server }
                    #expect(span.service == "colony-habits")
                    #expect(span.parentSpanID == trace.spanID, "the caller's span is the parent")
                    #expect(span.name == "/habits/v1/hives" && span.attributes["http.route"] == "/habits/v1/hives", "\(span)")
                    #expect(span.attributes["http.response.status_code"] == "201" && span.attributes["http.request.method"] == "POST", "\(span)")
                    // The trace id travels as its 16 raw bytes; the body is protobuf.
                    let traceBytes = try #require(Self.bytes(hex: trace.traceID))
                    #expect(receiver.requests.contains { $0.contentType == "application/x-protobuf" && $0.body.contains(traceBytes) })
                    #expect(span.attributes["url.path"] == "/habits/v1/hives" && span.attributes["url.query"] == nil && span.attributes["client.address"] == nil, "\(span)")
                    #expect(!receiver.requests.contains { $0.body.contains(Array("query-secret-0123".utf8)) })
                    // The request's log line names the span the collector got.
                    let logged = habits.logLines.filter { $0["message"] as? String == "request" && $0["trace_id"] as? String == trace.traceID }
                    #expect(logged.contains { $0["span_id"] as? String == span.spanID }, "\(logged)")
                }
            }
        }
    }

    @Test("an event's consumer span, in another service, is in the trace of the request that published it")
    func traceSurvivesKafkaHop() async throws {
        let environment = try TestEnvironment.current()
        let tokens = TestTokens()
        let prefix = TestKafka.topicPrefix()
        try await withOTLPReceiver { receiver in
            try await withJWKSServer({ [tokens] in [tokens] }) { jwksURL in
                try await withTestSchema { habitsDatabase in
                    try await withTestSchema { notificationsDatabase in
                        let quick = ["OTEL_BSP_SCHEDULE_DELAY": "200"]
                        let habits = try await ServiceProcess.start("colony-habits", environment: Self.settings(
                            environment, database: habitsDatabase, prefix: prefix, jwksURL: jwksURL, receiver: receiver, extra: quick))
                        defer { habits.stop() }
                        let notifications = try await ServiceProcess.start("colony-notifications", environment: Self.settings(
                            environment, database: notificationsDatabase, prefix: prefix, jwksURL: jwksURL, receiver: receiver, extra: quick))
                        defer { notifications.stop() }

                        let trace = TraceParent.random()
                        let reply = try await Self.call(habits, "POST", "/habits/v1/hives", token: try await tokens.token(user: UUID(), app: .habithive),
                                                        json: ["name": "Morning run"], traceParent: trace)
                        #expect(reply == 201, "POST /hives answered \(reply)")
                        // Exported while both run (batches every 200 ms): no shutdown needed.
                        let consumed = try await receiver.waitForSpan(timeout: .seconds(120)) {
                            $0.traceID == trace.traceID && $0.service == "colony-notifications" && $0.kind == .consumer && $0.name == "consume hive_created"
                        }
                        let published = receiver.spans.filter { $0.traceID == trace.traceID && $0.service == "colony-habits" }
                        #expect(published.contains { $0.spanID == consumed.parentSpanID },
                                "the consumer's parent is a span habits exported in the trace: \(consumed) / \(published)")
                    }
                }
            }
        }
    }

    static func settings(_ environment: TestEnvironment, database: DatabaseConfiguration, prefix: String, jwksURL: URL, receiver: OTLPReceiver,
                         extra: [String: String]) -> [String: String] {
        ["COLONY_PG_HOST": environment.postgresHost, "COLONY_PG_PORT": "\(environment.postgresPort)",
         "COLONY_PG_DATABASE": environment.postgresDatabase, "COLONY_PG_USER": database.user,
         "COLONY_PG_PASSWORD": database.password, "COLONY_PG_SCHEMA": database.schema,
         "COLONY_KAFKA_BROKERS": environment.kafkaBrokers, "COLONY_TOPIC_PREFIX": prefix,
         "COLONY_JWKS_URL": jwksURL.absoluteString, "COLONY_LOG_FORMAT": "json", "LOG_LEVEL": "info",
         "COLONY_HABITS_PHONE_PEPPER": "otel-test-pepper-\(UUID().uuidString)-\(UUID().uuidString)",
         // Habits and notifications write their parts of data exports there (none in these tests).
         "COLONY_STORAGE_PATH": FileManager.default.temporaryDirectory.appendingPathComponent(uniqueName("colony-otel-storage")).path,
         "COLONY_STORAGE_SIGNING_KEY": "otel-test-signing-key-0123456789abcdef",
         "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint]
            .merging(extra) { $1 }
    }

    static func call(_ service: ServiceProcess, _ method: String, _ path: String, token: String, json: [String: Any], traceParent: TraceParent) async throws -> Int {
        var request = HTTPClientRequest(url: service.base + path)
        request.method = .init(rawValue: method)
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        request.headers.add(name: "Content-Type", value: "application/json")
        request.headers.add(name: "traceparent", value: traceParent.description)
        request.body = .bytes(ByteBuffer(data: try JSONSerialization.data(withJSONObject: json)))
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(60))
        _ = try await response.body.collect(upTo: 1 << 20)
        return Int(response.status.code)
    }

    static func bytes(hex: String) -> [UInt8]? {
        let digits = Array(hex.utf8)
        guard digits.count % 2 == 0 else { return nil }
        return stride(from: 0, to: digits.count, by: 2).compactMap { UInt8(String(decoding: digits[$0..<$0 + 2], as: UTF8.self), radix: 16) }
    }
}

/// An OTLP/HTTP receiver, as a collector runs one: `POST /v1/traces` with protobuf bodies,
/// each kept for the test to read.
final class OTLPReceiver: Sendable {
    struct Request: Sendable {
        var contentType: String?
        var body: [UInt8]
    }

    let port: Int
    private let received = Mutex<[Request]>([])

    init(port: Int) {
        self.port = port
    }

    /// What a service's `OTEL_EXPORTER_OTLP_ENDPOINT` names (the exporter adds `/v1/traces`).
    var endpoint: String { "http://127.0.0.1:\(port)" }

    var requests: [Request] { received.withLock { $0 } }

    /// Every span of every request received.
    var spans: [ExportedSpan] { requests.flatMap { ExportedSpan.decode($0.body) } }

    func record(_ request: Request) {
        received.withLock { $0.append(request) }
    }

    /// The first span `matches` accepts, once the receiver has it.
    func waitForSpan(timeout: Duration, _ matches: (ExportedSpan) -> Bool) async throws -> ExportedSpan {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let span = spans.first(where: matches) { return span }
            try await Task.sleep(for: .milliseconds(200))
        }
        throw TestSetupError("no matching span within \(timeout); received \(requests.count) requests with spans \(spans)")
    }
}

func withOTLPReceiver<Result: Sendable>(_ body: (OTLPReceiver) async throws -> Result) async throws -> Result {
    let receiver = OTLPReceiver(port: try freePort())
    let router = Router()
    router.post("/v1/traces") { request, _ -> Response in
        let bytes = try await request.body.collect(upTo: 16 << 20)
        receiver.record(.init(contentType: request.headers[.contentType], body: Array(buffer: bytes)))
        // An empty ExportTraceServiceResponse: full success.
        return Response(status: .ok, headers: [.contentType: "application/x-protobuf"], body: .init(byteBuffer: ByteBuffer()))
    }
    let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: receiver.port)), logger: TestEnvironment.logger)
    return try await withTestServer(app) {
        try await waitUntil(timeout: .seconds(30)) { canConnect(port: receiver.port) }
        return try await body(receiver)
    }
}

/// One span of an OTLP `ExportTraceServiceRequest`, read from the protobuf wire format
/// (opentelemetry-proto: resource_spans = 1 { resource = 1 { attributes = 1 }, scope_spans = 2
/// { spans = 2 { trace_id = 1, span_id = 2, parent_span_id = 4, name = 5, kind = 6, attributes = 9 } } }).
struct ExportedSpan: Sendable, CustomStringConvertible {
    enum Kind: UInt64, Sendable {
        case unspecified = 0, `internal`, server, client, producer, consumer
    }

    var service: String?
    var traceID: String
    var spanID: String
    var parentSpanID: String
    var name: String
    var kind: Kind?
    var attributes: [String: String]

    var description: String { "\(service ?? "?") \(kind.map { "\($0)" } ?? "?") \"\(name)\" \(traceID)/\(spanID)<-\(parentSpanID) \(attributes)" }

    static func decode(_ body: [UInt8]) -> [ExportedSpan] {
        var spans: [ExportedSpan] = []
        for resourceSpans in Protobuf.messages(1, in: body[...]) {
            let service = Protobuf.messages(1, in: resourceSpans).first.map { attributes(Protobuf.messages(1, in: $0)) }?["service.name"]
            for scopeSpans in Protobuf.messages(2, in: resourceSpans) {
                for span in Protobuf.messages(2, in: scopeSpans) {
                    let fields = Protobuf.fields(span) ?? []
                    func bytes(_ number: Int) -> ArraySlice<UInt8> {
                        for field in fields where field.number == number { if case .bytes(let value) = field.value { return value } }
                        return []
                    }
                    var kind: Kind?
                    for field in fields where field.number == 6 { if case .varint(let value) = field.value { kind = Kind(rawValue: value) } }
                    spans.append(ExportedSpan(service: service, traceID: hex(bytes(1)), spanID: hex(bytes(2)), parentSpanID: hex(bytes(4)),
                                              name: String(decoding: bytes(5), as: UTF8.self), kind: kind, attributes: attributes(Protobuf.messages(9, in: span))))
                }
            }
        }
        return spans
    }

    /// KeyValue { key = 1, value = 2: AnyValue { string_value = 1, bool_value = 2, int_value = 3 } }.
    static func attributes(_ keyValues: [ArraySlice<UInt8>]) -> [String: String] {
        var attributes: [String: String] = [:]
        for keyValue in keyValues {
            guard let key = Protobuf.messages(1, in: keyValue).first, let value = Protobuf.messages(2, in: keyValue).first,
                  let field = Protobuf.fields(value)?.first else { continue }
            switch (field.number, field.value) {
            case (1, .bytes(let text)): attributes[String(decoding: key, as: UTF8.self)] = String(decoding: text, as: UTF8.self)
            case (2, .varint(let flag)): attributes[String(decoding: key, as: UTF8.self)] = flag == 0 ? "false" : "true"
            case (3, .varint(let number)): attributes[String(decoding: key, as: UTF8.self)] = String(Int64(bitPattern: number))
            default: continue
            }
        }
        return attributes
    }

    static func hex(_ bytes: ArraySlice<UInt8>) -> String {
        bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }
}

/// Protocol Buffers' wire format (https://protobuf.dev/programming-guides/encoding/), as much as
/// reading OTLP takes.
enum Protobuf {
    enum Value {
        case varint(UInt64)
        case fixed64
        case bytes(ArraySlice<UInt8>)
        case fixed32
    }

    /// A message's fields in order; nil when it is not well formed.
    static func fields(_ data: ArraySlice<UInt8>) -> [(number: Int, value: Value)]? {
        var index = data.startIndex
        func varint() -> UInt64? {
            var result: UInt64 = 0
            var shift: UInt64 = 0
            while index < data.endIndex, shift < 64 {
                let byte = data[index]
                index += 1
                result |= UInt64(byte & 0x7f) << shift
                if byte & 0x80 == 0 { return result }
                shift += 7
            }
            return nil
        }
        var fields: [(number: Int, value: Value)] = []
        while index < data.endIndex {
            guard let key = varint() else { return nil }
            let number = Int(key >> 3)
            switch key & 7 {
            case 0:
                guard let value = varint() else { return nil }
                fields.append((number, .varint(value)))
            case 1:
                guard data.endIndex - index >= 8 else { return nil }
                index += 8
                fields.append((number, .fixed64))
            case 2:
                guard let length = varint(), length <= UInt64(data.endIndex - index) else { return nil }
                let end = index + Int(length)
                fields.append((number, .bytes(data[index..<end])))
                index = end
            case 5:
                guard data.endIndex - index >= 4 else { return nil }
                index += 4
                fields.append((number, .fixed32))
            default:
                return nil
            }
        }
        return fields
    }

    /// The length-delimited fields numbered `number` (embedded messages, strings, bytes).
    static func messages(_ number: Int, in data: ArraySlice<UInt8>) -> [ArraySlice<UInt8>] {
        (fields(data) ?? []).compactMap { field in
            guard field.number == number, case .bytes(let value) = field.value else { return nil }
            return value
        }
    }
}
