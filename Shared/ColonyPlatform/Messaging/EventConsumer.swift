import ColonyKafka
import ColonyModels
import Foundation
import Logging
import NIOCore
import PostgresNIO
import ServiceLifecycle
import Synchronization
import Tracing

/// What a service does with one event, inside the inbox transaction. Handlers ignore types
/// they do not care about.
public typealias EventHandler = @Sendable (ReceivedEvent, PostgresConnection) async throws -> Void

/// Which consumed events a live consumer hands to its connections: none that happened before it
/// started (starting at the end of the topics is not exact on every broker: Tansu answers
/// "latest" with the start of the last batch), and none older than the maximum age (a backlog
/// after an outage is history too).
public struct LiveEventFilter: Sendable {
    public enum Decision: Equatable, Sendable {
        case deliver
        case skip(Reason)
    }

    public enum Reason: String, Sendable {
        case beforeStart = "before_start"
        case tooOld = "too_old"
    }

    public var startedAt: Date
    public var maxEventAge: Duration

    public init(startedAt: Date, maxEventAge: Duration) {
        self.startedAt = startedAt
        self.maxEventAge = maxEventAge
    }

    public func decide(occurredAt: Date, now: Date) -> Decision {
        if occurredAt < startedAt { return .skip(.beforeStart) }
        let age = Double(maxEventAge.components.seconds) + Double(maxEventAge.components.attoseconds) / 1e18
        if now.timeIntervalSince(occurredAt) > age { return .skip(.tooOld) }
        return .deliver
    }
}

/// Event ids seen within a window, at most `capacity` of them (the oldest are forgotten first):
/// to deliver each event once however often it is consumed, and to pass over an event this
/// consumer handled already without a database round trip.
final class RecentEventIDs: Sendable {
    private struct State {
        var ids: Set<UUID> = []
        var order: [(id: UUID, at: ContinuousClock.Instant)] = []
        var start = 0

        /// Forgets what is older than the window or beyond the capacity (the order array is
        /// compacted now and then).
        mutating func forget(now: ContinuousClock.Instant, window: Duration, capacity: Int) {
            while start < order.count, ids.count > capacity || now - order[start].at > window {
                ids.remove(order[start].id)
                start += 1
            }
            if start > 1024 && start * 2 > order.count {
                order.removeFirst(start)
                start = 0
            }
        }
    }

    private let window: Duration
    private let capacity: Int
    private let state = Mutex(State())

    init(window: Duration, capacity: Int) {
        self.window = window
        self.capacity = max(1, capacity)
    }

    /// Records `id`; false when it was seen within the window already.
    func insert(_ id: UUID, now: ContinuousClock.Instant = .now) -> Bool {
        state.withLock { state in
            state.forget(now: now, window: window, capacity: capacity)
            guard state.ids.insert(id).inserted else { return false }
            state.order.append((id, now))
            state.forget(now: now, window: window, capacity: capacity)
            return true
        }
    }

    /// Whether `id` was recorded within the window.
    func contains(_ id: UUID, now: ContinuousClock.Instant = .now) -> Bool {
        state.withLock { state in
            state.forget(now: now, window: window, capacity: capacity)
            return state.ids.contains(id)
        }
    }
}

/// Consumes topics as a consumer group and hands each event to the handler through the inbox.
///
/// - It starts even when the broker is unreachable: it creates its topics in the background,
///   with backoff, and only then joins its group.
/// - `.projection` (a service's own state): offsets are committed only after the handler's
///   transaction committed, from the start of the topics when the group is new. A failing
///   handler is retried with backoff; after `maxHandlerAttempts` failures the event goes to the
///   dead letters and the consumer moves on. An event that cannot be read (not an envelope, a
///   `schema_version` this build does not know) goes there at once. Failures to reach the
///   database are not counted: they are retried until the database answers.
/// - `.live` (a replica's fan-out to its connections): starts at the end of the topics and
///   commits nothing (its connections are new, there is nothing to catch up on), applies the
///   handler through the inbox once (the projection consumer retries what fails), and calls
///   `deliver` for events that happened after it started and are younger than `maxEventAge`.
/// - `afterHandling` (projection) runs after each event's inbox transaction, whether it applied
///   the event or found it applied already.
/// - An event this consumer handled within the outbox's retention is passed over without asking
///   the inbox (`recentlyHandled`): after a broker restart the relays send everything they kept
///   again, and the new events wait behind those repeats.
public final class EventConsumer: Service, Sendable {
    public enum Mode: Sendable {
        case projection
        case live(maxEventAge: Duration, deliver: @Sendable (ReceivedEvent) async -> Void)
    }

