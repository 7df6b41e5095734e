import ColonyKafka
import ColonyModels
import Foundation
import Logging

/// Everything a Colony service reads from its environment at startup.
public struct ServiceConfiguration: Sendable {
    public var service: ColonyService
    /// The app whose tokens this service accepts (nil for services that serve every app).
    public var app: App?
    public var httpHost: String
    public var httpPort: Int
    /// What a route reads of a body at most, unless it is an upload route (`maxUploadBytes`).
    public var maxBodyBytes: Int
    /// The largest body an upload route takes (services with uploads set it from their file
    /// limits); a declared length over it is refused before anything is read.
    public var maxUploadBytes: Int
    public var logLevel: Logger.Level
    public var database: DatabaseConfiguration
    public var kafkaBrokers: String
    public var topicPrefix: String
    public var tokens: TokenVerifierConfiguration
    public var pipeline: PipelineSettings
    /// librdkafka's security properties (TLS, SASL) for every producer, consumer and admin client.
    public var kafkaSecurity: [String: String] = [:]
    /// The gateways whose `X-Forwarded-For` names the client (see `TrustedProxies`).
    public var trustedProxies: TrustedProxies
    /// How long a graceful shutdown (SIGTERM) may take before what is still running is cancelled:
    /// inside Kubernetes' 30 s termination grace, after the 5 s pre-stop pause.
    public var shutdownGrace: Duration = .seconds(20)
    /// A request unanswered this long is answered 503 (`RequestDeadlineMiddleware`).
    public var requestDeadline: Duration = RequestDeadlineMiddleware.defaultDeadline
    /// The pre-stop pause at SIGTERM, inside the grace: `/ready` answers 503 while the service still
    /// serves, so a gateway or the endpoints controller stops sending before it stops accepting.
    /// Zero unless read from the environment (tests stop services at once).
    public var shutdownDrain: Duration = .zero
    /// The service credential services present on each other's internal routes (`InternalKey`).
    public var internalKey: InternalKey? = nil
    /// The console's credential on every service's admin routes (`ConsoleCaller`): another value
    /// than `internalKey`, so a service's own credential cannot act as an operator.
    public var consoleKey: InternalKey? = nil
    /// Auth's internal root URL (`COLONY_AUTH_URL`, else the root of `COLONY_JWKS_URL`, which auth
    /// serves): asked about suspended accounts and, by chat, about addresses. Nil: not asked.
    public var authURL: String? = nil
    /// Whether the hot reads that have one are served by their fast path (`GeneratedFastPath`);
    /// `off` serves them through their generated handlers, the fast paths' reference.
    public var fastPaths: FastPathMode = .on
    /// Reports a user may file in a service (`ReportDesk`): at most this many in its window.
    public var reportQuota = Quota(20, perSeconds: 86_400)

    public init(service: ColonyService, app: App?, httpHost: String = "127.0.0.1", httpPort: Int = 8080, maxBodyBytes: Int = ColonyRequestContext.defaultBodyLimit, maxUploadBytes: Int? = nil, logLevel: Logger.Level = .info, database: DatabaseConfiguration, kafkaBrokers: String, topicPrefix: String = EventTopics.defaultPrefix, tokens: TokenVerifierConfiguration, pipeline: PipelineSettings = PipelineSettings(), trustedProxies: TrustedProxies = .loopback) {
        self.service = service
        self.app = app
        self.httpHost = httpHost
        self.httpPort = httpPort
        self.maxBodyBytes = maxBodyBytes
        self.maxUploadBytes = max(maxBodyBytes, maxUploadBytes ?? maxBodyBytes)
        self.logLevel = logLevel
        self.database = database
        self.kafkaBrokers = kafkaBrokers
        self.topicPrefix = topicPrefix
        self.tokens = tokens
        self.pipeline = pipeline
        self.trustedProxies = trustedProxies
    }

