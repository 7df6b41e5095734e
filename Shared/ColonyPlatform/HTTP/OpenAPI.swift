import Foundation
import Hummingbird
import NIOCore
import Synchronization

/// One operation: an HTTP method and a path in OpenAPI's form (`/habits/v1/hives/{hive_id}`).
public struct RouteKey: Hashable, Sendable, Comparable, CustomStringConvertible {
    public var method: String
    public var path: String

    public init(method: String, path: String) {
        self.method = method.uppercased()
        self.path = path
    }

    public var description: String { "\(method) \(path)" }

    public static func < (lhs: RouteKey, rhs: RouteKey) -> Bool { (lhs.path, lhs.method) < (rhs.path, rhs.method) }
}

/// The routes a service registered, recorded as they are added, so a test can hold the
/// service's OpenAPI document against what the router really serves.
public final class RouteCatalog: Sendable {
    private let entries = Mutex<[RouteKey]>([])

    public init() {}

    public var routes: Set<RouteKey> { entries.withLock { Set($0) } }

    /// Records a route added some other way (a public document route, say).
    public func record(_ key: RouteKey) { entries.withLock { $0.append(key) } }
}

/// Adds routes under a path prefix to a router group and records each in a `RouteCatalog`.
/// Paths use `{name}` parameters, the same spelling as the OpenAPI document.
public struct DocumentedRoutes {
    let group: RouterGroup<ColonyRequestContext>
    let prefix: String
    let catalog: RouteCatalog

    /// `prefix` is the group's path (`/habits/v1`), used for the recorded OpenAPI paths.
    public init(group: RouterGroup<ColonyRequestContext>, prefix: String, catalog: RouteCatalog) {
        self.group = group
        self.prefix = prefix.hasPrefix("/") ? prefix : "/" + prefix
        self.catalog = catalog
    }

    public func on<Output: ResponseGenerator>(_ method: HTTPRequest.Method, _ path: String, use handler: @escaping @Sendable (Request, ColonyRequestContext) async throws -> Output) {
        group.on(RouterPath(path), method: method, use: handler)
        let full = path.isEmpty ? prefix : prefix + (path.hasPrefix("/") ? path : "/" + path)
        catalog.record(RouteKey(method: method.rawValue, path: full))
    }
}

/// A service's OpenAPI document (JSON), served as it is and readable by tests.
public struct OpenAPIDocument: Sendable {
    public let json: String

    public init(json: String) {
        self.json = json
    }

    /// A document from the bytes of the service's `openapi.json` (embedded by SwiftPM:
    /// `resources: [.embedInCode("openapi.json")]` gives `PackageResources.openapi_json`).
    public init(bytes: [UInt8]) {
        self.json = String(decoding: bytes, as: UTF8.self)
    }

    /// Every operation the document describes.
    public func operations() throws -> Set<RouteKey> {
        guard let root = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any],
              let paths = root["paths"] as? [String: Any] else {
            throw APIError.internalError
        }
        let methods: Set<String> = ["get", "put", "post", "delete", "patch", "head", "options"]
        var operations = Set<RouteKey>()
        for (path, item) in paths {
            guard let item = item as? [String: Any] else { continue }
            for method in item.keys where methods.contains(method) {
                operations.insert(RouteKey(method: method, path: path))
            }
        }
        return operations
    }

    /// Serves the document at `path` (public, no token).
    public func serve(at path: String, on router: Router<ColonyRequestContext>) {
        let body = ByteBuffer(string: json)
        router.get(RouterPath(path)) { _, _ in
            Response(status: .ok, headers: [.contentType: "application/json; charset=utf-8"], body: .init(byteBuffer: body))
        }
    }
}
