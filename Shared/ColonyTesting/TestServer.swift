import Logging
import ServiceLifecycle

/// Runs a test's own server (a stand-in, a JWKS endpoint) for `body`'s duration and stops it
/// with a graceful shutdown, never by cancelling it: a server task cancelled while a connection
/// it accepted is still buffered traps in NIO ("Deinited NIOAsyncWriter without calling finish()",
/// swift-nio#3481), which took a whole fresh-clone test run down. `ServiceHost` does the same
/// for the services themselves.
public func withTestServer<Result: Sendable>(_ server: some Service, logger: Logger = TestEnvironment.logger,
                                             _ body: () async throws -> Result) async throws -> Result {
    let group = ServiceGroup(configuration: .init(services: [server], gracefulShutdownSignals: [], logger: logger))
    // In a task of its own, so that a cancelled test does not cancel the server outright either.
    let running = Task { try await group.run() }
    do {
        let result = try await body()
        await group.triggerGracefulShutdown()
        try? await running.value
        return result
    } catch {
        await group.triggerGracefulShutdown()
        try? await running.value
        throw error
    }
}
