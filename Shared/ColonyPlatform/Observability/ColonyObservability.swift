import CoreMetrics
import Foundation
import Instrumentation
import Logging
import Prometheus
import Tracing

/// What a service process sets up once, before anything logs: JSON lines on standard output
/// (`COLONY_LOG_FORMAT=text` for swift-log's plain lines, for reading locally), at `LOG_LEVEL`,
/// librdkafka's own messages included (ColonyKafka routes them through swift-log), with the
/// current span's `trace_id` and `span_id` on every line; and `ColonyTracer` as the process's
/// tracer (W3C `traceparent` in and out); and swift-metrics backed by the Prometheus registry the
/// service's `/metrics` serves. Call it first thing in a service executable's `serve`
/// path; commands that print for people keep plain text.
public enum ColonyObservability {
    public enum LogFormat: String, Sendable {
        case json, text
    }

    public static func bootstrap(service: String, environment: EnvironmentReader = EnvironmentReader()) throws(ConfigurationError) {
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
        InstrumentationSystem.bootstrap(ColonyTracer())
        // swift-metrics goes to the registry `/metrics` serves, so libraries' metrics appear there too.
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: PrometheusCollectorRegistry()))
    }
}

extension ColonyObservability {
    /// The registry `/metrics` serves: the process's swift-metrics registry when `bootstrap` set
    /// one up, else a registry of the service's own (tests run several services in one process).
    static func metricsRegistry() -> PrometheusCollectorRegistry {
        (MetricsSystem.factory as? PrometheusMetricsFactory)?.registry ?? PrometheusCollectorRegistry()
    }
}
