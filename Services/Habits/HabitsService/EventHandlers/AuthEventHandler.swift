import ColonyModels
import ColonyPlatform
import Foundation
import PostgresNIO

/// Auth's events, for habithive accounts only: create the profile, refresh the phone hash,
/// erase the account. Runs inside the inbox transaction, so a redelivery changes nothing.
struct AuthEventHandler: Sendable {
    let profiles: Profiles

    func handle(_ event: ReceivedEvent, on connection: PostgresConnection) async throws {
        guard event.header.app == .habithive else { return }
        switch event.type {
        case .userRegistered:
            let payload = try event.decode(UserRegistered.self).payload
            try await profiles.registered(payload.userId, metadata: payload.userMetadata, phoneHash: payload.phoneHash, on: connection)
        case .userUpdated:
            let payload = try event.decode(UserUpdated.self).payload
            try await profiles.registered(payload.userId, metadata: payload.userMetadata, phoneHash: payload.phoneHash, on: connection)
        case .userDeleted:
            let userID = try event.decode(UserDeleted.self).payload.userId
            // Before anything else: a first request racing the erasure must not bring the account back.
            try await AccountLock.lockForErasure(userID, on: connection)
            try await profiles.erase(userID, on: connection)
        default:
            break
        }
    }
}
