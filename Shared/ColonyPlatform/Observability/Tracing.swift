import Foundation
import Logging
import OTel
import Tracing

/// A W3C trace context (https://www.w3.org/TR/trace-context/): the trace a piece of work belongs
/// to and the span that caused it, as the `traceparent` header carries them
/// (`00-<32 hex trace id>-<16 hex parent id>-<2 hex flags>`). What work queued for later (an
/// outbox row, a push) keeps so that, when done, it joins the same trace.
public struct TraceParent: Sendable, Hashable, CustomStringConvertible {
    public var traceID: String
    public var spanID: String
    public var sampled: Bool

    public init(traceID: String, spanID: String, sampled: Bool = true) {
        self.traceID = traceID
        self.spanID = spanID
        self.sampled = sampled
    }

    /// Parses a `traceparent` header value; nil when it is not one (lowercase hex, no all-zero
    /// ids; a later version's extra fields are ignored, as the specification asks).
    public init?(header: String) {
        if Self.isCanonical(header) {
            // The usual form, checked byte by byte; only the two ids are copied out.
            let bytes = Array(header.utf8)
            self.init(traceID: String(decoding: bytes[3..<35], as: UTF8.self), spanID: String(decoding: bytes[36..<52], as: UTF8.self),
                      sampled: Self.hexValue(bytes[54]) & 1 == 1)
            return
        }
        let parts = header.trimmingCharacters(in: .whitespaces).split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count >= 4, parts[0].count == 2, parts[0] != "ff", parts[1].count == 32, parts[2].count == 16, parts[3].count == 2,
              parts[0...3].allSatisfy({ $0.utf8.allSatisfy(Self.isLowercaseHex) }),
              parts[1].utf8.contains(where: { $0 != UInt8(ascii: "0") }), parts[2].utf8.contains(where: { $0 != UInt8(ascii: "0") }),
              let flags = UInt8(parts[3], radix: 16) else { return nil }
        if parts[0] == "00" && parts.count != 4 { return nil }
        self.init(traceID: String(parts[1]), spanID: String(parts[2]), sampled: flags & 1 == 1)
    }

    /// Whether `header` is a version-00 `traceparent` exactly as the specification writes one
    /// (55 bytes, lowercase hex, no all-zero id): what nearly every caller sends, checked
    /// without parsing.
    static func isCanonical(_ header: String) -> Bool {
        guard header.utf8.count == 55 else { return false }
        return header.utf8.withContiguousStorageIfAvailable { bytes in
            let dash = UInt8(ascii: "-"), zero = UInt8(ascii: "0")
            guard bytes[0] == zero, bytes[1] == zero, bytes[2] == dash, bytes[35] == dash, bytes[52] == dash,
                  isLowercaseHex(bytes[53]), isLowercaseHex(bytes[54]) else { return false }
            var traceIDSet = false, spanIDSet = false
            for index in 3..<35 {
                guard isLowercaseHex(bytes[index]) else { return false }
                traceIDSet = traceIDSet || bytes[index] != zero
            }
            for index in 36..<52 {
                guard isLowercaseHex(bytes[index]) else { return false }
                spanIDSet = spanIDSet || bytes[index] != zero
            }
            return traceIDSet && spanIDSet
        } ?? false
    }

    private static func isLowercaseHex(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8 {
        byte <= UInt8(ascii: "9") ? byte &- UInt8(ascii: "0") : byte &- UInt8(ascii: "a") &+ 10
    }

    /// The `traceparent` header value (version 00).
    public var description: String { "00-\(traceID)-\(spanID)-\(sampled ? "01" : "00")" }

    /// The current span's, if any.
    public static var current: TraceParent? { InstrumentationContext.current?.traceParent }

    /// Runs `body` in a span of the trace `parent` names (a new trace without one), for work
    /// picked up later from a queue.
    public static func withSpan<Value: Sendable>(_ name: String, parent: TraceParent?, ofKind kind: SpanKind = .internal,
                                                 _ body: () async throws -> Value) async rethrows -> Value {
        var context = InstrumentationContext.topLevel
        if let parent { InstrumentationSystem.instrument.extract(["traceparent": parent.description], into: &context, using: DictionaryCarrier()) }
        return try await Tracing.withSpan(name, context: context, ofKind: kind) { _ in try await body() }
    }

    /// A new trace's root (a test's or a caller's own).
    public static func random() -> TraceParent {
        var generator = SystemRandomNumberGenerator()
        return TraceParent(traceID: randomHex(bytes: 16, using: &generator), spanID: randomHex(bytes: 8, using: &generator))
    }

    static func randomHex(bytes: Int, using generator: inout some RandomNumberGenerator) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8]
        repeat {
            text = (0..<bytes).flatMap { _ in
                let byte = UInt8.random(in: 0...255, using: &generator)
                return [digits[Int(byte >> 4)], digits[Int(byte & 0x0f)]]
            }
        } while text.allSatisfy { $0 == UInt8(ascii: "0") }
        return String(decoding: text, as: UTF8.self)
    }
}

extension InstrumentationContext {
    /// This context's trace context, as the process's tracer would send it on (nil without a
    /// span, or without a tracer).
    public var traceParent: TraceParent? {
        var carrier: [String: String] = [:]
        InstrumentationSystem.instrument.inject(self, into: &carrier, using: DictionaryCarrier())
        return carrier["traceparent"].flatMap(TraceParent.init(header:))
    }

    /// This context's trace id, read without writing a header (once per request, for its log).
    public var traceID: String? { otelTraceID }
}

