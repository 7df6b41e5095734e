import ColonyModels
import ColonyPlatform
import Foundation
import Logging
import Metrics
import PostgresNIO
import ServiceLifecycle
import Synchronization

/// The replica's sockets and subscriptions: delivers row changes from the consumed events to the
/// subscribers allowed to see them, and broadcast and presence across replicas through Postgres
/// LISTEN/NOTIFY on a channel of the realtime schema (presences themselves in `presences`).
/// Also the sweeper that closes sockets without heartbeats and channels whose token expired.
public final class RealtimeHub: Service, Sendable {
    let settings: RealtimeSettings
    let replicaID: String
    private let attached = Mutex<Attachment?>(nil)
    private let state = Mutex(Registry())
    /// What this replica holds, on /metrics (swift-metrics, bootstrapped with swift-prometheus).
    private let socketsGauge = Gauge(label: "colony_realtime_sockets")
    private let channelsGauge = Gauge(label: "colony_realtime_channels")

    struct Attachment: Sendable {
        var database: Database
        var verifier: TokenVerifier
        var logger: Logger
        /// Asks the owning service about a membership the projection has not seen yet.
        var membership: MembershipLookup
    }

    struct Subscription: Sendable {
        var connection: RealtimeConnection
        var channel: JoinedChannel
    }

    struct Registry {
        var connections: [String: RealtimeConnection] = [:]
        /// Sockets per client address and per user (from a socket's first join as them), for the caps.
        var addresses: [String: Int] = [:]
        var userSockets: [UUID: Set<String>] = [:]
        /// postgres_changes subscriptions by app and table ("*" for every table), keyed by `connection|topic`.
        var changes: [App: [String: [String: Subscription]]] = [:]
        /// Joined connections by app-scoped topic, for broadcast and presence.
        var topics: [String: [String: Subscription]] = [:]
        /// Joined channels over all sockets (the entries of `topics`).
        var channels = 0
    }

    /// Sets the gauges from the registry, inside its lock (so they never go backwards in time).
    private func record(_ registry: Registry) {
        socketsGauge.record(registry.connections.count)
        channelsGauge.record(registry.channels)
    }

    public init(settings: RealtimeSettings, replicaID: String) {
        self.settings = settings
        self.replicaID = replicaID
    }

    func attach(database: Database, verifier: TokenVerifier, logger: Logger, membership: MembershipLookup = MembershipLookup(owners: MembershipOwners(), key: nil)) {
        attached.withLock { $0 = Attachment(database: database, verifier: verifier, logger: logger, membership: membership) }
    }

    var attachment: Attachment {
        get throws {
            guard let attachment = attached.withLock({ $0 }) else { throw PhoenixProtocolError("realtime hub is not attached") }
            return attachment
        }
    }

    var notificationChannel: String {
        let schema = (try? attachment.database.schema) ?? "realtime"
        return String("\(schema)_realtime".lowercased().prefix(63))
    }

    var connectionCount: Int { state.withLock { $0.connections.count } }

    // MARK: registry

    /// Why a socket may not be opened: a missing or made-up `apikey`, or its address at the cap.
    enum Refusal: Error {
        case noAPIKey
        case invalidAPIKey(APIError)
        case tooManySockets

        var apiError: APIError {
            switch self {
            case .noAPIKey: APIError.unauthorized("apikey is required", code: "no_api_key")
            case .invalidAPIKey(let error): error
            case .tooManySockets: APIError(.tooManyRequests, code: "too_many_connections", message: "Too many connected users from this address")
            }
        }
    }

    /// Whether a socket may be opened with `apiKey` from `address`: the key must be one of the
    /// pools' API keys, and the address under its cap. Checks only; `register` counts the socket.
    func admission(apiKey: String?, address: String) async -> Result<APIKeyIdentity, Refusal> {
        guard let apiKey, !apiKey.isEmpty else { return .failure(.noAPIKey) }
        let identity: APIKeyIdentity
        do {
            identity = try await attachment.verifier.verifyAPIKey(apiKey)
        } catch let error as APIError {
            return .failure(.invalidAPIKey(error))
        } catch {
            return .failure(.invalidAPIKey(APIError.unauthorized("token keys unavailable", code: "invalid_api_key")))
        }
        let cap = settings.quotas.socketsPerAddress
        guard state.withLock({ $0.addresses[address, default: 0] < cap }) else { return .failure(.tooManySockets) }
        return .success(identity)
    }

