import ColonyKafka
import ColonyModels
import Foundation

/// How a service's events travel: the outbox's size limit, how often a consumed event may fail
/// before it becomes a dead letter, and the shape of the topics Colony creates.
public struct PipelineSettings: Sendable {
    /// The largest encoded event the outbox accepts. It must stay below the broker's message
    /// limit (Kafka's default `message.max.bytes` is 1 MB): a change that would publish more is
    /// refused before anything is written.
    public var maxEventBytes: Int
    /// Failed attempts of one consumed event's handler before the event becomes a dead letter
    /// and the consumer moves past it.
    public var maxHandlerAttempts: Int
    /// The first wait before retrying a failed handler; it doubles up to `maxHandlerRetryDelay`.
    public var handlerRetryDelay: Duration
    public var maxHandlerRetryDelay: Duration
    public var topicPartitions: Int32
    /// 1 on a single local broker, 3 on a production cluster.
    public var topicReplicationFactor: Int32
    /// How long an event stays in the outbox after the broker acknowledged it. Should the broker
    /// lose a topic (a broker restarted without its data), the relay sends what it kept again;
    /// consumers' inboxes drop what they had. Zero deletes rows as soon as they are acknowledged.
    public var outboxRetention: Duration
    /// How long a dead letter is kept after it last failed (zero: until an operator drops it).
    /// Dead letters hold whole events, personal data among them.
    public var deadLetterRetention: Duration
    /// How long an import's ledger entries (which source row became which row, by id) are kept:
    /// long enough to resume or re-run an import, then they go (zero: kept).
    public var importLedgerRetention: Duration
    /// Per app, the apps file's `import_ledger_retention_days` (0: kept), instead of
    /// `importLedgerRetention`: the ledger and (in auth) the import runs of that app.
    public var appImportLedgerRetention: [App: Duration] = [:]
    /// How long the broker may hold a consumer's fetch while nothing new is there (librdkafka's
    /// `fetch.wait.max.ms`, `KafkaConfiguration.consumerFetchWaitMilliseconds` by default).
    public var consumerFetchWaitMilliseconds = KafkaConfiguration.consumerFetchWaitMilliseconds
    /// How consumers doze while no event arrives (nil: they fetch all the time), for brokers that
    /// hold every fetch for its whole wait (`KafkaConfiguration.IdleFetching`).
    public var consumerIdleFetching: KafkaConfiguration.IdleFetching? = KafkaConfiguration.IdleFetching()

    public init(maxEventBytes: Int = 512 << 10, maxHandlerAttempts: Int = 5, handlerRetryDelay: Duration = .milliseconds(100), maxHandlerRetryDelay: Duration = .seconds(30),
                topicPartitions: Int32 = 3, topicReplicationFactor: Int32 = 1, outboxRetention: Duration = .seconds(900),
                deadLetterRetention: Duration = .seconds(30 * 86_400), importLedgerRetention: Duration = .seconds(365 * 86_400)) {
        self.maxEventBytes = maxEventBytes
        self.maxHandlerAttempts = maxHandlerAttempts
        self.handlerRetryDelay = handlerRetryDelay
        self.maxHandlerRetryDelay = maxHandlerRetryDelay
        self.topicPartitions = topicPartitions
        self.topicReplicationFactor = topicReplicationFactor
        self.outboxRetention = outboxRetention
        self.deadLetterRetention = deadLetterRetention
        self.importLedgerRetention = importLedgerRetention
    }

    /// How long `app`'s import ledger entries and import runs are kept (zero: for good).
    public func importLedgerRetention(of app: App) -> Duration {
        appImportLedgerRetention[app] ?? importLedgerRetention
    }

    /// The pipeline's settings (docs/configuration.md lists them with their defaults).
    public static func load(environment: EnvironmentReader) throws(ConfigurationError) -> PipelineSettings {
        var settings = PipelineSettings(
            maxEventBytes: try environment.int("COLONY_OUTBOX_MAX_EVENT_BYTES", default: 512 << 10, range: 1024...(8 << 20)),
            maxHandlerAttempts: try environment.int("COLONY_CONSUMER_MAX_ATTEMPTS", default: 5, range: 1...1000),
            topicPartitions: Int32(try environment.int("COLONY_KAFKA_TOPIC_PARTITIONS", default: 3, range: 1...1000)),
            topicReplicationFactor: Int32(try environment.int("COLONY_KAFKA_REPLICATION_FACTOR", default: 1, range: 1...16)),
            outboxRetention: .seconds(try environment.int("COLONY_OUTBOX_RETENTION_SECONDS", default: 900, range: 0...604_800)),
            deadLetterRetention: .seconds(86_400 * (try environment.int("COLONY_DEAD_LETTER_RETENTION_DAYS", default: 30, range: 0...3650))),
            importLedgerRetention: .seconds(86_400 * (try environment.int("COLONY_IMPORT_LEDGER_RETENTION_DAYS", default: 365, range: 0...3650)))
        )
        settings.consumerFetchWaitMilliseconds = try environment.int("COLONY_KAFKA_FETCH_WAIT_MS", default: KafkaConfiguration.consumerFetchWaitMilliseconds, range: 1...5000)
        let idleInterval = try environment.int("COLONY_KAFKA_IDLE_FETCH_INTERVAL_MS", default: 1000, range: 0...60_000)
        let idleAfter = try environment.int("COLONY_KAFKA_IDLE_AFTER_MS", default: 5000, range: 100...600_000)
        settings.consumerIdleFetching = idleInterval == 0 ? nil : KafkaConfiguration.IdleFetching(after: .milliseconds(idleAfter), interval: .milliseconds(idleInterval))
        do {
            settings.appImportLedgerRetention = try appImportLedgerRetention(AppsFile.load(environment: environment))
        } catch {
            try environment.problem(error)
        }
        return settings
    }

    /// The apps file's `import_ledger_retention_days` (0 to 3650), for the apps that give it.
    public static func appImportLedgerRetention(_ file: AppsFile) throws(ConfigurationError) -> [App: Duration] {
        var apps: [App: Duration] = [:]
        for app in App.allCases {
            if let days = try file.days("import_ledger_retention_days", of: app, range: 0...3650) { apps[app] = .seconds(86_400 * days) }
        }
        return apps
    }

    /// The producer's own message limit: the outbox limit plus room for the headers, so that
    /// librdkafka never refuses what the outbox accepted.
    var producerMessageMaxBytes: Int { max(1_000_000, maxEventBytes + (64 << 10)) }
}
