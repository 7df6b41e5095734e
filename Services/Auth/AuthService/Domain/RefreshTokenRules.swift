import ColonyModels
import Crypto
import Foundation

/// Supabase Auth's refresh-token rotation rules, as a plain decision over stored state.
///
/// Tokens are single-use: refreshing revokes the presented token and issues a child. Within the
/// reuse interval after a token was rotated, presenting it again is a client that lost the answer
/// (or raced itself): the parent of the active token gets the active token back, an older one a
/// fresh child. After the interval every replay, the active token's parent included, is treated
/// as theft and ends the whole session (GoTrue hands the parent the active token forever, so a
/// stolen parent would keep working).
public enum RefreshTokenRules {
    public enum Decision: Equatable, Sendable {
        /// The token is active: revoke it and issue a child.
        case rotate
        /// The token is the parent of the active one, within the reuse interval: answer with the
        /// active token.
        case returnActive
        /// A revoked token inside the reuse interval: issue another child.
        case rotateWithinReuseInterval
        /// A revoked token outside the interval: revoke the session, answer 400.
        case reuseDetected
        /// The session outlived its time box or sat idle too long.
        case sessionExpired
    }

    public struct PresentedToken: Sendable {
        public var revokedAt: Date?
        public var isParentOfActive: Bool
        public init(revokedAt: Date?, isParentOfActive: Bool) {
            self.revokedAt = revokedAt
            self.isParentOfActive = isParentOfActive
        }
    }

    public struct SessionTimes: Sendable {
        public var createdAt: Date
        public var refreshedAt: Date?
        public var notAfter: Date?
        public init(createdAt: Date, refreshedAt: Date?, notAfter: Date?) {
            self.createdAt = createdAt
            self.refreshedAt = refreshedAt
            self.notAfter = notAfter
        }
    }

    public static func decide(token: PresentedToken, session: SessionTimes, settings: AppAuthSettings, now: Date) -> Decision {
        if let notAfter = session.notAfter, now >= notAfter { return .sessionExpired }
        if let timeout = settings.sessionInactivityTimeoutSeconds,
           now.timeIntervalSince(session.refreshedAt ?? session.createdAt) >= Double(timeout) {
            return .sessionExpired
        }
        guard let revokedAt = token.revokedAt else { return .rotate }
        guard now.timeIntervalSince(revokedAt) < Double(settings.refreshTokenReuseIntervalSeconds) else { return .reuseDetected }
        return token.isParentOfActive ? .returnActive : .rotateWithinReuseInterval
    }

    /// A child token is derived from its parent and a stored salt, so the database keeps only
    /// hashes yet the active token can be handed again to the holder of its parent.
    public static func childToken(parent: String, salt: [UInt8]) -> String {
        let mac = HMAC<SHA256>.authenticationCode(for: salt, using: SymmetricKey(data: Data(parent.utf8)))
        return Base64URL.encode(Array(mac))
    }

    public static func newSalt() -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
    }
}