    /// Registers an upgraded socket; false when its address reached the cap meanwhile.
    func register(_ connection: RealtimeConnection) -> Bool {
        let cap = settings.quotas.socketsPerAddress
        return state.withLock { registry in
            guard registry.addresses[connection.address, default: 0] < cap else { return false }
            registry.addresses[connection.address, default: 0] += 1
            registry.connections[connection.id] = connection
            record(registry)
            return true
        }
    }

    /// Counts the socket as one of `user`'s (a socket counts once per user); false when the user
    /// already holds the most sockets allowed.
    func admitUser(_ user: UUID, on connection: RealtimeConnection) -> Bool {
        let cap = settings.quotas.socketsPerUser
        return state.withLock { registry in
            var sockets = registry.userSockets[user, default: []]
            if sockets.contains(connection.id) { return true }
            guard sockets.count < cap else { return false }
            sockets.insert(connection.id)
            registry.userSockets[user] = sockets
            return true
        }
    }

    func unregister(_ connection: RealtimeConnection) {
        state.withLock { registry in
            guard registry.connections.removeValue(forKey: connection.id) != nil else { return }
            let remaining = registry.addresses[connection.address, default: 1] - 1
            registry.addresses[connection.address] = remaining > 0 ? remaining : nil
            for (user, sockets) in registry.userSockets where sockets.contains(connection.id) {
                let left = sockets.subtracting([connection.id])
                registry.userSockets[user] = left.isEmpty ? nil : left
            }
            record(registry)
        }
        for channel in connection.removeAllChannels() {
            unsubscribe(connection, channel)
            if channel.presenceRef != nil { Task { await self.untrack(connection, channel) } }
        }
    }

    func subscribe(_ connection: RealtimeConnection, _ channel: JoinedChannel) {
        let key = "\(connection.id)|\(channel.topic)"
        let subscription = Subscription(connection: connection, channel: channel)
        state.withLock { registry in
            for table in Set(channel.config.postgresChanges.map { $0.table ?? "*" }) {
                registry.changes[channel.user.app, default: [:]][table, default: [:]][key] = subscription
            }
            if registry.topics[channel.scopedTopic, default: [:]].updateValue(subscription, forKey: key) == nil { registry.channels += 1 }
            record(registry)
        }
    }

    func unsubscribe(_ connection: RealtimeConnection, _ channel: JoinedChannel) {
        let key = "\(connection.id)|\(channel.topic)"
        state.withLock { registry in
            for table in Set(channel.config.postgresChanges.map { $0.table ?? "*" }) {
                registry.changes[channel.user.app]?[table]?.removeValue(forKey: key)
            }
            if registry.topics[channel.scopedTopic]?.removeValue(forKey: key) != nil { registry.channels -= 1 }
            if registry.topics[channel.scopedTopic]?.isEmpty == true { registry.topics.removeValue(forKey: channel.scopedTopic) }
            record(registry)
        }
    }

    /// Keeps a subscription's channel (token expiry, presence ref) current.
    func update(_ connection: RealtimeConnection, _ channel: JoinedChannel) {
        connection.setChannel(channel)
        subscribe(connection, channel)
    }

    // MARK: membership

    /// Whether `user` is a member of the scope: the service's own projection, or, when that has
    /// not seen the membership yet (its event on the way, the broker down), the owning service's
    /// answer (`MembershipLookup`), so a membership committed before a join is honoured at it.
    func isMember(_ user: UUID, of scope: MembershipScope, _ id: UUID) async throws -> Bool {
        let attachment = try attachment
        do {
            return try await attachment.membership.isMember(user, of: scope, id) {
                try await attachment.database.withConnection { connection in
                    try await MembershipProjection(logger: attachment.logger).isMember(user, of: scope, id, on: connection)
                }
            }
        } catch {
            attachment.logger.warning("membership lookup failed; join refused", metadata: ["scope": "\(scope.rawValue)", "error": "\(error)"])
            throw error
        }
    }

