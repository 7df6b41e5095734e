import ColonyModels
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import OpenAPIRuntime

/// Whether a service serves its hot reads by their fast paths (`COLONY_FAST_PATHS`).
public enum FastPathMode: String, CaseIterable, Sendable {
    case on, off
}

/// A hot read served by hand in place of its generated route: the runtime writes every answer with
/// Foundation's `JSONEncoder`, about four times the instructions of a page written straight into
/// bytes (`ColonyJSONWritable`), which on a history or feed page is most of the service's CPU.
///
/// The operation keeps its generated handler (`APIProtocol` still needs it, and `COLONY_FAST_PATHS=off`
/// serves it). The fast path reads a plain request itself (`PlainRequest`), calls that same handler
/// method and writes its answer, a type from the document, with the type's own writer; any request
/// it cannot read with certainty goes to the generated route it is handed, so every answer, good or
/// bad, is the generated route's. A test sends the same requests to a service with and without fast
/// paths and holds status, headers and bytes equal.
public struct GeneratedFastPath: Sendable {
    public let method: HTTPRequest.Method
    /// The document's path template (`/chat/v1/groups/{group_id}/messages`), as the generated
    /// code registers it.
    public let path: String
    let handler: @Sendable (Request, ColonyRequestContext, GeneratedRoute) async throws -> Response

    /// `handler` gets the request and the operation's generated route, for what it leaves to it.
    public init(_ method: HTTPRequest.Method, _ path: String,
                handler: @escaping @Sendable (Request, ColonyRequestContext, _ generated: GeneratedRoute) async throws -> Response) {
        self.method = method
        self.path = path
        self.handler = handler
    }

    /// `value` as the generated route answers it: `application/json; charset=utf-8`, the bytes
    /// `value` writes itself (held equal to the runtime's encoding by the service's tests).
    public static func json(_ value: some ColonyJSONWritable, status: HTTPResponse.Status = .ok) throws -> Response {
        Response(status: status, headers: [.contentType: "application/json; charset=utf-8"],
                 body: .init(byteBuffer: ByteBuffer(bytes: try ColonyJSON.encode(value))))
    }

    /// `value` as the generated route answers it, written by `ColonyJSON`'s tree (what Foundation's
    /// encoder with the runtime's settings writes, byte for byte: ids are strings in the documents'
    /// types), for answers without a writer of their own. Held equal by the service's tests.
    public static func json(encoding value: some Encodable, status: HTTPResponse.Status = .ok) throws -> Response {
        Response(status: status, headers: [.contentType: "application/json; charset=utf-8"],
                 body: .init(byteBuffer: ByteBuffer(bytes: try ColonyJSON.encodeTree(value))))
    }

    /// Throws unless every fast path names an operation of `document` (whose operations the
    /// generated code registers): a path the document no longer has would otherwise be served by
    /// nothing, and its equality test would compare the generated route with itself.
    public static func requireOperations(_ fastPaths: [GeneratedFastPath], in document: OpenAPIDocument) throws {
        let operations = try document.operations()
        for fast in fastPaths where !operations.contains(RouteKey(method: fast.method.rawValue, path: fast.path)) {
            throw UnknownOperation(description: "fast path \(fast.method) \(fast.path) is not an operation of the document")
        }
    }

    public struct UnknownOperation: Error, CustomStringConvertible {
        public var description: String
    }
}

/// One operation's generated route (its handler as `registerHandlers` hands it to the transport,
/// with the runtime's decoding, middlewares and encoding), answered as swift-openapi-hummingbird
/// answers it: what a fast path falls back to.
public struct GeneratedRoute: Sendable {
    typealias Handler = @Sendable (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> (HTTPResponse, HTTPBody?)
    let handler: Handler

    /// The request's head, body and path parameters in; the answer's status, headers and body out.
    public func respond(to request: Request, context: ColonyRequestContext) async throws -> Response {
        let length: HTTPBody.Length = request.headers[.contentLength].flatMap { Int64($0) }.map { .known($0) } ?? .unknown
        let body = HTTPBody(request.body.map { [UInt8](buffer: $0) }, length: length, iterationBehavior: .single)
        let parameters = [String: Substring](context.parameters.map { (String($0.0), $0.1) }) { first, _ in first }
        let (response, responseBody) = try await handler(request.head, body, ServerRequestMetadata(pathParameters: parameters))
        let bytes = if let responseBody { ByteBuffer(bytes: try await [UInt8](collecting: responseBody, upTo: .max)) } else { ByteBuffer() }
        return Response(status: response.status, headers: response.headerFields, body: .init(byteBuffer: bytes))
    }
}

/// A GET a fast path can read exactly as the generated code would: no body, `Accept` absent or
/// plainly JSON, the path parameter and every query item of unreserved characters only (RFC 3986:
/// nothing percent-encoded, no `+`), each item `name=value` with both non-empty, each name the
/// operation reads at most once (others are ignored, as the generated code ignores them). Anything
/// else is nil: the generated route's to read and answer.
public struct PlainRequest: Sendable {
    /// The path parameter's value (empty for an operation without one).
    public let parameter: String
    /// The query items the operation reads, by name.
    public let query: [String: String]

