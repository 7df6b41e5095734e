import Foundation

/// Access tokens whose ES256 signature was checked, kept for a few minutes (never past their
/// `exp`): checking the same signature on every request of a session is most of a cheap
/// request's CPU, and checking it again every few minutes costs nothing. Keyed by the whole
/// token (a signature alone could be paired with another payload). Whoever holds the keys calls
/// `forgetAll()` when they change, so a revoked key's tokens stop working with the next load.
///
/// Entries go when their time is up (swept at most once a minute), so the memory held is a few
/// minutes' sessions, not an hour's: a one-hour soak saw auth's memory grow for the whole hour
/// while the cache kept each token until its `exp`.
///
/// A verification suspends (jwt-kit's key collection is an actor), and the keys may change while
/// it does: `remember` takes the generation read before the check and drops a result that
/// predates a `forgetAll()`.
public struct VerifiedTokens: Sendable {
    public static let defaultLimit = 10_000
    /// How long a verified token is served without checking its signature again.
    public static let defaultHoldSeconds: TimeInterval = 300

    private var entries: [String: (claims: AccessTokenClaims, until: Date)] = [:]
    private var nextSweep = Date.distantPast
    public private(set) var generation = 0
    public let limit: Int
    public let holdSeconds: TimeInterval

    public init(limit: Int = VerifiedTokens.defaultLimit, holdSeconds: TimeInterval = VerifiedTokens.defaultHoldSeconds) {
        self.limit = limit
        self.holdSeconds = holdSeconds
    }

    public var count: Int { entries.count }

    /// The claims of a token verified within the hold and not yet expired.
    public func claims(of token: String, now: Date = Date()) -> AccessTokenClaims? {
        guard let entry = entries[token], entry.until > now else { return nil }
        return entry.claims
    }

    /// Keeps a verified token's claims, unless the keys changed since `generation` was read.
    public mutating func remember(_ token: String, _ claims: AccessTokenClaims, verifiedAtGeneration: Int, now: Date = Date()) {
        guard verifiedAtGeneration == generation else { return }
        if now >= nextSweep || entries.count >= limit {
            entries = entries.filter { $0.value.until > now }
            nextSweep = now.addingTimeInterval(60)
            // Still full of live tokens (a flood of sessions): start over rather than grow.
            if entries.count >= limit { entries.removeAll(keepingCapacity: true) }
        }
        entries[token] = (claims, min(claims.exp.value, now.addingTimeInterval(holdSeconds)))
    }

    /// The keys changed: every token is checked again.
    public mutating func forgetAll() {
        entries.removeAll()
        generation += 1
    }
}
