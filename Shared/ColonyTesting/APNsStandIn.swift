import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdHTTP2
import Logging
import NIOCore
import NIOSSL
import ServiceLifecycle
import Synchronization

/// A local stand-in for APNs: HTTP/2 over TLS (a CA and certificate made on the spot), checking
/// what real APNs checks — the provider token (ES256 JWT by the team's key: `kid`, `iss`, `iat`
/// under an hour old), the headers (`apns-topic` among the app's, `apns-push-type`,
/// `apns-priority`, `apns-expiration`, `apns-id`, `apns-collapse-id`), the device token and the
/// payload (a JSON object with `aps`, at most 4 KB) — answering as APNs does, and recording every
/// request. A test can script a token's answers (500 then 200, 410, …).
public final class APNsStandIn: Sendable {
    public struct Received: Sendable {
        public var token: String
        public var topic: String
        public var pushType: String
        public var priority: String
        public var expiration: String?
        public var collapseID: String?
        public var apnsID: String?
        /// The W3C `traceparent` the sender passed on, if any.
        public var traceParent: String?
        public var payload: [String: Any] { (try? JSONSerialization.jsonObject(with: Data(payloadText.utf8)) as? [String: Any]) ?? [:] }
        public var payloadText: String
        /// Whether it came over HTTP/2 (a stream of a multiplexed connection).
        public var overHTTP2: Bool
        /// Which TCP connection it came on (requests multiplexed on one connection share it).
        public var connection: Int
        /// What this stand-in answered.
        public var status: Int
        /// What was wrong with the request, if anything (real APNs would have refused it).
        public var problems: [String]
        public var receivedAt: Date

        public var aps: [String: Any] { payload["aps"] as? [String: Any] ?? [:] }
        public var alertTitle: String? { (aps["alert"] as? [String: Any])?["title"] as? String }
        public var alertBody: String? { (aps["alert"] as? [String: Any])?["body"] as? String }
        public var kind: String? { payload["kind"] as? String }
    }

    public let teamID: String
    public let keyID: String
    /// The provider key (the team's .p8): the service signs with it, the stand-in verifies.
    public let providerKey: P256.Signing.PrivateKey
    /// The app bundle ids it accepts as `apns-topic` (Live Activities: `<id>.push-type.liveactivity`).
    public let bundleIDs: Set<String>
    /// The CA to trust (PEM) for the stand-in's certificate.
    public let caPEM: String
    private let serverCertificatePEM: String
    private let serverKeyPEM: String

    private struct State {
        var received: [Received] = []
        var scripted: [String: [(Int, String)]] = [:]
        var port = 0
        var log: [String] = []
    }

    private let state = Mutex(State())

    public init(teamID: String = "TEAMID1234", keyID: String = "KEYID56789", bundleIDs: Set<String>) throws {
        self.teamID = teamID
        self.keyID = keyID
        self.providerKey = P256.Signing.PrivateKey()
        self.bundleIDs = bundleIDs
        let certificates = try TestCertificates(name: "Colony APNs stand-in")
        caPEM = certificates.caPEM
        serverCertificatePEM = certificates.serverCertificatePEM
        serverKeyPEM = certificates.serverKeyPEM
    }

    /// `https://127.0.0.1:<port>`, once running.
    public var url: String { "https://127.0.0.1:\(state.withLock { $0.port })" }

    public var received: [Received] { state.withLock { $0.received } }

    /// The stand-in's log: a line per request with what it answered and the request's trace id.
    public var logLines: [String] { state.withLock { $0.log } }

    /// How many requests arrived (cheaper than copying `received`).
    public var receivedCount: Int { state.withLock { $0.received.count } }

    /// The next answers for `token`, in order (then 200s): `(500, "InternalServerError")`, `(410, "Unregistered")`, …
    public func script(token: String, _ answers: [(Int, String)]) {
        state.withLock { $0.scripted[token, default: []].append(contentsOf: answers) }
    }

