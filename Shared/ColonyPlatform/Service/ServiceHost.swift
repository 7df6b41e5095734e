import ColonyKafka
import ColonyModels
import Foundation
import Hummingbird
import HummingbirdCore
import Logging
import PostgresNIO
import Prometheus
import ServiceLifecycle
import Synchronization

/// What a domain service is made of; `ServiceHost` wires it into the platform.
public struct ServiceDefinition: Sendable {
    public var migrations: [Migration]
    /// Topics (by source service) whose events this service consumes; empty for none.
    public var consumes: [ColonyService]
    /// Handles one consumed event inside the inbox transaction; the context gives it the
    /// service's outbox and logger.
    public var handleEvent: ServiceEventHandler?
    /// The periodic jobs, made with the service's context.
    public var jobs: @Sendable (ServiceContext) -> [ScheduledJob]
    /// Further lifecycle services the domain runs (started before HTTP, stopped after it), made
    /// with the service's context (a push sender needs the database, say).
    public var services: @Sendable (ServiceContext) -> [any Service]
    /// What the service counts for the console's Overview page (sign-ups, posts, pushes…), per
    /// app and day, served at `GET /internal/v1/console/stats` (`StatsAdminRoutes`); none by default.
    public var consoleStats: [ConsoleStat]
    /// What the service holds of one user, counted for the console's user page, served at
    /// `GET /internal/v1/console/users/{id}/holdings` (`HoldingsAdminRoutes`); none by default.
    public var consoleHoldings: [ConsoleHolding]
    /// Adds the service's routes to the router built by the platform.
    /// Throws when the routes cannot be built (a document that does not load): the service does not start.
    public var addRoutes: @Sendable (Router<ColonyRequestContext>, ServiceContext) throws -> Void
    /// The HTTP server to run (default HTTP/1.1); realtime's adds the WebSocket upgrade.
    public var server: (@Sendable (ServiceContext) -> HTTPServerBuilder)? = nil
    /// Runs after each consumed event's inbox transaction, whether it applied the event or found
    /// it applied already (notifications wakes its sender here).
    public var afterEvent: (@Sendable (ReceivedEvent) async -> Void)? = nil
    /// Set for a service each of whose replicas must hand every new event to its own
    /// connections (realtime): a second consumer per replica, from the end of the topics.
    public var liveDelivery: LiveDelivery? = nil
    /// What users of the service's app may report (`ReportableContent`): set, the service takes
    /// reports at its `POST /<service>/v1/reports` (its own handler, with `ServiceContext.reportDesk`)
    /// and the platform adds the console's moderation routes (`ModerationAdminRoutes`), the
    /// report-age gauge, and the erasure of an account's reports on `user_deleted`.
    public var reports: (@Sendable (ServiceContext) -> any ReportableContent)? = nil
    /// Runs at a shutdown once the pre-stop pause is over, before the HTTP server stops accepting:
    /// realtime closes its sockets here, so that their clients reconnect through the gateway to
    /// another replica, which is serving, instead of to this one.
    public var beforeStopping: (@Sendable () async -> Void)? = nil

    public init(migrations: [Migration], consumes: [ColonyService] = [], handleEvent: ServiceEventHandler? = nil, jobs: @escaping @Sendable (ServiceContext) -> [ScheduledJob] = { _ in [] }, services: @escaping @Sendable (ServiceContext) -> [any Service] = { _ in [] }, consoleStats: [ConsoleStat] = [], consoleHoldings: [ConsoleHolding] = [], addRoutes: @escaping @Sendable (Router<ColonyRequestContext>, ServiceContext) throws -> Void) {
        self.migrations = migrations
        self.consumes = consumes
        self.handleEvent = handleEvent
        self.jobs = jobs
        self.services = services
        self.consoleStats = consoleStats
        self.consoleHoldings = consoleHoldings
        self.addRoutes = addRoutes
    }
}

public typealias ServiceEventHandler = @Sendable (ReceivedEvent, PostgresConnection, ServiceContext) async throws -> Void

