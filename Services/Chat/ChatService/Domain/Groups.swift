import ColonyModels
import ColonyPlatform
import ColonyStorage
import Foundation
import Logging
import NIOCore
import PostgresNIO

/// Groups and their members: creation, renaming, pictures, adding by email, roles, ownership
/// transfer, leaving and deletion. Each operation runs in the caller's transaction and publishes
/// its events through the outbox in it.
struct Groups: Sendable {
    let outbox: Outbox
    let media: ChatMedia
    let logger: Logger
    /// Auth, asked about addresses chat's projection does not know yet (nil: not asked).
    var directory: AccountDirectory? = nil
    var store: GroupStore { GroupStore(logger: logger) }
    var users: Users { Users(outbox: outbox, media: media, logger: logger) }

    // MARK: reading

    /// The group and my membership; 404 when I am not a member.
    func membership(_ groupID: UUID, userID: UUID, lock: Bool = false, on connection: PostgresConnection) async throws -> GroupStore.Membership {
        guard let membership = try await store.membership(groupID, userID: userID, lock: lock, on: connection) else { throw ChatErrors.groupNotFound }
        return membership
    }

    func view(_ group: StoredGroup, member: GroupMemberRow, unreadCount: Int? = nil, lastMessageAt: Date? = nil) -> Schemas.Group {
        Schemas.Group(id: group.id.lowercased, name: group.name, ownerId: group.ownerId.lowercased, pictureUrl: media.groupPictureURL(group.id, version: group.pictureVersion),
                      createdAt: group.createdAt, updatedAt: group.updatedAt, role: .init(member.role), lastReadAt: member.lastReadAt,
                      unreadCount: unreadCount, lastMessageAt: lastMessageAt)
    }

    func row(_ group: StoredGroup) -> GroupRow {
        GroupRow(id: group.id, name: group.name, ownerId: group.ownerId, pictureUrl: media.groupPictureURL(group.id, version: group.pictureVersion),
                 createdAt: group.createdAt, updatedAt: group.updatedAt)
    }

    func memberView(_ profile: GroupStore.MemberProfile) -> Schemas.Member {
        Schemas.Member(groupId: profile.member.groupId.lowercased, userId: profile.member.userId.lowercased, role: .init(profile.member.role), joinedAt: profile.member.joinedAt,
                       lastReadAt: profile.member.lastReadAt, displayName: profile.displayName, avatarUrl: media.avatarURL(profile.member.userId, version: profile.avatarVersion))
    }

    func list(userID: UUID, on connection: PostgresConnection) async throws -> [Schemas.Group] {
        _ = try await users.require(userID, on: connection)
        return try await store.summaries(userID: userID, on: connection).map {
            view($0.group, member: $0.member, unreadCount: $0.unreadCount, lastMessageAt: $0.lastMessageAt)
        }
    }

    func get(_ groupID: UUID, userID: UUID, on connection: PostgresConnection) async throws -> Schemas.Group {
        let membership = try await membership(groupID, userID: userID, on: connection)
        return view(membership.group, member: membership.member)
    }

    func members(_ groupID: UUID, userID: UUID, on connection: PostgresConnection) async throws -> [Schemas.Member] {
        _ = try await membership(groupID, userID: userID, on: connection)
        return try await store.members(groupID, on: connection).map(memberView)
    }

    func unreadCounts(userID: UUID, on connection: PostgresConnection) async throws -> [Schemas.UnreadCount] {
        try await store.unreadCounts(userID: userID, on: connection).map { Schemas.UnreadCount(groupId: $0.0.lowercased, unreadCount: $0.1) }
    }

    // MARK: creating and changing

