import ColonyModels
import ColonyPlatform
import Foundation
import PostgresNIO

/// Auth's events for mycirclee accounts (`AccountEvents`): create or refresh the profile, erase
/// the account with everything it wrote.
struct AuthEventHandler: Sendable {
    let circles: Circles

    func handle(_ event: ReceivedEvent, on connection: PostgresConnection) async throws {
        let profiles = circles.profiles.store
        try await AccountEvents(app: .mycirclee, updates: true) { account, connection in
            try await profiles.upsertFromAuth(account.id, name: SignUpMetadata.displayName(account.metadata, maxLength: 60), email: account.email, phone: account.phone, on: connection)
        } erased: { [self] userID, connection in
            try await erase(userID, on: connection)
        }.handle(event, on: connection)
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
