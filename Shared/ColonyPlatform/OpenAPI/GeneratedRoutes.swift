import ColonyModels
import Foundation
import HTTPTypes
import Hummingbird
import OpenAPIHummingbird
import OpenAPIRuntime
import PostgresNIO

/// How a domain service serves the handlers generated from its OpenAPI document
/// (swift-openapi-generator's `APIProtocol.registerHandlers`): on the service's router behind the
/// token middleware, with Colony's JSON conventions, each body checked before it is decoded.
///
///     try handlers.registerHandlers(on: GeneratedRoutes.transport(router, ...), serverURL: GeneratedRoutes.serverURL,
///                                   configuration: GeneratedRoutes.configuration, middlewares: GeneratedRoutes.middlewares(...))
public enum GeneratedRoutes {
    /// The documents' paths are absolute (`/nearby/v1/profile`) under the server `/`.
    public static let serverURL = URL(string: "/")!

    /// Colony's JSON: times as `ISO8601` writes them, keys sorted, slashes escaped, compact; ids
    /// are strings in the documents, so their case is the handlers' (lower case).
    public static let configuration = Configuration(dateTranscoder: ColonyDateTranscoder(), jsonEncodingOptions: [.sortedKeys])

    /// The decoder the runtime reads JSON bodies with under `configuration` (its `Converter`'s):
    /// a fast path reads the document's types with the same settings.
    public static let requestDecoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let container = try decoder.singleValueContainer()
            return try ColonyDateTranscoder().decode(try container.decode(String.self))
        }
        return decoder
    }()

    /// The routes go on `router` behind `middleware` (the token middleware: every operation needs
    /// a signed-in caller, but those at `publicPaths`, the document itself).
    public static func transport(_ router: Router<ColonyRequestContext>, behind middleware: TokenMiddleware, publicPaths: Set<String>) -> some ServerTransport {
        GeneratedTransport(signedIn: router.group().add(middleware: middleware), open: router.group(), publicPaths: publicPaths, fastPaths: [])
    }

    /// The checks every generated route runs before its body is decoded (`RequestBodyCheck`):
    /// `maxBodyBytes` for JSON bodies but those of `largeJSON` (by operation id, a limit of their
    /// own, for the documents' large arrays), `uploads` for the operations that take files.
    public static func middlewares(maxBodyBytes: Int, largeJSON: [String: Int] = [:], uploads: [String: Int] = [:]) -> [any ServerMiddleware] {
        [RequestBodyCheck(maxBodyBytes: maxBodyBytes, largeJSONLimits: largeJSON, uploadLimits: uploads)]
    }
}

/// The caller, for handlers that see no request context (the generated ones): the token
/// middleware puts the verified caller in the request's task.
public enum RequestCaller {
    @TaskLocal public static var user: AuthenticatedUser?

    /// The verified caller (id, app, role), or 401 (a generated route reached without the token middleware).
    public static func require() throws -> AuthenticatedUser {
        guard let user else { throw APIError.unauthorized("missing access token") }
        return user
    }
}

/// A `ServerTransport` that registers on Hummingbird router groups, a fast path in place of its
/// operation's generated route.
struct GeneratedTransport: ServerTransport {
    let signedIn: RouterGroup<ColonyRequestContext>
    let open: RouterGroup<ColonyRequestContext>
    let publicPaths: Set<String>
    /// Served in place of the generated routes of the same method and path (`GeneratedFastPath`).
    let fastPaths: [GeneratedFastPath]

    func register(_ handler: @escaping @Sendable (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> (HTTPResponse, HTTPBody?),
                  method: HTTPRequest.Method, path: String) throws {
        let group = publicPaths.contains(path) ? open : signedIn
        if let fast = fastPaths.first(where: { $0.method == method && $0.path == path }) {
            let generated = GeneratedRoute(handler: handler)
            group.on(RouterPath(path), method: method) { request, context in try await fast.handler(request, context, generated) }
        } else {
            group.register(handler, method: method, path: path)
        }
    }
}

/// Times in and out of the generated types as Colony writes them (`2026-11-22T04:11:32.123Z`);
/// any ISO 8601 time `ISO8601.parse` reads is accepted.
public struct ColonyDateTranscoder: DateTranscoder {
    public init() {}

    public func encode(_ date: Date) throws -> String { ISO8601.format(date) }

    public func decode(_ text: String) throws -> Date {
        guard let date = ISO8601.parse(text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "expected an ISO 8601 time, got \(text)"))
        }
        return date
    }
}

extension Database {
    /// A generated handler's read: the caller (401 without one) and a pooled connection.
    public func callerRead<Result: Sendable>(_ body: (AuthenticatedUser, PostgresConnection) async throws -> Result) async throws -> Result {
        let user = try RequestCaller.require()
        return try await withConnection { connection in try await body(user, connection) }
    }

    /// A generated handler's write: the caller (401 without one) and one transaction.
    public func callerWrite<Result: Sendable>(_ body: (AuthenticatedUser, PostgresConnection) async throws -> Result) async throws -> Result {
        let user = try RequestCaller.require()
        return try await transaction { connection in try await body(user, connection) }
    }
}
