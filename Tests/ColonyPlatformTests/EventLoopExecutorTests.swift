import ColonyPlatform
import Hummingbird
import HummingbirdCore
import HummingbirdTesting
import NIOCore
import NIOPosix
import Testing

@Suite("A connection's handlers run on its own event loop")
struct EventLoopExecutorTests {
    @Test("a task preferring a loop stays on it across a sleep, a future and a child task")
    func taskStaysOnItsLoop() async {
        let loop = MultiThreadedEventLoopGroup.singleton.any()
        let seen = await withTaskExecutorPreference(EventLoopExecutor(loop)) {
            var seen = [loop.inEventLoop]
            try? await Task.sleep(for: .milliseconds(1))
            seen.append(loop.inEventLoop)
            _ = try? await loop.submit { 1 }.get()
            seen.append(loop.inEventLoop)
            async let child = loop.inEventLoop
            seen.append(await child)
            return seen
        }
        #expect(seen == [true, true, true, true])
    }

    /// Where a handler runs, before and after an await: on the connection's loop with
    /// `.http1OnEventLoops()`, on Swift's pool with Hummingbird's `.http1()`.
    @Test("Colony's HTTP/1.1 server runs handlers on the connection's loop; Hummingbird's default does not")
    func serverRunsHandlersOnTheConnectionsLoop() async throws {
        #expect(try await handlerPlacement(server: .http1OnEventLoops()) == "true,true")
        #expect(try await handlerPlacement(server: .http1()) == "false,false")
    }

    private struct LoopContext: RequestContext {
        var coreContext: CoreRequestContextStorage
        let eventLoop: any EventLoop
        init(source: ApplicationRequestContextSource) {
            coreContext = .init(source: source)
            eventLoop = source.channel.eventLoop
        }
    }

    private func handlerPlacement(server: HTTPServerBuilder) async throws -> String {
        let router = Router(context: LoopContext.self)
        router.get("placement") { _, context -> String in
            var seen = [context.eventLoop.inEventLoop]
            try await Task.sleep(for: .milliseconds(1))
            seen.append(context.eventLoop.inEventLoop)
            return seen.map(String.init).joined(separator: ",")
        }
        return try await Application(router: router, server: server).test(.live) { client in
            try await client.execute(uri: "/placement", method: .get) { response in String(buffer: response.body) }
        }
    }
}
