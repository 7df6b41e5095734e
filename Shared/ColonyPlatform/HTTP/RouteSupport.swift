import ColonyModels
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import PostgresNIO

/// What every domain service's handlers do around their domain call: decode a JSON body, read
/// path and query values, answer JSON, and run the call on a pooled connection (reads) or in one
/// transaction (writes). Handlers stay one line of domain logic each.
public struct RouteSupport: Sendable {
    public let database: Database

    public init(database: Database) {
        self.database = database
    }

    /// A read: the caller's id and a pooled connection.
    public func read<Output: Encodable & Sendable>(_ context: ColonyRequestContext, _ body: @Sendable (UUID, PostgresConnection) async throws -> Output) async throws -> Response {
        let user = try context.requireUser().id
        let output = try await database.withConnection { connection in try await body(user, connection) }
        return try Self.json(output, status: .ok)
    }

    /// A write in one transaction, with the request body collected first (up to `limit` bytes,
    /// the context's small default unless an upload route raises it). The caller is checked
    /// before a byte of the body is read.
    public func write<Output: Encodable & Sendable>(_ request: Request, _ context: ColonyRequestContext, status: HTTPResponse.Status = .ok, limit: Int? = nil,
                                                    _ body: @Sendable (ByteBuffer, UUID, PostgresConnection) async throws -> Output) async throws -> Response {
        let user = try context.requireUser().id
        let bytes = try await Self.collect(request, context, limit: limit)
        let output = try await database.transaction { connection in try await body(bytes, user, connection) }
        return try Self.json(output, status: status)
    }

    /// The body, or 413 past the limit rather than a dropped connection; `limit` defaults to the
    /// context's body limit (`COLONY_MAX_BODY_BYTES`).
    public static func collect(_ request: Request, _ context: ColonyRequestContext, limit: Int? = nil) async throws -> ByteBuffer {
        let limit = limit ?? context.maxUploadSize
        do {
            return try await request.body.collect(upTo: limit)
        } catch is NIOTooManyBytesError {
            throw APIError.payloadTooLarge(limit: limit)
        }
    }

    public static func response(_ body: ByteBuffer, status: HTTPResponse.Status) -> Response {
        if status == .noContent { return Response(status: status) }
        return Response(status: status, headers: [.contentType: "application/json; charset=utf-8"], body: .init(byteBuffer: body))
    }

    public static func json(_ value: some Encodable, status: HTTPResponse.Status) throws -> Response {
        if status == .noContent { return Response(status: status) }
        return response(ByteBuffer(bytes: try ColonyJSON.encode(value)), status: status)
    }

    /// A JSON body; an empty body is `empty` when the operation has defaults for everything.
    public static func decode<T: Decodable>(_ type: T.Type, _ body: ByteBuffer, emptyAs empty: T? = nil) throws -> T {
        if body.readableBytes == 0, let empty { return empty }
        return try ColonyRequestDecoder.decode(type, from: Data(buffer: body))
    }

    /// A path id; anything that is not a UUID cannot name a record, so it is the record's 404.
    public static func uuid(_ context: ColonyRequestContext, _ name: String, _ notFound: APIError) throws -> UUID {
        guard let text = context.parameters.get(name), let id = UUID(canonical: text) else { throw notFound }
        return id
    }

    /// An optional query value parsed by `parse`; present but unparsable is 422 with `problem`.
    public static func query<Value>(_ request: Request, _ name: String, _ problem: String, _ parse: (String) -> Value?) throws -> Value? {
        guard let text = request.uri.queryParameters[Substring(name)] else { return nil }
        guard let value = parse(String(text)) else { throw APIError.unprocessable(problem) }
        return value
    }

    /// `limit` within `range`, `defaultValue` when absent.
    public static func limit(_ request: Request, default defaultValue: Int, range: ClosedRange<Int>) throws -> Int {
        try query(request, "limit", "limit must be between \(range.lowerBound) and \(range.upperBound)") { Int($0).flatMap { range.contains($0) ? $0 : nil } } ?? defaultValue
    }

    /// An empty JSON object, for operations that answer 204 or `{}`.
    public struct Empty: Codable, Sendable {
        public init() {}
    }
}
