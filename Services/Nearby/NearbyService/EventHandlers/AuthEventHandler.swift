import ColonyModels
import ColonyPlatform
import Foundation
import PostgresNIO

/// Auth's events, for socialspot accounts only: create the profile, erase the account. Runs
/// inside the inbox transaction, so a redelivery changes nothing.
struct AuthEventHandler: Sendable {
    let nearby: Nearby

    func handle(_ event: ReceivedEvent, on connection: PostgresConnection) async throws {
        guard event.header.app == .socialspot else { return }
        switch event.type {
        case .userRegistered:
            let payload = try event.decode(UserRegistered.self).payload
            try await nearby.registered(payload.userId, metadata: payload.userMetadata, on: connection)
        case .userDeleted:
            let userID = try event.decode(UserDeleted.self).payload.userId
            // Before anything else: a first request racing the erasure must not bring the account back.
            try await AccountLock.lockForErasure(userID, on: connection)
            try await nearby.erase(userID, on: connection)
        default:
            break
        }
    }
}
