import HummingbirdCore
import Logging
import NIOCore

/// Runs a task's jobs on one NIO event loop (a task executor, SE-0417).
///
/// Hummingbird reads a request on its connection's event loop and runs the handler on Swift's
/// global executor; each `await` on the socket or a database connection then crossed between the
/// loop's thread and a pool thread, four or five thread switches a request (measured: 10,000-13,000
/// a second at 2,000-3,000 requests a second on one core), each a wake-up in the kernel. A
/// connection whose task prefers its own loop runs its handler where its bytes arrive: on a
/// service with one loop a core, the database's answers arrive on that loop too.
///
/// Handlers must not block: CPU-heavy work (bcrypt, files) already runs on a thread pool.
public final class EventLoopExecutor: TaskExecutor {
    public let eventLoop: any EventLoop

    public init(_ eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        // Held strongly until the job has run: the executor is referenced unowned while it runs.
        eventLoop.execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}

/// A server child channel whose connections' tasks run on their own event loops
/// (`EventLoopExecutor`); everything else is the wrapped channel's.
public struct EventLoopBoundChildChannel<Base: ServerChildChannel>: ServerChildChannel {
    public typealias Value = Base.Value
    let base: Base

    public init(_ base: Base) {
        self.base = base
    }

    public func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        base.setup(channel: channel, logger: logger)
    }

    public func handle(value: Value, logger: Logger) async {
        await withTaskExecutorPreference(EventLoopExecutor(value.channel.eventLoop)) {
            await base.handle(value: value, logger: logger)
        }
    }
}

extension HTTPServerBuilder {
    /// HTTP/1.1 (Hummingbird's `.http1()`), each connection's handlers on its own event loop.
    public static func http1OnEventLoops(configuration: HTTP1Channel.Configuration = .init()) -> HTTPServerBuilder {
        .init { responder in EventLoopBoundChildChannel(HTTP1Channel(responder: responder, configuration: configuration)) }
    }
}
