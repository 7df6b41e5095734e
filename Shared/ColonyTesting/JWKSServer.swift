import Foundation
import Hummingbird
import NIOCore

/// Serves a JWKS document at auth's path, as auth does, for verifiers and services under test.
/// `keys` is asked on every fetch, so a test can rotate or revoke what is published; the body
/// gets the document's URL.
public func withJWKSServer<Result: Sendable>(_ keys: @escaping @Sendable () -> [TestTokens], _ body: (URL) async throws -> Result) async throws -> Result {
    let router = Router()
    router.get("/auth/v1/.well-known/jwks.json") { _, _ -> Response in
        let entries = keys().map { String($0.jwksJSON().dropFirst(#"{"keys":["#.count).dropLast(2)) }
        return Response(status: .ok, headers: [.contentType: "application/json"],
                        body: .init(byteBuffer: ByteBuffer(string: #"{"keys":["# + entries.joined(separator: ",") + "]}")))
    }
    let port = try freePort()
    let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: port)), logger: TestEnvironment.logger)
    return try await withTestServer(app) {
        try await waitUntil(timeout: .seconds(30)) { canConnect(port: port) }
        return try await body(URL(string: "http://127.0.0.1:\(port)/auth/v1/.well-known/jwks.json")!)
    }
}
