import ColonyModels
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
/// serves it); the fast path parses the same input by hand, calls that same handler method and writes
/// its answer, a type from the document, with the type's own writer. A test sends the same requests,
/// good and bad, to a service with and without fast paths and holds status, headers and bytes equal.
public struct GeneratedFastPath: Sendable {
    public let method: HTTPRequest.Method
    /// The document's path template (`/chat/v1/groups/{group_id}/messages`), as the generated
    /// code registers it.
    public let path: String
    let handler: @Sendable (Request, ColonyRequestContext) async throws -> Response

    public init(_ method: HTTPRequest.Method, _ path: String,
                handler: @escaping @Sendable (Request, ColonyRequestContext) async throws -> Response) {
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

    /// A query parameter as the generated code reads it (the first of its name, percent-decoded).
    public static func query(_ request: Request, _ name: String) -> String? {
        request.uri.queryParameters.get(name)
    }
}

extension GeneratedRoutes {
    /// The same, with `fastPaths` registered in place of their operations' generated routes when
    /// `mode` is `.on` (each recorded in `catalog` all the same).
    public static func transport(_ router: Router<ColonyRequestContext>, behind middleware: TokenMiddleware, publicPaths: Set<String>,
                                 catalog: RouteCatalog, fastPaths: [GeneratedFastPath], mode: FastPathMode) -> some ServerTransport {
        RecordingTransport(signedIn: router.group().add(middleware: middleware), open: router.group(), publicPaths: publicPaths, catalog: catalog,
                           fastPaths: mode == .on ? fastPaths : [])
    }
}

extension GeneratedFastPath {
    /// Throws unless every fast path names an operation the generated code registered (after
    /// `registerHandlers`): a path the document no longer has would otherwise be served by
    /// nothing, and its equality test would compare the generated route with itself.
    public static func requireOperations(_ fastPaths: [GeneratedFastPath], in catalog: RouteCatalog) throws {
        let routes = catalog.routes
        for fast in fastPaths where !routes.contains(RouteKey(method: fast.method.rawValue, path: fast.path)) {
            throw UnknownOperation(description: "fast path \(fast.method) \(fast.path) is not an operation of the document")
        }
    }

    public struct UnknownOperation: Error, CustomStringConvertible {
        public var description: String
    }
}
