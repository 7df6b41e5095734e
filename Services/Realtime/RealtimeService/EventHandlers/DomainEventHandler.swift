import ColonyModels
import ColonyPlatform
import Foundation
import PostgresNIO

/// The domain services' membership events, applied to the projection inside the inbox
/// transaction: once per event across all replicas, a redelivery changes nothing. Delivery to
/// sockets happens afterwards on every replica (`RealtimeHub.deliver`).
struct DomainEventHandler: Sendable {
    let memberships: MembershipProjection

    func handle(_ event: ReceivedEvent, on connection: PostgresConnection) async throws {
        try await memberships.apply(event, on: connection)
    }
}
