import ColonyModels
import ColonyPlatform
import Foundation
import Hummingbird
import HummingbirdCore
import Logging

/// The realtime service's own settings, from the environment.
public struct RealtimeSettings: Sendable {
    /// A socket that sends nothing (not even a heartbeat) for this long is closed.
    public var heartbeatTimeout: Duration
    /// Outgoing frames queued per socket before a slow client is disconnected.
    public var socketBufferMessages: Int
    public var maxFrameBytes: Int
    /// This replica's id: its live consumer group's suffix (every replica hands every new event
    /// to its own sockets).
    public var replicaID: String
    /// An event older than this is never pushed to a socket (history, a long outage's backlog).
    public var maxEventAge: Duration
    /// Per-client limits (sockets, channels, bindings, message rate, payload sizes).
    public var quotas: RealtimeQuotas
    /// The topic scopes and each app's policy for unscoped topics.
    public var topics: TopicRules
    /// The services realtime asks about memberships its projection has not seen yet.
    public var owners = MembershipOwners()

    public init(heartbeatTimeout: Duration = .seconds(60), socketBufferMessages: Int = 1024, maxFrameBytes: Int = 1 << 20, replicaID: String = RealtimeSettings.randomReplicaID(),
                maxEventAge: Duration = .seconds(60), quotas: RealtimeQuotas = RealtimeQuotas(), topics: TopicRules = TopicRules()) {
        self.heartbeatTimeout = heartbeatTimeout
        self.socketBufferMessages = socketBufferMessages
        self.maxFrameBytes = maxFrameBytes
        self.replicaID = replicaID
        self.maxEventAge = maxEventAge
        self.quotas = quotas
        self.topics = topics
    }

    public static func randomReplicaID() -> String {
        String(UUID().uuidString.lowercased().prefix(8))
    }

    /// `COLONY_REALTIME_HEARTBEAT_TIMEOUT_SECONDS` (60), `COLONY_REALTIME_SOCKET_BUFFER_MESSAGES` (1024),
    /// `COLONY_REALTIME_MAX_FRAME_BYTES` (1 MiB), `COLONY_REALTIME_REPLICA_ID` (random; the pod name in
    /// Kubernetes), `COLONY_REALTIME_MAX_EVENT_AGE_SECONDS` (60); the quotas
    /// `COLONY_REALTIME_MAX_SOCKETS_PER_USER` (10), `_MAX_SOCKETS_PER_ADDRESS` (100),
    /// `_MAX_CHANNELS_PER_SOCKET` (100), `_MAX_BINDINGS_PER_CHANNEL` (20), `_MAX_MESSAGES_PER_SECOND`
    /// (100), `_MAX_BROADCAST_BYTES` (7000), `_MAX_PRESENCE_META_BYTES` (2048), `_PRESENCE_RATE`
    /// (`5/30`: tracks per channel per seconds); `COLONY_REALTIME_UNSCOPED_TOPICS` (`changes`) and
    /// `COLONY_REALTIME_UNSCOPED_TOPICS_<APP>`: `deny`, `changes` or `open` for topics outside the scopes.
    public static func load(environment: EnvironmentReader) throws(ConfigurationError) -> RealtimeSettings {
        let presence = try environment.quota("COLONY_REALTIME_PRESENCE_RATE", default: Quota(5, perSeconds: 30))
        let quotas = RealtimeQuotas(
            socketsPerUser: try environment.int("COLONY_REALTIME_MAX_SOCKETS_PER_USER", default: 10, range: 1...10_000),
            socketsPerAddress: try environment.int("COLONY_REALTIME_MAX_SOCKETS_PER_ADDRESS", default: 100, range: 1...1_000_000),
            channelsPerSocket: try environment.int("COLONY_REALTIME_MAX_CHANNELS_PER_SOCKET", default: 100, range: 1...10_000),
            bindingsPerChannel: try environment.int("COLONY_REALTIME_MAX_BINDINGS_PER_CHANNEL", default: 20, range: 1...1000),
            messagesPerSecond: try environment.int("COLONY_REALTIME_MAX_MESSAGES_PER_SECOND", default: 100, range: 1...100_000),
            broadcastBytes: try environment.int("COLONY_REALTIME_MAX_BROADCAST_BYTES", default: RealtimeQuotas.maxRelayedPayloadBytes,
                                                range: 64...RealtimeQuotas.maxRelayedPayloadBytes),
            presenceMetaBytes: try environment.int("COLONY_REALTIME_MAX_PRESENCE_META_BYTES", default: 2048, range: 64...RealtimeQuotas.maxRelayedPayloadBytes),
            presenceEvents: presence.count, presenceWindowSeconds: presence.seconds
        )
        let fallback = try environment.enumeration("COLONY_REALTIME_UNSCOPED_TOPICS", default: UnscopedTopicPolicy.changes)
        var unscoped: [App: UnscopedTopicPolicy] = [:]
        for app in App.allCases {
            unscoped[app] = try environment.enumeration("COLONY_REALTIME_UNSCOPED_TOPICS_\(app.rawValue.uppercased())", default: fallback)
        }
        var settings = RealtimeSettings(
            heartbeatTimeout: .seconds(try environment.int("COLONY_REALTIME_HEARTBEAT_TIMEOUT_SECONDS", default: 60, range: 1...3600)),
            socketBufferMessages: try environment.int("COLONY_REALTIME_SOCKET_BUFFER_MESSAGES", default: 1024, range: 16...1_000_000),
            maxFrameBytes: try environment.int("COLONY_REALTIME_MAX_FRAME_BYTES", default: 1 << 20, range: 1024...(16 << 20)),
            replicaID: environment.optionalString("COLONY_REALTIME_REPLICA_ID") ?? randomReplicaID(),
            maxEventAge: .seconds(try environment.int("COLONY_REALTIME_MAX_EVENT_AGE_SECONDS", default: 60, range: 1...86400)),
            quotas: quotas,
            topics: TopicRules(unscoped: unscoped)
        )
        settings.owners = try MembershipOwners.load(environment: environment)
        return settings
    }
}

