import ColonyModels
import ColonyPlatform
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import HummingbirdWebSocket
import Logging

/// `/realtime/v1/websocket?apikey=…&vsn=…`: the upgrade, then the Phoenix channel protocol on the socket.
struct RealtimeSocket: Sendable {
    static let path = "/realtime/v1/websocket"

    let hub: RealtimeHub
    let settings: RealtimeSettings

    /// The HTTP server: HTTP/1.1 with the WebSocket upgrade on the realtime path.
    func server() -> HTTPServerBuilder {
        .http1WebSocketUpgrade(configuration: .init(ws: .init(maxFrameSize: settings.maxFrameBytes, closeTimeout: .seconds(5)))) { request, _, _ in
            guard let path = request.path, let components = URLComponents(string: path),
                  components.path == Self.path || components.path == Self.path + "/"
            else { return .dontUpgrade }
            let query = components.queryItems ?? []
            let apiKey = query.first { $0.name == "apikey" }?.value ?? request.headerFields[HTTPField.Name("apikey")!]
            guard let apiKey, !apiKey.isEmpty, let serializer = PhoenixSerializer(vsn: query.first { $0.name == "vsn" }?.value) else {
                return .dontUpgrade
            }
            return .upgrade([:]) { inbound, outbound, _ in
                let connection = RealtimeConnection(serializer: serializer, apiKey: apiKey, bufferLimit: settings.socketBufferMessages)
                hub.register(connection)
                defer { hub.unregister(connection) }
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask {
                        for await text in connection.outgoing {
                            if connection.closeReason != nil { break }
                            try await outbound.write(.text(text))
                        }
                        if let reason = connection.closeReason {
                            try? await outbound.close(.policyViolation, reason: reason)
                        }
                    }
                    group.addTask {
                        for try await message in inbound.messages(maxSize: settings.maxFrameBytes) {
                            connection.touch()
                            guard case .text(let text) = message else { continue }
                            await handle(text, on: connection)
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

    /// Routes for plain HTTP on the socket path (no upgrade: missing `apikey` or unknown `vsn`).
    func addRoutes(to router: Router<ColonyRequestContext>) {
        router.get(RouterPath(Self.path)) { request, _ -> Response in
            if request.uri.queryParameters["apikey"] == nil && request.headers[HTTPField.Name("apikey")!] == nil {
                throw APIError.unauthorized("apikey is required", code: "no_api_key")
            }
            throw APIError(.badRequest, code: "websocket_required", message: "connect with a WebSocket upgrade (vsn 1.0.0 or 2.0.0)")
        }
    }

    // MARK: protocol

    func handle(_ text: String, on connection: RealtimeConnection) async {
        let message: PhoenixMessage
        do {
            message = try connection.serializer.decode(text)
        } catch {
            connection.close(reason: "malformed message: \(error)")
            return
        }
        if message.topic == PhoenixEvent.phoenixTopic {
            if message.event == PhoenixEvent.heartbeat { connection.send(PhoenixReplies.ok(message)) }
            return
        }
        switch message.event {
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
                do {
                    let size = JSONText.encode(message.payload).utf8.count
                    guard size <= RealtimeHub.maxRelayedPayloadBytes else {
                        if channel.config.broadcastAck || message.ref != nil { connection.send(PhoenixReplies.error(message, reason: "payload too large")) }
                        return
                    }
                    try await hub.broadcast(from: connection, channel: channel, payload: message.payload)
                    if channel.config.broadcastAck { connection.send(PhoenixReplies.ok(message)) }
                } catch {
                    connection.send(PhoenixReplies.error(message, reason: "broadcast failed"))
                }
            case PhoenixEvent.presence:
                await presence(message, channel: channel, on: connection)
            default:
                if message.ref != nil { connection.send(PhoenixReplies.error(message, reason: "unknown event \(message.event)")) }
            }
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
            let ago = TokenExpiry.of(token).map { max(0, Int(Date().timeIntervalSince($0))) } ?? 0
            return "Token has expired \(ago) seconds ago"
        }
        return "Invalid JWT Token: \(error.message)"
    }

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
        let token = message.payload["access_token"]?.stringValue ?? connection.apiKey
        let user: AuthenticatedUser
        switch await verify(token) {
        case .success(let verified): user = verified
        case .failure(let error):
            connection.send(PhoenixReplies.error(message, reason: Self.reason(for: error, token: token)))
            return
        }
        let config: JoinConfig
        do {
            config = try JoinConfig.parse(message.payload)
        } catch {
            connection.send(PhoenixReplies.error(message, reason: error.description))
            return
        }
        let channel = JoinedChannel(topic: message.topic, joinRef: message.joinRef ?? message.ref, user: user, expiresAt: TokenExpiry.of(token),
                                    config: config, presenceKey: config.presenceKey ?? UUID().uuidString.lowercased(), presenceRef: nil)
        connection.setChannel(channel)
        hub.subscribe(connection, channel)
        connection.send(PhoenixReplies.ok(message, response: .object(["postgres_changes": .array(config.postgresChanges.map(\.replyJSON))])))
        if !config.postgresChanges.isEmpty {
            connection.send(PhoenixReplies.system(topic: channel.topic, joinRef: channel.joinRef, extension: "postgres_changes", status: "ok",
                                                  message: "Subscribed to PostgreSQL"))
        }
        if config.presenceEnabled, let state = try? await hub.presenceState(channel) {
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
            hub.expire(connection, channel, message: "Invalid JWT Token: the token is for another user")
        case .failure(let error):
            hub.expire(connection, channel, message: Self.reason(for: error, token: token))
        }
    }

    private func presence(_ message: PhoenixMessage, channel: JoinedChannel, on connection: RealtimeConnection) async {
        let event = message.payload["event"]?.stringValue
        do {
            switch event {
            case "track":
                try await hub.track(connection, connection.channel(channel.topic) ?? channel, meta: message.payload["payload"]?.objectValue ?? [:])
            case "untrack":
                await hub.untrack(connection, connection.channel(channel.topic) ?? channel)
            default:
                connection.send(PhoenixReplies.error(message, reason: "unknown presence event"))
                return
            }
            connection.send(PhoenixReplies.ok(message))
        } catch {
            connection.send(PhoenixReplies.error(message, reason: "presence failed"))
        }
    }
}
