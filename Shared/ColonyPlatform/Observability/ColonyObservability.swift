import CoreMetrics
import Foundation
import Instrumentation
import Logging
import OTel
import Prometheus
import ServiceLifecycle
import Tracing

/// What a service process sets up once, before anything logs: JSON lines on standard output
/// (`COLONY_LOG_FORMAT=text` for swift-log's plain lines, for reading locally), at `LOG_LEVEL`,
/// librdkafka's own messages included (ColonyKafka routes them through swift-log), with the
/// current span's `trace_id` and `span_id` on every line; swift-otel's tracer as the process's
/// tracer (W3C `traceparent` in and out, spans exported over OTLP/HTTP when a collector is
/// configured: docs/observability.md); and swift-metrics backed by the Prometheus registry the
/// service's `/metrics` serves. Call it first thing in a service executable's `serve` path and
/// run the service it returns in the service's group; commands that print for people keep plain
/// text.
public enum ColonyObservability {
    public enum LogFormat: String, Sendable {
        case json, text
    }

    /// Sets up logs, traces and metrics for the process. The returned service exports finished
    /// spans (a no-op without a collector); it belongs first in the service group, so that a
    /// graceful shutdown stops it last and it flushes what the others' last work traced.
    public static func bootstrap(service: String, environment: EnvironmentReader = EnvironmentReader()) throws(ConfigurationError) -> any Service {
        let format: LogFormat = try environment.enumeration("COLONY_LOG_FORMAT", default: .json)
        let level: Logger.Level = try environment.enumeration("LOG_LEVEL", default: .info)
        switch format {
        case .json:
            LoggingSystem.bootstrap({ label, provider in
                JSONLogHandler(label: label, service: service, level: level, metadataProvider: provider)
            }, metadataProvider: .colonyTrace)
        case .text:
            LoggingSystem.bootstrap({ label, provider in
                var handler = StreamLogHandler.standardOutput(label: label, metadataProvider: provider)
                handler.logLevel = level
                return handler
            }, metadataProvider: .colonyTrace)
        }
        let tracing = try TraceExport(service: service, environment: environment.values)
        let exporter: any Service
        if tracing.disabled {
            exporter = TracingDisabled()
        } else {
            let backend: (tracer: any Tracer, service: any Service)
            do {
                // swift-otel reads the OTEL_* variables (sampler, batching, headers, timeouts) itself.
                let made = try OTel.makeTracingBackend(configuration: tracing.configuration())
                backend = (ColonyTracer(wrapping: made.factory), made.service)
            } catch {
                throw ConfigurationError(variable: tracing.endpointVariable ?? "OTEL_TRACES_EXPORTER", problem: "cannot set up the trace exporter: \(error)")
            }
            InstrumentationSystem.bootstrap(backend.tracer)
            exporter = backend.service
        }
        // swift-metrics goes to the registry `/metrics` serves, so libraries' metrics appear there too.
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: PrometheusCollectorRegistry()))
        return exporter
    }
}

extension ColonyObservability {
    /// The registry `/metrics` serves: the process's swift-metrics registry when `bootstrap` set
    /// one up, else a registry of the service's own (tests run several services in one process).
    static func metricsRegistry() -> PrometheusCollectorRegistry {
        (MetricsSystem.factory as? PrometheusMetricsFactory)?.registry ?? PrometheusCollectorRegistry()
    }
}

/// How a service exports its traces, from the standard OpenTelemetry variables. With an OTLP
/// endpoint (`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, or `OTEL_EXPORTER_OTLP_ENDPOINT` plus
/// `/v1/traces`) spans go there over OTLP/HTTP with protobuf bodies, sampled as the `OTEL_TRACES_SAMPLER`
/// variables say (parent-based, always on, by default). Without one nothing is recorded or sent:
/// each span still gets its ids, for the logs and for the `traceparent` sent on (marked not
/// sampled). Values swift-otel would stop the process on (gRPC, which is not built in, the Jaeger
/// and X-Ray samplers, propagators other than W3C trace context) are refused here as
/// configuration errors.
struct TraceExport: Sendable {
    var serviceName: String
    /// The variable that names the endpoint, nil when none does (nothing exported).
    var endpointVariable: String?
    /// `OTEL_SDK_DISABLED=true`: no tracer at all (no spans, no trace context passed on).
    var disabled: Bool

