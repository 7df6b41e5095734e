import ColonyPlatform
import Foundation
import Logging
import PostgresNIO

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
        for try await (hits, remaining) in rows.decode((Int, Int).self) {
            return hits > rule.count ? max(1, remaining) : nil
        }
        return nil
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