/// A replica's live fan-out of new events to its own connections. Its consumer group is the
/// replica's own (`<prefix>-<service>-live-<replica>`); it starts at the end of the topics and
/// commits nothing, since a new replica's connections have no history to catch up on. It
/// applies `handleEvent` through the inbox first (so projections are current when it
/// delivers), and never delivers an event older than `maxEventAge`. The service's shared
/// consumer group still applies every event, including those while no replica ran.
public struct LiveDelivery: Sendable {
    public var replicaID: String
    public var maxEventAge: Duration
    public var deliver: @Sendable (ReceivedEvent) async -> Void

    public init(replicaID: String, maxEventAge: Duration = .seconds(60), deliver: @escaping @Sendable (ReceivedEvent) async -> Void) {
        self.replicaID = replicaID
        self.maxEventAge = maxEventAge
        self.deliver = deliver
    }
}

/// The platform pieces a service's routes and domain code use.
public struct ServiceContext: Sendable {
    public let configuration: ServiceConfiguration
    public let database: Database
    public let outbox: Outbox
    public let tokenMiddleware: TokenMiddleware
    public let logger: Logger
    /// The registry `/metrics` serves: a service's own counters go here too.
    public let metrics: PrometheusCollectorRegistry
    /// The accounts whose tokens every verifier of this replica refuses (realtime's too).
    public let suspendedAccounts: SuspendedAccounts

    /// The service's reports desk, made once by `ServiceHost` from `ServiceDefinition.reports`
    /// (nil for a service that takes no reports).
    public internal(set) var reports: ReportDesk? = nil

    /// The reports desk, for a service whose definition sets `reports`: its `POST /<service>/v1/reports`.
    public func requiredReports() throws -> ReportDesk {
        guard let reports else { throw ReportDeskMissing() }
        return reports
    }

    struct ReportDeskMissing: Error, CustomStringConvertible {
        var description: String { "the service's routes take reports, but its ServiceDefinition.reports is not set" }
    }
}