    /// Closes the channels of those an event removes from a group, circle or hive (Supabase's
    /// `system` error, then `phx_close`): runs on every replica after the projection has it.
    func revokeMemberships(_ event: ReceivedEvent) {
        let changes: [MembershipChange]
        do {
            changes = try Memberships.changes(for: event)
        } catch {
            return
        }
        let membership = try? attachment.membership
        for change in changes {
            // Answers kept from owners give way to the event (a removal's at once).
            membership?.learn(change)
            switch change {
            case .add: continue
            case .remove(let scope, let id, let user): revoke(scope, id, user: user)
            case .removeAll(let scope, let id): revoke(scope, id, user: nil)
            }
        }
    }

    /// Closes the local channels on a scope's topics held by `user` (everyone's, when nil).
    func revoke(_ scope: MembershipScope, _ id: UUID, user: UUID?) {
        let affected: [Subscription] = state.withLock { registry in
            registry.topics.values.flatMap { $0.values }.filter { subscription in
                subscription.channel.access == .members(scope, id) && (user == nil || subscription.channel.user.id == user)
            }
        }
        for subscription in affected {
            let channel = subscription.channel
            shutDown(subscription.connection, channel, message: RealtimeQuotas.membershipRevoked(PhoenixReplies.channelName(of: channel.topic)))
        }
    }

    // MARK: postgres_changes

    /// Delivers the row changes an event presents; runs on every replica for every event, after
    /// the membership projection has it. Channels of members it removes are closed first.
    func deliver(_ event: ReceivedEvent) async {
        revokeMemberships(event)
        let changes: [RowChange]
        do {
            changes = try RowChanges.changes(for: event)
        } catch {
            (try? attachment.logger)?.warning("cannot present event as row changes", metadata: ["event_type": "\(event.type)", "error": "\(error)"])
            return
        }
        for change in changes { await deliver(change) }
    }

    func deliver(_ change: RowChange) async {
        let candidates: [Subscription] = state.withLock { registry in
            let tables = registry.changes[change.app]
            return Array((tables?[change.table] ?? [:]).values) + Array((tables?["*"] ?? [:]).values)
        }
        guard !candidates.isEmpty else { return }
        var allowed: Set<UUID>? = nil
        if !change.audience.wholeApp {
            var users = change.audience.users
            if let scope = change.audience.scope {
                do {
                    let attachment = try attachment
                    let members = try await attachment.database.withConnection { connection in
                        try await MembershipProjection(logger: attachment.logger).members(scope.kind, scope.id, on: connection)
                    }
                    users.formUnion(members)
                    // Members an owner vouched for whose event has not reached the projection yet.
                    users.formUnion(attachment.membership.keptMembers(scope.kind, scope.id))
                } catch {
                    (try? attachment.logger)?.error("membership lookup failed; change not delivered", metadata: ["error": "\(error)"])
                    return
                }
            }
            allowed = users
        }
        let prefix = change.payloadPrefix
        for subscription in candidates {
            let channel = subscription.channel
            if let allowed, !allowed.contains(channel.user.id) { continue }
            if change.audience.withheldFrom.contains(channel.user.id) { continue }
            let ids = channel.config.postgresChanges.filter { $0.matches(change) }.map(\.id)
            guard !ids.isEmpty else { continue }
            let payload = prefix + "[" + ids.map(String.init).joined(separator: ",") + "]}"
            subscription.connection.send(subscription.connection.serializer.encode(
                joinRef: channel.joinRef, ref: nil, topic: channel.topic, event: PhoenixEvent.postgresChanges, payloadJSON: payload))
        }
    }

    // MARK: broadcast and presence across replicas

    /// Sends a client's broadcast to the channel's other subscribers here and on other replicas.
    func broadcast(from connection: RealtimeConnection, channel: JoinedChannel, body: BroadcastBody) async throws {
        deliverLocally(scopedTopic: channel.scopedTopic, event: PhoenixEvent.broadcast, body: body,
                       excluding: channel.config.broadcastSelf ? nil : connection.id)
        try await notify(scopedTopic: channel.scopedTopic, fields: body.relayFields)
    }

