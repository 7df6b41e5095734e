import ColonyModels
import ColonyPlatform
import Hummingbird
import PostgresNIO

/// Habits answers realtime whether someone is in a hive now, from `hive_members` itself: a
/// member who joined a moment ago joins `hive:{id}` before the event reaches realtime's
/// projection. Service credential only (`InternalMembershipRoute`).
enum InternalMemberRoutes {
    static func add(to router: Router<ColonyRequestContext>, context: ServiceContext) {
        InternalMembershipRoute.add(to: router, scope: .hive, key: context.configuration.internalKey, database: context.database) { hive, user, connection in
            try await !connection.query("SELECT 1 FROM hive_members WHERE hive_id = \(hive) AND user_id = \(user)", logger: context.logger).collect().isEmpty
        }
    }
}
