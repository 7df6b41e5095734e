import ColonyModels
import ColonyPlatform
import Foundation
import Logging
import PostgresNIO
import Prometheus
import ServiceLifecycle
import Synchronization

/// Sends the queued pushes: leases due rows (`FOR UPDATE SKIP LOCKED`, so replicas share the
/// queue), sends them to APNs with up to `concurrency` requests in flight on HTTP/2, and records
/// each outcome. Woken by each handled event (and by the clock for held and retried pushes).
/// A push whose outcome was not recorded (a crash) is leased again later: at least once.
public final class PushDispatcher: Service, Sendable {
    private let database: Database
    private let apns: APNsClient?
    private let settings: NotificationsSettings
    private let signal: WakeSignal
    private let logger: Logger
    private let deliveries: DeliveryStore
    private let devices: DeviceStore
    private let metrics: PushMetrics
    private let stopping = Atomic<Bool>(false)

    public init(database: Database, apns: APNsClient?, settings: NotificationsSettings, signal: WakeSignal, metrics: PrometheusCollectorRegistry, logger: Logger) {
        self.database = database
        self.apns = apns
        self.settings = settings
        self.signal = signal
        self.logger = logger
        self.deliveries = DeliveryStore(logger: logger)
        self.devices = DeviceStore(logger: logger)
        self.metrics = PushMetrics(registry: metrics)
    }

    public func run() async throws {
        if apns == nil {
            logger.warning("APNs is not configured (COLONY_APNS_TEAM_ID, COLONY_APNS_KEY_ID, COLONY_APNS_PRIVATE_KEY_FILE): pushes are recorded as skipped")
        }
        await withGracefulShutdownHandler {
            while !stopping.load(ordering: .relaxed) && !Task.isCancelled {
                let handled: Int
                do {
                    handled = try await sendDue()
                } catch {
                    logger.warning("push dispatch failed, will retry", metadata: ["error": "\(error)"])
                    handled = 0
                    try? await Task.sleep(for: .seconds(1))
                }
                if handled < settings.batchSize { await signal.wait(timeout: settings.pollInterval) }
            }
        } onGracefulShutdown: {
            self.stopping.store(true, ordering: .relaxed)
            self.signal.wake()
        }
        await apns?.shutdown()
    }

    /// Leases one batch of due pushes, sends them, records what happened; the batch's size.
    @discardableResult
    public func sendDue() async throws -> Int {
        let now = settings.clock.now()
        let claimed = try await database.withConnection { connection in
            try await deliveries.claim(now: now, limit: settings.batchSize, lease: .seconds(120), on: connection)
        }
        guard !claimed.isEmpty else { return 0 }
        let results = await withTaskGroup(of: Sent.self) { group in
            var results: [Sent] = []
            results.reserveCapacity(claimed.count)
            var inFlight = 0
            for push in claimed {
                if inFlight >= settings.concurrency, let done = await group.next() {
                    results.append(done)
                    inFlight -= 1
                }
                // Each send in a span of the trace the push was queued in (the post's request).
                group.addTask { await TraceParent.withSpan("push \(push.kind)", parent: push.traceParent, ofKind: .client) { await self.send(push) } }
                inFlight += 1
            }
            for await done in group { results.append(done) }
            return results
        }
        let finished = settings.clock.now()
        try await database.withConnection { connection in
            try await deliveries.record(results.map(\.outcome), now: finished, on: connection)
            // Dead tokens go with what was still queued for them.
            for case let (deviceID, since)? in results.map(\.deadToken) {
                try await devices.removeDead(deviceID, invalidSince: since, on: connection)
            }
        }
        return claimed.count
    }

    /// One push's outcome, and its device when APNs said the token is dead (since when, if it said).
    struct Sent: Sendable {
        var outcome: DeliveryStore.Outcome
        var deadToken: (UUID, Date?)? = nil
    }

