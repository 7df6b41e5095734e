import ColonyModels
import ColonyPlatform
import Foundation
import PostgresNIO

/// Every consumed event, inside its inbox transaction (a redelivery changes nothing): the
/// projections first (memberships, names, event posts), then the pushes the event makes.
struct DomainEventHandler: Sendable {
    let notifications: Notifications

    func handle(_ event: ReceivedEvent, on connection: PostgresConnection) async throws {
        switch event.type {
        case .userDeleted:
            try await notifications.erase(try event.decode(UserDeleted.self).payload.userId, on: connection)
            return
        case .userSuspended:
            let suspended = try event.decode(UserSuspended.self).payload
            try await notifications.deliveries.suspend(suspended.userId, app: suspended.app, until: suspended.until, on: connection)
            return
        case .userReinstated:
            try await notifications.deliveries.reinstate(try event.decode(UserReinstated.self).payload.userId, on: connection)
            return
        default:
            break
        }
        let fanOut = notifications.fanOut
        if event.header.source == .console {
            // The console's topic: `report_resolved` and `user_warned` notify a user in the event's
            // app; `operator_action` and `content_removed` make no plan (decided by type, nothing
            // decoded or read). No user acted (the moderator is no app user): no actor is recorded.
            for plan in try Triggers.plans(for: event).pushes {
                try await fanOut.push(plan, event: event.id, occurredAt: event.header.occurredAt, actor: nil, on: connection)
            }
            return
        }
        let projections = notifications.projections
        try await notifications.memberships.apply(event, on: connection)
        try await notifications.membershipsChanged(event, on: connection)
        let lookups = try Triggers.lookups(for: event)
        let names = try await projections.names(lookups.names, on: connection)
        var eventPost: EventPostInfo?
        if let postID = lookups.eventPost { eventPost = try await projections.eventPost(postID, on: connection) }
        try await projections.apply(event, on: connection)
        let plans = try Triggers.plans(for: event, names: names, eventPost: eventPost)
        for plan in plans.pushes {
            try await fanOut.push(plan, event: event.id, occurredAt: event.header.occurredAt, actor: event.header.actor, on: connection)
        }
        for plan in plans.liveActivities {
            try await fanOut.liveActivity(plan, event: event.id, occurredAt: event.header.occurredAt, on: connection)
        }
    }
}
