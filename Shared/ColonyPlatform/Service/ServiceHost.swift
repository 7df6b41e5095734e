import ColonyKafka
import ColonyModels
import Foundation
import Hummingbird
import HummingbirdCore
import Logging
import PostgresNIO
import Prometheus
import ServiceLifecycle

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
    /// Adds the service's routes to the router built by the platform.
    public var addRoutes: @Sendable (Router<ColonyRequestContext>, ServiceContext) -> Void
    /// The HTTP server to run (default HTTP/1.1); realtime's adds the WebSocket upgrade.
    public var server: (@Sendable (ServiceContext) -> HTTPServerBuilder)? = nil
    /// Set for a service each of whose replicas must see every event (realtime): the consumer
    /// group id gets this suffix (a replica id), so every replica is its own group. The inbox
    /// still applies `handleEvent` once per event across all replicas.
    public var consumerGroupSuffix: String? = nil
    /// Runs on every replica after each consumed event's inbox transaction, whether this replica
    /// applied it or another one already had (realtime delivers to its own sockets here).
    public var afterEvent: (@Sendable (ReceivedEvent) async -> Void)? = nil

    public init(migrations: [Migration], consumes: [ColonyService] = [], handleEvent: ServiceEventHandler? = nil, jobs: @escaping @Sendable (ServiceContext) -> [ScheduledJob] = { _ in [] }, services: @escaping @Sendable (ServiceContext) -> [any Service] = { _ in [] }, addRoutes: @escaping @Sendable (Router<ColonyRequestContext>, ServiceContext) -> Void) {
        self.migrations = migrations
        self.consumes = consumes
        self.handleEvent = handleEvent
        self.jobs = jobs
        self.services = services
        self.addRoutes = addRoutes
    }
}

public typealias ServiceEventHandler = @Sendable (ReceivedEvent, PostgresConnection, ServiceContext) async throws -> Void

/// The platform pieces a service's routes and domain code use.
public struct ServiceContext: Sendable {
    public let configuration: ServiceConfiguration
    public let database: Database
    public let outbox: Outbox
    public let tokenMiddleware: TokenMiddleware
    public let logger: Logger
    /// The registry `/metrics` serves: a service's own counters go here too.
    public let metrics: PrometheusCollectorRegistry
}

/// Runs a service: applies migrations, then runs Postgres, the producer, the outbox relay, the
/// event consumer, the job scheduler and the HTTP server as one service group. SIGTERM/SIGINT
/// shut down in reverse order: stop accepting and drain HTTP, stop consuming and commit, stop
/// the relay and flush its producer, close Postgres.
public enum ServiceHost {
    public static func run(_ definition: ServiceDefinition, configuration: ServiceConfiguration) async throws {
        var logger = Logger(label: "colony.\(configuration.service.rawValue)")
        logger.logLevel = configuration.logLevel
        logger[metadataKey: "service"] = .string(configuration.service.rawValue)

        try await migrate(definition.migrations, configuration: configuration, logger: logger)

        let database = Database(configuration: configuration.database, logger: logger)
        let admin = KafkaAdmin(configuration: KafkaConfiguration(bootstrapServers: configuration.kafkaBrokers))
        let outbox = Outbox(schema: configuration.database.schema, topicPrefix: configuration.topicPrefix)
        let relay = try OutboxRelay(
            database: database,
            producerConfiguration: .producer(bootstrapServers: configuration.kafkaBrokers, clientId: "colony-\(configuration.service.rawValue)"),
            outbox: outbox,
            logger: logger
        )
        let verifier = TokenVerifier(configuration: configuration.tokens, logger: logger)
        let metrics = HTTPMetrics()
        let context = ServiceContext(configuration: configuration, database: database, outbox: outbox, tokenMiddleware: TokenMiddleware(verifier: verifier),
                                     logger: logger, metrics: metrics.registry)

        let router = ColonyRouter.make(
            metrics: metrics,
            maxBodyBytes: configuration.maxBodyBytes,
            readiness: .standard(database: database, broker: { await relay.isBrokerReachable() })
        )
        definition.addRoutes(router, context)
        let app = Application(
            router: router,
            server: definition.server?(context) ?? .http1(),
            configuration: .init(address: .hostname(configuration.httpHost, port: configuration.httpPort), serverName: "colony-\(configuration.service.rawValue)"),
            logger: logger
        )

        var services: [any Service] = [database, relay]
        if let handleEvent = definition.handleEvent, !definition.consumes.isEmpty {
            let topics = definition.consumes.map { EventTopics.topic(for: $0, prefix: configuration.topicPrefix) }
            try await admin.createTopics(topics)
            services.append(EventConsumer(
                // One group per service and deployment: the topic prefix names the deployment.
                configuration: .consumer(bootstrapServers: configuration.kafkaBrokers, groupId: "\(configuration.topicPrefix)-\(configuration.service.rawValue)" + (definition.consumerGroupSuffix.map { "-\($0)" } ?? "")),
                topics: topics,
                database: database,
                logger: logger,
                handler: { event, connection in try await handleEvent(event, connection, context) },
                afterHandling: definition.afterEvent
            ))
        }
        let jobs = definition.jobs(context)
        if !jobs.isEmpty {
            services.append(JobScheduler(database: database, jobs: jobs, logger: logger))
        }
        services.append(contentsOf: definition.services(context))
        services.append(app)

        let group = ServiceGroup(configuration: .init(
            services: services.map { .init(service: $0) },
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: logger
        ))
        // Cancelling the caller (tests do) shuts down gracefully, as SIGTERM does: cancelling
        // the server outright can leave an accepted connection unserved, which NIO traps on
        // (swift-nio#3481). The group runs in its own task so that it does not see the
        // cancellation itself; this waits for it to finish either way.
        let running = Task { try await group.run() }
        try await withTaskCancellationHandler {
            try await running.value
        } onCancel: {
            Task { await group.triggerGracefulShutdown() }
        }
    }

    /// Applies migrations with a short-lived pool before anything else starts.
    public static func migrate(_ migrations: [Migration], configuration: ServiceConfiguration, logger: Logger) async throws {
        let database = Database(configuration: configuration.database, logger: logger)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await database.client.run() }
            defer { group.cancelAll() }
            try await MigrationRunner(database: database).migrate(migrations)
        }
    }
}