    private func send(_ push: DeliveryStore.Claimed) async -> Sent {
        let now = settings.clock.now()
        func outcome(_ status: DeliveryStore.Outcome.Status, _ http: Int = 0, _ reason: String = "", retryAt: Date = now) -> Sent {
            metrics.count(app: push.app, outcome: status.rawValue)
            // One line per attempt, in the push's trace (trace_id from the span).
            logger.info("push", metadata: ["delivery_id": "\(push.id.uuidString.lowercased())", "app": "\(push.app.rawValue)", "kind": "\(push.kind)",
                                           "outcome": "\(status.rawValue)", "http_status": "\(http)", "reason": "\(reason)"])
            return Sent(outcome: DeliveryStore.Outcome(id: push.id, status: status, httpStatus: http, reason: reason, retryAt: retryAt))
        }
        guard push.tokenUser == push.user else { return outcome(.dropped, 0, "token_moved") }
        guard push.expiresAt > now else { return outcome(.dropped, 0, "expired") }
        guard let apns else { return outcome(.skipped, 0, "apns_not_configured") }
        guard let topic = apns.settings.topic(for: push.app, pushType: push.pushType) else {
            return outcome(.skipped, 0, "no_topic_for_\(push.app.rawValue)")
        }
        let started = ContinuousClock.now
        let result = await apns.send(token: push.token, environment: push.environment, topic: topic, pushType: push.pushType, apnsID: push.id,
                                     collapseID: push.collapseID, expiresAt: push.expiresAt, payload: push.payload)
        metrics.sendDuration(ContinuousClock.now - started)
        let exhausted = push.attempts >= settings.maxAttempts
        switch result {
        case .sent:
            return outcome(.sent, 200)
        case .retry(let status, let reason):
            if exhausted { return outcome(.failed, status, reason.isEmpty ? "gave_up" : reason) }
            let delay = NotificationsRules.retryDelay(attempt: push.attempts)
            return outcome(.pending, status, reason, retryAt: now.addingTimeInterval(Double(delay.components.seconds) + Double(delay.components.attoseconds) / 1e18))
        case .providerTokenExpired(let reason):
            apns.providerToken.expire()
            if exhausted { return outcome(.failed, 403, reason) }
            return outcome(.pending, 403, reason, retryAt: now)
        case .deadToken(let status, let reason, let since):
            var sent = outcome(.failed, status, reason)
            sent.deadToken = (push.deviceID, since)
            return sent
        case .rejected(let status, let reason):
            return outcome(.failed, status, reason)
        }
    }
}

/// The dispatcher's counters on `/metrics`: pushes by app and outcome, APNs request latency.
struct PushMetrics: Sendable {
    let registry: PrometheusCollectorRegistry

    /// Every app's sent and failed counts and the latency histogram exist from the start (at
    /// zero), so dashboards and alerts see the series before the first push.
    init(registry: PrometheusCollectorRegistry) {
        self.registry = registry
        for app in App.allCases {
            for outcome in ["sent", "failed"] { counter(app: app, outcome: outcome) }
        }
        _ = histogram()
    }

    @discardableResult
    private func counter(app: App, outcome: String) -> Counter {
        registry.makeCounter(descriptor: MetricNameDescriptor(metricName: "colony_pushes", unitName: "total", helpText: "Pushes by app and outcome"),
                             labels: [("app", app.rawValue), ("outcome", outcome)])
    }

    private func histogram() -> DurationHistogram {
        registry.makeDurationHistogram(descriptor: MetricNameDescriptor(metricName: "colony_apns_request_duration", unitName: "seconds", helpText: "APNs request latency"),
                                       labels: [], buckets: Self.buckets)
    }

    private static let buckets: [Duration] = [
        .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50),
        .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(5), .seconds(30),
    ]

    func count(app: App, outcome: String) {
        counter(app: app, outcome: outcome).increment()
    }

    func sendDuration(_ duration: Duration) {
        histogram().recordNanoseconds(Int64(duration.components.seconds) * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000)
    }
}
