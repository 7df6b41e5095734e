import ColonyModels
import ColonyPlatform
import Foundation
import Hummingbird

/// Circles answers notifications whether a post is a live event post of a circle someone is in
/// now, from its own tables: a member who joined (or created the event) a moment ago registers a
/// Live Activity before the events reach notifications' projection. Service credential only.
enum InternalEventPostRoutes {
    static func add(to router: Router<ColonyRequestContext>, context: ServiceContext) {
        InternalRoute.get("\(InternalEventPostRoute.path)/{post}/members/{user}", on: router, key: context.configuration.internalKey) { _, request in
            guard let post = request.parameters.get("post").flatMap({ UUID(canonical: $0) }),
                  let user = request.parameters.get("user").flatMap({ UUID(canonical: $0) })
            else { throw APIError.notFound("no such post or user", code: "not_found") }
            let visible = try await context.database.withConnection { connection in
                try await !connection.query("""
                    SELECT 1 FROM posts p JOIN circle_members m ON m.circle_id = p.circle_id AND m.user_id = \(user)
                    WHERE p.id = \(post) AND p.type = 'event' AND p.expires_at > now()
                    """, logger: context.logger).collect().isEmpty
            }
            return try RouteSupport.json(InternalMembershipRoute.Answer(member: visible), status: .ok)
        }
    }
}
