import Foundation
import HTTPTypes
import Hummingbird
import Instrumentation
import Logging
import NIOCore

/// The outermost middleware of every service: request and trace ids in the logger's metadata,
/// the client's address, the body limits, JSON errors, one structured access-log line and
/// metrics per request.
///
/// Bodies are never read here: a handler reads its body, after the token middleware in front of
/// it has checked the caller, so an unauthenticated request (or one for an unknown path) is
/// answered without its body being buffered (the server then discards it as it arrives). A
/// declared `Content-Length` over the largest limit any route allows is refused at once.
public struct ColonyMiddleware: RouterMiddleware {
    public typealias Context = ColonyRequestContext

    let metrics: HTTPMetrics
    /// What a route reads at most unless it raises the limit (`RouteSupport.collect(limit:)`).
    let maxBodyBytes: Int
    /// The largest body any route of the service takes (its uploads); at least `maxBodyBytes`.
    let maxUploadBytes: Int
    let trustedProxies: TrustedProxies
    /// The router's routes, for the `Allow` header of a 405.
    let routes: RouteMethods?

    public init(metrics: HTTPMetrics, maxBodyBytes: Int, maxUploadBytes: Int? = nil, trustedProxies: TrustedProxies = .loopback, routes: RouteMethods? = nil) {
        self.metrics = metrics
        self.maxBodyBytes = maxBodyBytes
        self.maxUploadBytes = max(maxBodyBytes, maxUploadBytes ?? maxBodyBytes)
        self.trustedProxies = trustedProxies
        self.routes = routes
    }

    public func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
        routes?.prepare()
        var context = context
        let requestID = request.headers[.requestID].flatMap(Self.sanitized) ?? UUID().uuidString.lowercased()
        // The request's span (RequestTracingMiddleware) has the trace id; without a tracer, the caller's.
        let traceID = InstrumentationContext.current?.traceID
            ?? request.headers[.traceparent].flatMap(Self.traceID(fromTraceparent:)) ?? requestID
        context.requestID = requestID
        context.clientAddress = trustedProxies.clientAddress(peer: context.remoteIP, forwardedFor: request.headers[values: .xForwardedFor])
        context.logger[metadataKey: "request_id"] = .string(requestID)
        context.logger[metadataKey: "trace_id"] = .string(traceID)
        context.bodyLimit = maxBodyBytes

        var response: Response
        do {
            // A query or path with text Postgres cannot keep is refused before any route sees it.
            if let problem = UnstorableText.problem(inTarget: request.uri.description) {
                throw APIError.unprocessable(problem)
            }
            if let length = request.headers[.contentLength].flatMap(Int.init), length > maxUploadBytes {
                throw APIError.payloadTooLarge(limit: maxUploadBytes)
            }
            response = try await next(request, context)
        } catch {
            response = APIError.response(for: error, logger: context.logger)
            // A path the router knows, asked with a method it does not serve: 405 and what it serves.
            if response.status == .notFound, APIError.from(error).code == "route_not_found",
               let allowed = routes?.methods(forPath: request.uri.path), !allowed.isEmpty {
                response = APIError.methodNotAllowed(allowed).errorResponse()
            }
        }
        response.headers[.requestID] = requestID

        let duration = ContinuousClock.now - start
        let route = context.endpointPath ?? "unmatched"
        metrics.record(method: request.method.rawValue, route: route, status: response.status.code, duration: duration)
        context.logger.info("request", metadata: [
            "method": .string(request.method.rawValue),
            "path": .string(request.uri.path),
            "route": .string(route),
            "status": .stringConvertible(response.status.code),
            "duration_ms": .string(String(format: "%.2f", Double(duration.components.attoseconds) / 1e15 + Double(duration.components.seconds) * 1000)),
        ])
        return response
    }

    /// Accepts a caller's request id only if it is short and plain, so logs stay clean.
    static func sanitized(_ value: String) -> String? {
        guard (1...128).contains(value.count), value.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" || $0 == "." }) else { return nil }
        return value
    }

    /// The trace id of a W3C `traceparent` header (`00-<trace id>-<span id>-<flags>`).
    static func traceID(fromTraceparent value: String) -> String? {
        let parts = value.split(separator: "-")
        guard parts.count == 4, parts[1].count == 32, parts[1].allSatisfy(\.isHexDigit) else { return nil }
        return String(parts[1])
    }
}

extension HTTPField.Name {
    public static let requestID = HTTPField.Name("X-Request-Id")!
    public static let traceparent = HTTPField.Name("traceparent")!
    public static let idempotencyKey = HTTPField.Name("Idempotency-Key")!
    public static let apiKey = HTTPField.Name("apikey")!
    public static let xForwardedFor = HTTPField.Name("X-Forwarded-For")!
}