    func track(_ connection: RealtimeConnection, _ channel: JoinedChannel, meta: [String: JSONValue]) async throws {
        var channel = channel
        var leaves: [String: JSONValue] = [:]
        let attachment = try attachment
        let store = PresenceStore(logger: attachment.logger)
        if let previous = channel.presenceRef {
            try await attachment.database.withConnection { try await store.remove(phxRef: previous, on: $0) }
            leaves[channel.presenceKey] = .object(["metas": .array([.object(meta.merging(["phx_ref": .string(previous)]) { a, _ in a })])])
        }
        let ref = Self.newRef()
        var stored = meta
        stored["phx_ref"] = .string(ref)
        if let previous = channel.presenceRef { stored["phx_ref_prev"] = .string(previous) }
        let storedMeta = stored
        let key = channel.presenceKey
        let replica = replicaID
        try await attachment.database.withConnection { db in
            try await store.track(topic: channel.scopedTopic, key: key, phxRef: ref, replica: replica, connection: connection.id, meta: storedMeta, on: db)
        }
        channel.presenceRef = ref
        update(connection, channel)
        let diff = JSONValue.object(["joins": .object([key: .object(["metas": .array([.object(storedMeta)])])]), "leaves": .object(leaves)])
        try await presenceDiff(scopedTopic: channel.scopedTopic, diff: diff)
    }

    func untrack(_ connection: RealtimeConnection, _ channel: JoinedChannel) async {
        guard let ref = channel.presenceRef, let attachment = try? attachment else { return }
        let store = PresenceStore(logger: attachment.logger)
        do {
            try await attachment.database.withConnection { try await store.remove(phxRef: ref, on: $0) }
            if connection.channel(channel.topic) != nil {
                var updated = channel
                updated.presenceRef = nil
                update(connection, updated)
            }
            let diff = JSONValue.object(["joins": .object([:]), "leaves": .object([channel.presenceKey: .object(["metas": .array([.object(["phx_ref": .string(ref)])])])])])
            try await presenceDiff(scopedTopic: channel.scopedTopic, diff: diff)
        } catch {
            attachment.logger.warning("presence untrack failed", metadata: ["error": "\(error)"])
        }
    }

    /// `presence_state` for a channel: everything tracked on it on live replicas.
    func presenceState(_ channel: JoinedChannel) async throws -> JSONValue {
        let attachment = try attachment
        let entries = try await attachment.database.withConnection { db in
            try await PresenceStore(logger: attachment.logger).state(topic: channel.scopedTopic, on: db)
        }
        var state: [String: [JSONValue]] = [:]
        for entry in entries {
            var meta = entry.meta
            meta["phx_ref"] = .string(entry.phxRef)
            state[entry.key, default: []].append(.object(meta))
        }
        return .object(state.mapValues { .object(["metas": .array($0)]) })
    }

    private func presenceDiff(scopedTopic: String, diff: JSONValue) async throws {
        let text = JSONText.encode(diff)
        deliverLocally(scopedTopic: scopedTopic, event: PhoenixEvent.presenceDiff, body: .json(text), excluding: nil)
        try await notify(scopedTopic: scopedTopic, fields: "\"presence_diff\",\"p\":\(text)")
    }

    private func deliverLocally(scopedTopic: String, event: String, body: BroadcastBody, excluding: String?) {
        let subscriptions = state.withLock { Array(($0.topics[scopedTopic] ?? [:]).values) }
        for subscription in subscriptions where subscription.connection.id != excluding {
            let channel = subscription.channel
            if event == PhoenixEvent.presenceDiff, !channel.config.presenceEnabled || !channel.access.allowsBroadcastAndPresence { continue }
            // A binary broadcast a 1.0.0 socket cannot be sent is skipped for it, as Supabase does.
            guard let frame = body.frame(for: subscription.connection.serializer, joinRef: channel.joinRef, topic: channel.topic, event: event) else { continue }
            subscription.connection.send(frame: frame)
        }
    }

    /// `fields`: the kind, then its fields (`"broadcast","p":{…}`).
    private func notify(scopedTopic: String, fields: String) async throws {
        let message = "{\"r\":\(JSONText.string(replicaID)),\"t\":\(JSONText.string(scopedTopic)),\"k\":\(fields)}"
        let attachment = try attachment
        let channel = notificationChannel
        _ = try await attachment.database.query("SELECT pg_notify(\(channel), \(message))").collect()
    }

    private func received(notification payload: String) {
        guard let value = try? JSONDecoder().decode(JSONValue.self, from: Data(payload.utf8)),
              let origin = value["r"]?.stringValue, origin != replicaID,
              let kind = value["k"]?.stringValue, let topic = value["t"]?.stringValue
        else { return }
        if kind == "presence_diff", let inner = value["p"] {
            deliverLocally(scopedTopic: topic, event: PhoenixEvent.presenceDiff, body: .json(JSONText.encode(inner)), excluding: nil)
        } else if let body = BroadcastBody.relayed(kind: kind, envelope: value) {
            deliverLocally(scopedTopic: topic, event: PhoenixEvent.broadcast, body: body, excluding: nil)
        }
    }