/// Runs a service: applies migrations, then runs Postgres, the producer, the outbox relay, the
/// event consumer, the job scheduler and the HTTP server as one service group. SIGTERM/SIGINT
/// shut down in reverse order: the pre-stop pause (`/ready` 503, still serving), stop accepting and drain HTTP, stop consuming and commit, stop
/// the relay and flush its producer, close Postgres.
public enum ServiceHost {
    /// `traceExporter` is `ColonyObservability.bootstrap`'s (none when a test runs the service in
    /// the test's process): first in the group, so stopped last, after what it exports has ended.
    public static func run(_ definition: ServiceDefinition, configuration: ServiceConfiguration, traceExporter: (any Service)? = nil) async throws {
        var logger = Logger(label: "colony.\(configuration.service.rawValue)")
        logger.logLevel = configuration.logLevel
        logger[metadataKey: "service"] = .string(configuration.service.rawValue)

        try await migrate(definition.migrations, configuration: configuration, logger: logger)

        let database = Database(configuration: configuration.database, logger: logger)
        let pipeline = configuration.pipeline
        let outbox = Outbox(schema: configuration.database.schema, topicPrefix: configuration.topicPrefix, maxEventBytes: pipeline.maxEventBytes)
        let metrics = HTTPMetrics(registry: ColonyObservability.metricsRegistry())
        let pipelineMetrics = PipelineMetrics(registry: metrics.registry)
        let serviceMetrics = ServiceMetrics(registry: metrics.registry)
        let relay = try OutboxRelay(
            database: database,
            producerConfiguration: .producer(bootstrapServers: configuration.kafkaBrokers, clientId: "colony-\(configuration.service.rawValue)",
                                             overrides: configuration.kafkaSecurity.merging(["message.max.bytes": String(pipeline.producerMessageMaxBytes)]) { $1 }),
            outbox: outbox,
            logger: logger,
            topicPartitions: pipeline.topicPartitions,
            replicationFactor: pipeline.topicReplicationFactor,
            metrics: pipelineMetrics,
            retention: pipeline.outboxRetention
        )
        let suspendedAccounts = SuspendedAccounts()
        let verifier = TokenVerifier(configuration: configuration.tokens, suspendedAccounts: suspendedAccounts, logger: logger)
        var building = ServiceContext(configuration: configuration, database: database, outbox: outbox, tokenMiddleware: TokenMiddleware(verifier: verifier),
                                     logger: logger, metrics: metrics.registry, suspendedAccounts: suspendedAccounts)

        // Ready means the HTTP API can be served: the database. A broker outage shows in
        // `/health`'s detail and `colony_broker_up`, and takes no pod out of service (realtime
        // included: it answers joins from the owners of groups, circles and hives while its live
        // consumer waits for the broker). A replica told to stop is not ready through its pre-stop
        // pause (`ShutdownDrain`).
        let drain = ShutdownDrain(pause: configuration.shutdownDrain, beforeStopping: definition.beforeStopping, logger: logger)
        var readiness = ReadinessChecks.standard(database: database)
        readiness.checks.append((name: "serving", check: { !drain.isDraining }))
        let brokerCheck: @Sendable () async -> Bool = {
            let up = await relay.isBrokerReachable()
            pipelineMetrics.brokerUp(up)
            return up
        }
        let router = ColonyRouter.make(
            metrics: metrics,
            maxBodyBytes: configuration.maxBodyBytes,
            maxUploadBytes: configuration.maxUploadBytes,
            trustedProxies: configuration.trustedProxies,
            requestDeadline: configuration.requestDeadline,
            readiness: readiness,
            health: ReadinessChecks([(name: "database", check: { await database.isReachable() }), (name: "broker", check: brokerCheck)])
        )
        metrics.addSampler { _ = await brokerCheck() }
        let samplerLogger = logger
        metrics.addSampler { await samplePipeline(database: database, metrics: pipelineMetrics, logger: samplerLogger) }
        metrics.addSampler {
            serviceMetrics.databasePool(database)
            serviceMetrics.process()
            serviceMetrics.databaseUp(await database.isReachable())
        }
        // The console's pipeline routes (`/internal/v1/console/`, never routed by the gateway or the
        // Ingress), on every service; the lag comes from the consumer made below.
        let consumerLag = ConsumerLagSource()
        PipelineAdminRoutes.add(to: router, service: configuration.service, key: configuration.consoleKey, database: database,
                                brokerReachable: brokerCheck, consumerLag: consumerLag)
        StatsAdminRoutes.add(to: router, service: configuration.service, key: configuration.consoleKey, database: database, stats: definition.consoleStats)
        HoldingsAdminRoutes.add(to: router, service: configuration.service, key: configuration.consoleKey, database: database, holdings: definition.consoleHoldings)
        var handleEvent = definition.handleEvent
        if let reports = definition.reports {
            let desk = ReportDesk(app: configuration.app ?? .mycirclee, content: reports(building), quota: configuration.reportQuota, logger: logger)
            building.reports = desk
            ModerationAdminRoutes.add(to: router, service: configuration.service, key: configuration.consoleKey, database: database, desk: desk)
            metrics.addSampler { await sampleReports(database: database, metrics: serviceMetrics, logger: samplerLogger) }
            // An account deleted takes its reports and blocks with it, before the service erases its content.
            if let handler = handleEvent {
                handleEvent = { event, connection, context in
                    if event.type == .userDeleted {
                        let user = try event.decode(UserDeleted.self).payload.userId
                        try await ReportDesk.erase(user, on: connection, logger: context.logger)
                        try await BlockList.erase(user, on: connection, logger: context.logger)
                    }
                    try await handler(event, connection, context)
                }
            }
        }
        let context = building  // complete now: what follows captures it
        try definition.addRoutes(router, context)
        let app = Application(
            router: router,
            server: definition.server?(context) ?? .http1OnEventLoops(),
            configuration: .init(address: .hostname(configuration.httpHost, port: configuration.httpPort), serverName: "colony-\(configuration.service.rawValue)"),
            logger: logger
        )

        var services: [any Service] = (traceExporter.map { [$0] } ?? []) + [database, relay]
        if let handleEvent, !definition.consumes.isEmpty {
            let topics = definition.consumes.map { EventTopics.topic(for: $0, prefix: configuration.topicPrefix) }
            let handler: EventHandler = { event, connection in try await handleEvent(event, connection, context) }
            // One group per service and deployment: the topic prefix names the deployment.
            let group = "\(configuration.topicPrefix)-\(configuration.service.rawValue)"
            let consumerOverrides = configuration.kafkaSecurity.merging(["fetch.wait.max.ms": String(pipeline.consumerFetchWaitMilliseconds)]) { $1 }
            var consumers = [EventConsumer(
                configuration: .consumer(bootstrapServers: configuration.kafkaBrokers, groupId: group, clientId: "colony-\(configuration.service.rawValue)", overrides: consumerOverrides,
                                         idleFetching: pipeline.consumerIdleFetching),
                topics: topics, database: database, settings: pipeline, metrics: pipelineMetrics, logger: logger,
                handler: handler, afterHandling: definition.afterEvent
            )]
            if let live = definition.liveDelivery {
                consumers.append(EventConsumer(
                    configuration: .consumer(bootstrapServers: configuration.kafkaBrokers, groupId: "\(group)-live-\(live.replicaID)",
                                             clientId: "colony-\(configuration.service.rawValue)-live", overrides: consumerOverrides, idleFetching: pipeline.consumerIdleFetching),
                    topics: topics, database: database, settings: pipeline, metrics: pipelineMetrics, logger: logger,
                    mode: .live(maxEventAge: live.maxEventAge, deliver: live.deliver), handler: handler
                ))
            }
            for consumer in consumers {
                metrics.addSampler { consumer.sampleMetrics() }
            }
            if let shared = consumers.first { consumerLag.watch(shared) }  // the service's group, not the live one
            pipelineMetrics.consuming(definition.consumes.flatMap { EventCatalogue.types[$0] ?? [] })
            services.append(contentsOf: consumers as [any Service])
            services.append(DeadLetterRetrier(database: database, handler: handler, metrics: pipelineMetrics, logger: logger))
        }
        // The service's jobs, and the platform's retention in every service.
        let jobs = definition.jobs(context) + [Retention.platformJob(pipeline)]
        if !jobs.isEmpty {
            services.append(JobScheduler(database: database, jobs: jobs, logger: logger, metrics: serviceMetrics))
            let intervals = Dictionary(jobs.map { ($0.name, $0.interval) }) { first, _ in first }
            metrics.addSampler { await sampleJobs(database: database, intervals: intervals, metrics: serviceMetrics, logger: samplerLogger) }
        }
        if let source = configuration.tokens.suspensions {
            if let key = configuration.internalKey {
                services.append(SuspensionWatcher(accounts: suspendedAccounts, source: source, key: key, logger: logger))
                metrics.addSampler { serviceMetrics.suspensionList(age: suspendedAccounts.age) }
            } else {
                logger.warning("COLONY_INTERNAL_KEY is unset: suspended accounts are not read from auth, their tokens work until they expire")
            }
        }
        services.append(contentsOf: definition.services(context))
        services.append(app)
        // After the server, so told of a shutdown before it: the pre-stop pause.
        services.append(drain)
        // Last in the group, so the first told of a shutdown: it starts the deadline after which
        // the host stops waiting for the group (see below).
        let outcome = GroupOutcome()
        let abandonAfter = configuration.shutdownGrace + .seconds(15)
        let hostLogger = logger
        services.append(ShutdownDeadline(after: abandonAfter) {
            outcome.abandon(logger: hostLogger, after: abandonAfter)
        })

        var groupConfiguration = ServiceGroupConfiguration(
            services: services.map { .init(service: NamedService($0, logger: logger)) },
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: logger
        )
        // A service that ignores the shutdown (a client that never lets go of its socket, say)
        // is cancelled once the grace has passed, instead of keeping the process alive.
        groupConfiguration.maximumGracefulShutdownDuration = configuration.shutdownGrace
        let group = ServiceGroup(configuration: groupConfiguration)
        // Cancelling the caller (tests do) shuts down gracefully, as SIGTERM does: cancelling
        // the server outright can leave an accepted connection unserved, which NIO traps on
        // (swift-nio#3481). The group runs in its own task so that it does not see the
        // cancellation itself; this waits for its outcome. A service still running once the
        // grace has passed and it was cancelled (a connection whose handler ignores cancellation,
        // say) would keep the process, or a test, waiting without end: `ShutdownDeadline` stops
        // the wait 15 s after that and says so, and the process exits.
        Task {
            do {
                try await group.run()
                outcome.finish(.success(()))
            } catch {
                outcome.finish(.failure(error))
            }
        }
        try await withTaskCancellationHandler {
            try await outcome.value()
        } onCancel: {
            Task { await group.triggerGracefulShutdown() }
        }
    }

