import Foundation
import Logging
import PostgresNIO

/// A limit: at most `count` in any `seconds`-long window. Settings spell it `COUNT/SECONDS`.
public struct Quota: Sendable, Equatable, CustomStringConvertible {
    public var count: Int
    public var seconds: Int

    public init(_ count: Int, perSeconds seconds: Int) {
        precondition(count > 0 && seconds > 0, "a quota needs a positive count and window")
        self.count = count
        self.seconds = seconds
    }

    /// `COUNT/SECONDS`, both positive integers within `maximumCount` and `maximumSeconds`.
    public init?(_ text: String) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let count = Int(parts[0].trimmingCharacters(in: .whitespaces)), let seconds = Int(parts[1].trimmingCharacters(in: .whitespaces)),
              (1...Self.maximumCount).contains(count), (1...Self.maximumSeconds).contains(seconds) else { return nil }
        self.init(count, perSeconds: seconds)
    }

    /// The counters are `integer` columns bound as Int32, and window ends are computed as
    /// `start + seconds`: a setting past these would trap or overflow at the first request.
    public static let maximumCount = 1_000_000_000
    /// A year (366 days).
    public static let maximumSeconds = 31_622_400

    public var description: String { "\(count)/\(seconds)" }
}

extension EnvironmentReader {
    /// A `COUNT/SECONDS` quota (`60/3600`: 60 an hour).
    public func quota(_ name: String, default defaultValue: Quota) throws(ConfigurationError) -> Quota {
        noteAllowed(name, "COUNT/SECONDS")
        let text = string(name, default: defaultValue.description)
        guard text != defaultValue.description else { return defaultValue }
        guard let quota = Quota(text) else {
            try problem(ConfigurationError(variable: name, problem: "must be COUNT/SECONDS with positive integers (at most \(Quota.maximumCount) per \(Quota.maximumSeconds) seconds), got \"\(text)\""))
            return defaultValue
        }
        return quota
    }
}

/// Fixed-window counters in the service's own schema (`quota_hits`, made by the service's
/// migration from `tableSQL`), so every replica counts against the same limit. A hit is counted
/// in the caller's transaction: what a refused or failed request would have counted rolls back
/// with it, and concurrent hits on one bucket take turns on its row.
public struct Quotas: Sendable {
    public static let tableSQL = """
        -- Fixed-window counters for per-user quotas (rate limits), swept once their window is a day old.
        CREATE TABLE quota_hits (
            bucket text NOT NULL,
            window_start timestamptz NOT NULL,
            hits integer NOT NULL,
            PRIMARY KEY (bucket, window_start)
        );
        """

    public let logger: Logger

    public init(logger: Logger) {
        self.logger = logger
    }

    /// Adds `amount` to `bucket`'s current window. nil when that stays within the quota; else
    /// the seconds until the window ends (nothing is added then).
    public func hit(_ bucket: String, _ quota: Quota, amount: Int = 1, on connection: PostgresConnection) async throws -> Int? {
        let key = "\(bucket)|\(quota.seconds)"
        let window = quota.seconds
        let remaining = max(1, window - Int(Date().timeIntervalSince1970) % window)
        guard amount <= quota.count else { return remaining }
        var counted = false
        for try await _ in try await connection.execute(QuotaHit(key: key, window: window, amount: amount, limit: quota.count), logger: logger) { counted = true }
        // No row back: the window's count would have gone past the quota, so nothing was added.
        return counted ? nil : remaining
    }

    /// Counts the hit, or throws 429 `code` with `Retry-After` when it would exceed the quota.
    public func check(_ bucket: String, _ quota: Quota, amount: Int = 1, code: String = "rate_limited", message: String,
                      on connection: PostgresConnection) async throws {
        if let retryAfter = try await hit(bucket, quota, amount: amount, on: connection) {
            var error = APIError.tooManyRequests(retryAfterSeconds: retryAfter, message: message)
            error.code = code
            throw error
        }
    }

    /// Deletes windows that ended more than a day ago (a service's periodic job calls it).
    public func sweep(on connection: PostgresConnection) async throws {
        try await connection.query("DELETE FROM quota_hits WHERE window_start < now() - interval '2 days'", logger: logger)
    }
}

/// A quota hit as a prepared statement (every rate-limited write runs it). Public so benchmarks
/// run exactly this SQL under pgbench: `$1` the bucket, `$2` the window in seconds, `$3` the
/// amount, `$4` the quota's count; a row back when the hit was counted.
public struct QuotaHit: PostgresPreparedStatement {
    public static let sql = """
        INSERT INTO quota_hits AS q (bucket, window_start, hits)
        VALUES ($1, to_timestamp(floor(extract(epoch FROM now()) / $2::int8) * $2::int8), $3::int4)
        ON CONFLICT (bucket, window_start) DO UPDATE SET hits = q.hits + EXCLUDED.hits
            WHERE q.hits + EXCLUDED.hits <= $4::int4
        RETURNING hits
        """
    public typealias Row = Void

    var key: String
    var window: Int
    var amount: Int
    var limit: Int

    public func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 4)
        bindings.append(key)
        bindings.append(Int64(window))
        bindings.append(Int32(amount))
        bindings.append(Int32(limit))
        return bindings
    }

    public func decodeRow(_ row: PostgresRow) throws {}
}