    /// Creates the group with me as owner and, optionally, members added by email (all or none:
    /// unknown addresses are reported back, as the seed's `unknownAppleIds`; anyone who blocked
    /// me refuses the whole request).
    func create(name: String, memberEmails: [String], userID: UUID, on connection: PostgresConnection) async throws -> Schemas.Group {
        let name = try ChatRules.groupName(name)
        let emails = try ChatRules.emails(memberEmails)
        _ = try await users.require(userID, on: connection)
        let memberIDs = try await resolve(emails, on: connection).filter { $0 != userID }
        try await refuseBlockers(adding: memberIDs, by: userID, on: connection)
        let group = try await store.create(id: .timeOrdered(), name: name, ownerID: userID, on: connection)
        let owner = try await store.addMembers(group.id, userIDs: [userID], role: .owner, on: connection)
        let members = memberIDs.isEmpty ? [] : try await store.addMembers(group.id, userIDs: memberIDs, role: .user, on: connection)
        try await publish(GroupCreated(group: row(group), members: owner + members), group: group.id, actor: userID, on: connection)
        return view(group, member: owner[0], unreadCount: 0)
    }

    func rename(_ groupID: UUID, name: String, userID: UUID, on connection: PostgresConnection) async throws -> Schemas.Group {
        let name = try ChatRules.groupName(name)
        let membership = try await membership(groupID, userID: userID, lock: true, on: connection)
        try GroupPolicy.require(membership.member.role, .rename)
        guard let group = try await store.update(groupID, name: name, on: connection) else { throw ChatErrors.groupNotFound }
        try await publish(GroupUpdated(group: row(group), previous: row(membership.group)), group: groupID, actor: userID, on: connection)
        return view(group, member: membership.member)
    }

    /// Stores the picture under a new key (owner or admin), deleting the old one: an ex-member who
    /// kept its URL, or knows the group's id, cannot fetch the new one.
    func setPicture(_ groupID: UUID, image: ByteBuffer, contentType: String?, userID: UUID, on connection: PostgresConnection) async throws -> Schemas.Group {
        let membership = try await membership(groupID, userID: userID, lock: true, on: connection)
        try GroupPolicy.require(membership.member.role, .changePicture)
        let version = try await media.storage.uploadPicture(image, contentType: contentType, to: media.groupPictures, owner: groupID,
                                                            replacing: membership.group.pictureVersion)
        guard let group = try await store.update(groupID, pictureVersion: .some(version), on: connection) else { throw ChatErrors.groupNotFound }
        try await publish(GroupUpdated(group: row(group), previous: row(membership.group)), group: groupID, actor: userID, on: connection)
        return view(group, member: membership.member)
    }

    func removePicture(_ groupID: UUID, userID: UUID, on connection: PostgresConnection) async throws -> Schemas.Group {
        let membership = try await membership(groupID, userID: userID, lock: true, on: connection)
        try GroupPolicy.require(membership.member.role, .changePicture)
        try await media.storage.removePicture(media.groupPictures, owner: groupID, version: membership.group.pictureVersion)
        guard let group = try await store.update(groupID, pictureVersion: .some(nil), on: connection) else { throw ChatErrors.groupNotFound }
        try await publish(GroupUpdated(group: row(group), previous: row(membership.group)), group: groupID, actor: userID, on: connection)
        return view(group, member: membership.member)
    }

    /// Adds Unify users by email (owner or admin); all or none: an unknown address, or anyone
    /// to add who blocked me, refuses the whole request. Those already in are skipped.
    func addMembers(_ groupID: UUID, emails: [String], userID: UUID, on connection: PostgresConnection) async throws -> Schemas.AddMembersResult {
        let emails = try ChatRules.emails(emails)
        guard !emails.isEmpty else { throw ChatErrors.validation("emails must name at least one address") }
        let membership = try await membership(groupID, userID: userID, lock: true, on: connection)
        try GroupPolicy.require(membership.member.role, .addMembers)
        let userIDs = try await resolve(emails, on: connection)
        // Those in already are not added again: only newcomers' blocks refuse (the group's row is locked).
        let members = Set(try await store.memberIDs(groupID, on: connection))
        try await refuseBlockers(adding: userIDs.filter { !members.contains($0) }, by: userID, on: connection)
        let added = try await store.addMembers(groupID, userIDs: userIDs, role: .user, on: connection)
        for member in added {
            try await publish(GroupMemberAdded(member: member, groupName: membership.group.name), group: groupID, actor: userID, on: connection)
        }
        let addedIDs = Set(added.map(\.userId))
        return Schemas.AddMembersResult(added: try await store.members(groupID, on: connection).filter { addedIDs.contains($0.member.userId) }.map(memberView))
    }