    /// Reads the platform's settings (every service's): listen address, body limit, logs, Postgres,
    /// Kafka, tokens, proxies, shutdown, the event pipeline (`PipelineSettings`), Kafka's TLS and SASL
    /// (`KafkaSecurity`). Names, defaults and ranges are here in the code; docs/configuration.md
    /// lists them (`colony-admin config reference`).
    public static func load(service: ColonyService, app: App?, environment: EnvironmentReader = EnvironmentReader()) throws(ConfigurationError) -> ServiceConfiguration {
        try environment.checkSources()
        let tokens = try TokenVerifierConfiguration.load(audience: app, environment: environment)
        var configuration = ServiceConfiguration(
            service: service,
            app: app,
            httpHost: environment.string("COLONY_HTTP_HOST", default: "0.0.0.0"),
            httpPort: try environment.int("COLONY_HTTP_PORT", default: 8080, range: 1...65535),
            maxBodyBytes: try environment.int("COLONY_MAX_BODY_BYTES", default: ColonyRequestContext.defaultBodyLimit, range: 1024...(1 << 30)),
            logLevel: try environment.enumeration("LOG_LEVEL", default: .info),
            database: try DatabaseConfiguration.load(service: service, environment: environment),
            kafkaBrokers: try environment.string("COLONY_KAFKA_BROKERS"),
            topicPrefix: environment.string("COLONY_TOPIC_PREFIX", default: EventTopics.defaultPrefix),
            tokens: tokens,
            pipeline: try PipelineSettings.load(environment: environment),
            trustedProxies: try TrustedProxies.load(environment: environment)
        )
        configuration.kafkaSecurity = try KafkaSecurity.properties(environment: environment)
        configuration.shutdownGrace = .seconds(try environment.int("COLONY_SHUTDOWN_GRACE_SECONDS", default: 20, range: 1...600))
        configuration.requestDeadline = .seconds(try environment.int("COLONY_REQUEST_DEADLINE_SECONDS", default: 15, range: 1...600))
        configuration.shutdownDrain = .seconds(try environment.int("COLONY_SHUTDOWN_DRAIN_SECONDS", default: 3, range: 0...60))
        configuration.internalKey = try InternalKey.load(environment: environment)
        configuration.consoleKey = try InternalKey.load(environment: environment, variable: "COLONY_CONSOLE_KEY")
        configuration.fastPaths = try environment.enumeration("COLONY_FAST_PATHS", default: FastPathMode.on)
        configuration.reportQuota = try environment.quota("COLONY_REPORTS_RATE", default: Quota(20, perSeconds: 86_400))
        configuration.authURL = try environment.url("COLONY_AUTH_URL")?.absoluteString ?? tokens.keySource.root
        let refresh = try environment.int("COLONY_SUSPENSIONS_REFRESH_SECONDS", default: 10, range: 1...60)
        if service != .auth {
            configuration.tokens.suspensions = configuration.authURL.map { SuspensionSource(authURL: $0, interval: .seconds(refresh)) }
        }
        return configuration
    }
}

extension ServiceConfiguration {
    /// A Kafka client configuration for this service's brokers with its security settings.
    public var kafka: KafkaConfiguration {
        KafkaConfiguration(bootstrapServers: kafkaBrokers, properties: kafkaSecurity)
    }
}

/// Where a service's Postgres is and which role it logs in as.
public struct DatabaseConfiguration: Sendable {
    public var host: String
    public var port: Int
    public var database: String
    public var user: String
    public var password: String
    /// The schema the service owns; its tables, migrations, outbox and inbox live there.
    public var schema: String
    public var poolSize: Int
    public var tls: DatabaseTLS
    /// Connect, statement, idle-in-transaction and lease timeouts (`DatabaseTimeouts`).
    public var timeouts = DatabaseTimeouts()

    public init(host: String, port: Int, database: String, user: String, password: String, schema: String, poolSize: Int = 8, tls: DatabaseTLS = .disable) {
        self.host = host
        self.port = port
        self.database = database
        self.user = user
        self.password = password
        self.schema = schema
        self.poolSize = poolSize
        self.tls = tls
    }

    public static func load(service: ColonyService, environment: EnvironmentReader) throws(ConfigurationError) -> DatabaseConfiguration {
        var configuration = DatabaseConfiguration(
            host: try environment.string("COLONY_PG_HOST"),
            port: try environment.int("COLONY_PG_PORT", default: 5432, range: 1...65535),
            database: environment.string("COLONY_PG_DATABASE", default: "colony"),
            user: environment.string("COLONY_PG_USER", default: DatabaseProvisioner.roleName(for: service.rawValue)),
            password: try environment.secret("COLONY_PG_PASSWORD", minimumLength: 16),
            schema: environment.string("COLONY_PG_SCHEMA", default: service.rawValue),
            poolSize: try environment.int("COLONY_PG_POOL_SIZE", default: 8, range: 1...200),
            tls: try DatabaseTLS.load(environment: environment)
        )
        configuration.timeouts = try DatabaseTimeouts.load(environment: environment)
        return configuration
    }
}

extension TokenVerifierConfiguration.KeySource {
    /// The root (scheme, host, port) of the JWKS URL, when keys are fetched.
    var root: String? {
        guard case .jwks(let url) = self, let scheme = url.scheme, let host = url.host else { return nil }
        return "\(scheme)://\(host)" + (url.port.map { ":\($0)" } ?? "")
    }
}