    public init?(_ request: Request, _ context: ColonyRequestContext, parameter name: String? = nil, query names: Set<String>) {
        guard request.headers[.contentLength].map({ $0 == "0" }) ?? true, request.headers[.transferEncoding] == nil,
              Self.acceptsJSON(request), let parameter = Self.parameter(name, of: context) else { return nil }
        var query: [String: String] = [:]
        if let text = request.uri.query, !text.isEmpty {
            guard Self.isPlain(text, allowing: [UInt8(ascii: "="), UInt8(ascii: "&")]) else { return nil }
            for item in text.split(separator: "&", omittingEmptySubsequences: false) {
                let parts = item.split(separator: "=", omittingEmptySubsequences: false)
                guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else { return nil }
                let key = String(parts[0])
                guard names.contains(key) else { continue }
                guard query[key] == nil else { return nil }
                query[key] = String(parts[1])
            }
        }
        self.parameter = parameter
        self.query = query
    }

    /// A query item that must be a whole number: `.some(nil)` when absent, nil when it is not one
    /// (the generated route's to refuse).
    public func integer(_ name: String) -> Int?? {
        guard let text = query[name] else { return .some(nil) }
        guard let number = Int(text) else { return nil }
        return .some(number)
    }

    /// `Accept` absent or plainly JSON: what every fast path writes.
    static func acceptsJSON(_ request: Request) -> Bool {
        let accept = request.headers[values: .accept]
        return accept.isEmpty || (accept.count == 1 && (accept[0] == "application/json" || accept[0] == "*/*"))
    }

    /// The path parameter `name` when it is plain (empty for an operation without one), else nil.
    static func parameter(_ name: String?, of context: ColonyRequestContext) -> String? {
        guard let name else { return "" }
        let value = context.parameters.get(name) ?? ""
        return !value.isEmpty && isPlain(value) ? value : nil
    }

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

extension GeneratedRoutes {
    /// The same, with `fastPaths` registered in place of their operations' generated routes when
    /// `mode` is `.on`.
    public static func transport(_ router: Router<ColonyRequestContext>, behind middleware: TokenMiddleware, publicPaths: Set<String>,
                                 fastPaths: [GeneratedFastPath], mode: FastPathMode) -> some ServerTransport {
        GeneratedTransport(signedIn: router.group().add(middleware: middleware), open: router.group(), publicPaths: publicPaths,
                           fastPaths: mode == .on ? fastPaths : [])
    }
}

/// A JSON write a fast path can read exactly as the generated code and `RequestBodyCheck` would:
/// `Content-Type: application/json` (with `charset=utf-8` or without), `Accept` absent or plainly
/// JSON, a known length within `limit`, the path parameter of unreserved characters, no query;
/// then a body with text Postgres can keep, no `null` (what `RequestBodyNulls` would note: not
/// read here), that Foundation's decoder, set as the runtime's, reads as `Body`. Anything else is
/// nil, and the request (its body kept) is the generated route's to read and answer.
public struct PlainJSONWrite<Body: Decodable & Sendable>: Sendable {
    /// The path parameter's value (empty for an operation without one).
    public let parameter: String
    public let body: Body

    public init?(_ request: inout Request, _ context: ColonyRequestContext, parameter name: String? = nil, limit: Int) async throws {
        let type = request.headers[values: .contentType]
        guard type.count == 1, type[0] == "application/json" || type[0] == "application/json; charset=utf-8",
              request.headers[.transferEncoding] == nil, request.uri.query == nil,
              let length = request.headers[.contentLength].flatMap({ Int($0) }), length > 0, length <= limit,
              PlainRequest.acceptsJSON(request), let parameter = PlainRequest.parameter(name, of: context) else { return nil }
        // Kept in the request, so that the generated route reads the same bytes.
        let bytes = try await request.collectBody(upTo: limit)
        let decoded: Body? = bytes.withUnsafeReadableBytes { raw in
            guard UnstorableText.problem(inJSON: raw) == nil, !Self.containsNull(raw) else { return nil }
            return try? GeneratedRoutes.requestDecoder.decode(Body.self, from: Data(raw))
        }
        guard let decoded else { return nil }
        self.parameter = parameter
        self.body = decoded
    }

    /// Whether the bytes hold `null` anywhere (in a string too: then the generated route reads it).
    static func containsNull(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard bytes.count >= 4 else { return false }
        for index in 0...(bytes.count - 4) where bytes[index] == UInt8(ascii: "n")
            && bytes[index + 1] == UInt8(ascii: "u") && bytes[index + 2] == UInt8(ascii: "l") && bytes[index + 3] == UInt8(ascii: "l") {
            return true
        }
        return false
    }
}
