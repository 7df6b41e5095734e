import ColonyModels
import ColonyPlatform
import Foundation
import Synchronization

/// One channel joined on a socket.
struct JoinedChannel: Sendable {
    var topic: String
    var joinRef: String?
    var user: AuthenticatedUser
    var expiresAt: Date?
    var config: JoinConfig
    /// What the topic's rules allow on it (members of a scope, or the app's unscoped policy).
    var access: TopicAccess
    /// The app-scoped topic broadcast and presence use (`app|topic`, scoped topics in one
    /// spelling): apps never share channels.
    var scopedTopic: String { "\(user.app.rawValue)|\(TopicRules.canonicalName(of: topic))" }
    var presenceKey: String
    var presenceRef: String?
    /// Presence track/untrack within the quota's window.
    var presenceEvents: WindowCounter
}

/// One WebSocket: its joined channels and a bounded queue of outgoing frames. A client that
/// lets the queue fill up is disconnected with a reason instead of growing memory.
final class RealtimeConnection: Sendable {
    let id: String
    let serializer: PhoenixSerializer
    let apiKey: String
    /// The app whose pool the socket's `apikey` belongs to: joins need that app's tokens.
    let app: App
    /// The client's address (behind the gateway, from `X-Forwarded-For`), for the per-address cap.
    let address: String
    private let continuation: AsyncStream<OutboundFrame>.Continuation
    let outgoing: AsyncStream<OutboundFrame>
    /// Ends when the socket is closed (for a reason or because the client went away): the socket's
    /// task group stops on it, so a writer stuck on a client that stopped reading is cancelled.
    let closed: AsyncStream<Void>
    private let closedContinuation: AsyncStream<Void>.Continuation
    private let state: Mutex<State>

    struct State {
        var channels: [String: JoinedChannel] = [:]
        var lastSeen: ContinuousClock.Instant = .now
        var closeReason: String?
        var closeCode = CloseCode.policyViolation
        var flushOnClose = false
        /// Frames the client may still send (`messagesPerSecond`, bursts of twice that).
        var messages: TokenBucket
    }

    init(serializer: PhoenixSerializer, apiKey: String, app: App, address: String, bufferLimit: Int, messagesPerSecond: Int) {
        self.id = UUID().uuidString.lowercased()
        self.serializer = serializer
        self.apiKey = apiKey
        self.app = app
        self.address = address
        (outgoing, continuation) = AsyncStream<OutboundFrame>.makeStream(bufferingPolicy: .bufferingOldest(bufferLimit))
        (closed, closedContinuation) = AsyncStream<Void>.makeStream()
        state = Mutex(State(messages: TokenBucket(rate: Double(messagesPerSecond), burst: Double(2 * messagesPerSecond))))
    }

    /// Counts one frame from the client; false once it sends faster than its quota.
    func allowMessage() -> Bool { state.withLock { $0.messages.take() } }

    /// Counts one presence event on a joined channel; false over the channel's quota.
    func allowPresence(_ topic: String) -> Bool {
        state.withLock { state in state.channels[topic]?.presenceEvents.take() ?? false }
    }

    /// Queues a text frame; a full queue disconnects the client.
    func send(_ text: String) { send(frame: .text(text)) }

    /// Queues a frame; a full queue disconnects the client.
    func send(frame: OutboundFrame) {
        switch continuation.yield(frame) {
        case .dropped:
            close(reason: "slow client: outgoing buffer full")
        default:
            break
        }
    }

    func send(_ message: PhoenixMessage) {
        send(serializer.encode(message))
    }

    /// Ends the socket with a reason the writer sends in the close frame. With `flush`, what is
    /// already queued (the channels' system errors, say) is written first; a slow client's queue
    /// is not.
    func close(reason: String, code: CloseCode = .policyViolation, flush: Bool = false) {
        let first = state.withLock { state in
            guard state.closeReason == nil else { return false }
            state.closeReason = reason
            state.closeCode = code
            state.flushOnClose = flush
            return true
        }
        if first {
            continuation.finish()
            closedContinuation.finish()
        }
    }

    /// Ends the outgoing side after the client went away.
    func finish() {
        continuation.finish()
        closedContinuation.finish()
    }

    var closeReason: String? { state.withLock { $0.closeReason } }
    var closeCode: CloseCode { state.withLock { $0.closeCode } }
    /// Closing, and what is still queued is not to be written.
    var isDropping: Bool { state.withLock { $0.closeReason != nil && !$0.flushOnClose } }

    func touch() { state.withLock { $0.lastSeen = .now } }
    var lastSeen: ContinuousClock.Instant { state.withLock { $0.lastSeen } }

    func channel(_ topic: String) -> JoinedChannel? { state.withLock { $0.channels[topic] } }
    var channelCount: Int { state.withLock { $0.channels.count } }
    func setChannel(_ channel: JoinedChannel) { state.withLock { $0.channels[channel.topic] = channel } }
    @discardableResult
    func removeChannel(_ topic: String) -> JoinedChannel? { state.withLock { $0.channels.removeValue(forKey: topic) } }
    func removeAllChannels() -> [JoinedChannel] {
        state.withLock { state in
            let all = Array(state.channels.values)
            state.channels = [:]
            return all
        }
    }
    var channels: [JoinedChannel] { state.withLock { Array($0.channels.values) } }
}

/// The WebSocket close codes the server ends a socket with.
enum CloseCode: Sendable {
    /// 1008: a quota, a slow client.
    case policyViolation
    /// 1001: the replica is shutting down; the client reconnects (to another replica).
    case goingAway
    /// 1009: a message over the frame limit.
    case messageTooBig
    /// 1002: frames that break the WebSocket protocol (a continuation with nothing to continue).
    case protocolError
}

/// The expiry of an already verified JWT (its `exp`).
enum TokenExpiry {
    static func of(_ token: String) -> Date? {
        let parts = token.split(separator: ".")
        guard parts.count == 3 else { return nil }
        guard let data = Base64URL.decode(parts[1]),
              let claims = try? JSONDecoder().decode(JSONValue.self, from: data),
              let exp = claims["exp"]?.doubleValue
        else { return nil }
        return Date(timeIntervalSince1970: exp)
    }

    /// Whole seconds since `date`, never negative and never past what an Int holds (an unverified
    /// token's `exp` may be any number, `-1e300` too).
    static func secondsSince(_ date: Date, now: Date = Date()) -> Int {
        let seconds = now.timeIntervalSince(date)
        guard seconds.isFinite, seconds > 0 else { return 0 }
        return Int(min(seconds, 1e15))
    }
}
