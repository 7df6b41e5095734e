import ColonyModels
import ColonyPlatform
import Foundation
import Metrics
import Synchronization

/// Where realtime asks about a membership its projection has not seen yet: each owning
/// service's root URL, and how long answers are kept.
public struct MembershipOwners: Sendable, Equatable {
    /// `circle` → circles, `group` → chat, `hive` → habits; a scope without one is never asked.
    public var urls: [MembershipScope: String]
    /// How long an owner's "member" is kept while its event is on the way (dropped at once when
    /// the event, or a removal, arrives). It also bounds how long a removal realtime cannot learn
    /// of (the broker down) is missed by a later join.
    public var positiveLifetime: Duration
    /// How long an owner's "not a member" is kept: repeated joins by a non-member do not ask
    /// again and again; short, since a claim right after a refused join must be honoured.
    public var negativeLifetime: Duration
    public var timeout: Duration

    public init(urls: [MembershipScope: String] = [:], positiveLifetime: Duration = .seconds(10), negativeLifetime: Duration = .seconds(1),
                timeout: Duration = .seconds(2)) {
        self.urls = urls
        self.positiveLifetime = positiveLifetime
        self.negativeLifetime = negativeLifetime
        self.timeout = timeout
    }

    /// `COLONY_CIRCLES_URL`, `COLONY_CHAT_URL`, `COLONY_HABITS_URL` (the services' root URLs, e.g.
    /// `http://circles:8080`; unset: that scope's owner is never asked),
    /// `COLONY_REALTIME_MEMBERSHIP_CACHE_SECONDS` (10), `COLONY_REALTIME_MEMBERSHIP_NEGATIVE_CACHE_MS`
    /// (1000, at most 2000), `COLONY_REALTIME_MEMBERSHIP_LOOKUP_TIMEOUT_MS` (2000).
    public static func load(environment: EnvironmentReader) throws(ConfigurationError) -> MembershipOwners {
        var urls: [MembershipScope: String] = [:]
        for (scope, variable) in [(MembershipScope.circle, "COLONY_CIRCLES_URL"), (.group, "COLONY_CHAT_URL"), (.hive, "COLONY_HABITS_URL")] {
            if let url = try environment.url(variable) { urls[scope] = url.absoluteString }
        }
        return MembershipOwners(
            urls: urls,
            positiveLifetime: .seconds(try environment.int("COLONY_REALTIME_MEMBERSHIP_CACHE_SECONDS", default: 10, range: 1...600)),
            negativeLifetime: .milliseconds(try environment.int("COLONY_REALTIME_MEMBERSHIP_NEGATIVE_CACHE_MS", default: 1000, range: 0...2000)),
            timeout: .milliseconds(try environment.int("COLONY_REALTIME_MEMBERSHIP_LOOKUP_TIMEOUT_MS", default: 2000, range: 100...30_000))
        )
    }
}

/// Read-your-writes for channel joins: a membership committed in the owning service is honoured
/// at the next join even while its event is on the way or the broker is down. When the
/// projection says no, the owner is asked; its answer is kept (`MembershipCache`) until the
/// event arrives. A removal realtime learns of drops what is kept, and an answer that was in
/// flight when a removal arrived is not trusted (asked again).
public struct MembershipLookup: Sendable {
    public let owners: MembershipOwners
    let client: InternalMembershipClient?
    let cache: MembershipCache

    public init(owners: MembershipOwners, key: InternalKey?) {
        self.owners = owners
        let timeout = owners.timeout.components
        self.client = key.map { InternalMembershipClient(key: $0, timeout: .milliseconds(timeout.seconds * 1000 + timeout.attoseconds / 1_000_000_000_000_000)) }
        self.cache = MembershipCache(positiveLifetime: owners.positiveLifetime, negativeLifetime: owners.negativeLifetime)
    }

    /// Whether `user` is a member: the projection first, then what was kept, then the owner.
    /// An owner that cannot be reached is a no (the join is refused, as before).
    func isMember(_ user: UUID, of scope: MembershipScope, _ id: UUID, projection: () async throws -> Bool) async throws -> Bool {
        if try await projection() { return true }
        if let kept = cache.answer(user, scope, id) { return kept }
        guard let client, let base = owners.urls[scope] else { return false }
        for _ in 0..<2 {
            let ticket = cache.begin()
            let answer: Bool
            do {
                answer = try await client.isMember(user, of: scope, id, base: base)
            } catch {
                cache.end(ticket)
                Self.count(scope, "failed")
                throw error
            }
            Self.count(scope, answer ? "member" : "not_member")
            // A removal that arrived while the owner answered may postdate the answer: ask again.
            if cache.finish(ticket, user, scope, id, isMember: answer) { return answer }
        }
        return false
    }

    /// `colony_realtime_membership_lookups_total{scope, answer}`: how often the projection was behind
    /// a join (`member`), a non-member was asked about (`not_member`), or the owner failed (`failed`).
    static func count(_ scope: MembershipScope, _ answer: String) {
        Counter(label: "colony_realtime_membership_lookups_total", dimensions: [("scope", scope.rawValue), ("answer", answer)]).increment()
    }