/// The process's tracer: swift-otel's (`ColonyObservability.bootstrap` makes it), with the
/// trace context a caller sends checked first. swift-otel refuses a malformed `traceparent` or
/// `tracestate` by logging the whole carrier (an HTTP request's headers, its Authorization
/// included) as a warning; here such a `traceparent` is ignored (the work starts a trace of its
/// own) and such a `tracestate` dropped, silently, as the specification asks.
public struct ColonyTracer<Wrapped: Tracer>: Tracer {
    public typealias Span = Wrapped.Span
    let wrapped: Wrapped

    public init(wrapping wrapped: Wrapped) {
        self.wrapped = wrapped
    }

    public func startSpan<Instant: TracerInstant>(
        _ operationName: String, context: @autoclosure () -> InstrumentationContext, ofKind kind: SpanKind, at instant: @autoclosure () -> Instant,
        function: String, file fileID: String, line: UInt
    ) -> Wrapped.Span {
        wrapped.startSpan(operationName, context: context(), ofKind: kind, at: instant(), function: function, file: fileID, line: line)
    }

    public func activeSpan(identifiedBy context: InstrumentationContext) -> Wrapped.Span? {
        wrapped.activeSpan(identifiedBy: context)
    }

    @available(*, deprecated, message: "as in swift-distributed-tracing; the exporter flushes at shutdown")
    public func forceFlush() {
        wrapped.forceFlush()
    }

    public func extract<Carrier, Extract>(_ carrier: Carrier, into context: inout InstrumentationContext, using extractor: Extract)
    where Extract: Extractor, Extract.Carrier == Carrier {
        wrapped.extract(carrier, into: &context, using: CheckedTraceContextExtractor(base: extractor))
    }

    public func inject<Carrier, Inject>(_ context: InstrumentationContext, into carrier: inout Carrier, using injector: Inject)
    where Inject: Injector, Inject.Carrier == Carrier {
        wrapped.inject(context, into: &carrier, using: injector)
    }
}

/// Hands the tracer a caller's `traceparent` only when it is one (rewritten as version 00, the
/// one swift-otel reads), and its `tracestate` only when the `traceparent` is kept and the state
/// is well formed.
struct CheckedTraceContextExtractor<Base: Extractor>: Extractor {
    typealias Carrier = Base.Carrier
    let base: Base

    func extract(key: String, from carrier: Base.Carrier) -> String? {
        switch key {
        case "traceparent":
            guard let header = base.extract(key: key, from: carrier) else { return nil }
            return TraceParent.isCanonical(header) ? header : TraceParent(header: header)?.description
        case "tracestate":
            guard let state = base.extract(key: key, from: carrier), Self.isWellFormed(traceState: state),
                  let parent = base.extract(key: "traceparent", from: carrier), TraceParent(header: parent) != nil else { return nil }
            return state
        default:
            return base.extract(key: key, from: carrier)
        }
    }

    /// A `tracestate` of at most 32 `key=value` members (W3C trace-context, section 3.3): keys of
    /// `a-z 0-9 _ - * /` with an optional `@system`, values of printable ASCII without `,` or `=`.
    /// Stricter than swift-otel's reader, so that it never refuses what passes here.
    static func isWellFormed(traceState: String) -> Bool {
        guard traceState.utf8.count <= 512 else { return false }
        let members = traceState.split(separator: ",", omittingEmptySubsequences: false)
        guard (1...32).contains(members.count) else { return false }
        for (index, rawMember) in members.enumerated() {
            // Spaces are allowed only after a comma; the value keeps none at its end.
            let member = index == 0 ? rawMember[...] : rawMember.drop { $0 == " " }
            let pair = member.split(separator: "=", omittingEmptySubsequences: false)
            guard pair.count == 2 else { return false }
            let keyParts = pair[0].split(separator: "@", omittingEmptySubsequences: false)
            switch keyParts.count {
            case 1: guard (1...256).contains(keyParts[0].utf8.count) else { return false }
            case 2: guard (1...241).contains(keyParts[0].utf8.count), (1...14).contains(keyParts[1].utf8.count) else { return false }
            default: return false
            }
            guard keyParts.allSatisfy({ $0.utf8.allSatisfy(isKeyCharacter) }) else { return false }
            let value = pair[1].utf8
            guard (1...256).contains(value.count), value.last != UInt8(ascii: " "),
                  value.allSatisfy({ (0x20...0x7e).contains($0) && $0 != UInt8(ascii: ",") && $0 != UInt8(ascii: "=") }) else { return false }
        }
        return true
    }

    private static func isKeyCharacter(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
            || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "*") || byte == UInt8(ascii: "/")
    }
}

extension Logger.MetadataProvider {
    /// `trace_id` and `span_id` of the span the log line is written in (swift-otel's own
    /// provider, less its `trace_flags`, which no one reads in a log).
    public static let colonyTrace: Logger.MetadataProvider = {
        let otel = OTel.makeLoggingMetadataProvider()
        return Logger.MetadataProvider {
            var metadata = otel.get()
            metadata["trace_flags"] = nil
            return metadata
        }
    }()
}

/// `traceparent` in and out of string dictionaries (Kafka headers, outbox columns).
public struct DictionaryCarrier: Extractor, Injector {
    public typealias Carrier = [String: String]
    public init() {}
    public func extract(key: String, from carrier: [String: String]) -> String? { carrier[key] }
    public func inject(_ value: String, forKey key: String, into carrier: inout [String: String]) { carrier[key] = value }
}
