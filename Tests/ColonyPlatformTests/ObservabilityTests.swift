import ColonyTesting
@testable import ColonyPlatform
import Foundation
import Logging
import OTel
import Synchronization
import Testing
import Tracing

@Suite("Logs and traces")
struct ObservabilityTests {
    @Test("a JSON log line: one object, ISO 8601 UTC with milliseconds, level, service, message, escaped metadata, nested values")
    func jsonLine() throws {
        let date = Date(timeIntervalSince1970: 1_795_000_000.123)
        let line = JSONLogHandler.line(date: date, level: .warning, service: "circles", label: "colony.circles", message: "quote \" and\nnewline",
                                       metadata: ["request_id": "r1", "user_id": .stringConvertible(42), "tags": ["a", "b"], "nested": ["k": "v"], "message": "shadow"])
        #expect(line.hasSuffix("}\n") && line.filter { $0 == "\n" }.count == 1)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(object["timestamp"] as? String == "2026-11-18T11:06:40.123Z")
        #expect(object["level"] as? String == "warning" && object["service"] as? String == "circles" && object["logger"] as? String == "colony.circles")
        #expect(object["message"] as? String == "quote \" and\nnewline", "metadata cannot shadow the reserved keys")
        #expect(object["request_id"] as? String == "r1" && object["user_id"] as? String == "42")
        #expect(object["tags"] as? [String] == ["a", "b"] && (object["nested"] as? [String: String]) == ["k": "v"])
    }

