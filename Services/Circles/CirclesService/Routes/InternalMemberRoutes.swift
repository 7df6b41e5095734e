import ColonyModels
import ColonyPlatform
import Hummingbird

/// Circles answers realtime whether someone is in a circle now, from `circle_members` itself:
/// a member who claimed an invite a moment ago joins `circle:{id}` before the event reaches
/// realtime's projection. Service credential only (`InternalMembershipRoute`).
enum InternalMemberRoutes {
    static func add(to router: Router<ColonyRequestContext>, context: ServiceContext) {
        InternalMembershipRoute.add(to: router, scope: .circle, key: context.configuration.internalKey, database: context.database) { circle, user, connection in
            try await CircleStore(logger: context.logger).isMember(circle, userID: user, on: connection)
        }
    }
}
