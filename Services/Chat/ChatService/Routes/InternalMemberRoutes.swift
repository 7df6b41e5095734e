import ColonyModels
import ColonyPlatform
import Hummingbird

/// Chat answers realtime whether someone is in a group now, from `group_members` itself: a
/// member added a moment ago joins `group:{id}` before the event reaches realtime's projection.
/// Service credential only (`InternalMembershipRoute`).
enum InternalMemberRoutes {
    static func add(to router: Router<ColonyRequestContext>, context: ServiceContext) {
        InternalMembershipRoute.add(to: router, scope: .group, key: context.configuration.internalKey, database: context.database) { group, user, connection in
            try await GroupStore(logger: context.logger).membership(group, userID: user, lock: false, on: connection) != nil
        }
    }
}