    private let configuration: KafkaConfiguration
    private let topics: [String]
    private let inbox: Inbox
    private let deadLetters: DeadLetters
    private let handler: EventHandler
    private let afterHandling: (@Sendable (ReceivedEvent) async -> Void)?
    private let mode: Mode
    private let settings: PipelineSettings
    private let metrics: PipelineMetrics?
    private let logger: Logger
    private let stopping = Atomic<Bool>(false)
    private let current = Mutex<KafkaConsumer?>(nil)
    private let startedAt = ContinuousClock.now
    /// When this consumer was made: for a live consumer, anything that happened before is history.
    private let createdAt = Date()
    /// The events a live consumer delivered within its maximum age.
    private let recentlyDelivered: RecentEventIDs
    /// The events whose inbox transaction committed here (applied, or found applied): a repeat
    /// within the outbox's retention (a relay sending again what a restarted broker lost) is
    /// passed over without a database round trip. The inbox stays the rule; this only spares it
    /// the repeats this replica saw (another replica, or this one restarted, asks the inbox).
    private let recentlyHandled: RecentEventIDs

    /// How many handled event ids a consumer remembers (about 64 bytes each): more than a busy
    /// minute's events, enough for a relay's resend after a broker restart.
    static let recentlyHandledCapacity = 20_000

    /// The consumer group (metrics and logs name it).
    public var groupID: String { configuration.properties["group.id"] ?? "" }

    public init(configuration: KafkaConfiguration, topics: [String], database: Database, settings: PipelineSettings = PipelineSettings(), metrics: PipelineMetrics? = nil,
                logger: Logger, mode: Mode = .projection, handler: @escaping EventHandler, afterHandling: (@Sendable (ReceivedEvent) async -> Void)? = nil) {
        var configuration = configuration
        if case .live = mode {
            configuration.properties["auto.offset.reset"] = "latest"
            configuration.properties["enable.auto.commit"] = "false"
        }
        self.configuration = configuration
        self.topics = topics
        self.inbox = Inbox(database: database)
        self.deadLetters = DeadLetters(schema: database.schema)
        self.handler = handler
        self.afterHandling = afterHandling
        self.mode = mode
        self.settings = settings
        if case .live(let maxEventAge, _) = mode {
            // Bounded by the window alone: an event younger than the maximum age is never delivered twice.
            recentlyDelivered = RecentEventIDs(window: maxEventAge, capacity: .max)
        } else {
            recentlyDelivered = RecentEventIDs(window: .zero, capacity: 1)
        }
        recentlyHandled = RecentEventIDs(window: settings.outboxRetention + .seconds(60), capacity: Self.recentlyHandledCapacity)
        self.metrics = metrics
        self.logger = logger
    }

    /// The running consumer's statistics (nil before it joined).
    public var statistics: KafkaConsumerStatistics? {
        current.withLock { $0 }?.statistics
    }

    /// Publishes the consumer's lag, assignment and liveness to the metrics (at scrape time).
    public func sampleMetrics() {
        guard let metrics else { return }
        metrics.consumer(group: groupID, statistics: statistics ?? KafkaConsumerStatistics(), startedAt: startedAt)
    }

    public func run() async throws {
        guard await createTopics() else { return }
        let consumer = try KafkaConsumer(configuration: configuration, topics: topics, logger: logger)
        current.withLock { $0 = consumer }
        try await withGracefulShutdownHandler {
            do {
                try await withThrowingDiscardingTaskGroup { group in
                    if case .projection = mode {
                        group.addTask { await self.reportCatchUp(consumer) }
                    }
                    for try await message in consumer.messages() {
                        // A message whose handling was cut short by shutdown stays unmarked and is
                        // delivered again after the restart.
                        guard await process(message) else { break }
                        consumer.markHandled(message)
                        if stopping.load(ordering: .relaxed) { break }
                    }
                    group.cancelAll()
                }
            } catch {
                await consumer.close()
                throw error
            }
            await consumer.close()
        } onGracefulShutdown: {
            self.stopping.store(true, ordering: .relaxed)
            consumer.stopDelivery()
        }
    }