    @Test("traceparent: parsed, refused when malformed, printed back; random ones are well formed")
    func traceParent() throws {
        let parent = try #require(TraceParent(header: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"))
        #expect(parent.traceID == "4bf92f3577b34da6a3ce929d0e0e4736" && parent.spanID == "00f067aa0ba902b7" && parent.sampled)
        #expect(parent.description == "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
        for bad in ["", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7", "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
                    "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01", "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
                    "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
                    "00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0x"] {
            #expect(TraceParent(header: bad) == nil, "\(bad)")
        }
        // A later version's extra fields are ignored; it is passed on as version 00.
        #expect(TraceParent(header: "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00-later")?.description
                == "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00")
        let root = TraceParent.random()
        #expect(root.traceID.count == 32 && root.spanID.count == 16 && TraceParent(header: root.description) == root)
    }

    @Test("the tracer takes a caller's trace, gives each span its own id in it and writes it back out; with no collector nothing is recorded")
    func tracerPropagates() throws {
        let (tracer, warnings) = try Self.tracer()
        var context = InstrumentationContext.topLevel
        tracer.extract(["traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "tracestate": "colony=1,vendor@system=a b"],
                       into: &context, using: DictionaryCarrier())
        let span = tracer.startSpan("work", context: context, ofKind: .internal, at: DefaultTracerClock.now, function: #function, file: #fileID, line: #line)
        defer { span.end() }
        #expect(span.context.traceID == "4bf92f3577b34da6a3ce929d0e0e4736")
        #expect(!span.isRecording, "no endpoint: spans are dropped, ids kept")
        var carrier: [String: String] = [:]
        tracer.inject(span.context, into: &carrier, using: DictionaryCarrier())
        let out = try #require(carrier["traceparent"].flatMap(TraceParent.init(header:)))
        #expect(out.traceID == "4bf92f3577b34da6a3ce929d0e0e4736" && out.spanID != "00f067aa0ba902b7" && !out.sampled)
        #expect(carrier["tracestate"] == "colony=1, vendor@system=a b", "the caller's vendor state travels on")

        let fresh = tracer.startSpan("root", context: .topLevel, ofKind: .server, at: DefaultTracerClock.now, function: #function, file: #fileID, line: #line)
        defer { fresh.end() }
        #expect(fresh.context.traceID != nil && fresh.context.traceID != "4bf92f3577b34da6a3ce929d0e0e4736")
        #expect(warnings.problems.isEmpty, "\(warnings.problems)")
    }

    @Test("a malformed traceparent starts a trace of its own and a malformed tracestate is dropped, neither logging the caller's headers")
    func malformedTraceContext() throws {
        let (tracer, diagnostics) = try Self.tracer()
        for header in ["00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01", "garbage", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-x", String(repeating: "0", count: 55)] {
            var context = InstrumentationContext.topLevel
            tracer.extract(["traceparent": header, "authorization": "Bearer secret-token"], into: &context, using: DictionaryCarrier())
            #expect(context.traceID == nil, "\(header)")
        }
        for state in ["UPPER=1", "a=1,,b=2", " a=1", "a=1 ", "a=b=c", "a=\u{7f}", String(repeating: "a=1,", count: 33) + "a=1", "k=" + String(repeating: "v", count: 257)] {
            var context = InstrumentationContext.topLevel
            tracer.extract(["traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "tracestate": state, "authorization": "Bearer secret-token"],
                           into: &context, using: DictionaryCarrier())
            #expect(context.traceID == "4bf92f3577b34da6a3ce929d0e0e4736", "\(state)")
            var carrier: [String: String] = [:]
            tracer.inject(context, into: &carrier, using: DictionaryCarrier())
            #expect(carrier["tracestate"] == nil, "\(state)")
        }
        #expect(!diagnostics.lines.contains { $0.contains("secret-token") }, "\(diagnostics.lines)")
        #expect(diagnostics.problems.isEmpty, "\(diagnostics.problems)")
    }

    @Test("log lines in a span carry its trace_id and span_id, and nothing else of the trace")
    func logMetadata() throws {
        let (tracer, _) = try Self.tracer()
        var context = InstrumentationContext.topLevel
        tracer.extract(["traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"], into: &context, using: DictionaryCarrier())
        #expect(Logger.MetadataProvider.colonyTrace.get().isEmpty, "no span, no ids")
        tracer.withSpan("work", context: context) { span in
            let metadata = Logger.MetadataProvider.colonyTrace.get()
            #expect(Set(metadata.keys) == ["trace_id", "span_id"])
            #expect(metadata["trace_id"] == "4bf92f3577b34da6a3ce929d0e0e4736")
            #expect(metadata["span_id"].map { "\($0)" } == InstrumentationContext.current.flatMap { Self.spanID(tracer, $0) })
        }
    }

    @Test("trace export settings: the endpoint, the service name, and values swift-otel would stop the process on refused")
    func exportSettings() throws {
        let none = try TraceExport(service: "habits", environment: [:])
        #expect(none.endpointVariable == nil && none.serviceName == "colony-habits" && !none.disabled)
        let named = try TraceExport(service: "habits", environment: ["OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318", "OTEL_SERVICE_NAME": "habits-eu"])
        #expect(named.endpointVariable == "OTEL_EXPORTER_OTLP_ENDPOINT" && named.serviceName == "habits-eu")
        let traces = try TraceExport(service: "chat", environment: ["OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318",
                                                                    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "https://collector:4318/v1/traces"])
        #expect(traces.endpointVariable == "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
        #expect(try TraceExport(service: "chat", environment: ["OTEL_EXPORTER_OTLP_ENDPOINT": " "]).endpointVariable == nil, "blank is unset")
        #expect(try TraceExport(service: "chat", environment: ["OTEL_SDK_DISABLED": "true"]).disabled)
        #expect(try TraceExport(service: "chat", environment: ["OTEL_PROPAGATORS": "tracecontext", "OTEL_TRACES_SAMPLER": "parentbased_traceidratio",
                                                               "OTEL_TRACES_SAMPLER_ARG": "0.25", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf"]).endpointVariable == nil)
        for (name, value) in [("OTEL_EXPORTER_OTLP_ENDPOINT", "collector:4318"), ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "grpc://collector:4317"),
                              ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"), ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "grpc"),
                              ("OTEL_TRACES_SAMPLER", "jaeger_remote"), ("OTEL_TRACES_SAMPLER", "xray"), ("OTEL_TRACES_EXPORTER", "zipkin"),
                              ("OTEL_PROPAGATORS", "tracecontext,baggage"), ("OTEL_PROPAGATORS", "b3"), ("OTEL_PROPAGATORS", "none")] {
            #expect(throws: ConfigurationError.self, "\(name)=\(value)") { try TraceExport(service: "chat", environment: [name: value]) }
            do {
                _ = try TraceExport(service: "chat", environment: [name: value])
            } catch {
                #expect(error.variable == name)
            }
        }
    }

    /// swift-otel's tracer as `ColonyObservability.bootstrap` makes it without a collector (not
    /// bootstrapped: the test process has no tracer of its own), its diagnostics recorded.
    static func tracer() throws -> (tracer: ColonyTracer<some Tracer>, diagnostics: RecordedLines) {
        let diagnostics = RecordedLines()
        var configuration = try TraceExport(service: "test", environment: [:]).configuration()
        configuration.diagnosticLogger = .custom(Logger(label: "colony.otel") { label in
            JSONLogHandler(label: label, service: "test", level: .trace, metadataProvider: nil, output: JSONLogOutput { diagnostics.append($0) })
        })
        let backend = try OTel.makeTracingBackend(configuration: configuration)
        return (ColonyTracer(wrapping: backend.factory), diagnostics)
    }

    static func spanID(_ tracer: some Tracer, _ context: InstrumentationContext) -> String? {
        var carrier: [String: String] = [:]
        tracer.inject(context, into: &carrier, using: DictionaryCarrier())
        return carrier["traceparent"].flatMap(TraceParent.init(header:))?.spanID
    }
}

final class RecordedLines: Sendable {
    private let recorded = Mutex<[String]>([])
    var lines: [String] { recorded.withLock { $0 } }
    /// The warnings and errors.
    var problems: [String] { lines.filter { $0.contains(#""level":"warning""#) || $0.contains(#""level":"error""#) } }
    func append(_ line: String) { recorded.withLock { $0.append(line) } }
}
