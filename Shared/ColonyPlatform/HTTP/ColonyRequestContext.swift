import ColonyModels
import Foundation
import Hummingbird
import NIOCore

/// The request context every Colony service uses: Colony's JSON coders, the request id, and the
/// verified caller once the token middleware has run.
public struct ColonyRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// Set by `TokenMiddleware`; nil on public routes.
    public var user: AuthenticatedUser?
    public var requestID: String = ""
    /// The peer's IP address (the gateway's, behind nginx).
    public let remoteIP: String?
    /// The client's address as the edge saw it, for per-address limits: `ColonyMiddleware`
    /// resolves it with the configured `TrustedProxies`; the peer's until then.
    public var clientAddress: String

    public init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.remoteIP = source.channel.remoteAddress?.ipAddress
        self.clientAddress = remoteIP ?? "unknown"
    }

    public var requestDecoder: ColonyRequestDecoder { ColonyRequestDecoder() }
    public var responseEncoder: JSONEncoder { ColonyJSON.encoder() }
    /// The most a handler reads of a body unless its route raises it (uploads): set by
    /// `ColonyMiddleware` from `COLONY_MAX_BODY_BYTES`.
    public var bodyLimit: Int = ColonyRequestContext.defaultBodyLimit
    public var maxUploadSize: Int { bodyLimit }
    /// 256 KiB: far more than any JSON body of the APIs, far less than a flood needs.
    public static let defaultBodyLimit = 256 << 10

    /// The caller, or 401 when the route is reached without a verified token.
    public func requireUser() throws -> AuthenticatedUser {
        guard let user else { throw APIError.unauthorized("missing access token") }
        return user
    }
}

/// Decodes JSON bodies with Colony's conventions and turns decoding failures into the API's
/// errors: malformed JSON is 400, a well-formed body with wrong or missing fields is 422.
public struct ColonyRequestDecoder: RequestDecoder {
    public init() {}

    public func decode<T: Decodable>(_ type: T.Type, from request: Request, context: some RequestContext) async throws -> T {
        let buffer: ByteBuffer
        do {
            buffer = try await request.body.collect(upTo: context.maxUploadSize)
        } catch is NIOTooManyBytesError {
            throw APIError.payloadTooLarge(limit: context.maxUploadSize)
        }
        return try Self.decode(type, from: Data(buffer: buffer))
    }

    /// `allowingJSON5` reads JSON5 too (a client's `NaN` then reaches the field's range check).
    public static func decode<T: Decodable>(_ type: T.Type, from data: Data, allowingJSON5: Bool = false) throws -> T {
        if let problem = UnstorableText.problem(inJSON: data) { throw APIError.unprocessable(problem) }
        do {
            let decoder = ColonyJSON.decoder()
            decoder.allowsJSON5 = allowingJSON5
            return try decoder.decode(type, from: data)
        } catch let error as DecodingError {
            // Foundation reports a number a field cannot hold (`1e300` or `1.5` for an Int) as
            // invalid JSON with no path; JSON it is, so that is the field's 422, as documented.
            if case .dataCorrupted(let context) = error, context.codingPath.isEmpty, !allowingJSON5,
               JSONValue.parse(data) != nil {
                throw APIError.unprocessable("body: a value does not fit its field (a number out of range, or not a whole number where one is expected)")
            }
            throw Self.apiError(for: error)
        }
    }

    /// A body or parameter a generated route could not decode. The body was JSON (checked first,
    /// `RequestBodyCheck`), so a failure with no path is a number its field cannot hold.
    static func apiError(forGenerated error: DecodingError) -> APIError {
        if case .dataCorrupted(let context) = error, context.codingPath.isEmpty {
            return .unprocessable("body: a value does not fit its field (a number out of range, or not a whole number where one is expected)")
        }
        return apiError(for: error)
    }

    static func apiError(for error: DecodingError) -> APIError {
        func path(_ codingPath: [any CodingKey]) -> String {
            let text = codingPath.map { $0.intValue.map(String.init) ?? ColonyJSON.snakeCase($0.stringValue) }.joined(separator: ".")
            return text.isEmpty ? "body" : text
        }
        switch error {
        case .dataCorrupted(let context) where context.codingPath.isEmpty:
            return .badRequest("request body is not valid JSON", code: "malformed_json")
        case .dataCorrupted(let context):
            return .unprocessable("\(path(context.codingPath)): \(context.debugDescription)")
        case .keyNotFound(let key, let context):
            return .unprocessable("\(path(context.codingPath + [key])) is required")
        case .typeMismatch(_, let context), .valueNotFound(_, let context):
            return .unprocessable("\(path(context.codingPath)) has the wrong type")
        @unknown default:
            return .unprocessable("request body does not match the expected shape")
        }
    }
}