    /// The age of the oldest open report, for `/metrics` (and the 24-hour alert).
    static func sampleReports(database: Database, metrics: ServiceMetrics, logger: Logger) async {
        do {
            let oldest = try await ReportDesk.oldestOpenAge(database)
            metrics.reports(oldestOpenAge: oldest.age, open: oldest.open)
        } catch {
            logger.debug("reports not sampled", metadata: ["error": "\(String(reflecting: error))"])
        }
    }

    /// Reads the outbox backlog and the dead letters for `/metrics`.
    static func samplePipeline(database: Database, metrics: PipelineMetrics, logger: Logger) async {
        do {
            let rows = try await database.query("""
                SELECT (SELECT count(*) FROM outbox WHERE relayed_at IS NULL),
                       (SELECT coalesce(extract(epoch FROM now() - min(created_at)), 0)::float8 FROM outbox WHERE relayed_at IS NULL),
                       (SELECT count(*) FROM outbox WHERE relayed_at IS NOT NULL),
                       (SELECT count(*) FROM dead_letters WHERE stage = 'publish'),
                       (SELECT count(*) FROM dead_letters WHERE stage = 'consume')
                """)
            for try await row in rows {
                var cells = RowCells(row)
                let pending: Int64 = try cells.next(), oldest: Double = try cells.next(), retained: Int64 = try cells.next()
                let publish: Int64 = try cells.next(), consume: Int64 = try cells.next()
                metrics.outbox(pending: Int(pending), oldestAgeSeconds: oldest, retained: Int(retained))
                metrics.deadLetters([.publish: Int(publish), .consume: Int(consume)])
            }
        } catch {
            logger.debug("could not sample the outbox for /metrics", metadata: ["error": "\(error)"])
        }
    }

