import Foundation
import Synchronization

/// The signed-URL route's memory of "may this signer still read this object": a signed URL of a
/// members-only bucket asks the bucket's `StorageAccess` (the owning service's own membership
/// rows) again, and the answer is reused for at most `ttl`, so a player fetching the same file
/// again and again costs one query per `ttl` while a removed member's URL stops within it.
/// One per router (`Storage.addRoutes`); bounded, so URLs of many objects cannot grow it.
final class SignerChecks: Sendable {
    struct Key: Hashable {
        var signer: UUID
        var bucket: String
        var key: String
    }

    struct Answer {
        var allowed: Bool
        var until: ContinuousClock.Instant
    }

    let ttl: Duration
    let capacity: Int
    private let answers = Mutex<[Key: Answer]>([:])

    init(ttl: Duration, capacity: Int = 10_000) {
        self.ttl = ttl
        self.capacity = capacity
    }

    /// Whether `signer` may read `key` of `bucket` now, or at most `ttl` ago.
    func allows(_ signer: UUID, bucket: String, key: String, rule: StorageAccess, now: @Sendable () -> ContinuousClock.Instant = { .now }) async throws -> Bool {
        let entry = Key(signer: signer, bucket: bucket, key: key)
        let asked = now()
        if let known = answers.withLock({ $0[entry] }), known.until > asked { return known.allowed }
        let allowed = try await rule.canRead(signer, key)
        guard ttl > .zero else { return allowed }
        // Kept from when the question was asked, so the answer is never older than `ttl`.
        let answer = Answer(allowed: allowed, until: asked + ttl)
        answers.withLock { answers in
            if answers.count >= capacity {
                answers = answers.filter { $0.value.until > asked }
                // Still full of live answers: start over rather than grow (each costs one query).
                if answers.count >= capacity { answers.removeAll(keepingCapacity: true) }
            }
            answers[entry] = answer
        }
        return allowed
    }

    /// How many answers are kept (for tests).
    var count: Int { answers.withLock { $0.count } }
}