    static func newRef() -> String {
        String(UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(20))
    }

    // MARK: running

    public func run() async throws {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.listen() }
            group.addTask { await self.announce() }
            group.addTask { await self.sweep() }
            await gracefulShutdown_waitOrCancel()
            group.cancelAll()
        }
        closeAll()
        if let attachment = try? attachment {
            let replica = replicaID
            try? await attachment.database.withConnection { try await PresenceStore(logger: attachment.logger).removeReplica(replica, on: $0) }
        }
    }

    /// Closes every socket with 1001 (going away), what is queued written first: at a shutdown,
    /// after the pre-stop pause (`ServiceDefinition.beforeStopping`), so that clients reconnect
    /// through the gateway to a replica that is serving.
    func closeAll() {
        for connection in state.withLock({ Array($0.connections.values) }) {
            connection.close(reason: "server shutting down", code: .goingAway, flush: true)
        }
    }

    private func gracefulShutdown_waitOrCancel() async {
        try? await gracefulShutdown()
    }

    private func listen() async {
        while !Task.isCancelled {
            do {
                let attachment = try attachment
                let channel = notificationChannel
                try await attachment.database.withDedicatedConnection { connection in
                    try await connection.listen(on: channel) { notifications in
                        for try await notification in notifications {
                            self.received(notification: notification.payload)
                        }
                    }
                }
            } catch {
                if Task.isCancelled { return }
                (try? attachment.logger)?.warning("realtime LISTEN failed, retrying", metadata: ["error": "\(error)"])
                try? await Task.sleep(for: .seconds(1))
            }
        }
    }

    private func announce() async {
        while !Task.isCancelled {
            if let attachment = try? attachment {
                let replica = replicaID
                do {
                    try await attachment.database.withConnection { try await PresenceStore(logger: attachment.logger).announce(replica: replica, on: $0) }
                } catch {
                    attachment.logger.warning("replica announcement failed", metadata: ["error": "\(error)"])
                }
            }
            try? await Task.sleep(for: .seconds(5))
        }
    }

    /// Closes sockets that sent nothing for the heartbeat timeout, and channels whose token expired
    /// (Supabase's `system` error, then `phx_close`). A socket with a channel of a suspended account
    /// is closed: every channel ends with the `system` error first, so the client says why.
    private func sweep() async {
        let interval = max(min(settings.heartbeatTimeout / 4, .seconds(1)), .milliseconds(50))
        while !Task.isCancelled {
            try? await Task.sleep(for: interval)
            let now = ContinuousClock.now
            let wallNow = Date()
            let connections = state.withLock { Array($0.connections.values) }
            let suspended = try? attachment.verifier.suspendedAccounts
            for connection in connections {
                if now - connection.lastSeen > settings.heartbeatTimeout {
                    connection.close(reason: "heartbeat timeout")
                    continue
                }
                if let suspended, connection.channels.contains(where: { suspended.isSuspended($0.user.id, now: wallNow) }) {
                    for channel in connection.channels { shutDown(connection, channel, message: "the account is suspended") }
                    connection.close(reason: "account suspended", flush: true)
                    continue
                }
                for channel in connection.channels {
                    guard let expiresAt = channel.expiresAt, expiresAt <= wallNow else { continue }
                    let ago = TokenExpiry.secondsSince(expiresAt, now: wallNow)
                    shutDown(connection, channel, message: "Token has expired \(ago) seconds ago")
                }
            }
        }
    }

    /// Ends a channel with a `system` error and `phx_close` (an expired token, a revoked
    /// membership, a quota): Supabase's `shutdown_response`.
    func shutDown(_ connection: RealtimeConnection, _ channel: JoinedChannel, message: String) {
        guard connection.removeChannel(channel.topic) != nil else { return }
        unsubscribe(connection, channel)
        connection.send(PhoenixReplies.system(topic: channel.topic, joinRef: channel.joinRef, extension: "system", status: "error", message: message))
        connection.send(PhoenixReplies.close(topic: channel.topic, joinRef: channel.joinRef))
        if channel.presenceRef != nil { Task { await self.untrack(connection, channel) } }
    }
}