    /// Reads the jobs' last runs (any replica's) for `/metrics`.
    static func sampleJobs(database: Database, intervals: [String: Duration], metrics: ServiceMetrics, logger: Logger) async {
        do {
            var runs: [(job: String, lastSuccess: Date?, lastFinished: Date?, failed: Bool)] = []
            for try await row in try await database.query("SELECT job, last_succeeded_at, last_finished_at, last_error FROM job_runs") {
                var cells = RowCells(row)
                let job: String = try cells.next(), success: Date? = try cells.next(), finished: Date? = try cells.next(), error: String? = try cells.next()
                runs.append((job, success, finished, error != nil))
            }
            metrics.jobs(runs, intervals: intervals)
        } catch {
            logger.debug("could not sample the jobs for /metrics", metadata: ["error": "\(error)"])
        }
    }

    /// Applies migrations with a short-lived pool before anything else starts.
    public static func migrate(_ migrations: [Migration], configuration: ServiceConfiguration, logger: Logger) async throws {
        // No statement or lease timeout: a migration takes as long as it takes.
        var databaseConfiguration = configuration.database
        databaseConfiguration.timeouts = .unbounded
        let database = Database(configuration: databaseConfiguration, logger: logger)
        _ = try await database.whileRunning {
            try await MigrationRunner(database: database).migrate(migrations)
        }
    }
}

