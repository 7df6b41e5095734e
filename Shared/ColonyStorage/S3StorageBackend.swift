import AsyncHTTPClient
import ColonyPlatform
import Crypto
import Foundation
import NIOCore
import NIOHTTP1

/// Where the S3 backend stores objects: one S3 bucket, in which each Colony bucket is a key
/// prefix (`{bucket}/{key}`). Path-style URLs, so any S3-compatible server works.
public struct S3Configuration: Sendable {
    /// e.g. "https://s3.eu-central-1.amazonaws.com" or "http://127.0.0.1:9000".
    public var endpoint: String
    public var region: String
    public var bucket: String
    public var accessKeyID: String
    public var secretAccessKey: String

    public init(endpoint: String, region: String = "us-east-1", bucket: String, accessKeyID: String, secretAccessKey: String) {
        self.endpoint = endpoint
        self.region = region
        self.bucket = bucket
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
    }
}

/// Objects in an S3 bucket, over AsyncHTTPClient with requests signed by `SigV4Signer`.
public struct S3StorageBackend: StorageBackend {
    public let configuration: S3Configuration
    private let httpClient: HTTPClient
    private let signer: SigV4Signer
    /// "scheme://host[:port]" and "host[:port]" (what we sign as the Host header).
    private let origin: String
    private let host: String
    /// The endpoint's own path, usually "".
    private let basePath: String
    // Objects are bounded by their bucket's maxBytes; this only guards against a misbehaving server.
    private static let maxDownloadBytes = 256 << 20
    private static let timeout = TimeAmount.seconds(30)

    public init(configuration: S3Configuration, httpClient: HTTPClient = .shared) {
        self.configuration = configuration
        self.httpClient = httpClient
        self.signer = SigV4Signer(accessKeyID: configuration.accessKeyID, secretAccessKey: configuration.secretAccessKey, region: configuration.region)
        let components = URLComponents(string: configuration.endpoint)
        let scheme = components?.scheme ?? "https"
        var host = components?.host ?? configuration.endpoint
        if let port = components?.port { host += ":\(port)" }
        self.host = host
        self.origin = "\(scheme)://\(host)"
        let path = components?.path ?? ""
        self.basePath = path.hasSuffix("/") ? String(path.dropLast()) : path
    }

    public func put(bucket: String, key: String, body: ByteBuffer, contentType: String) async throws {
        let response = try await send(.PUT, path: objectPath(bucket, key), body: body, headers: ["content-type": contentType])
        guard response.status == .ok else { throw await S3Error("PUT \(bucket)/\(key)", response) }
    }

    public func get(bucket: String, key: String) async throws -> (body: ByteBuffer, contentType: String)? {
        let response = try await send(.GET, path: objectPath(bucket, key))
        switch response.status {
        case .ok:
            let body = try await response.body.collect(upTo: Self.maxDownloadBytes)
            return (body, response.headers.first(name: "content-type") ?? "application/octet-stream")
        case .notFound:
            return nil
        default:
            throw await S3Error("GET \(bucket)/\(key)", response)
        }
    }

    public func delete(bucket: String, key: String) async throws {
        let response = try await send(.DELETE, path: objectPath(bucket, key))
        guard [.ok, .noContent, .notFound].contains(response.status) else { throw await S3Error("DELETE \(bucket)/\(key)", response) }
    }

    /// The bucket exists and our credentials may use it.
    public func isReachable() async -> Bool {
        (try? await send(.HEAD, path: bucketPath()).status == .ok) ?? false
    }

    /// Creates the S3 bucket (for tests and first-time setup); one that we already own is fine.
    public func createBucket() async throws {
        var body: ByteBuffer?
        if configuration.region != "us-east-1" {
            body = ByteBuffer(string: """
                <CreateBucketConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/">\
                <LocationConstraint>\(configuration.region)</LocationConstraint></CreateBucketConfiguration>
                """)
        }
        let response = try await send(.PUT, path: bucketPath(), body: body)
        if response.status == .ok { return }
        let error = await S3Error("PUT bucket \(configuration.bucket)", response)
        guard response.status == .conflict, error.body.contains("BucketAlreadyOwnedByYou") else { throw error }
    }

    private func bucketPath() -> String {
        "\(basePath)/\(SigV4Signer.uriEncode(configuration.bucket))"
    }

    private func objectPath(_ bucket: String, _ key: String) throws -> String {
        guard StorageBucket.isValidName(bucket) else { throw APIError.badRequest("invalid bucket name", code: "invalid_bucket") }
        try StorageKey.validate(key)
        let segments = key.split(separator: "/").map { SigV4Signer.uriEncode(String($0)) }
        return "\(bucketPath())/\(bucket)/\(segments.joined(separator: "/"))"
    }

