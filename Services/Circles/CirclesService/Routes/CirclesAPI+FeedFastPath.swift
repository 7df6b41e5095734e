import ColonyModels
import ColonyPlatform
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import OpenAPIRuntime

// The feed page (`GET /circles/v1/circles/{circle_id}/posts`), the app's busiest read, served by
// hand: the generated route writes its answer with Foundation's JSONEncoder, several times the
// cost of the page's own writer (`FeedPage: ColonyJSONWritable`, Domain/Schemas.swift). The fast
// path reads a plain request as the generated code does, calls the same `listPosts` and writes
// its page; any request it cannot read with certainty goes to the generated route itself, so
// every answer, good or bad, is the generated route's (CirclesFastPathTests holds them byte-equal).
extension CirclesAPI {
    static let feedPath = "/circles/v1/circles/{circle_id}/posts"

    func fastPaths(middlewares: [any ServerMiddleware]) throws -> [GeneratedFastPath] {
        // The generated route, with the same middlewares, for what the fast path leaves to it.
        let generated = try CapturedRoute(.get, Self.feedPath) { transport in
            try registerHandlers(on: transport, serverURL: GeneratedRoutes.serverURL, configuration: GeneratedRoutes.configuration, middlewares: middlewares)
        }
        return [
            GeneratedFastPath(.get, Self.feedPath) { request, context in
                guard let input = Self.feedInput(request, context) else { return try await generated.respond(to: request, context: context) }
                // `listPosts` answers a page or throws (its errors are answered as the generated route's are).
                guard case .ok(let ok) = try await listPosts(input), case .json(let page) = ok.body else { throw APIError.internalError }
                return try GeneratedFastPath.json(page)
            },
        ]
    }

    /// The input the generated code reads from a plain request: a circle id, and `limit` and
    /// `before` at most once each, all of unreserved characters (nothing percent-encoded, no `+`),
    /// `limit` a whole number; no body; `Accept` absent or plainly JSON. Anything else (nil) is
    /// the generated route's to read and answer.
    static func feedInput(_ request: Request, _ context: ColonyRequestContext) -> Operations.ListPosts.Input? {
        guard request.headers[.contentLength].map({ $0 == "0" }) ?? true, request.headers[.transferEncoding] == nil else { return nil }
        let accept = request.headers[values: .accept]
        guard accept.isEmpty || (accept.count == 1 && (accept[0] == "application/json" || accept[0] == "*/*")) else { return nil }
        guard let circle = context.parameters.get("circle_id"), isPlain(circle) else { return nil }
        var limit: Int?, before: String?
        if let query = request.uri.query, !query.isEmpty {
            guard isPlain(query, allowing: [UInt8(ascii: "="), UInt8(ascii: "&")]) else { return nil }
            for item in query.split(separator: "&", omittingEmptySubsequences: false) {
                let parts = item.split(separator: "=", omittingEmptySubsequences: false)
                guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else { return nil }
                switch parts[0] {
                case "limit":
                    guard limit == nil, let number = Int(parts[1]) else { return nil }
                    limit = number
                case "before":
                    guard before == nil else { return nil }
                    before = String(parts[1])
                default:
                    continue  // the generated code ignores what the document does not list
                }
            }
        }
        return .init(path: .init(circleId: circle), query: .init(before: before, limit: limit))
    }

    /// Only unreserved characters (RFC 3986: letters, digits, `-._~`) and `extra`.
    static func isPlain(_ text: some StringProtocol, allowing extra: Set<UInt8> = []) -> Bool {
        text.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"): true
            default: extra.contains(byte)
            }
        }
    }
}

/// One operation's generated route (its handler as `registerHandlers` hands it to a transport,
/// with the runtime's decoding, middlewares and encoding), answered as swift-openapi-hummingbird
/// would: what the fast path falls back to.
struct CapturedRoute: Sendable {
    typealias Handler = @Sendable (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> (HTTPResponse, HTTPBody?)
    let handler: Handler

    /// The route `register` (the generated `registerHandlers`) registers at `method` and `path`.
    init(_ method: HTTPRequest.Method, _ path: String, register: (any ServerTransport) throws -> Void) throws {
        let transport = Capture(method: method, path: path)
        try register(transport)
        guard let handler = transport.handler else { throw Missing(description: "the generated code has no route \(method) \(path)") }
        self.handler = handler
    }

    /// The request's head, body and path parameters in; the answer's status, headers and body out.
    func respond(to request: Request, context: ColonyRequestContext) async throws -> Response {
        let length: HTTPBody.Length = request.headers[.contentLength].flatMap { Int64($0) }.map { .known($0) } ?? .unknown
        let body = HTTPBody(request.body.map { [UInt8](buffer: $0) }, length: length, iterationBehavior: .single)
        let parameters = [String: Substring](context.parameters.map { (String($0.0), $0.1) }) { first, _ in first }
        let (response, responseBody) = try await handler(request.head, body, ServerRequestMetadata(pathParameters: parameters))
        let bytes = if let responseBody { ByteBuffer(bytes: try await [UInt8](collecting: responseBody, upTo: .max)) } else { ByteBuffer() }
        return Response(status: response.status, headers: response.headerFields, body: .init(byteBuffer: bytes))
    }

    struct Missing: Error, CustomStringConvertible {
        var description: String
    }

    /// A transport that keeps one route's handler and drops the rest.
    private final class Capture: ServerTransport {
        let method: HTTPRequest.Method
        let path: String
        var handler: Handler?

        init(method: HTTPRequest.Method, path: String) {
            self.method = method
            self.path = path
        }

        func register(_ handler: @escaping Handler, method: HTTPRequest.Method, path: String) throws {
            if method == self.method, path == self.path { self.handler = handler }
        }
    }
}