/// A service of the host's group that, when it ends only because it was cancelled after the
/// shutdown grace ran out, names itself in the log: the one that held the shutdown up.
struct NamedService: Service {
    let service: any Service
    let name: String
    let logger: Logger

    init(_ service: any Service, logger: Logger) {
        self.service = service
        self.name = String(String(describing: type(of: service)).prefix { $0 != "<" })
        self.logger = logger
    }

    func run() async throws {
        defer {
            if Task.isCancelled && Task.isShuttingDownGracefully {
                logger.error("service did not stop within the shutdown grace and was cancelled", metadata: ["service": "\(name)"])
            }
        }
        try await service.run()
    }
}

/// How the host's service group ended: it finished, or the host stopped waiting for it.
final class GroupOutcome: Sendable {
    private struct State {
        var result: Result<Void, any Error>?
        var waiter: CheckedContinuation<Void, any Error>?
    }

    private let state = Mutex(State())

    /// Waits for the outcome; not ended by cancellation (cancelling starts the shutdown instead).
    func value() async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let result: Result<Void, any Error>? = state.withLock { state in
                if let result = state.result { return result }
                state.waiter = continuation
                return nil
            }
            if let result { continuation.resume(with: result) }
        }
    }

    /// Sets the outcome once; false when it was set already.
    @discardableResult
    func finish(_ result: Result<Void, any Error>) -> Bool {
        let (first, waiter): (Bool, CheckedContinuation<Void, any Error>?) = state.withLock { state in
            guard state.result == nil else { return (false, nil) }
            state.result = result
            defer { state.waiter = nil }
            return (true, state.waiter)
        }
        waiter?.resume(with: result)
        return first
    }

    /// Stops waiting for a group that outlived its shutdown grace and cancellation.
    func abandon(logger: Logger, after: Duration) {
        guard finish(.success(())) else { return }
        logger.error("the service group did not stop within the shutdown grace and cancellation; no longer waiting for it", metadata: ["after": "\(after)"])
    }
}

/// Told of a shutdown first (it is the group's last service): starts the clock after which
/// the host stops waiting, in a task of its own that outlives the group's cancellation.
struct ShutdownDeadline: Service {
    let after: Duration
    let abandon: @Sendable () -> Void

    func run() async throws {
        // Returns at a graceful shutdown, or throws when the group is cancelled (a service
        // failed): either way the group is stopping.
        try? await gracefulShutdown()
        let after = after, abandon = abandon
        Task {
            try? await Task.sleep(for: after)
            abandon()
        }
    }
}

/// The pre-stop pause (`COLONY_SHUTDOWN_DRAIN_SECONDS`), told of a shutdown just before the HTTP
/// server: `/ready` answers 503 while everything still serves, for the pause, so that the gateway
/// or Kubernetes' endpoints controller stops sending new requests; then the definition's
/// `beforeStopping` runs, and the server stops accepting and finishes what it holds. Not when the
/// group is cancelled (a service failed): then nothing is to be drained.
final class ShutdownDrain: Service, Sendable {
    let pause: Duration
    let beforeStopping: (@Sendable () async -> Void)?
    let logger: Logger
    private let draining = Atomic<Bool>(false)

    init(pause: Duration, beforeStopping: (@Sendable () async -> Void)?, logger: Logger) {
        self.pause = pause
        self.beforeStopping = beforeStopping
        self.logger = logger
    }

    var isDraining: Bool { draining.load(ordering: .relaxed) }

    func run() async throws {
        // Returns at a graceful shutdown; throws when the group is cancelled.
        do { try await gracefulShutdown() } catch { return }
        draining.store(true, ordering: .relaxed)
        if pause > .zero {
            logger.info("shutting down: not ready, still serving for the pre-stop pause", metadata: ["pause": "\(pause)"])
            // Cancelled once the grace has passed: then on at once.
            try? await Task.sleep(for: pause)
        }
        await beforeStopping?()
    }
}
