import ColonyTesting
@testable import ColonyPlatform
import Foundation
import Logging
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

    @Test("traceparent: parsed, refused when malformed, printed back; children keep the trace")
    func traceParent() throws {
        let parent = try #require(TraceParent(header: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"))
        #expect(parent.traceID == "4bf92f3577b34da6a3ce929d0e0e4736" && parent.spanID == "00f067aa0ba902b7" && parent.sampled)
        #expect(parent.description == "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
        for bad in ["", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7", "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
                    "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01", "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
                    "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra"] {
            #expect(TraceParent(header: bad) == nil, "\(bad)")
        }
        let child = parent.child()
        #expect(child.traceID == parent.traceID && child.spanID != parent.spanID && child.spanID.count == 16)
        let root = TraceParent.random()
        #expect(root.traceID.count == 32 && TraceParent(header: root.description) == root)
    }

    @Test("the tracer takes the trace from a carrier, gives each span a new id in it, and writes it back out")
    func tracerPropagates() {
        let tracer = ColonyTracer()
        var context = InstrumentationContext.topLevel
        tracer.extract(["traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"], into: &context, using: DictionaryCarrier())
        let span = tracer.startSpan("work", context: context, ofKind: .internal, at: DefaultTracerClock.now, function: #function, file: #fileID, line: #line)
        #expect(span.context.traceParent?.traceID == "4bf92f3577b34da6a3ce929d0e0e4736")
        #expect(span.context.traceParent?.spanID != "00f067aa0ba902b7")
        var carrier: [String: String] = [:]
        tracer.inject(span.context, into: &carrier, using: DictionaryCarrier())
        #expect(carrier["traceparent"] == span.context.traceParent?.description)
        let fresh = tracer.startSpan("root", context: .topLevel, ofKind: .server, at: DefaultTracerClock.now, function: #function, file: #fileID, line: #line)
        #expect(fresh.context.traceParent != nil && fresh.context.traceParent?.traceID != "4bf92f3577b34da6a3ce929d0e0e4736")
    }
}
