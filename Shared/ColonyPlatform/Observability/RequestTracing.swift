import HTTPTypes
import Hummingbird
import Tracing

/// A server span per request, in the trace the caller's `traceparent` names (or a new one),
/// named after the route (`/habits/v1/hives/{hive_id}`). Unlike Hummingbird's `TracingMiddleware`
/// it records neither the query string (a storage link's token, auth's verification links) nor
/// the client's address and user agent, since spans leave the process for a collector. Its
/// attributes: `http.request.method`, `url.path`, `http.route`, `http.response.status_code`. It
/// ends when the response is ready, as the request log's `duration_ms` does (a streamed body's
/// writing is not in it).
public struct RequestTracingMiddleware<Context: RequestContext>: RouterMiddleware {
    public init() {}

    public func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var traceContext = InstrumentationContext.current ?? .topLevel
        InstrumentationSystem.instrument.extract(request.headers, into: &traceContext, using: HTTPFieldsExtractor())
        let span = startSpan("HTTP request", context: traceContext, ofKind: .server)
        defer { span.end() }
        do {
            let response = try await InstrumentationContext.$current.withValue(span.context) { try await next(request, context) }
            Self.finish(span, request: request, route: context.endpointPath, status: response.status.code)
            return response
        } catch {
            Self.finish(span, request: request, route: context.endpointPath, status: (error as? any HTTPResponseError)?.status.code ?? 500)
            span.recordError(error)
            throw error
        }
    }

    /// Names the span and sets its attributes, only when it records: without a collector spans
    /// are dropped, and nothing is built for them.
    static func finish(_ span: any Span, request: Request, route: String?, status: Int) {
        guard span.isRecording else { return }
        span.operationName = route ?? "HTTP \(request.method.rawValue) route not found"
        span.updateAttributes { attributes in
            attributes["http.request.method"] = request.method.rawValue
            attributes["url.path"] = request.uri.path
            attributes["http.route"] = route
            attributes["http.response.status_code"] = status
        }
        if status >= 500 { span.setStatus(SpanStatus(code: .error)) }
    }
}

/// The trace context headers of a request.
struct HTTPFieldsExtractor: Extractor {
    func extract(key: String, from fields: HTTPFields) -> String? {
        HTTPField.Name(key).flatMap { fields[$0] }
    }
}
