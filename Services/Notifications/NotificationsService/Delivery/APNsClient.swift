import AsyncHTTPClient
import ColonyModels
import Crypto
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import NIOSSL

/// Where and as whom pushes go: the team's key, each app's bundle id (`apns-topic`), APNs'
/// two environments.
public struct APNsSettings: Sendable {
    public var teamID: String
    public var keyID: String
    public var privateKey: P256.Signing.PrivateKey
    /// Each app's bundle id. Live Activity pushes go to `<bundle id>.push-type.liveactivity`.
    public var topics: [App: String]
    public var productionURL: String
    public var sandboxURL: String
    /// Extra trusted certificates (PEM), for a local APNs stand-in; APNs itself needs none.
    public var additionalTrustRootsPEM: String?

    public init(teamID: String, keyID: String, privateKey: P256.Signing.PrivateKey, topics: [App: String],
                productionURL: String = "https://api.push.apple.com", sandboxURL: String = "https://api.sandbox.push.apple.com",
                additionalTrustRootsPEM: String? = nil) {
        self.teamID = teamID
        self.keyID = keyID
        self.privateKey = privateKey
        self.topics = topics
        self.productionURL = productionURL
        self.sandboxURL = sandboxURL
        self.additionalTrustRootsPEM = additionalTrustRootsPEM
    }

    public func topic(for app: App, pushType: PushType) -> String? {
        guard let bundle = topics[app] else { return nil }
        return pushType == .liveactivity ? "\(bundle).push-type.liveactivity" : bundle
    }
}

/// What APNs made of one push.
public enum APNsOutcome: Sendable, Equatable {
    case sent
    /// 429, 5xx or no answer: try again later.
    case retry(status: Int, reason: String)
    /// 410 Unregistered or 400 BadDeviceToken: the token is dead (since `since`, when APNs says).
    case deadToken(status: Int, reason: String, since: Date?)
    /// 403 ExpiredProviderToken: send again with a new provider token.
    case providerTokenExpired(reason: String)
    /// Any other refusal: this push cannot be delivered as it is.
    case rejected(status: Int, reason: String)
}

/// APNs over HTTP/2 (AsyncHTTPClient negotiates h2 by ALPN and multiplexes the requests to one
/// host on one connection), with the provider token.
public final class APNsClient: Sendable {
    public let settings: APNsSettings
    let providerToken: ProviderToken
    let http: HTTPClient

    public init(settings: APNsSettings) throws {
        self.settings = settings
        self.providerToken = ProviderToken(teamID: settings.teamID, keyID: settings.keyID, key: settings.privateKey)
        var tls = TLSConfiguration.makeClientConfiguration()
        if let pem = settings.additionalTrustRootsPEM {
            tls.additionalTrustRoots = [.certificates(try NIOSSLCertificate.fromPEMBytes(Array(pem.utf8)))]
        }
        var configuration = HTTPClient.Configuration(tlsConfiguration: tls, redirectConfiguration: .disallow,
                                                     timeout: .init(connect: .seconds(10), read: .seconds(30)))
        configuration.httpVersion = .automatic
        configuration.connectionPool = .init(idleTimeout: .minutes(55))
        self.http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    /// One push: `POST /3/device/<token>` with the push's headers.
    public func send(token: String, environment: APNsEnvironment, topic: String, pushType: PushType, apnsID: UUID,
                     collapseID: String?, expiresAt: Date, payload: String) async -> APNsOutcome {
        let base = environment == .production ? settings.productionURL : settings.sandboxURL
        var request = HTTPClientRequest(url: "\(base)/3/device/\(token)")
        request.method = .POST
        do {
            // The provider token goes by the real clock: APNs checks its age against its own.
            request.headers.add(name: "authorization", value: "bearer \(try providerToken.token())")
        } catch {
            return .rejected(status: 0, reason: "provider token could not be signed: \(error)")
        }
        request.headers.add(name: "apns-topic", value: topic)
        request.headers.add(name: "apns-push-type", value: pushType.rawValue)
        request.headers.add(name: "apns-priority", value: "\(pushType.priority)")
        request.headers.add(name: "apns-expiration", value: "\(Int(expiresAt.timeIntervalSince1970))")
        request.headers.add(name: "apns-id", value: apnsID.uuidString)
        if let collapseID { request.headers.add(name: "apns-collapse-id", value: collapseID) }
        request.headers.add(name: "content-type", value: "application/json")
        // AsyncHTTPClient adds the current span's `traceparent` itself (InstrumentationSystem): the
        // trace goes on to APNs, which ignores it (a proxy or the stand-in logs it).
        request.body = .bytes(ByteBuffer(string: payload))
        do {
            let response = try await http.execute(request, timeout: .seconds(30))
            let status = Int(response.status.code)
            if status == 200 {
                _ = try? await response.body.collect(upTo: 64 << 10)
                return .sent
            }
            let body = try await response.body.collect(upTo: 64 << 10)
            let answer = try? JSONDecoder().decode(Answer.self, from: Data(buffer: body))
            return Self.outcome(status: status, reason: answer?.reason ?? "", timestamp: answer?.timestamp)
        } catch {
            return .retry(status: 0, reason: "\(error)")
        }
    }

    /// APNs' `timestamp` (milliseconds since 1970) as a date; nil outside 1970…9999, which a
    /// Postgres `timestamptz` bind would trap on (`1e300`) or no real answer has.
    static func invalidSince(_ milliseconds: Double) -> Date? {
        guard milliseconds >= 0, milliseconds < 253_402_300_800_000 else { return nil }
        return Date(timeIntervalSince1970: milliseconds / 1000)
    }

    /// APNs' error answers, as documented ("Handling notification responses from APNs").
    public static func outcome(status: Int, reason: String, timestamp: Double?) -> APNsOutcome {
        switch (status, reason) {
        case (200, _): .sent
        case (410, _), (400, "BadDeviceToken"):
            .deadToken(status: status, reason: reason.isEmpty ? "Unregistered" : reason, since: timestamp.flatMap(invalidSince))
        case (403, "ExpiredProviderToken"), (403, "InvalidProviderToken"):
            .providerTokenExpired(reason: reason)
        case (429, _), (500...599, _):
            .retry(status: status, reason: reason)
        default:
            .rejected(status: status, reason: reason)
        }
    }

    public func shutdown() async {
        try? await http.shutdown()
    }

    private struct Answer: Decodable {
        var reason: String?
        var timestamp: Double?
    }
}
