import ColonyPlatform
import Foundation
import Logging
import PostgresNIO
import Synchronization

/// Fixed-window counters in Postgres, so every replica counts against the same limit. Hits are
/// counted outside the request's transaction: a request that fails still counts.
struct RateLimiter {
    let database: Database
    let logger: Logger

    /// Counts a hit on `bucket`; returns the seconds until the window ends when over the limit.
    func hit(_ bucket: String, rule: RateLimitRule) async throws -> Int? {
        let window = rule.windowSeconds
        let key = "\(bucket)|\(window)"
        let rows = try await database.query("""
            INSERT INTO rate_limits (bucket, window_start, hits)
            VALUES (\(key), to_timestamp(floor(extract(epoch FROM now()) / \(window)) * \(window)), 1)
            ON CONFLICT (bucket, window_start) DO UPDATE SET hits = rate_limits.hits + 1
            RETURNING hits, ceil(extract(epoch FROM window_start) + \(window) - extract(epoch FROM now()))::int
            """)
        for try await row in rows {
            let (hits, remaining) = try row.read { c in try (c.next(Int.self), c.next(Int.self)) }
            return hits > rule.count ? max(1, remaining) : nil
        }
        return nil
    }

    /// Takes back one hit of this window: for budgets that count failures only, a hit is taken
    /// before the attempt (so concurrent attempts cannot all slip under the limit) and given back
    /// when it succeeded.
    func release(_ bucket: String, rule: RateLimitRule) async throws {
        let window = rule.windowSeconds
        let key = "\(bucket)|\(window)"
        try await database.query("""
            UPDATE rate_limits SET hits = hits - 1
            WHERE bucket = \(key) AND window_start = to_timestamp(floor(extract(epoch FROM now()) / \(window)) * \(window)) AND hits > 0
            """)
    }

    /// Throws 429 `over_request_rate_limit` when over.
    func check(_ bucket: String, rule: RateLimitRule) async throws {
        if let retryAfter = try await hit(bucket, rule: rule) {
            throw AuthErrors.overRequestRateLimit(retryAfter: retryAfter)
        }
    }

    func deleteOldWindows() async throws {
        try await database.query("DELETE FROM rate_limits WHERE window_start < now() - interval '1 day'")
    }
}

/// Per-IP limits, counted in this replica's memory as Supabase Auth counts them: an IP limit is
/// a flood guard, and a Postgres write per request would cost more than the request itself.
/// Behind N replicas an IP gets up to N times the limit. Limits that protect a person (per
/// account, per recipient) are counted in Postgres by `RateLimiter`.
final class LocalRateLimiter: Sendable {
    private struct Window { var start: Int; var hits: Int }
    private let windows = Mutex<[String: Window]>([:])

    /// Throws 429 `over_request_rate_limit` when the IP is over the rule.
    func check(_ bucket: String, rule: RateLimitRule, now: Date = Date()) throws {
        let second = Int(now.timeIntervalSince1970)
        let start = second - second % rule.windowSeconds
        let key = "\(bucket)|\(rule.windowSeconds)"
        let retryAfter: Int? = windows.withLock { windows in
            if windows.count > 100_000 {
                // Old windows of idle callers: drop them now and then.
                windows = windows.filter { $0.value.start >= start - 3600 }
            }
            var window = windows[key].flatMap { $0.start == start ? $0 : nil } ?? Window(start: start, hits: 0)
            window.hits += 1
            windows[key] = window
            return window.hits > rule.count ? start + rule.windowSeconds - second : nil
        }
        if let retryAfter { throw AuthErrors.overRequestRateLimit(retryAfter: retryAfter) }
    }
}
