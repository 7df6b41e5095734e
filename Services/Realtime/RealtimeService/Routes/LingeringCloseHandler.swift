import NIOCore

/// Sits first in a WebSocket connection's pipeline and turns every full close into a lingering one,
/// as nginx does for HTTP: the output is shut (what is queued, the close frame last, goes out, then
/// a FIN), and what the client still sends is read and dropped until it closes its side or `linger`
/// runs out. Closing with the client's bytes unread would be a TCP reset, which makes the client
/// (or the gateway in between) drop the close frame it has not read yet. Being first, it also
/// covers closes made before the connection's own handlers are installed (NIO's protocol error
/// handler ending a socket whose first frame is over the limit).
final class LingeringCloseHandler: ChannelDuplexHandler {
    typealias InboundIn = NIOAny
    typealias InboundOut = NIOAny
    typealias OutboundIn = NIOAny
    typealias OutboundOut = NIOAny

    let linger: TimeAmount
    private var lingering = false

    init(linger: TimeAmount = .seconds(2)) {
        self.linger = linger
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !lingering else { return }
        context.fireChannelRead(data)
    }

    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        // A client too slow to read what is queued (realtime dropping it) would not read a close
        // frame either: that close is immediate, as it always was.
        guard mode == .all, context.channel.isActive, context.channel.isWritable else {
            context.close(mode: mode, promise: promise)
            return
        }
        // Whoever asks to close learns when the socket is closed, after the linger.
        if let promise { context.channel.closeFuture.cascade(to: promise) }
        guard !lingering else { return }
        lingering = true
        // Past this handler (toward the socket), so the final close is not lingered again.
        let closeSocket = NIOLoopBound(context, eventLoop: context.eventLoop)
        let outputShut = context.eventLoop.makePromise(of: Void.self)
        context.close(mode: .output, promise: outputShut)
        outputShut.futureResult.whenFailure { error in
            // Output already shut (the writer finished after its close frame): keep lingering.
            if case ChannelError.outputClosed = error { return }
            closeSocket.value.close(mode: .all, promise: nil)
        }
        // The client's EOF closes the channel before this fires (NIO closes on EOF by default).
        let deadline = context.eventLoop.scheduleTask(in: linger) { closeSocket.value.close(mode: .all, promise: nil) }
        context.channel.closeFuture.whenComplete { _ in deadline.cancel() }
    }

    /// Puts a lingering close first in `channel`'s pipeline.
    static func install(on channel: any Channel) async {
        try? await channel.eventLoop.submit {
            try channel.pipeline.syncOperations.addHandler(LingeringCloseHandler(), position: .first)
        }.get()
    }
}