    /// Runs the stand-in for the body's duration.
    public func run<Result: Sendable>(_ body: @Sendable (APNsStandIn) async throws -> Result) async throws -> Result {
        let certificate = try NIOSSLCertificate(bytes: Array(serverCertificatePEM.utf8), format: .pem)
        let key = try NIOSSLPrivateKey(bytes: Array(serverKeyPEM.utf8), format: .pem)
        let tls = TLSConfiguration.makeServerConfiguration(certificateChain: [.certificate(certificate)], privateKey: .privateKey(key))
        let router = Router(context: StandInContext.self)
        router.post("/3/device/:token") { request, context in
            try await self.handle(request, context: context)
        }
        var logger = Logger(label: "apns-stand-in")
        logger.logLevel = .warning
        let started = AsyncStream<Void>.makeStream()
        let app = Application(
            router: router,
            server: try .http2Upgrade(tlsConfiguration: tls),
            configuration: .init(address: .hostname("127.0.0.1", port: 0), serverName: "apns-stand-in"),
            onServerRunning: { channel in
                self.state.withLock { $0.port = channel.localAddress?.port ?? 0 }
                started.continuation.yield()
            },
            logger: logger
        )
        return try await withTestServer(app, logger: logger) {
            for await _ in started.stream { break }
            return try await body(self)
        }
    }