/// The realtime service: Supabase-Realtime-compatible WebSocket fan-out of the domain events
/// (postgres_changes in the seeds' tables), broadcast and presence, for every app's tokens.
public enum RealtimeService {
    public static var migrations: [Migration] { RealtimeMigrations.all }

    /// The domain topics whose events become row changes.
    public static let consumedServices = EventCatalogue.subscriptions(of: .realtime)

    /// `hub` is the replica's socket registry (tests and the benchmark read it).
    public static func definition(settings: RealtimeSettings, hub: RealtimeHub? = nil) -> ServiceDefinition {
        let hub = hub ?? RealtimeHub(settings: settings, replicaID: settings.replicaID)
        let socket = RealtimeSocket(hub: hub, settings: settings)
        var definition = ServiceDefinition(
            migrations: RealtimeMigrations.all,
            consumes: consumedServices,
            handleEvent: { event, connection, context in
                try await DomainEventHandler(memberships: MembershipProjection(logger: context.logger)).handle(event, on: connection)
            },
            services: { _ in [hub] },
            addRoutes: { router, context in
                hub.attach(database: context.database, verifier: TokenVerifier(configuration: context.configuration.tokens, suspendedAccounts: context.suspendedAccounts, logger: context.logger),
                           logger: context.logger,
                           membership: MembershipLookup(owners: settings.owners, key: context.configuration.internalKey))
                socket.addRoutes(to: router)
            }
        )
        definition.server = { context in socket.server(trustedProxies: context.configuration.trustedProxies) }
        // The shared group keeps the membership projection complete (also across a restart of
        // every replica); each replica's live consumer hands new events to its own sockets.
        definition.liveDelivery = LiveDelivery(replicaID: settings.replicaID, maxEventAge: settings.maxEventAge) { event in await hub.deliver(event) }
        // At a shutdown, after the pre-stop pause: sockets closed with 1001, so that clients
        // reconnect through the gateway to another replica and join their channels there.
        definition.beforeStopping = { hub.closeAll() }
        return definition
    }
}