    /// Creates the topics, retrying with backoff while the broker is unreachable. False when
    /// shutdown came first.
    private func createTopics() async -> Bool {
        let admin = KafkaAdmin(configuration: configuration)
        var delay: Duration = .seconds(1)
        var attempts = 0
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            do {
                try await admin.createTopics(topics, partitions: settings.topicPartitions, replicationFactor: settings.topicReplicationFactor)
                if attempts > 0 {
                    logger.notice("broker reachable again; event consumer starting", metadata: ["group": "\(groupID)"])
                }
                return true
            } catch {
                attempts += 1
                logger.warning("broker unreachable; event consumer will start when it answers (HTTP is served meanwhile)",
                               metadata: ["group": "\(groupID)", "error": "\(error)", "retry_in": "\(delay)", "attempt": "\(attempts)"])
                let wait = delay
                do {
                    try await cancelWhenGracefulShutdown { try await Task.sleep(for: wait) }
                } catch {
                    return false
                }
                delay = min(delay * 2, .seconds(30))
            }
        }
        return false
    }

    /// While the consumer works through history (a new group, or a long outage), says every
    /// ten seconds how far behind it is, and once when it has caught up. A member that has not
    /// settled in its group for a minute while a broker is up is an error (it consumes nothing
    /// meanwhile): the log names librdkafka's group state.
    private func reportCatchUp(_ consumer: KafkaConsumer) async {
        var behind = false
        var reportedUnsettled = false
        while !Task.isCancelled {
            try? await Task.sleep(for: .seconds(10))
            let statistics = consumer.statistics
            if let since = statistics.unsettledSince, statistics.brokerUp == true, ContinuousClock.now - since > .seconds(60) {
                if !reportedUnsettled {
                    reportedUnsettled = true
                    logger.error("event consumer has not settled in its group for a minute; it consumes nothing until it does", metadata: [
                        "group": "\(groupID)", "group_state": "\(statistics.groupState ?? "unknown")", "join_state": "\(statistics.joinState ?? "unknown")",
                        "rebalances": "\(statistics.rebalances)", "assigned_partitions": "\(statistics.assignedPartitions)",
                    ])
                }
            } else if statistics.unsettledSince == nil, reportedUnsettled {
                reportedUnsettled = false
                logger.notice("event consumer settled in its group", metadata: ["group": "\(groupID)", "rebalances": "\(statistics.rebalances)"])
            }
            let lag = statistics.totalLag
            if lag > 0 {
                behind = true
                logger.info("consuming history", metadata: ["group": "\(groupID)", "events_behind": "\(lag)", "partitions": "\(statistics.partitions.count)"])
            } else if behind, !statistics.partitions.isEmpty {
                behind = false
                logger.info("caught up with history", metadata: ["group": "\(groupID)"])
            }
        }
    }

    private var shouldStop: Bool { stopping.load(ordering: .relaxed) || Task.isCancelled }

    /// Handles one message in a span of the trace its `traceparent` header names (the request
    /// that published it), so the handler's logs and onward calls carry the same trace id.
    /// Returns false only when shutdown interrupted it (it is then not marked handled, and comes
    /// again after the restart).
    private func process(_ message: KafkaConsumerMessage) async -> Bool {
        var context = InstrumentationContext.topLevel
        let headers = message.headers.compactMapValues { String(bytes: $0, encoding: .utf8) }
        InstrumentationSystem.instrument.extract(headers, into: &context, using: DictionaryCarrier())
        return await withSpan("consume \(headers["event_type"] ?? message.topic)", context: context, ofKind: .consumer) { _ in
            await handle(message)
        }
    }

    private func handle(_ message: KafkaConsumerMessage) async -> Bool {
        let reference = ConsumedMessageReference(topic: message.topic, key: message.keyString, partition: message.partition, offset: message.offset)
        let event: ReceivedEvent
        do {
            event = try ReceivedEvent(bytes: message.value)
        } catch {
            return await setAside(message, reference: reference, event: nil, error: "not a Colony event envelope: \(error)", attempts: 1)
        }
        var logger = self.logger
        logger[metadataKey: "event_id"] = .string(event.id.uuidString.lowercased())
        logger[metadataKey: "event_type"] = .string(event.type.rawValue)
        if case .live(let maxEventAge, let deliver) = mode {
            await applyOnce(event, logger: logger)
            switch LiveEventFilter(startedAt: createdAt, maxEventAge: maxEventAge).decide(occurredAt: event.header.occurredAt, now: Date()) {
            case .deliver:
                // An event the broker holds twice (a relay sending again what a broker lost) is
                // delivered once: only events younger than the maximum age get here.
                if recentlyDelivered.insert(event.id) {
                    await deliver(event)
                } else {
                    metrics?.skippedLiveEvent(reason: "duplicate")
                }
            case .skip(let reason): metrics?.skippedLiveEvent(reason: reason.rawValue)
            }
            return true
        }
        let known = EventCatalogue.schemaVersion(of: event.type)
        guard (1...known).contains(event.header.schemaVersion) else {
            return await setAside(message, reference: reference, event: event,
                                  error: "schema_version \(event.header.schemaVersion) of \(event.type) is not one this build reads (1...\(known))", attempts: 1)
        }
        if recentlyHandled.contains(event.id) {
            logger.debug("event already handled (remembered)")
            await afterHandling?(event)
            return true
        }
        var attempts = 0
        var delay = settings.handlerRetryDelay
        while true {
            do {
                let applied = try await inbox.handle(event) { connection in
                    try await handler(event, connection)
                }
                _ = recentlyHandled.insert(event.id)
                logger.debug(applied ? "event handled" : "event already handled")
                await afterHandling?(event)
                return true
            } catch {
                if shouldStop { return false }
                if Self.isDatabaseUnavailable(error) {
                    logger.warning("event handler cannot reach the database, retrying", metadata: ["error": "\(error)", "retry_in": "\(delay)"])
                } else {
                    attempts += 1
                    metrics?.handlerFailed(eventType: event.type.rawValue)
                    if attempts >= settings.maxHandlerAttempts {
                        return await setAside(message, reference: reference, event: event, error: String(describing: error), attempts: attempts)
                    }
                    logger.error("event handler failed, retrying", metadata: ["error": "\(error)", "attempt": "\(attempts)", "max_attempts": "\(settings.maxHandlerAttempts)", "retry_in": "\(delay)"])
                }
                try? await Task.sleep(for: delay)
                delay = min(delay * 2, settings.maxHandlerRetryDelay)
            }
        }
    }

    /// The live consumer applies each event through the inbox once, so its connections see
    /// the projections it changes; the projection consumer retries (and dead-letters) failures.
    private func applyOnce(_ event: ReceivedEvent, logger: Logger) async {
        if recentlyHandled.contains(event.id) { return }
        do {
            try await inbox.handle(event) { connection in try await handler(event, connection) }
            _ = recentlyHandled.insert(event.id)
        } catch {
            logger.debug("live consumer could not apply the event; the projection consumer will", metadata: ["error": "\(error)"])
        }
    }

    /// Moves an event to the dead letters and lets the consumer go past it. Writing the dead
    /// letter must succeed first: until it does (the database is down), it is retried.
    private func setAside(_ message: KafkaConsumerMessage, reference: ConsumedMessageReference, event: ReceivedEvent?, error: String, attempts: Int) async -> Bool {
        if case .live = mode {
            logger.warning("live consumer skipped an unreadable event", metadata: ["topic": "\(message.topic)", "offset": "\(message.offset)", "error": "\(error)"])
            return true
        }
        var delay: Duration = .milliseconds(100)
        while true {
            do {
                try await inbox.database.withConnection { connection in
                    try await deadLetters.recordConsumed(event: event, message: reference, payload: message.value, error: error, attempts: attempts, on: connection, logger: logger)
                }
                metrics?.deadLettered(stage: .consume)
                logger.error("event moved to the dead letters; the consumer goes on", metadata: [
                    "topic": "\(message.topic)", "partition": "\(message.partition)", "offset": "\(message.offset)",
                    "event_id": "\(event?.id.uuidString.lowercased() ?? "unknown")", "event_type": "\(event?.type.rawValue ?? "unknown")",
                    "attempts": "\(attempts)", "error": "\(error)",
                ])
                return true
            } catch {
                if shouldStop { return false }
                logger.warning("could not record a dead letter, retrying", metadata: ["error": "\(error)"])
                try? await Task.sleep(for: delay)
                delay = min(delay * 2, .seconds(30))
            }
        }
    }

    /// Whether a handler failed because the database could not be reached (which no number of
    /// attempts makes the event's fault), rather than because of the event.
    static func isDatabaseUnavailable(_ error: any Error) -> Bool {
        if let error = error as? APIError, error.code == "database_unavailable" { return true }
        if let error = error as? PSQLError {
            if error.code == .server {
                // Connection exceptions, insufficient resources, operator intervention (shutdown).
                let state = error.serverInfo?[.sqlState] ?? ""
                return state.hasPrefix("08") || state.hasPrefix("53") || state.hasPrefix("57P")
            }
            return error.code != .queryCancelled && error.code != .tooManyParameters && error.code != .invalidCommandTag
        }
        // The pool's circuit breaker (no connection could be made for a while) is not re-exported
        // by PostgresNIO; it is recognised by its type's name.
        return error is ChannelError || String(reflecting: type(of: error)).hasSuffix("ConnectionPoolError")
    }
}
