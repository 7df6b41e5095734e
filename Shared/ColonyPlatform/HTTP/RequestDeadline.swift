import Hummingbird
import Logging

/// Every request's deadline (`COLONY_REQUEST_DEADLINE_SECONDS`, 15 s by default): a request still
/// unanswered then is answered 503 `deadline_exceeded` and its handler cancelled, rather than held
/// for as long as a database or peer that went silent (a partition, a stalled link) keeps it
/// waiting. A client (or the gateway) sees the failure in bounded time and may retry elsewhere.
///
/// The answer goes out once the handler has ended, so the handler's waits must end when it is
/// cancelled: `Database` closes a leased connection whose task is cancelled (its statement fails at
/// once, the server rolls the transaction back), and a wait for a pooled connection ends. A write
/// answered 503 here may still have committed just before (as with any lost answer): clients retry
/// writes with their idempotency keys.
///
/// Not bounded: console routes (`/internal/v1/console/`: their statements have a 20 s timeout of
/// their own) and a declared body larger than the service's body limit (an upload takes as long as
/// the client's link). Streamed response bodies are written after the handler returns, unbounded.
public struct RequestDeadlineMiddleware: RouterMiddleware {
    public typealias Context = ColonyRequestContext

    /// The default of `COLONY_REQUEST_DEADLINE_SECONDS`.
    public static let defaultDeadline: Duration = .seconds(15)

    public let deadline: Duration
    /// Requests declaring a larger body than this are uploads, not bounded.
    let boundedBodyBytes: Int

    public init(deadline: Duration = Self.defaultDeadline, boundedBodyBytes: Int) {
        self.deadline = deadline
        self.boundedBodyBytes = boundedBodyBytes
    }

    func isBounded(_ request: Request) -> Bool {
        if request.uri.path.hasPrefix(PipelineAdminRoutes.prefix + "/") { return false }
        if let length = request.headers[.contentLength].flatMap(Int.init), length > boundedBodyBytes { return false }
        return true
    }

    public func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard isBounded(request) else { return try await next(request, context) }
        let deadline = self.deadline
        // The handler runs in a child task so that the deadline can cancel it; the group waits
        // for it to end, so `next` never outlives this call (hence `withoutActuallyEscaping`).
        return try await withoutActuallyEscaping(next) { next in
            let handler = UncheckedHandler(next: next)
            return try await withThrowingTaskGroup(of: Response?.self) { group in
                group.addTask { try await handler.next(request, context) }
                group.addTask {
                    try await Task.sleep(for: deadline)
                    return nil
                }
                defer { group.cancelAll() }
                if let response = try await group.next() ?? nil {
                    return response
                }
                context.logger.warning("request deadline exceeded", metadata: [
                    "method": .string(request.method.rawValue), "path": .string(request.uri.path),
                    "deadline_seconds": .stringConvertible(deadline.components.seconds),
                ])
                throw APIError(.serviceUnavailable, code: "deadline_exceeded",
                               message: "the request was not answered within its deadline; try again",
                               headers: [.retryAfter: "1"])
            }
        }
    }
}

/// The rest of the chain, carried into the child task that runs it. Hummingbird's `next` is not
/// declared `Sendable`, but it is called once, from that one task, and never after `handle`
/// returns (the task group outlives it).
private struct UncheckedHandler: @unchecked Sendable {
    let next: (Request, ColonyRequestContext) async throws -> Response
}
