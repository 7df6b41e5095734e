import Foundation
import Logging
import Synchronization
import Tracing

/// A W3C trace context (https://www.w3.org/TR/trace-context/): the trace a piece of work belongs
/// to and the span that caused it, as the `traceparent` header carries them
/// (`00-<32 hex trace id>-<16 hex parent id>-<2 hex flags>`).
public struct TraceParent: Sendable, Hashable, CustomStringConvertible {
    public var traceID: String
    public var spanID: String
    public var sampled: Bool

    public init(traceID: String, spanID: String, sampled: Bool = true) {
        self.traceID = traceID
        self.spanID = spanID
        self.sampled = sampled
    }

    /// Parses a `traceparent` header value; nil when it is not one (version 00, lowercase hex,
    /// no all-zero ids).
    public init?(header: String) {
        let parts = header.trimmingCharacters(in: .whitespaces).split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count >= 4, parts[0].count == 2, parts[0] != "ff", parts[1].count == 32, parts[2].count == 16, parts[3].count == 2,
              parts[0...3].allSatisfy({ $0.allSatisfy(\.isHexDigit) && $0 == $0.lowercased() }),
              parts[1] != String(repeating: "0", count: 32), parts[2] != String(repeating: "0", count: 16),
              let flags = UInt8(parts[3], radix: 16) else { return nil }
        if parts[0] == "00" && parts.count != 4 { return nil }
        self.init(traceID: String(parts[1]), spanID: String(parts[2]), sampled: flags & 1 == 1)
    }

    /// The `traceparent` header value.
    public var description: String { "00-\(traceID)-\(spanID)-\(sampled ? "01" : "00")" }

    /// The current span's, if any: what work queued for later (an outbox row, a push) keeps so
    /// that the work, when done, joins the same trace.
    public static var current: TraceParent? { InstrumentationContext.current?.traceParent }

    /// Runs `body` in a span of the trace `parent` names (a new trace without one), for work
    /// picked up later from a queue.
    public static func withSpan<Value: Sendable>(_ name: String, parent: TraceParent?, ofKind kind: SpanKind = .internal,
                                                 _ body: () async throws -> Value) async rethrows -> Value {
        var context = InstrumentationContext.topLevel
        if let parent { InstrumentationSystem.instrument.extract(["traceparent": parent.description], into: &context, using: DictionaryCarrier()) }
        return try await Tracing.withSpan(name, context: context, ofKind: kind) { _ in try await body() }
    }

    /// A new trace's root.
    public static func random() -> TraceParent {
        TraceParent(traceID: randomHex(bytes: 16), spanID: randomHex(bytes: 8))
    }

    /// A child of this span: the same trace, a new span id.
    public func child() -> TraceParent {
        TraceParent(traceID: traceID, spanID: Self.randomHex(bytes: 8), sampled: sampled)
    }

    static func randomHex(bytes: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        var text = ""
        repeat {
            text = (0..<bytes).map { _ in
                let byte = UInt8.random(in: 0...255, using: &generator)
                return (byte < 16 ? "0" : "") + String(byte, radix: 16)
            }.joined()
        } while text.allSatisfy { $0 == "0" }
        return text
    }
}

extension InstrumentationContext {
    /// The current span's trace context (set by the tracer's spans, or extracted from a carrier).
    public var traceParent: TraceParent? {
        get { self[TraceParentKey.self] }
        set { self[TraceParentKey.self] = newValue }
    }
}

private enum TraceParentKey: InstrumentationContextKey {
    typealias Value = TraceParent
    static let nameOverride: String? = "traceparent"
}

/// Colony's tracer: W3C trace context in and out (`traceparent` on HTTP requests, Kafka messages,
/// outbox rows and queued pushes), a span id per unit of work, and the ids in every log line
/// written inside it (`Logger.MetadataProvider.colonyTrace`). It records nothing itself: an
/// OpenTelemetry exporter would take its place where a collector runs (InstrumentationSystem is
/// the one switch), with the same header.
public struct ColonyTracer: Tracer {
    public typealias Span = ColonySpan

    public init() {}

    public func startSpan<Instant: TracerInstant>(
        _ operationName: String, context: @autoclosure () -> InstrumentationContext, ofKind kind: SpanKind, at instant: @autoclosure () -> Instant,
        function: String, file fileID: String, line: UInt
    ) -> ColonySpan {
        var context = context()
        context.traceParent = context.traceParent?.child() ?? .random()
        return ColonySpan(operationName: operationName, context: context)
    }

    public func activeSpan(identifiedBy context: InstrumentationContext) -> ColonySpan? { nil }

    public func forceFlush() {}

    public func extract<Carrier, Extract>(_ carrier: Carrier, into context: inout InstrumentationContext, using extractor: Extract)
    where Extract: Extractor, Extract.Carrier == Carrier {
        if let header = extractor.extract(key: "traceparent", from: carrier), let parent = TraceParent(header: header) {
            context.traceParent = parent
        }
    }

    public func inject<Carrier, Inject>(_ context: InstrumentationContext, into carrier: inout Carrier, using injector: Inject)
    where Inject: Injector, Inject.Carrier == Carrier {
        if let parent = context.traceParent {
            injector.inject(parent.description, forKey: "traceparent", into: &carrier)
        }
    }
}

/// A span of `ColonyTracer`: its context (with its trace parent), a name and attributes, held
/// only while it runs.
public final class ColonySpan: Tracing.Span {
    public let context: InstrumentationContext
    private let state: Mutex<(name: String, attributes: SpanAttributes, ended: Bool)>

    init(operationName: String, context: InstrumentationContext) {
        self.context = context
        self.state = Mutex((operationName, [:], false))
    }

    public var operationName: String {
        get { state.withLock { $0.name } }
        set { state.withLock { $0.name = newValue } }
    }

    public var attributes: SpanAttributes {
        get { state.withLock { $0.attributes } }
        set { state.withLock { $0.attributes = newValue } }
    }

    public var isRecording: Bool { state.withLock { !$0.ended } }

    public func setStatus(_ status: SpanStatus) {}
    public func addEvent(_ event: SpanEvent) {}
    public func recordError<Instant: TracerInstant>(_ error: any Error, attributes: SpanAttributes, at instant: @autoclosure () -> Instant) {}
    public func addLink(_ link: SpanLink) {}

    public func end<Instant: TracerInstant>(at instant: @autoclosure () -> Instant) {
        state.withLock { $0.ended = true }
    }
}

extension Logger.MetadataProvider {
    /// `trace_id` and `span_id` of the span the log line is written in.
    public static let colonyTrace = Logger.MetadataProvider {
        guard let parent = InstrumentationContext.current?.traceParent else { return [:] }
        return ["trace_id": .string(parent.traceID), "span_id": .string(parent.spanID)]
    }
}

/// `traceparent` in and out of string dictionaries (Kafka headers, outbox columns).
public struct DictionaryCarrier: Extractor, Injector {
    public typealias Carrier = [String: String]
    public init() {}
    public func extract(key: String, from carrier: [String: String]) -> String? { carrier[key] }
    public func inject(_ value: String, forKey key: String, into carrier: inout [String: String]) { carrier[key] = value }
}
