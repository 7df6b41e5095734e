import Foundation
import Prometheus
import Synchronization

/// Per-route request counters and latency histograms, kept in the service's own registry and
/// served on `/metrics` in Prometheus' text format.
public final class HTTPMetrics: Sendable {
    public let registry: PrometheusCollectorRegistry

    private static let buckets: [Duration] = [
        .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10), .milliseconds(25),
        .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2.5), .seconds(5),
    ]

    private static var requests: MetricNameDescriptor {
        MetricNameDescriptor(metricName: "http_requests", unitName: "total", helpText: "HTTP requests by method, route and status")
    }
    private static var duration: MetricNameDescriptor {
        MetricNameDescriptor(metricName: "http_request_duration", unitName: "seconds", helpText: "HTTP request latency by method and route")
    }

    /// Gauges of stored state (an outbox backlog, a consumer's lag) are read when `/metrics` is
    /// scraped, by these.
    private let samplers = Mutex<[@Sendable () async -> Void]>([])

    public init(registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry()) {
        self.registry = registry
    }

    public func addSampler(_ sampler: @escaping @Sendable () async -> Void) {
        samplers.withLock { $0.append(sampler) }
    }

    /// Runs every sampler, concurrently, waiting at most `timeout` (a slow database must not
    /// hold the scrape; what did not answer keeps its previous value).
    public func sample(timeout: Duration = .seconds(2)) async {
        let samplers = self.samplers.withLock { $0 }
        guard !samplers.isEmpty else { return }
        await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                await withTaskGroup(of: Void.self) { all in
                    for sampler in samplers { all.addTask { await sampler() } }
                }
                return true
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return false
            }
            _ = await group.next()
            group.cancelAll()
        }
    }

    func record(method: String, route: String, status: Int, duration: Duration) {
        registry.makeCounter(
            descriptor: Self.requests,
            labels: [("method", method), ("route", route), ("status", String(status))]
        ).increment()
        registry.makeDurationHistogram(
            descriptor: Self.duration,
            labels: [("method", method), ("route", route)],
            buckets: Self.buckets
        ).recordNanoseconds(Int64(duration.components.seconds) * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000)
    }

    /// The Prometheus text exposition of everything recorded.
    public func exposition() -> [UInt8] {
        registry.emitToBuffer()
    }
}
