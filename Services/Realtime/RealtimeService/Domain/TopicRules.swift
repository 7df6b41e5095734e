import ColonyModels
import Foundation

/// What an app's clients may do on topics outside the known scopes (`circle:`, `group:`, `hive:`).
public enum UnscopedTopicPolicy: String, Sendable, CaseIterable {
    /// Joining is refused.
    case deny
    /// Joining is allowed for `postgres_changes` (each row still goes only to those allowed to see
    /// it); broadcast and presence are refused there: nobody vouches for who else is on the topic.
    case changes
    /// Anyone of the app may join, broadcast and track presence (a public lobby).
    case open
}

/// A channel's topic as the authorization rules see it.
public enum TopicAccess: Sendable, Equatable {
    /// `circle:{id}`, `group:{id}`, `hive:{id}` (optionally followed by `:anything`): members only,
    /// from the realtime service's own membership projection, or the owning service's answer
    /// while the projection has not seen a membership yet (`MembershipLookup`).
    case members(MembershipScope, UUID)
    /// Any other topic, under the app's `UnscopedTopicPolicy`.
    case unscoped(UnscopedTopicPolicy)

    /// Whether broadcast and presence are allowed once joined.
    public var allowsBroadcastAndPresence: Bool {
        switch self {
        case .members: true
        case .unscoped(let policy): policy == .open
        }
    }
}

/// Why a join is refused, in Supabase Realtime's words (its `log_error` code, then the message).
public struct TopicRefusal: Error, Sendable, Equatable, CustomStringConvertible {
    public var description: String

    /// `Unauthorized: You do not have permissions to read from this Channel topic: {name}`.
    public static func unauthorized(_ topic: String) -> TopicRefusal {
        TopicRefusal(description: "Unauthorized: You do not have permissions to read from this Channel topic: \(PhoenixReplies.channelName(of: topic))")
    }
}

/// The topic scopes the services know, and each app's policy for the rest: plain rules the
/// tests reach without a socket. Membership itself is looked up by the hub (projection first,
/// then the scope's owner: `MembershipLookup`).
public struct TopicRules: Sendable, Equatable {
    public var unscoped: [App: UnscopedTopicPolicy]

    public init(unscoped: [App: UnscopedTopicPolicy] = [:]) {
        self.unscoped = unscoped
    }

    /// The app whose members a scope holds.
    public static func app(of scope: MembershipScope) -> App {
        switch scope {
        case .circle: .mycirclee
        case .group: .unify
        case .hive: .habithive
        }
    }

    public func policy(for app: App) -> UnscopedTopicPolicy {
        unscoped[app] ?? .changes
    }

    /// The scope a topic names, if it names one: `realtime:circle:{uuid}` or `realtime:circle:{uuid}:typing`.
    /// nil for topics outside the scopes. A topic in a scope's namespace with something else
    /// than a UUID after it (`circle:abc`) names no circle anyone is a member of.
    public static func scope(of topic: String) -> (scope: MembershipScope, id: UUID?)? {
        let name = PhoenixReplies.channelName(of: topic)
        let parts = name.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count >= 2, let scope = MembershipScope(rawValue: String(parts[0]).lowercased()) else { return nil }
        return (scope, UUID(uuidString: String(parts[1])))
    }

    /// The key broadcast and presence use for a topic: scoped topics in one spelling (lower-case
    /// scope and id), so `circle:ABC…` and `circle:abc…` are one channel.
    public static func canonicalName(of topic: String) -> String {
        let name = PhoenixReplies.channelName(of: topic)
        guard let (scope, id) = scope(of: topic), let id else { return name }
        let parts = name.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
        return "\(scope.rawValue):\(id.lowercased)" + (parts.count == 3 ? ":\(parts[2])" : "")
    }

    /// What a join of `topic` by a user of `app` needs: membership of a scope, or the app's
    /// policy for unscoped topics. Private channels need a scope (Supabase refuses a private
    /// channel no policy allows).
    public func access(topic: String, app: App, isPrivate: Bool) -> Result<TopicAccess, TopicRefusal> {
        if let (scope, id) = Self.scope(of: topic) {
            guard let id, Self.app(of: scope) == app else { return .failure(.unauthorized(topic)) }
            return .success(.members(scope, id))
        }
        let policy = policy(for: app)
        guard !isPrivate, policy != .deny else { return .failure(.unauthorized(topic)) }
        return .success(.unscoped(policy))
    }
}
