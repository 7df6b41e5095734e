import ColonyModels
import ColonyPlatform
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import HummingbirdWebSocket
import Logging
import NIOCore
import NIOWebSocket

/// `/realtime/v1/websocket?apikey=…&vsn=…`: the upgrade, then the Phoenix channel protocol on the socket.
struct RealtimeSocket: Sendable {
    static let path = "/realtime/v1/websocket"

    let hub: RealtimeHub
    let settings: RealtimeSettings

    /// The HTTP server: HTTP/1.1 with the WebSocket upgrade on the realtime path. A socket needs
    /// one of the pools' API keys as `apikey` and its address under the cap; a refused upgrade
    /// falls through to the plain route below, which says why.
    func server(trustedProxies: TrustedProxies) -> HTTPServerBuilder {
        .http1WebSocketUpgrade(configuration: .init(ws: .init(maxFrameSize: settings.maxFrameBytes, closeTimeout: .seconds(5)))) { request, channel, _ in
            guard let path = request.path, let components = URLComponents(string: path),
                  components.path == Self.path || components.path == Self.path + "/"
            else { return .dontUpgrade }
            let query = components.queryItems ?? []
            let apiKey = query.first { $0.name == "apikey" }?.value ?? request.headerFields[.apiKey]
            guard let serializer = PhoenixSerializer(vsn: query.first { $0.name == "vsn" }?.value) else { return .dontUpgrade }
            let address = trustedProxies.clientAddress(peer: channel.remoteAddress?.ipAddress, forwardedFor: request.headerFields[values: .xForwardedFor])
            guard case .success(let identity) = await hub.admission(apiKey: apiKey, address: address), let apiKey else { return .dontUpgrade }
            // Before the upgrade, so a frame the client sends at once meets it too.
            await LingeringCloseHandler.install(on: channel)
            return .upgrade([:]) { inbound, outbound, _ in
                await FrameLimitHandler.install(on: channel, maxFrameBytes: settings.maxFrameBytes)
                let connection = RealtimeConnection(serializer: serializer, apiKey: apiKey, app: identity.app, address: address,
                                                    bufferLimit: settings.socketBufferMessages, messagesPerSecond: settings.quotas.messagesPerSecond)
                guard hub.register(connection) else {
                    try? await outbound.close(.policyViolation, reason: "Too many connected users")
                    return
                }
                defer { hub.unregister(connection) }
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask {
                        for await frame in connection.outgoing {
                            if connection.isDropping { break }
                            switch frame {
                            case .text(let text): try await outbound.write(.text(text))
                            case .binary(let bytes): try await outbound.write(.binary(ByteBuffer(bytes: bytes)))
                            }
                        }
                        if let reason = connection.closeReason {
                            let code: WebSocketErrorCode = switch connection.closeCode {
                            case .policyViolation: .policyViolation
                            case .goingAway: .goingAway
                            case .messageTooBig: .messageTooLarge
                            case .protocolError: .protocolError
                            }
                            try? await outbound.close(code, reason: reason)
                        }
                    }
                    group.addTask {
                        var frames = inbound.makeAsyncIterator()
                        var assembler = MessageAssembler(limit: settings.maxFrameBytes)
                        while let frame = try await frames.next() {
                            connection.touch()
                            switch assembler.add(frame) {
                            case .incomplete:
                                continue
                            case .message(let bytes, let binary):
                                await handle(bytes, binary: binary, on: connection)
                            case .refused(let reason, let code):
                                connection.close(reason: reason, code: code)
                            }
                            if connection.closeReason != nil {
                                // The server ends the socket: the writer finishes what is queued and
                                // the close frame (or the grace period runs out), not this reader.
                                try await Task.sleep(for: .seconds(60))
                            }
                        }
                        connection.finish()
                    }
                    group.addTask {
                        // Once closed, the writer has a moment to send the close frame; a writer
                        // still blocked on a client that stopped reading is then cancelled.
                        for await _ in connection.closed {}
                        try await Task.sleep(for: .seconds(2))
                    }
                    _ = try await group.next()
                    group.cancelAll()
                }
            }
        }
    }

    /// Plain HTTP on the socket path (no upgrade): why it was not upgraded. A missing `apikey`
    /// or one that is not a pool's key is 401, an address at its socket cap 429, anything else
    /// (no upgrade asked, an unknown `vsn`) 400.
    func addRoutes(to router: Router<ColonyRequestContext>) {
        router.get(RouterPath(Self.path)) { request, context -> Response in
            let apiKey = request.uri.queryParameters["apikey"].map(String.init) ?? request.headers[.apiKey]
            if case .failure(let refusal) = await hub.admission(apiKey: apiKey, address: context.clientAddress) {
                throw refusal.apiError
            }
            throw APIError(.badRequest, code: "websocket_required", message: "connect with a WebSocket upgrade (vsn 1.0.0 or 2.0.0)")
        }
    }

    // MARK: protocol

    /// A frame from the client. A frame that does not decode is logged and ignored, as Supabase
    /// Realtime does (`MalformedWebSocketMessage`): the socket and its channels stay.
    func handle(_ bytes: [UInt8], binary: Bool, on connection: RealtimeConnection) async {
        guard connection.allowMessage() else {
            // A flood: every channel ends with Supabase's message, then the socket.
            for channel in connection.channels {
                hub.shutDown(connection, channel, message: RealtimeQuotas.tooManyMessages)
            }
            connection.close(reason: RealtimeQuotas.tooManyMessages, flush: true)
            return
        }
        let message: PhoenixMessage
        do {
            message = try connection.serializer.decode(frame: bytes, binary: binary)
        } catch {
            (try? hub.attachment.logger)?.debug("malformed message ignored", metadata: ["error": "\(error)", "binary": "\(binary)"])
            return
        }
        if message.topic == PhoenixEvent.phoenixTopic {
            if message.event == PhoenixEvent.heartbeat { connection.send(PhoenixReplies.ok(message)) }
            return
        }
        switch message.event {
        case PhoenixEvent.join where message.binary != nil:
            // A join's payload is its config and token: a map, never raw bytes.
            connection.send(PhoenixReplies.error(message, reason: "join payload must be a JSON object"))
        case PhoenixEvent.join:
            await join(message, on: connection)
        case PhoenixEvent.leave:
            if let channel = connection.removeChannel(message.topic) {
                hub.unsubscribe(connection, channel)
                if channel.presenceRef != nil { await hub.untrack(connection, channel) }
            }
            connection.send(PhoenixReplies.ok(message))
            connection.send(PhoenixReplies.close(topic: message.topic, joinRef: message.joinRef ?? message.ref))
        default:
            guard let channel = connection.channel(message.topic) else {
                if message.ref != nil { connection.send(PhoenixReplies.error(message, reason: "unmatched topic")) }
                return
            }
            switch message.event {
            case PhoenixEvent.accessToken:
                await refreshToken(message, channel: channel, on: connection)
            case PhoenixEvent.broadcast:
                await broadcast(message, channel: channel, on: connection)
            case PhoenixEvent.presence:
                await presence(message, channel: channel, on: connection)
            default:
                if message.ref != nil { connection.send(PhoenixReplies.error(message, reason: "unknown event \(message.event)")) }
            }
        }
    }

    /// `Unauthorized: You do not have permissions to write to this Channel topic: {name}`.
    static func cannotWrite(_ topic: String) -> String {
        "Unauthorized: You do not have permissions to write to this Channel topic: \(PhoenixReplies.channelName(of: topic))"
    }

    /// A client's broadcast: only where the topic's rules allow it (members of a scope, or an
    /// open topic), and no larger than the quota. Refusals are answered when the client asked
    /// for an acknowledgement, and otherwise dropped, as Supabase does.
    private func broadcast(_ message: PhoenixMessage, channel: JoinedChannel, on connection: RealtimeConnection) async {
        let ack = channel.config.broadcastAck
        guard channel.access.allowsBroadcastAndPresence else {
            if ack { connection.send(PhoenixReplies.error(message, reason: Self.cannotWrite(channel.topic))) }
            return
        }
        let body: BroadcastBody = switch message.binary {
        case .none: .json(JSONText.encode(message.payload))
        case .push(let bytes): .binary(bytes)
        case .userBroadcast(let event, let encoding, let payload, _): .user(event: event, encoding: encoding, payload: payload)
        }
        guard body.relaySize <= settings.quotas.broadcastBytes else {
            if ack { connection.send(PhoenixReplies.reply(message, status: "error", response: .string(RealtimeQuotas.broadcastTooLarge))) }
            return
        }
        do {
            try await hub.broadcast(from: connection, channel: channel, body: body)
            if ack { connection.send(PhoenixReplies.ok(message)) }
        } catch {
            connection.send(PhoenixReplies.error(message, reason: "broadcast failed"))
        }
    }

    private func verify(_ token: String) async -> Result<AuthenticatedUser, APIError> {
        do {
            return .success(try await hub.attachment.verifier.verify(token))
        } catch let error as APIError {
            return .failure(error)
        } catch {
            return .failure(APIError.unauthorized("token keys unavailable", code: "invalid_token"))
        }
    }

    /// Supabase's wording for token failures.
    static func reason(for error: APIError, token: String) -> String {
        if error.code == "token_expired" {
            let ago = TokenExpiry.of(token).map { TokenExpiry.secondsSince($0) } ?? 0
            return "Token has expired \(ago) seconds ago"
        }
        return "Invalid JWT Token: \(error.message)"
    }

    /// A join: a topic, a verified token of the socket's app, a config within the quotas, and
    /// the topic's rules (membership of a scope, from the projection; private channels only
    /// there). Refusals are Supabase's join errors.
    private func join(_ message: PhoenixMessage, on connection: RealtimeConnection) async {
        if let existing = connection.removeChannel(message.topic) {
            // Phoenix closes a duplicate join's older channel.
            hub.unsubscribe(connection, existing)
            connection.send(PhoenixReplies.close(topic: existing.topic, joinRef: existing.joinRef))
            if existing.presenceRef != nil { await hub.untrack(connection, existing) }
        }
        guard message.topic.hasPrefix("realtime:") else {
            connection.send(PhoenixReplies.error(message, reason: "unmatched topic"))
            return
        }
        guard message.topic != "realtime:" else {
            connection.send(PhoenixReplies.error(message, reason: "TopicNameRequired: You must provide a topic name"))
            return
        }
        guard connection.channelCount < settings.quotas.channelsPerSocket else {
            connection.send(PhoenixReplies.error(message, reason: RealtimeQuotas.tooManyChannels))
            return
        }
        let token = message.payload["access_token"]?.stringValue ?? connection.apiKey
        let user: AuthenticatedUser
        switch await verify(token) {
        case .success(let verified) where verified.app == connection.app: user = verified
        case .success:
            connection.send(PhoenixReplies.error(message, reason: "Invalid JWT Token: the token is for another app than the apikey"))
            return
        case .failure(let error):
            connection.send(PhoenixReplies.error(message, reason: Self.reason(for: error, token: token)))
            return
        }
        let config: JoinConfig
        do {
            config = try JoinConfig.parse(message.payload, maxBindings: settings.quotas.bindingsPerChannel)
        } catch {
            connection.send(PhoenixReplies.error(message, reason: error.description))
            return
        }
        let access: TopicAccess
        switch settings.topics.access(topic: message.topic, app: user.app, isPrivate: config.isPrivate) {
        case .success(let allowed): access = allowed
        case .failure(let refusal):
            connection.send(PhoenixReplies.error(message, reason: refusal.description))
            return
        }
        if case .members(let scope, let id) = access {
            guard (try? await hub.isMember(user.id, of: scope, id)) == true else {
                connection.send(PhoenixReplies.error(message, reason: TopicRefusal.unauthorized(message.topic).description))
                return
            }
        }
        guard hub.admitUser(user.id, on: connection) else {
            connection.send(PhoenixReplies.error(message, reason: RealtimeQuotas.tooManySocketsForUser))
            return
        }
        let quotas = settings.quotas
        let channel = JoinedChannel(topic: message.topic, joinRef: message.joinRef ?? message.ref, user: user, expiresAt: TokenExpiry.of(token),
                                    config: config, access: access, presenceKey: config.presenceKey ?? UUID().uuidString.lowercased(), presenceRef: nil,
                                    presenceEvents: WindowCounter(limit: quotas.presenceEvents, window: .seconds(quotas.presenceWindowSeconds)))
        connection.setChannel(channel)
        hub.subscribe(connection, channel)
        connection.send(PhoenixReplies.ok(message, response: .object(["postgres_changes": .array(config.postgresChanges.map(\.replyJSON))])))
        if !config.postgresChanges.isEmpty {
            connection.send(PhoenixReplies.system(topic: channel.topic, joinRef: channel.joinRef, extension: "postgres_changes", status: "ok",
                                                  message: "Subscribed to PostgreSQL"))
        }
        // A removal that committed while this join was checked closed nothing yet: look again.
        if case .members(let scope, let id) = access, (try? await hub.isMember(user.id, of: scope, id)) != true {
            hub.shutDown(connection, channel, message: RealtimeQuotas.membershipRevoked(PhoenixReplies.channelName(of: channel.topic)))
            return
        }
        if config.presenceEnabled, access.allowsBroadcastAndPresence, let state = try? await hub.presenceState(channel) {
            connection.send(PhoenixMessage(joinRef: channel.joinRef, topic: channel.topic, event: PhoenixEvent.presenceState, payload: state))
        }
    }

    private func refreshToken(_ message: PhoenixMessage, channel: JoinedChannel, on connection: RealtimeConnection) async {
        guard let token = message.payload["access_token"]?.stringValue else { return }
        switch await verify(token) {
        case .success(let user) where user.id == channel.user.id && user.app == channel.user.app:
            var updated = channel
            updated.expiresAt = TokenExpiry.of(token)
            updated.user = user
            guard connection.channel(channel.topic) != nil else { return }
            hub.update(connection, updated)
            if message.ref != nil { connection.send(PhoenixReplies.ok(message)) }
        case .success:
            hub.shutDown(connection, channel, message: "Invalid JWT Token: the token is for another user")
        case .failure(let error):
            hub.shutDown(connection, channel, message: Self.reason(for: error, token: token))
        }
    }

    /// Presence `track`/`untrack`: only where the topic's rules allow it; a meta over the size
    /// quota (checked before anything is stored) or events over the rate end the channel with
    /// Supabase's message.
    private func presence(_ message: PhoenixMessage, channel: JoinedChannel, on connection: RealtimeConnection) async {
        let event = message.payload["event"]?.stringValue
        guard event == "track" || event == "untrack" else {
            connection.send(PhoenixReplies.error(message, reason: "unknown presence event"))
            return
        }
        guard channel.access.allowsBroadcastAndPresence else {
            connection.send(PhoenixReplies.error(message, reason: Self.cannotWrite(channel.topic)))
            return
        }
        let meta: [String: JSONValue]
        switch message.payload["payload"] {
        case .none, .null: meta = [:]
        case .object(let object): meta = object
        default:
            connection.send(PhoenixReplies.error(message, reason: "Presence track payload must be a map"))
            return
        }
        if event == "track", JSONText.encode(.object(meta)).utf8.count > settings.quotas.presenceMetaBytes {
            hub.shutDown(connection, channel, message: RealtimeQuotas.presencePayloadTooLarge)
            return
        }
        guard connection.allowPresence(channel.topic) else {
            hub.shutDown(connection, channel, message: RealtimeQuotas.presenceRateLimited)
            return
        }
        do {
            if event == "track" {
                try await hub.track(connection, connection.channel(channel.topic) ?? channel, meta: meta)
            } else {
                await hub.untrack(connection, connection.channel(channel.topic) ?? channel)
            }
            connection.send(PhoenixReplies.ok(message))
        } catch {
            connection.send(PhoenixReplies.error(message, reason: "presence failed"))
        }
    }
}

