import ColonyModels
import ColonyPlatform
import Foundation
import HTTPTypes
import NIOCore
import OpenAPIRuntime
import PostgresNIO

/// The `Idempotency-Key` a write came with, and the digest of the request itself (method, path
/// and query, body as sent), for `IdempotentWrites`.
struct IdempotentRequest: Sendable {
    @TaskLocal static var current: IdempotentRequest?

    var key: String
    var hash: String

    /// 1–255 printable ASCII characters.
    static func isValid(_ key: String) -> Bool {
        !key.isEmpty && key.utf8.count <= 255 && key.unicodeScalars.allSatisfy { $0.value >= 0x20 && $0.value < 0x7f }
    }
}

/// Every write's `Idempotency-Key`, checked before the generated code decodes its body (400
/// `invalid_idempotency_key`), and the request's digest taken over the bytes as sent: the handler
/// sees only the decoded body. Reads ignore the header, as they always have.
struct IdempotencyKeyCheck: ServerMiddleware {
    static let header = HTTPField.Name("Idempotency-Key")!

    func intercept(_ request: HTTPRequest, body: HTTPBody?, metadata: ServerRequestMetadata, operationID: String,
                   next: @Sendable (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> (HTTPResponse, HTTPBody?)) async throws -> (HTTPResponse, HTTPBody?) {
        guard request.method != .get, let key = request.headerFields[Self.header] else { return try await next(request, body, metadata) }
        guard IdempotentRequest.isValid(key) else { throw HabitsErrors.idempotencyKeyInvalid }
        // Already read within the body limit (`RequestBodyCheck` runs first).
        let bytes: [UInt8] = if let body { try await [UInt8](collecting: body, upTo: .max) } else { [] }
        let hash = IdempotencyStore.hash(method: request.method.rawValue, path: request.path ?? "", body: ByteBuffer(bytes: bytes))
        return try await IdempotentRequest.$current.withValue(IdempotentRequest(key: key, hash: hash)) {
            try await next(request, body == nil ? nil : HTTPBody(bytes), metadata)
        }
    }
}

/// A write in one transaction as the caller. With an `Idempotency-Key`, the answer is stored in
/// the same commit and a replay of the same request gets it back (`Idempotent-Replayed: true`)
/// without running again; the same key with a different request is refused (422).
struct IdempotentWrites: Sendable {
    let database: Database
    let store: IdempotencyStore

    typealias Replayed = Components.Headers.IdempotentReplayed

    /// A write that answers with `Answer` (stored as the answer's JSON).
    func answer<Answer: Codable & Sendable>(status: Int = 200, _ body: (AuthenticatedUser, PostgresConnection) async throws -> Answer) async throws -> (Answer, Replayed?) {
        // Stored as the generated route writes it (`ColonyJSON`'s tree), read back as it reads bodies.
        try await run(status: status, encode: { Data(try ColonyJSON.encodeTree($0)) }, decode: { try GeneratedRoutes.requestDecoder.decode(Answer.self, from: $0) }, body)
    }

    /// A write that answers 204 (an empty answer is stored).
    func noContent(_ body: (AuthenticatedUser, PostgresConnection) async throws -> Void) async throws -> Replayed? {
        try await run(status: 204, encode: { _ in Data() }, decode: { _ in () }, body).1
    }

    private func run<Answer: Sendable>(status: Int, encode: (Answer) throws -> Data, decode: (Data) throws -> Answer,
                                       _ body: (AuthenticatedUser, PostgresConnection) async throws -> Answer) async throws -> (Answer, Replayed?) {
        let request = IdempotentRequest.current
        return try await database.callerWrite { caller, connection in
            guard let request else { return (try await body(caller, connection), nil) }
            if let stored = try await store.lookup(userID: caller.id, key: request.key, on: connection) {
                guard stored.requestHash == request.hash else { throw HabitsErrors.idempotencyKeyReused }
                return (try decode(Data(stored.body.readableBytesView)), ._true)
            }
            let answer = try await body(caller, connection)
            try await store.store(userID: caller.id, key: request.key, requestHash: request.hash, status: status, body: ByteBuffer(bytes: try encode(answer)), on: connection)
            return (answer, nil)
        }
    }
}
