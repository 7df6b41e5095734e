import ColonyModels
import ColonyPlatform
import Foundation
import PostgresNIO

/// Auth's events, for unify accounts only: create or refresh the `user` row, erase the account.
/// Runs inside the inbox transaction, so a redelivery changes nothing.
struct AuthEventHandler: Sendable {
    let users: Users
    let groups: Groups

    func handle(_ event: ReceivedEvent, on connection: PostgresConnection) async throws {
        guard event.header.app == .unify else { return }
        switch event.type {
        case .userRegistered:
            let payload = try event.decode(UserRegistered.self).payload
            try await users.registered(payload.userId, email: payload.email, metadata: payload.userMetadata, on: connection)
        case .userUpdated:
            let payload = try event.decode(UserUpdated.self).payload
            try await users.registered(payload.userId, email: payload.email, metadata: payload.userMetadata, on: connection)
        case .userDeleted:
            let userID = try event.decode(UserDeleted.self).payload.userId
            // Before anything else: a first request racing the erasure must not bring the account back.
            try await AccountLock.lockForErasure(userID, on: connection)
            try await users.erase(userID, groups: groups, on: connection)
        default:
            break
        }
    }
}
