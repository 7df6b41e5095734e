import NIOCore
import NIOWebSocket

/// Stands in front of NIO's `WebSocketProtocolErrorHandler`, which answers a frame over the limit
/// (or a malformed frame header) with a bare close frame and closes the connection at once: with the
/// rest of the client's frame still unread, that close is a TCP reset, and the client (or the gateway
/// in between) loses the close frame. This handler sends the close frame with a reason, then keeps
/// reading and dropping what the client still sends for a moment before it closes, so the client
/// reads the close frame and the connection ends with a FIN.
final class FrameLimitHandler: ChannelInboundHandler {
    typealias InboundIn = WebSocketFrame
    typealias InboundOut = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    let maxFrameBytes: Int
    /// How long the client's remaining bytes (and its own close frame) are read after ours.
    let linger: TimeAmount
    private var closing = false

    init(maxFrameBytes: Int, linger: TimeAmount = .seconds(2)) {
        self.maxFrameBytes = maxFrameBytes
        self.linger = linger
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        switch error {
        case let error as NIOWebSocketError:
            guard !closing else { return }
            closing = true
            let (code, reason): (WebSocketErrorCode, String) = switch error {
            case .invalidFrameLength: (.messageTooLarge, "message too big: at most \(maxFrameBytes) bytes")
            default: (.protocolError, "invalid WebSocket frame")
            }
            var data = context.channel.allocator.buffer(capacity: 2 + reason.utf8.count)
            data.write(webSocketErrorCode: code)
            data.writeString(reason)
            context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .connectionClose, data: data)), promise: nil)
            let channel = context.channel
            context.eventLoop.scheduleTask(in: linger) { channel.close(promise: nil) }
        case is ByteToMessageDecoderError where closing:
            // The rest of the refused frame, or the client's close frame: read and dropped.
            return
        default:
            context.fireErrorCaught(error)
        }
    }

    /// Puts the handler in front of the pipeline's protocol error handler (after the upgrade added it).
    static func install(on channel: any Channel, maxFrameBytes: Int) async {
        try? await channel.eventLoop.submit {
            let pipeline = channel.pipeline.syncOperations
            guard let errorHandler = try? pipeline.handler(type: WebSocketProtocolErrorHandler.self) else { return }
            try pipeline.addHandler(FrameLimitHandler(maxFrameBytes: maxFrameBytes), position: .before(errorHandler))
        }.get()
    }
}
