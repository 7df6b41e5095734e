import ColonyKafka
import ColonyModels
import Foundation
import Prometheus
import Synchronization

/// The event pipeline's health on `/metrics`: the outbox backlog, what the relay sent, the
/// consumers' lag and liveness, handler failures and dead letters, and whether a broker
/// answers. Counters move as things happen; gauges that describe stored state (backlog, dead
/// letters, lag) are sampled when `/metrics` is scraped.
public final class PipelineMetrics: Sendable {
    let registry: PrometheusCollectorRegistry
    /// Per consumer group, the partition gauges set at the last sample (removed when the
    /// partition is no longer assigned, so a revoked partition does not report a stale lag).
    private let lagGauges = Mutex<[String: [String: Gauge]]>([:])

    public init(registry: PrometheusCollectorRegistry) {
        self.registry = registry
        // Every series the pipeline can have starts at zero, so dashboards and alerts see the
        // metric from the first scrape (a rate over a counter that appears late misses its first rise).
        for result in [RelayResult.delivered, .failed, .deadLettered] { relayed(0, result: result, initialize: true) }
        for stage in DeadLetters.Stage.allCases { deadLettered(stage: stage, by: 0) }
        for reason in ["before_start", "too_old", "duplicate"] { skippedLiveEvent(reason: reason, by: 0) }
    }

    /// Starts the handler-failure counters of the event types a service consumes at zero.
    func consuming(_ types: [EventType]) {
        for type in types { handlerFailed(eventType: type.rawValue, by: 0) }
    }

    /// A metric's full Prometheus name and help, as swift-prometheus's descriptor.
    private func named(_ name: String, _ help: String) -> MetricNameDescriptor {
        MetricNameDescriptor(metricName: name, unitName: "", helpText: help)
    }

    // MARK: Counters

    public enum RelayResult: String, Sendable { case delivered, failed, deadLettered = "dead_lettered" }

    func relayed(_ count: Int, result: RelayResult, initialize: Bool = false) {
        guard count > 0 || initialize else { return }
        registry.makeCounter(descriptor: named("colony_outbox_relayed_events_total", "Outbox rows the relay handed to the broker, by outcome"), labels: [("result", result.rawValue)]).increment(by: Int64(count))
    }

    func handlerFailed(eventType: String = "unknown", by count: Int = 1) {
        registry.makeCounter(descriptor: named("colony_event_handler_failures_total", "Failed attempts to apply a consumed event"), labels: [("event_type", eventType)])
            .increment(by: Int64(count))
    }

    func deadLettered(stage: DeadLetters.Stage, by count: Int = 1) {
        registry.makeCounter(descriptor: named("colony_dead_lettered_events_total", "Events moved to the dead letters, by stage"), labels: [("stage", stage.rawValue)])
            .increment(by: Int64(count))
    }

    func skippedLiveEvent(reason: String, by count: Int = 1) {
        registry.makeCounter(descriptor: named("colony_live_events_skipped_total", "Consumed events not delivered to live connections, by reason"), labels: [("reason", reason)])
            .increment(by: Int64(count))
    }

    // MARK: Sampled gauges

    func brokerUp(_ up: Bool) {
        registry.makeGauge(descriptor: named("colony_broker_up", "1 when a Kafka broker answered a metadata request at the last scrape")).set(up ? 1.0 : 0.0)
    }

    func outbox(pending: Int, oldestAgeSeconds: Double, retained: Int) {
        registry.makeGauge(descriptor: named("colony_outbox_retained_events", "Acknowledged events kept in the outbox to send again should the broker lose them")).set(Double(retained))
        registry.makeGauge(descriptor: named("colony_outbox_pending_events", "Events in the outbox not yet acknowledged by the broker")).set(Double(pending))
        registry.makeGauge(descriptor: named("colony_outbox_oldest_pending_age_seconds", "Age of the oldest event waiting in the outbox (0 when empty)")).set(oldestAgeSeconds)
    }

    func deadLetters(_ counts: [DeadLetters.Stage: Int]) {
        for (stage, count) in counts {
            registry.makeGauge(descriptor: named("colony_dead_letters", "Dead letters waiting for an operator, by stage"), labels: [("stage", stage.rawValue)])
                .set(Double(count))
        }
    }

    func consumer(group: String, statistics: KafkaConsumerStatistics, startedAt: ContinuousClock.Instant) {
        registry.makeGauge(descriptor: named("colony_consumer_assigned_partitions", "Partitions assigned to this consumer"), labels: [("group", group)])
            .set(Double(statistics.assignedPartitions))
        registry.makeGauge(descriptor: named("colony_consumer_group_settled", "1 when the consumer has joined its group and holds its assignment (librdkafka's group state up and steady)"), labels: [("group", group)])
            .set(statistics.isSettled ? 1.0 : 0.0)
        registry.makeGauge(descriptor: named("colony_consumer_rebalances", "Rebalances this consumer went through since it started"), labels: [("group", group)])
            .set(Double(statistics.rebalances))
        let lastPoll = statistics.lastSuccessfulPoll ?? startedAt
        registry.makeGauge(descriptor: named("colony_consumer_last_poll_age_seconds", "Seconds since the consumer last completed a poll with a broker up (since it started, before the first)"), labels: [("group", group)])
            .set(Double((ContinuousClock.now - lastPoll).components.seconds))
        var current: [String: Gauge] = [:]
        for partition in statistics.partitions {
            guard let lag = partition.lag else { continue }
            let key = "\(partition.topic)/\(partition.partition)"
            let gauge = registry.makeGauge(descriptor: named("colony_consumer_lag_events", "Events between what the consumer handled and the end of the partition"), labels: [("group", group), ("topic", partition.topic), ("partition", String(partition.partition))])
            gauge.set(Double(lag))
            current[key] = gauge
        }
        let stale = lagGauges.withLock { gauges -> [Gauge] in
            defer { gauges[group] = current }
            return (gauges[group] ?? [:]).filter { current[$0.key] == nil }.map(\.value)
        }
        stale.forEach { registry.unregisterGauge($0) }
    }
}
