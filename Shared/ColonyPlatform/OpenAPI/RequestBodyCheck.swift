import ColonyModels
import Foundation
import HTTPTypes
import OpenAPIRuntime

/// What every generated route does to its body before the generated code decodes it, so that the
/// answers stay Colony's: the body read up to its limit (413 past it, never an unbounded read),
/// an empty body taken as none (an app's bare POST to an operation whose body is optional gets the
/// defaults; one whose body is required answers its missing body, 400), text Postgres cannot keep
/// refused (422), JSON that does not parse refused (400 `malformed_json`), and the top-level keys
/// sent as `null` noted in `RequestBodyNulls`.
struct RequestBodyCheck: ServerMiddleware {
    /// For JSON bodies (`COLONY_MAX_BODY_BYTES`).
    let maxBodyBytes: Int
    /// JSON bodies of their own size, by operation id (never below `maxBodyBytes`).
    let largeJSONLimits: [String: Int]
    /// Operations that take a file, by operation id, with their own limit; their bodies are not JSON.
    let uploadLimits: [String: Int]

    func intercept(_ request: HTTPRequest, body: HTTPBody?, metadata: ServerRequestMetadata, operationID: String,
                   next: @Sendable (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> (HTTPResponse, HTTPBody?)) async throws -> (HTTPResponse, HTTPBody?) {
        guard let body else { return try await next(request, nil, metadata) }
        if let limit = uploadLimits[operationID] {
            return try await next(request, HTTPBody(try await Self.collect(body, upTo: limit)), metadata)
        }
        let bytes = try await Self.collect(body, upTo: max(maxBodyBytes, largeJSONLimits[operationID] ?? 0))
        guard !bytes.isEmpty else { return try await next(request, nil, metadata) }
        let data = Data(bytes)
        if let problem = UnstorableText.problem(inJSON: data) { throw APIError.unprocessable(problem) }
        guard let value = JSONValue.parse(data) else {
            // `NaN` and `Infinity` are JSON5, not JSON: a number field's 422, as the documents say.
            if (try? Self.json5.decode(JSONValue.self, from: data)) != nil {
                throw APIError.unprocessable("body: numbers must be finite (NaN and Infinity are refused)")
            }
            throw APIError.badRequest("request body is not valid JSON", code: "malformed_json")
        }
        let nulls = value.objectValue?.compactMap { $0.value == .null ? $0.key : nil } ?? []
        return try await RequestBodyNulls.$keys.withValue(Set(nulls)) {
            try await next(request, HTTPBody(bytes), metadata)
        }
    }

    static let json5: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.allowsJSON5 = true
        return decoder
    }()

    /// The body, or 413 as soon as it passes `limit` (the runtime's own collect says 500 there).
    static func collect(_ body: HTTPBody, upTo limit: Int) async throws -> [UInt8] {
        if case .known(let length) = body.length, length > limit { throw APIError.payloadTooLarge(limit: limit) }
        var bytes: [UInt8] = []
        for try await chunk in body {
            guard chunk.count <= limit - bytes.count else { throw APIError.payloadTooLarge(limit: limit) }
            bytes.append(contentsOf: chunk)
        }
        return bytes
    }
}

/// The top-level keys of the request's JSON body that were sent as `null`. The generated types
/// read `null` and absent alike (nil); the documents' "absent leaves it, null clears it" fields
/// tell them apart here.
public enum RequestBodyNulls {
    @TaskLocal static var keys: Set<String> = []

    /// A field that null clears: `.some(value)` when sent, `.some(nil)` when sent as null, nil when absent.
    public static func field<Value>(_ value: Value?, _ key: String) -> Value?? {
        if let value { return .some(value) }
        return keys.contains(key) ? .some(nil) : nil
    }
}
