import ColonyModels
import Foundation
import Hummingbird
import NIOCore

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
        struct Document: Decodable { let paths: [String: [String: JSONValue]] }
        guard let paths = try? JSONDecoder().decode(Document.self, from: Data(json.utf8)).paths else { throw APIError.internalError }
        let methods: Set<String> = ["get", "put", "post", "delete", "patch", "head", "options"]
        var operations = Set<RouteKey>()
        for (path, item) in paths {
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
