import ColonyModels
import Crypto
import Foundation
import Synchronization

/// APNs token-based provider authentication: an ES256 JWT (`kid` = the key id, `iss` = the team
/// id, `iat`) signed with the team's .p8 key. APNs refuses tokens older than an hour and
/// refreshes more often than every 20 minutes, so one token is used for 40 minutes.
public final class ProviderToken: Sendable {
    public static let lifetime: TimeInterval = 40 * 60
    /// A token APNs called expired is replaced, but not more often than APNs allows.
    public static let minimumRefreshInterval: TimeInterval = 20 * 60

    public let teamID: String
    public let keyID: String
    private let key: P256.Signing.PrivateKey
    private let current = Mutex<(token: String, issuedAt: Date)?>(nil)

    public init(teamID: String, keyID: String, key: P256.Signing.PrivateKey) {
        self.teamID = teamID
        self.keyID = keyID
        self.key = key
    }

    /// The token to send now (made anew once the current one is 40 minutes old).
    public func token(now: Date = Date()) throws -> String {
        try current.withLock { current in
            if let current, now.timeIntervalSince(current.issuedAt) < Self.lifetime, now >= current.issuedAt {
                return current.token
            }
            let token = try Self.make(teamID: teamID, keyID: keyID, key: key, issuedAt: now)
            current = (token, now)
            return token
        }
    }

    /// APNs answered ExpiredProviderToken: a new token, unless this one is too fresh to replace.
    public func expire(now: Date = Date()) {
        current.withLock { current in
            if let issued = current?.issuedAt, now.timeIntervalSince(issued) >= Self.minimumRefreshInterval { current = nil }
        }
    }

    public static func make(teamID: String, keyID: String, key: P256.Signing.PrivateKey, issuedAt: Date) throws -> String {
        let header = #"{"alg":"ES256","kid":"\#(keyID)"}"#
        let claims = #"{"iss":"\#(teamID)","iat":\#(Int(issuedAt.timeIntervalSince1970))}"#
        let signingInput = Base64URL.encode(header.utf8) + "." + Base64URL.encode(claims.utf8)
        let signature = try key.signature(for: Data(signingInput.utf8))
        return signingInput + "." + Base64URL.encode(signature.rawRepresentation)
    }
}
