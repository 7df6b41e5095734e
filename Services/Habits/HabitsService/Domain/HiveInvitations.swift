import ColonyModels
import ColonyPlatform
import Foundation
import Logging
import PostgresNIO

/// "Invite by contact match" (the seed's second way into a hive, beside codes): the owner
/// invites one of their contact matches; the invitee is pushed, and accepts (joins, as by code)
/// or declines. Nobody else can be invited this way, so it reaches only people whose number the
/// owner has. Someone who blocked the owner cannot be invited (403 `blocked`), and an invitation
/// from someone the invitee blocked is hidden from them (`HabitsBlocks`).
struct HiveInvitations: Sendable {
    let outbox: Outbox
    let logger: Logger
    var hives: Hives { Hives(outbox: outbox, logger: logger) }
    var store: HiveStore { HiveStore(logger: logger) }
    var blocks: BlockList { BlockList(logger: logger) }

    func invite(_ hiveID: UUID, invitee: UUID, userID: UUID, on connection: PostgresConnection) async throws -> HiveInvitationRow {
        let hive = try await hives.ownedHive(hiveID, userID: userID, forUpdate: true, on: connection)
        guard invitee != userID, try await ContactStore(logger: logger).matches(userID: userID, on: connection).contains(where: { $0.userId == invitee }) else {
            throw HabitsErrors.contactNotFound
        }
        // The invitee's block of the owner, read in the transaction that writes the invitation.
        try await blocks.refuse(userID, reaching: invitee, on: connection)
        let members = try await store.memberIDs(hiveID, on: connection)
        guard !members.contains(invitee) else { throw APIError.conflict("this person is already a member of the hive", code: "already_member") }
        guard members.count < HiveRules.maxMembers else { throw HabitsErrors.hiveFull }
        guard let invitation = try await store.createInvitation(hiveID: hiveID, userID: invitee, invitedBy: userID, on: connection) else { throw HabitsErrors.invitationPending }
        let inviter = try await ProfileStore(logger: logger).find(userID, on: connection)?.displayName ?? ""
        try await outbox.publish(EventEnvelope(app: .habithive, aggregateId: hiveID.lowercased, actor: userID,
                                               payload: HiveInvited(invitation: invitation, hiveName: hive.name, invitedByName: inviter)),
                                 on: connection, logger: logger)
        return invitation
    }

    func pending(userID: UUID, on connection: PostgresConnection) async throws -> [HiveStore.PendingInvitation] {
        _ = try await ProfileStore(logger: logger).require(userID, on: connection)
        return try await store.pendingInvitations(for: userID, on: connection)
    }

    /// Joins the hive (the hive row, then the invitation, are locked: the 10-member limit holds
    /// as under concurrent joins by code). Someone who joined by code meanwhile just accepts.
    func accept(_ id: UUID, userID: UUID, now: Date = Date(), on connection: PostgresConnection) async throws -> Hives.HiveDetail {
        let invitation = try await mine(id, userID: userID, on: connection)
        guard let hive = try await store.lock(invitation.hiveId, on: connection), let locked = try await store.invitation(id, forUpdate: true, on: connection) else {
            throw HabitsErrors.invitationNotFound
        }
        guard locked.status == .pending else { throw HabitsErrors.invitationAnswered }
        let members = try await store.memberIDs(hive.id, on: connection)
        if !members.contains(userID) {
            guard members.count < HiveRules.maxMembers else { throw HabitsErrors.hiveFull }
            try await hives.addJoined(hive, userID: userID, memberIDs: members, now: now, on: connection)
        }
        try await answer(locked, .accepted, userID: userID, on: connection)
        return try await hives.detail(hive.id, userID: userID, now: now, on: connection)
    }

    func decline(_ id: UUID, userID: UUID, on connection: PostgresConnection) async throws -> HiveInvitationRow {
        _ = try await mine(id, userID: userID, on: connection)
        guard let locked = try await store.invitation(id, forUpdate: true, on: connection) else { throw HabitsErrors.invitationNotFound }
        guard locked.status == .pending else { throw HabitsErrors.invitationAnswered }
        return try await answer(locked, .declined, userID: userID, on: connection)
    }

    /// An invitation addressed to the caller; anyone else's is "not found", and so is one from
    /// someone the caller blocked (hidden from their list: it shows again after an unblock).
    private func mine(_ id: UUID, userID: UUID, on connection: PostgresConnection) async throws -> HiveInvitationRow {
        guard let invitation = try await store.invitation(id, forUpdate: false, on: connection), invitation.userId == userID,
              try await !blocks.hasBlocked(invitation.invitedBy, by: userID, on: connection) else { throw HabitsErrors.invitationNotFound }
        return invitation
    }

    @discardableResult
    private func answer(_ invitation: HiveInvitationRow, _ status: HiveInvitationStatus, userID: UUID, on connection: PostgresConnection) async throws -> HiveInvitationRow {
        let decided = try await store.decide(invitation.id, status: status, on: connection)
        try await outbox.publish(EventEnvelope(app: .habithive, aggregateId: invitation.hiveId.lowercased, actor: userID,
                                               payload: HiveInvitationAnswered(invitation: decided, previous: invitation)),
                                 on: connection, logger: logger)
        return decided
    }
}
