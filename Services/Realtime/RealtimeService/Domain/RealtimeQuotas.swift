import Foundation

/// The limits one client lives within. Each is a setting (`RealtimeSettings.load`); exceeding one
/// gets the reply or close Supabase Realtime sends for it, never unbounded memory.
public struct RealtimeQuotas: Sendable, Equatable {
    /// Sockets one user may hold on a replica (counted from their first join on a socket).
    public var socketsPerUser: Int
    /// Sockets one client address may hold on a replica (counted at the upgrade).
    public var socketsPerAddress: Int
    /// Channels joined at once on one socket (Supabase's `max_channels_per_client`, 100).
    public var channelsPerSocket: Int
    /// `postgres_changes` bindings in one join.
    public var bindingsPerChannel: Int
    /// Frames a client may send per second, sustained (twice that in a burst, so a reconnect
    /// rejoining its channels passes).
    public var messagesPerSecond: Int
    /// A broadcast's payload, as JSON (at most what one Postgres NOTIFY carries between replicas).
    public var broadcastBytes: Int
    /// A presence `track`'s meta, as JSON; checked before anything is stored.
    public var presenceMetaBytes: Int
    /// Presence `track`/`untrack` per channel: `presenceEvents` per `presenceWindowSeconds`
    /// (Supabase's client presence rate limit: 5 per 30 s).
    public var presenceEvents: Int
    public var presenceWindowSeconds: Int

    public init(socketsPerUser: Int = 10, socketsPerAddress: Int = 100, channelsPerSocket: Int = 100, bindingsPerChannel: Int = 20,
                messagesPerSecond: Int = 100, broadcastBytes: Int = RealtimeQuotas.maxRelayedPayloadBytes, presenceMetaBytes: Int = 2048,
                presenceEvents: Int = 5, presenceWindowSeconds: Int = 30) {
        self.socketsPerUser = socketsPerUser
        self.socketsPerAddress = socketsPerAddress
        self.channelsPerSocket = channelsPerSocket
        self.bindingsPerChannel = bindingsPerChannel
        self.messagesPerSecond = messagesPerSecond
        self.broadcastBytes = broadcastBytes
        self.presenceMetaBytes = presenceMetaBytes
        self.presenceEvents = presenceEvents
        self.presenceWindowSeconds = presenceWindowSeconds
    }

    /// The largest NOTIFY payload Postgres takes is 8000 bytes; the envelope needs some of it.
    public static let maxRelayedPayloadBytes = 7000

    // Supabase Realtime's words for each limit (`log_error` code, then message, where it has one).
    public static let tooManyChannels = "ChannelRateLimitReached: Too many channels"
    public static let tooManySocketsForUser = "ConnectionRateLimitReached: Too many connected users"
    public static let tooManyMessages = "Too many messages per second"
    public static let presencePayloadTooLarge = "Track message size exceeded"
    public static let presenceRateLimited = "Client presence rate limit exceeded"
    /// The reply to an acknowledged broadcast that is too large: `{"status":"error","response":"payload_size_exceeded"}`.
    public static let broadcastTooLarge = "payload_size_exceeded"
    public static func tooManyBindings(_ limit: Int) -> String { "Too many postgres_changes bindings: at most \(limit) per channel" }
    public static func membershipRevoked(_ channel: String) -> String { "You no longer have permission to read from this Channel topic: \(channel)" }
}

/// A token bucket: `rate` per second sustained, up to `burst` at once. Plain state, kept by its
/// owner under a lock.
public struct TokenBucket: Sendable, Equatable {
    public let rate: Double
    public let burst: Double
    private var tokens: Double
    private var updated: ContinuousClock.Instant

    public init(rate: Double, burst: Double, now: ContinuousClock.Instant = .now) {
        self.rate = rate
        self.burst = burst
        self.tokens = burst
        self.updated = now
    }

    /// Takes one token; false when the bucket is empty.
    public mutating func take(now: ContinuousClock.Instant = .now) -> Bool {
        let elapsed = now - updated
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        tokens = min(burst, tokens + max(0, seconds) * rate)
        updated = now
        guard tokens >= 1 else { return false }
        tokens -= 1
        return true
    }
}

/// A fixed window counter: at most `limit` events per `window`.
public struct WindowCounter: Sendable, Equatable {
    public let limit: Int
    public let window: Duration
    private var start: ContinuousClock.Instant?
    private var count = 0

    public init(limit: Int, window: Duration) {
        self.limit = limit
        self.window = window
    }

    public mutating func take(now: ContinuousClock.Instant = .now) -> Bool {
        if let start, now - start < window {
            guard count < limit else { return false }
        } else {
            start = now
            count = 0
        }
        count += 1
        return true
    }
}