    private func send(_ method: HTTPMethod, path: String, body: ByteBuffer? = nil, headers: [String: String] = [:]) async throws -> HTTPClientResponse {
        var headers = headers
        headers["host"] = host
        let payloadHash = SigV4Signer.payloadHash(body ?? ByteBuffer())
        var request = HTTPClientRequest(url: origin + path)
        request.method = method
        for (name, value) in signer.sign(method: method.rawValue, path: path, headers: headers, payloadHash: payloadHash, date: Date()) {
            request.headers.add(name: name, value: value)
        }
        if let body { request.body = .bytes(body) }
        return try await httpClient.execute(request, timeout: Self.timeout)
    }
}

/// An S3 request that did not succeed (a 500 to clients; status and S3's answer in the log).
public struct S3Error: Error, CustomStringConvertible {
    public var operation: String
    public var status: Int
    public var body: String

    init(_ operation: String, _ response: HTTPClientResponse) async {
        self.operation = operation
        self.status = Int(response.status.code)
        let bytes = try? await response.body.collect(upTo: 64 << 10)
        self.body = bytes.map { String(buffer: $0) } ?? ""
    }

    public var description: String { "S3 \(operation) failed with \(status): \(body.prefix(500))" }
}

/// AWS Signature Version 4 for requests without a query string, as S3 object calls are.
public struct SigV4Signer: Sendable {
    public let accessKeyID: String
    public let secretAccessKey: String
    public let region: String
    public let service: String

    public init(accessKeyID: String, secretAccessKey: String, region: String, service: String = "s3") {
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
        self.region = region
        self.service = service
    }

    /// `headers` (which must include `host`) plus `x-amz-date`, `x-amz-content-sha256` and
    /// `authorization`, all names lower-cased. Every given header is signed. `path` is already
    /// URI-encoded (S3 does not encode it a second time).
    public func sign(method: String, path: String, headers: [String: String], payloadHash: String, date: Date) -> [String: String] {
        let (timestamp, day) = Self.timestamps(date)
        var headers = Dictionary(headers.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { $1 })
        headers["x-amz-date"] = timestamp
        headers["x-amz-content-sha256"] = payloadHash
        let (request, signedHeaders) = canonicalRequest(method: method, path: path, headers: headers, payloadHash: payloadHash)
        let scope = "\(day)/\(region)/\(service)/aws4_request"
        let stringToSign = ["AWS4-HMAC-SHA256", timestamp, scope, Self.hex(SHA256.hash(data: Data(request.utf8)))].joined(separator: "\n")
        var key = SymmetricKey(data: Data("AWS4\(secretAccessKey)".utf8))
        for part in [day, region, service, "aws4_request"] {
            key = SymmetricKey(data: HMAC<SHA256>.authenticationCode(for: Data(part.utf8), using: key))
        }
        let signature = Self.hex(HMAC<SHA256>.authenticationCode(for: Data(stringToSign.utf8), using: key))
        headers["authorization"] = "AWS4-HMAC-SHA256 Credential=\(accessKeyID)/\(scope), SignedHeaders=\(signedHeaders), Signature=\(signature)"
        return headers
    }

    /// The canonical request and the signed-headers list; `headers` has lower-cased names.
    func canonicalRequest(method: String, path: String, headers: [String: String], payloadHash: String) -> (String, String) {
        let sorted = headers.sorted { $0.key < $1.key }
        let canonicalHeaders = sorted.map { name, value in
            // Trimmed, runs of spaces collapsed, as AWS specifies.
            "\(name):\(value.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " "))\n"
        }.joined()
        let signedHeaders = sorted.map(\.key).joined(separator: ";")
        return ([method, path, "", canonicalHeaders, signedHeaders, payloadHash].joined(separator: "\n"), signedHeaders)
    }

    /// "20130524T000000Z" and "20130524", in UTC.
    static func timestamps(_ date: Date) -> (String, String) {
        var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        gmtime_r(&seconds, &parts)
        let day = String(format: "%04d%02d%02d", parts.tm_year + 1900, parts.tm_mon + 1, parts.tm_mday)
        return (day + String(format: "T%02d%02d%02dZ", parts.tm_hour, parts.tm_min, parts.tm_sec), day)
    }

    /// Percent-encodes all but AWS's unreserved characters (A-Z a-z 0-9 - . _ ~).
    public static func uriEncode(_ text: String) -> String {
        var result = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                result.append(Character(UnicodeScalar(byte)))
            default:
                result += String(format: "%%%02X", byte)
            }
        }
        return result
    }

    /// The hex SHA-256 of a request body, for `x-amz-content-sha256`.
    public static func payloadHash(_ body: ByteBuffer) -> String {
        hex(body.withUnsafeReadableBytes { SHA256.hash(data: $0) })
    }

    static func hex(_ bytes: some Sequence<UInt8>) -> String {
        bytes.map { String(format: "%02x", $0) }.joined()
    }
}