    /// Users the owner vouched for who are not in the projection yet (row changes go to them too).
    func keptMembers(_ scope: MembershipScope, _ id: UUID) -> Set<UUID> {
        cache.members(scope, id)
    }

    /// An event's membership changes, on this replica: kept answers about them are dropped.
    func learn(_ change: MembershipChange) {
        cache.learn(change)
    }
}

/// The owners' answers, by scope, id and user, with the removals seen while answers were in flight.
final class MembershipCache: Sendable {
    struct Key: Hashable {
        var scope: MembershipScope
        var id: UUID
        var user: UUID
    }

    struct ScopeKey: Hashable {
        var scope: MembershipScope
        var id: UUID
    }

    struct Entry {
        var isMember: Bool
        var until: ContinuousClock.Instant
    }

    struct State {
        var entries: [Key: Entry] = [:]
        /// Removals numbered as they arrive; the last one per scope and per member, kept only
        /// while some lookup is in flight (nothing else needs them).
        var removals: UInt64 = 0
        var lastRemoval: [ScopeKey: UInt64] = [:]
        var lastUserRemoval: [Key: UInt64] = [:]
        var inFlight: [UInt64: Int] = [:]
    }

    let positiveLifetime: Duration
    let negativeLifetime: Duration
    private let state = Mutex(State())
    /// Past this many entries expired ones are swept on insert.
    static let sweepThreshold = 4096

    init(positiveLifetime: Duration, negativeLifetime: Duration) {
        self.positiveLifetime = positiveLifetime
        self.negativeLifetime = negativeLifetime
    }

    var count: Int { state.withLock { $0.entries.count } }

    func answer(_ user: UUID, _ scope: MembershipScope, _ id: UUID, now: ContinuousClock.Instant = .now) -> Bool? {
        state.withLock { state in
            let key = Key(scope: scope, id: id, user: user)
            guard let entry = state.entries[key] else { return nil }
            guard entry.until > now else {
                state.entries.removeValue(forKey: key)
                return nil
            }
            return entry.isMember
        }
    }

    func members(_ scope: MembershipScope, _ id: UUID, now: ContinuousClock.Instant = .now) -> Set<UUID> {
        state.withLock { state in
            Set(state.entries.lazy.filter { $0.key.scope == scope && $0.key.id == id && $0.value.isMember && $0.value.until > now }.map(\.key.user))
        }
    }

    /// A lookup starts: its ticket is the number of removals seen so far.
    func begin() -> UInt64 {
        state.withLock { state in
            state.inFlight[state.removals, default: 0] += 1
            return state.removals
        }
    }

    /// A lookup that failed ends without an answer.
    func end(_ ticket: UInt64) {
        state.withLock { Self.release(ticket, &$0) }
    }

    /// A lookup ends with the owner's answer: kept and true, unless a removal of this member (or
    /// of the whole scope) arrived after it began: then false, and nothing is kept.
    func finish(_ ticket: UInt64, _ user: UUID, _ scope: MembershipScope, _ id: UUID, isMember: Bool, now: ContinuousClock.Instant = .now) -> Bool {
        state.withLock { state in
            defer { Self.release(ticket, &state) }
            let key = Key(scope: scope, id: id, user: user)
            if let removed = state.lastRemoval[ScopeKey(scope: scope, id: id)], removed > ticket { return false }
            if let removed = state.lastUserRemoval[key], removed > ticket { return false }
            let lifetime = isMember ? positiveLifetime : negativeLifetime
            guard lifetime > .zero else { return true }
            if state.entries.count >= Self.sweepThreshold { state.entries = state.entries.filter { $0.value.until > now } }
            state.entries[key] = Entry(isMember: isMember, until: now + lifetime)
            return true
        }
    }

    private static func release(_ ticket: UInt64, _ state: inout State) {
        let left = state.inFlight[ticket, default: 1] - 1
        state.inFlight[ticket] = left > 0 ? left : nil
        if state.inFlight.isEmpty {
            state.lastRemoval.removeAll()
            state.lastUserRemoval.removeAll()
        }
    }

    /// An add puts the members in the projection (nothing to keep); a removal drops what was kept
    /// and is remembered while lookups are in flight.
    func learn(_ change: MembershipChange) {
        state.withLock { state in
            switch change {
            case .add(let scope, let id, let users):
                for user in users { state.entries.removeValue(forKey: Key(scope: scope, id: id, user: user)) }
            case .remove(let scope, let id, let user):
                let key = Key(scope: scope, id: id, user: user)
                state.entries.removeValue(forKey: key)
                state.removals += 1
                if !state.inFlight.isEmpty { state.lastUserRemoval[key] = state.removals }
            case .removeAll(let scope, let id):
                state.entries = state.entries.filter { !($0.key.scope == scope && $0.key.id == id) }
                state.removals += 1
                if !state.inFlight.isEmpty { state.lastRemoval[ScopeKey(scope: scope, id: id)] = state.removals }
            }
        }
    }
}
