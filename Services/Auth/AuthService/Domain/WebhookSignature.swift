import Crypto
import Foundation

/// Standard Webhooks signatures (standardwebhooks.com), so the provider bridge behind
/// `COLONY_AUTH_WEBHOOK_URL` can tell auth's deliveries from forgeries: each request carries
/// `webhook-id`, `webhook-timestamp` (Unix seconds) and `webhook-signature`
/// (`v1,<base64 HMAC-SHA256 of "id.timestamp.body">`), keyed with the secret's bytes (a `whsec_`
/// prefix, then base64).
public struct WebhookSecret: Sendable, Equatable {
    public let key: [UInt8]

    /// `whsec_<base64 of at least 24 random bytes>`.
    public init?(_ text: String) {
        guard text.hasPrefix("whsec_"), let data = Data(base64Encoded: String(text.dropFirst(6))), data.count >= 24 else { return nil }
        key = Array(data)
    }

    /// The three headers for one delivery of `body`.
    public func headers(id: String, timestamp: Date, body: [UInt8]) -> [(name: String, value: String)] {
        let seconds = String(Int(timestamp.timeIntervalSince1970))
        return [("webhook-id", id), ("webhook-timestamp", seconds), ("webhook-signature", "v1," + signature(id: id, timestamp: seconds, body: body))]
    }

    /// Base64 HMAC-SHA256 of `id.timestamp.body`.
    public func signature(id: String, timestamp: String, body: [UInt8]) -> String {
        var message = Array("\(id).\(timestamp).".utf8)
        message.append(contentsOf: body)
        return Data(HMAC<SHA256>.authenticationCode(for: message, using: SymmetricKey(data: key))).base64EncodedString()
    }
}