    init(service: String, environment: [String: String]) throws(ConfigurationError) {
        func value(_ name: String) -> String? {
            environment[name].map { $0.trimmingCharacters(in: .whitespaces) }.flatMap { $0.isEmpty ? nil : $0 }
        }
        serviceName = value("OTEL_SERVICE_NAME") ?? "colony-\(service)"
        disabled = value("OTEL_SDK_DISABLED")?.lowercased() == "true"
        endpointVariable = ["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT"].first { value($0) != nil }
        if let endpointVariable, let endpoint = value(endpointVariable) {
            guard let url = URL(string: endpoint), ["http", "https"].contains(url.scheme?.lowercased()), url.host?.isEmpty == false else {
                throw ConfigurationError(variable: endpointVariable, problem: "must be an http:// or https:// URL (an OTLP/HTTP receiver, port 4318 by convention), not \(endpoint)")
            }
        }
        for name in ["OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"] {
            if let wanted = value(name), !["http/protobuf", "http/json"].contains(wanted) {
                throw ConfigurationError(variable: name, problem: "must be http/protobuf or http/json (OTLP over gRPC is not built into Colony), not \(wanted)")
            }
        }
        if let sampler = value("OTEL_TRACES_SAMPLER"),
           !["always_on", "always_off", "traceidratio", "parentbased_always_on", "parentbased_always_off", "parentbased_traceidratio"].contains(sampler) {
            throw ConfigurationError(variable: "OTEL_TRACES_SAMPLER", problem: "must be one of always_on, always_off, traceidratio, parentbased_always_on, parentbased_always_off, parentbased_traceidratio, not \(sampler)")
        }
        // Colony passes trace context on as W3C traceparent only (swift-otel has no other propagator).
        if let propagators = value("OTEL_PROPAGATORS"),
           !propagators.split(separator: ",", omittingEmptySubsequences: false).allSatisfy({ $0.trimmingCharacters(in: .whitespaces) == "tracecontext" }) {
            throw ConfigurationError(variable: "OTEL_PROPAGATORS", problem: "must be tracecontext (W3C traceparent, the one Colony passes on), not \(propagators)")
        }
        if let exporter = value("OTEL_TRACES_EXPORTER"), !["otlp", "none"].contains(exporter) {
            throw ConfigurationError(variable: "OTEL_TRACES_EXPORTER", problem: "must be otlp or none, not \(exporter)")
        }
    }

    /// swift-otel's configuration before its own reading of the environment: traces only (logs
    /// and metrics have their own ways here), W3C trace context, its diagnostics in the service's log.
    func configuration() -> OTel.Configuration {
        var configuration = OTel.Configuration.default
        configuration.serviceName = serviceName
        configuration.diagnosticLogger = .custom(Logger(label: "colony.otel"))
        configuration.propagators = [.traceContext]
        configuration.logs.enabled = false
        configuration.metrics.enabled = false
        configuration.traces.otlpExporter.protocol = .httpProtobuf
        if endpointVariable == nil {
            configuration.traces.exporter = .none
            // Not the constant always-off sampler: swift-otel gives that one's spans no ids at
            // all. A ratio of 0 drops every span (nothing recorded, nothing queued) but keeps
            // its trace id and span id for the logs and the traceparent passed on.
            configuration.traces.sampler = .traceIDRatio(ratio: 0) ?? .alwaysOff
        }
        return configuration
    }
}

/// Stands in for the exporter when `OTEL_SDK_DISABLED` is set: waits for the shutdown.
struct TracingDisabled: Service {
    func run() async throws {
        try await gracefulShutdown()
    }
}