    private func handle(_ request: Request, context: StandInContext) async throws -> Response {
        let token = context.parameters.get("token") ?? ""
        let body = try await request.body.collect(upTo: 64 << 10)
        let payloadText = String(buffer: body)
        let headers = request.headers
        func header(_ name: String) -> String? { HTTPField.Name(name).flatMap { headers[$0] } }
        var problems: [String] = []
        var answer: (Int, String)? = nil
        func refuse(_ status: Int, _ reason: String) {
            problems.append(reason)
            if answer == nil { answer = (status, reason) }
        }

        // The provider token.
        if let authorization = header("authorization"), authorization.hasPrefix("bearer ") {
            if let problem = verifyProviderToken(String(authorization.dropFirst("bearer ".count))) { refuse(403, problem) }
        } else {
            refuse(403, "MissingProviderToken")
        }
        // The headers.
        let pushType = header("apns-push-type") ?? ""
        if !["alert", "background", "liveactivity", "location", "voip", "complication", "fileprovider", "mdm", "pushtotalk"].contains(pushType) {
            refuse(400, "InvalidPushType")
        }
        let topic = header("apns-topic") ?? ""
        let expectedTopics = pushType == "liveactivity" ? Set(bundleIDs.map { "\($0).push-type.liveactivity" }) : bundleIDs
        if topic.isEmpty { refuse(400, "MissingTopic") } else if !expectedTopics.contains(topic) { refuse(400, "DeviceTokenNotForTopic") }
        let priority = header("apns-priority") ?? "10"
        if !["5", "10", "1"].contains(priority) || (pushType == "background" && priority != "5") { refuse(400, "BadPriority") }
        let expiration = header("apns-expiration")
        if let expiration, Int(expiration) == nil { refuse(400, "BadExpirationDate") }
        let apnsID = header("apns-id")
        if let apnsID, UUID(uuidString: apnsID) == nil { refuse(400, "BadMessageId") }
        let collapseID = header("apns-collapse-id")
        if let collapseID, collapseID.utf8.count > 64 { refuse(400, "BadCollapseId") }
        // The device token and the payload.
        if token.isEmpty || !token.allSatisfy(\.isHexDigit) || token.count % 2 != 0 { refuse(400, "BadDeviceToken") }
        if body.readableBytes > 4096 { refuse(413, "PayloadTooLarge") }
        let json = try? JSONSerialization.jsonObject(with: Data(buffer: body)) as? [String: Any]
        if let json, let aps = json["aps"] as? [String: Any] {
            if pushType == "liveactivity" && (aps["timestamp"] == nil || aps["event"] == nil || aps["content-state"] == nil) {
                refuse(400, "BadLiveActivityPayload")
            }
            if pushType == "background" && aps["content-available"] == nil { refuse(400, "BadBackgroundPayload") }
            if pushType == "alert" && aps["alert"] == nil { refuse(400, "BadAlertPayload") }
        } else {
            refuse(400, json == nil ? "PayloadEmpty" : "MissingAps")
        }
        if !context.overHTTP2 { problems.append("not HTTP/2") }

        if answer == nil {
            answer = state.withLock { state in
                guard var queue = state.scripted[token], !queue.isEmpty else { return nil }
                let next = queue.removeFirst()
                state.scripted[token] = queue
                return next
            }
        }
        let (status, reason) = answer ?? (200, "")
        let received = Received(token: token, topic: topic, pushType: pushType, priority: priority, expiration: expiration, collapseID: collapseID,
                                apnsID: apnsID, traceParent: header("traceparent"), payloadText: payloadText, overHTTP2: context.overHTTP2, connection: context.connection, status: status, problems: problems, receivedAt: Date())
        state.withLock { $0.received.append(received) }
        // Its log line, as APNs' side of the trace (the trace id from the request's traceparent).
        let traceID = header("traceparent").flatMap(TraceParent.init(header:))?.traceID ?? ""
        let line = "push received token_suffix=\(token.suffix(8)) status=\(status) apns_id=\(apnsID ?? "") trace_id=\(traceID)"
        state.withLock { $0.log.append(line) }
        Logger(label: "apns-stand-in").debug("\(line)")

        var fields = HTTPFields()
        if let apnsID, let name = HTTPField.Name("apns-id") { fields[name] = apnsID }
        if status == 200 { return Response(status: .ok, headers: fields) }
        fields[.contentType] = "application/json"
        var error = #"{"reason":"\#(reason)""#
        if status == 410 { error += #","timestamp":\#(Int(Date().timeIntervalSince1970 * 1000))"# }
        error += "}"
        return Response(status: HTTPResponse.Status(code: status), headers: fields, body: .init(byteBuffer: ByteBuffer(string: error)))
    }

    /// nil when the JWT is good; else APNs' reason.
    private func verifyProviderToken(_ token: String) -> String? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 3, let headerData = Base64URL.decode(parts[0]), let claimsData = Base64URL.decode(parts[1]),
              let signatureData = Base64URL.decode(parts[2]),
              let header = try? JSONSerialization.jsonObject(with: headerData) as? [String: Any],
              let claims = try? JSONSerialization.jsonObject(with: claimsData) as? [String: Any]
        else { return "InvalidProviderToken" }
        guard header["alg"] as? String == "ES256", header["kid"] as? String == keyID, claims["iss"] as? String == teamID else { return "InvalidProviderToken" }
        guard let signature = try? P256.Signing.ECDSASignature(rawRepresentation: signatureData),
              providerKey.publicKey.isValidSignature(signature, for: Data("\(parts[0]).\(parts[1])".utf8))
        else { return "InvalidProviderToken" }
        guard let issuedAt = claims["iat"] as? Double ?? (claims["iat"] as? Int).map(Double.init) else { return "InvalidProviderToken" }
        let age = Date().timeIntervalSince1970 - issuedAt
        if age > 3600 { return "ExpiredProviderToken" }
        if age < -300 { return "InvalidProviderToken" }
        return nil
    }
}

/// The stand-in's request context: whether the request came on an HTTP/2 stream.
struct StandInContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    let overHTTP2: Bool
    let connection: Int

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        // An HTTP/2 request arrives on a stream channel, a child of the connection's channel.
        overHTTP2 = source.channel.parent != nil
        connection = ObjectIdentifier(source.channel.parent ?? source.channel).hashValue
    }
}
