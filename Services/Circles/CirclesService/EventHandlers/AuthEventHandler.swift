import ColonyModels
import ColonyPlatform
import Foundation
import PostgresNIO

/// Auth's events, for mycirclee accounts only: create or refresh the profile, erase the account
/// with everything it wrote. Runs inside the inbox transaction, so a redelivery changes nothing.
struct AuthEventHandler: Sendable {
    let circles: Circles

    func handle(_ event: ReceivedEvent, on connection: PostgresConnection) async throws {
        guard event.header.app == .mycirclee else { return }
        let profiles = circles.profiles.store
        switch event.type {
        case .userRegistered:
            let payload = try event.decode(UserRegistered.self).payload
            try await profiles.upsertFromAuth(payload.userId, name: SignUpMetadata.displayName(payload.userMetadata, maxLength: 60), email: payload.email, phone: payload.phone, on: connection)
        case .userUpdated:
            let payload = try event.decode(UserUpdated.self).payload
            try await profiles.upsertFromAuth(payload.userId, name: SignUpMetadata.displayName(payload.userMetadata, maxLength: 60), email: payload.email, phone: payload.phone, on: connection)
        case .userDeleted:
            let userID = try event.decode(UserDeleted.self).payload.userId
            // Before anything else: a first request racing the erasure must not bring the account back.
            try await AccountLock.lockForErasure(userID, on: connection)
            try await erase(userID, on: connection)
        default:
            break
        }
    }

    /// Owned circles pass on (or go when the user was alone), other memberships end, then the
    /// profile goes with every post, reaction, vote, RSVP, DM and presence the user had.
    func erase(_ userID: UUID, on connection: PostgresConnection) async throws {
        for circle in try await circles.store.owned(by: userID, on: connection) {
            try await circles.leave(circle, userID: userID, reason: .accountDeleted, on: connection)
        }
        for circle in try await circles.store.joined(by: userID, on: connection) {
            try await circles.remove(circle, userID: userID, reason: .accountDeleted, actor: userID, on: connection)
        }
        let photos = try await PostStore(logger: circles.logger).authored(by: userID, on: connection).filter { $0.photoVersion != nil }
        try await circles.profiles.store.erase(userID, on: connection)
        for post in photos { try await circles.media.remove(circleID: post.row.circleId, postID: post.row.id) }
    }
}
