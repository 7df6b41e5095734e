import ColonyModels
import ColonyPlatform
import Foundation
import PostgresNIO

/// Auth's events, for ibelieveinyou accounts only: create the builder and karma (the seed's
/// sign-up trigger), erase the account. Runs inside the inbox transaction, so a redelivery
/// changes nothing.
struct AuthEventHandler: Sendable {
    let builders: Builders
    let projects: Projects

    func handle(_ event: ReceivedEvent, on connection: PostgresConnection) async throws {
        guard event.header.app == .ibelieveinyou else { return }
        switch event.type {
        case .userRegistered:
            let payload = try event.decode(UserRegistered.self).payload
            try await builders.registered(payload.userId, email: payload.email, metadata: payload.userMetadata, on: connection)
        case .userDeleted:
            let userID = try event.decode(UserDeleted.self).payload.userId
            // Before anything else: a first request racing the erasure must not bring the account back.
            try await AccountLock.lockForErasure(userID, on: connection)
            try await builders.erase(userID, projects: projects, on: connection)
        default:
            break
        }
    }
}