    /// Removes another member: the owner removes anyone, admins remove users.
    func removeMember(_ groupID: UUID, member memberID: UUID, userID: UUID, on connection: PostgresConnection) async throws {
        let membership = try await membership(groupID, userID: userID, lock: true, on: connection)
        guard memberID != userID else { throw ChatErrors.useLeave }
        guard let target = try await store.member(groupID, userID: memberID, on: connection) else { throw ChatErrors.memberNotFound }
        try GroupPolicy.require(membership.member.role, .removeMember(targetRole: target.role))
        try await removeMembership(groupID, userID: memberID, reason: .removed, actor: userID, on: connection)
    }

    /// Promotes a user to admin or demotes an admin to user (owner only).
    func setRole(_ groupID: UUID, member memberID: UUID, role: GroupRole, userID: UUID, on connection: PostgresConnection) async throws -> Schemas.Member {
        let membership = try await membership(groupID, userID: userID, lock: true, on: connection)
        try GroupPolicy.require(membership.member.role, .changeRoles)
        guard role != .owner else { throw ChatErrors.cannotChangeOwnerRole }
        guard let target = try await store.member(groupID, userID: memberID, on: connection) else { throw ChatErrors.memberNotFound }
        guard target.role != .owner else { throw ChatErrors.cannotChangeOwnerRole }
        if target.role != role, let changed = try await store.setRole(groupID, userID: memberID, role: role, on: connection) {
            try await publish(GroupRoleChanged(member: changed, previousRole: target.role), group: groupID, actor: userID, on: connection)
        }
        guard let profile = try await store.members(groupID, on: connection).first(where: { $0.member.userId == memberID }) else { throw ChatErrors.memberNotFound }
        return memberView(profile)
    }

    /// Hands the group to another member (owner only); the old owner stays as an admin.
    func transferOwnership(_ groupID: UUID, to newOwner: UUID, userID: UUID, on connection: PostgresConnection) async throws -> Schemas.Group {
        let membership = try await membership(groupID, userID: userID, lock: true, on: connection)
        try GroupPolicy.require(membership.member.role, .transferOwnership)
        guard newOwner != userID, try await store.member(groupID, userID: newOwner, on: connection) != nil else { throw ChatErrors.successorNotMember }
        let group = try await transfer(groupID, from: userID, to: newOwner, on: connection)
        return view(group, member: try await self.membership(groupID, userID: userID, on: connection).member)
    }

    /// Leaves the group. The owner must name a successor, who becomes owner first.
    func leave(_ groupID: UUID, successor: UUID?, userID: UUID, on connection: PostgresConnection) async throws {
        let membership = try await membership(groupID, userID: userID, lock: true, on: connection)
        if membership.member.role == .owner {
            guard let successor else { throw ChatErrors.successorRequired }
            guard successor != userID, try await store.member(groupID, userID: successor, on: connection) != nil else { throw ChatErrors.successorNotMember }
            try await transfer(groupID, from: userID, to: successor, on: connection)
        }
        try await removeMembership(groupID, userID: userID, reason: .left, actor: userID, on: connection)
    }

    /// Deletes the group with its messages and events (owner only); voice files and the picture
    /// are removed after the rows.
    func delete(_ groupID: UUID, userID: UUID, on connection: PostgresConnection) async throws {
        let membership = try await membership(groupID, userID: userID, lock: true, on: connection)
        try GroupPolicy.require(membership.member.role, .deleteGroup)
        try await deleteGroup(groupID, actor: userID, on: connection)
    }

    /// Marks the group read up to now (or `at`), for unread counts.
    func markRead(_ groupID: UUID, at time: Date?, userID: UUID, on connection: PostgresConnection) async throws -> Schemas.Group {
        let membership = try await membership(groupID, userID: userID, on: connection)
        guard let member = try await store.markRead(groupID, userID: userID, at: time, on: connection) else { throw ChatErrors.groupNotFound }
        return view(membership.group, member: member, unreadCount: nil)
    }

    // MARK: shared steps

