import HTTPTypes
import OpenAPIRuntime

/// A write sent with an empty body has none: the operations whose body is optional (log a habit
/// or a hive, convert, advance, an invite code) then take their defaults, as an app's bare POST
/// expects; the generated code would try to decode the empty bytes as JSON. An operation that
/// needs a body answers its missing body (400).
struct EmptyBodyIsNone: ServerMiddleware {
    func intercept(_ request: HTTPRequest, body: HTTPBody?, metadata: ServerRequestMetadata, operationID: String,
                   next: @Sendable (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> (HTTPResponse, HTTPBody?)) async throws -> (HTTPResponse, HTTPBody?) {
        // `RequestBodyCheck` (first) hands on the bytes it read, so the length is known.
        if let body, case .known(0) = body.length { return try await next(request, nil, metadata) }
        return try await next(request, body, metadata)
    }
}
