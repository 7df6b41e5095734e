import ColonyModels
import ColonyPlatform
import Foundation
import Logging

/// Adding members by email answers which addresses have no Unify account (the seed's app shows
/// them), so it could be asked who has one. Each user may look up at most `quota` addresses
/// (100 an hour unless `COLONY_CHAT_EMAIL_LOOKUP_RATE` says otherwise), counted per address
/// asked, known or not, whatever the request's outcome, in Postgres so every replica counts
/// against the same budget; past it the request is refused whole with 429 and `Retry-After`.
struct MemberLookupBudget: Sendable {
    let database: Database
    let quota: Quota
    let logger: Logger

    static let code = "email_lookup_quota_exceeded"

    /// Counts `addresses` (already deduplicated) against the user's budget, in a statement of its
    /// own: a request then refused for unknown addresses still counts.
    func spend(_ addresses: Int, user: UUID) async throws {
        guard addresses > 0 else { return }
        let retryAfter = try await database.withConnection { connection in
            try await Quotas(logger: logger).hit(Self.bucket(user), quota, amount: addresses, on: connection)
        }
        if let retryAfter { throw Self.refusal(retryAfter: retryAfter, quota: quota) }
    }

    static func bucket(_ user: UUID) -> String { "member_email_lookups|\(user.lowercased)" }

    static func refusal(retryAfter: Int, quota: Quota) -> APIError {
        var error = APIError.tooManyRequests(
            retryAfterSeconds: retryAfter,
            message: "at most \(quota.count) member addresses per \(quota.seconds) seconds can be looked up; try again in \(max(1, retryAfter)) seconds"
        )
        error.code = code
        return error
    }
}
