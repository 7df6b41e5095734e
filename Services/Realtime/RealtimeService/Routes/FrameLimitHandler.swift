import NIOCore
import NIOWebSocket

/// Stands in front of NIO's `WebSocketProtocolErrorHandler`, which answers a frame over the limit
/// (or a malformed frame header) with a bare close frame: this one says why in the close frame.
/// The close itself lingers (`LingeringCloseHandler`), so the rest of the client's frame, still
/// unread, does not turn it into a TCP reset that loses the close frame.
final class FrameLimitHandler: ChannelInboundHandler {
    typealias InboundIn = WebSocketFrame
    typealias InboundOut = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    let maxFrameBytes: Int
    private var closing = false

    init(maxFrameBytes: Int) {
        self.maxFrameBytes = maxFrameBytes
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
            context.close(promise: nil)
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