/// Gathers a message from its frames (a text or binary frame, then continuations up to `fin`) and
/// refuses one over the limit (1009) or a continuation with nothing to continue (1002), with a
/// reason in the close frame. NIO refuses a single frame over the limit before this sees it.
struct MessageAssembler {
    enum Outcome: Equatable {
        case incomplete
        case message([UInt8], binary: Bool)
        case refused(String, CloseCode)
    }

    let limit: Int
    private var pending: [UInt8]?
    private var pendingBinary = false

    init(limit: Int) { self.limit = limit }

    mutating func add(_ frame: WebSocketDataFrame) -> Outcome {
        add(opcode: frame.opcode, data: frame.data.readableBytesView, fin: frame.fin)
    }

    mutating func add(opcode: WebSocketDataFrame.Opcode, data: some Collection<UInt8>, fin: Bool) -> Outcome {
        switch opcode {
        case .text, .binary:
            guard pending == nil else { return .refused("a new message before the last one's final frame", .protocolError) }
            pending = []
            pendingBinary = opcode == .binary
        case .continuation:
            guard pending != nil else { return .refused("continuation frame without a message to continue", .protocolError) }
        }
        guard let sofar = pending?.count, data.count <= limit - sofar else {
            pending = nil
            return .refused("message too big: at most \(limit) bytes", .messageTooBig)
        }
        pending?.append(contentsOf: data)
        guard fin, let message = pending else { return .incomplete }
        pending = nil
        return .message(message, binary: pendingBinary)
    }
}
