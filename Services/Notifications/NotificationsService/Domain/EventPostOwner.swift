import ColonyModels
import ColonyPlatform
import Foundation
import Logging
import Metrics
import Synchronization

/// Read-your-writes for Live Activities: a circle joined, or an event post created, a moment
/// before `POST /live-activities` is honoured although its events have not reached this service's
/// projection (on their way, or the broker down). When the projection cannot vouch, circles is
/// asked (`InternalEventPostRoute`, the service credential); its yes is kept for `lifetime`, by
/// which the events have normally arrived (the projection answers from then on).
struct EventPostOwner: Sendable {
    let client: InternalMembershipClient
    /// Circles' root URL (`COLONY_CIRCLES_URL`).
    let circlesURL: String
    let kept: KeptAnswers

    init(key: InternalKey, circlesURL: String, lifetime: Duration = .seconds(10)) {
        self.client = InternalMembershipClient(key: key)
        self.circlesURL = circlesURL
        self.kept = KeptAnswers(lifetime: lifetime)
    }

    /// nil unless the deployment has both the service credential and circles' URL.
    static func make(key: InternalKey?, circlesURL: String?) -> EventPostOwner? {
        guard let key, let circlesURL else { return nil }
        return EventPostOwner(key: key, circlesURL: circlesURL)
    }

    /// Whether circles says `user` may see the live event post `post`; unreachable: no.
    func vouches(for user: UUID, post: UUID, logger: Logger) async -> Bool {
        if kept.contains(user, post) { return true }
        do {
            guard try await client.canSeeEventPost(post, user: user, base: circlesURL) else {
                Self.count("not_member")
                return false
            }
            Self.count("member")
            kept.keep(user, post)
            return true
        } catch {
            logger.warning("circles could not be asked about an event post", metadata: ["error": "\(error)"])
            Self.count("failed")
            return false
        }
    }

    /// `colony_notifications_event_post_lookups_total{answer}`: how often the projection was behind a
    /// registration (`member`), circles said no (`not_member`), or could not be asked (`failed`).
    static func count(_ answer: String) {
        Counter(label: "colony_notifications_event_post_lookups_total", dimensions: [("answer", answer)]).increment()
    }

    /// Circles' yeses by (user, post), each until its lifetime ends.
    final class KeptAnswers: Sendable {
        struct Key: Hashable {
            var user: UUID
            var post: UUID
        }

        let lifetime: Duration
        private let entries = Mutex([Key: ContinuousClock.Instant]())

        init(lifetime: Duration) {
            self.lifetime = lifetime
        }

        func contains(_ user: UUID, _ post: UUID, now: ContinuousClock.Instant = .now) -> Bool {
            entries.withLock { entries in
                guard let until = entries[Key(user: user, post: post)] else { return false }
                if until > now { return true }
                entries.removeValue(forKey: Key(user: user, post: post))
                return false
            }
        }

        func keep(_ user: UUID, _ post: UUID, now: ContinuousClock.Instant = .now) {
            entries.withLock { entries in
                if entries.count >= 4096 { entries = entries.filter { $0.value > now } }
                entries[Key(user: user, post: post)] = now + lifetime
            }
        }
    }
}
