import Foundation

/// Access tokens whose ES256 signature was checked, kept until their `exp`: checking the same
/// signature on every request of a session is most of a cheap request's CPU. Keyed by the whole
/// token (a signature alone could be paired with another payload). Whoever holds the keys calls
/// `forgetAll()` when they change, so a revoked key's tokens stop working with the next load.
///
/// A verification suspends (jwt-kit's key collection is an actor), and the keys may change while
/// it does: `remember` takes the generation read before the check and drops a result that
/// predates a `forgetAll()`.
public struct VerifiedTokens: Sendable {
    public static let defaultLimit = 10_000

    private var claimsByToken: [String: AccessTokenClaims] = [:]
    public private(set) var generation = 0
    public let limit: Int

    public init(limit: Int = VerifiedTokens.defaultLimit) {
        self.limit = limit
    }

    public var count: Int { claimsByToken.count }

    /// The claims of a token verified before and not yet expired.
    public func claims(of token: String, now: Date = Date()) -> AccessTokenClaims? {
        guard let claims = claimsByToken[token], claims.exp.value > now else { return nil }
        return claims
    }

    /// Keeps a verified token's claims, unless the keys changed since `generation` was read.
    public mutating func remember(_ token: String, _ claims: AccessTokenClaims, verifiedAtGeneration: Int, now: Date = Date()) {
        guard verifiedAtGeneration == generation else { return }
        if claimsByToken.count >= limit {
            claimsByToken = claimsByToken.filter { $0.value.exp.value > now }
            // Still full of live tokens (a flood of sessions): start over rather than grow.
            if claimsByToken.count >= limit { claimsByToken.removeAll(keepingCapacity: true) }
        }
        claimsByToken[token] = claims
    }

    /// The keys changed: every token is checked again.
    public mutating func forgetAll() {
        claimsByToken.removeAll()
        generation += 1
    }
}