    @discardableResult
    func transfer(_ groupID: UUID, from oldOwner: UUID, to newOwner: UUID, on connection: PostgresConnection) async throws -> StoredGroup {
        // Demote first: the one-owner index allows a single owner row at any moment.
        guard let before = try await store.find(groupID, on: connection),
              let demoted = try await store.setRole(groupID, userID: oldOwner, role: .admin, on: connection),
              let previous = try await store.member(groupID, userID: newOwner, on: connection),
              let promoted = try await store.setRole(groupID, userID: newOwner, role: .owner, on: connection),
              let group = try await store.update(groupID, ownerID: newOwner, on: connection) else { throw ChatErrors.memberNotFound }
        try await publish(GroupRoleChanged(member: demoted, previousRole: .owner), group: groupID, actor: oldOwner, on: connection)
        try await publish(GroupRoleChanged(member: promoted, previousRole: previous.role), group: groupID, actor: oldOwner, on: connection)
        try await publish(GroupUpdated(group: row(group), previous: row(before)), group: groupID, actor: oldOwner, on: connection)
        return group
    }

    func removeMembership(_ groupID: UUID, userID: UUID, reason: GroupLeaveReason, actor: UUID, on connection: PostgresConnection) async throws {
        guard let removed = try await store.removeMember(groupID, userID: userID, on: connection) else { throw ChatErrors.memberNotFound }
        try await publish(GroupMemberRemoved(member: removed, reason: reason), group: groupID, actor: actor, on: connection)
    }

    func deleteGroup(_ groupID: UUID, actor: UUID, on connection: PostgresConnection) async throws {
        guard let group = try await store.update(groupID, on: connection) else { throw ChatErrors.groupNotFound }
        let members = try await store.members(groupID, on: connection).map(\.member)
        let memberIDs = try await store.memberIDs(groupID, on: connection)
        let events = CalendarEvents(outbox: outbox, logger: logger)
        for event in try await events.store.list(userID: actor, groupID: groupID, from: .distantPast, to: .distantFuture, limit: 100_000, on: connection) {
            try await events.publishDeleted(event, actor: actor, on: connection)
        }
        let voicePaths = try await store.delete(groupID, on: connection)
        try await publish(GroupDeleted(group: row(group), memberIds: memberIDs, members: members), group: groupID, actor: actor, on: connection)
        for path in voicePaths { try await media.storage.remove(media.voiceMessages, key: path) }
        try await media.storage.removePicture(media.groupPictures, owner: groupID, version: group.pictureVersion)
    }

    /// 403 `blocked` when any of `userIDs` has blocked `adder`: a block refuses being added to a group.
    func refuseBlockers(adding userIDs: [UUID], by adder: UUID, on connection: PostgresConnection) async throws {
        guard try await BlockList(logger: logger).blockers(of: adder, among: userIDs, on: connection).isEmpty else { throw BlockList.refused }
    }

    /// User ids for these emails; any unknown address fails the whole request.
    func resolve(_ emails: [String], on connection: PostgresConnection) async throws -> [UUID] {
        guard !emails.isEmpty else { return [] }
        var found = try await UserStore(logger: logger).byEmail(emails, on: connection)
        let missing = emails.filter { found[$0.lowercased()] == nil }
        if !missing.isEmpty, let directory {
            found.merge(try await directory.accounts(missing, on: connection, logger: logger)) { known, _ in known }
        }
        let unknown = emails.filter { found[$0.lowercased()] == nil }
        guard unknown.isEmpty else { throw ChatErrors.unknownEmails(unknown) }
        return emails.compactMap { found[$0.lowercased()] }
    }

    /// `withheldFrom`: the members who blocked the author of what the event shows (`GroupStore.blockers`).
    func publish<Payload: EventPayload>(_ payload: Payload, group: UUID, actor: UUID?, withheldFrom: [UUID]? = nil, on connection: PostgresConnection) async throws {
        try await outbox.publish(EventEnvelope(app: .unify, aggregateId: group.uuidString.lowercased(), actor: actor, withheldFrom: withheldFrom, payload: payload),
                                 on: connection, logger: logger)
    }
}
