import Foundation

/// The kinds of membership the domain events describe: Unify's groups, MyCirclee's circles and
/// HabitHive's hives. Services that fan out to members (realtime, notifications) keep their own
/// projection of them.
public enum MembershipScope: String, Sendable, Hashable, Codable, CaseIterable {
    case group, circle, hive
}

/// A change to a membership projection that an event implies.
public enum MembershipChange: Sendable, Equatable {
    case add(MembershipScope, UUID, [UUID])
    case remove(MembershipScope, UUID, UUID)
    case removeAll(MembershipScope, UUID)
}

/// What each domain event does to group, circle and hive membership: the one reading of the
/// membership events every projection applies.
public enum Memberships {
    public static func changes(for event: ReceivedEvent) throws -> [MembershipChange] {
        switch event.type {
        case .groupCreated:
            let payload = try event.decode(GroupCreated.self).payload
            return [.add(.group, payload.group.id, payload.members.map(\.userId))]
        case .groupMemberAdded:
            let member = try event.decode(GroupMemberAdded.self).payload.member
            return [.add(.group, member.groupId, [member.userId])]
        case .groupMemberRemoved:
            let member = try event.decode(GroupMemberRemoved.self).payload.member
            return [.remove(.group, member.groupId, member.userId)]
        case .groupDeleted:
            return [.removeAll(.group, try event.decode(GroupDeleted.self).payload.group.id)]
        case .circleCreated:
            let payload = try event.decode(CircleCreated.self).payload
            return [.add(.circle, payload.circle.id, [payload.owner.userId])]
        case .circleMemberJoined:
            let member = try event.decode(CircleMemberJoined.self).payload.member
            return [.add(.circle, member.circleId, [member.userId])]
        case .circleMemberLeft:
            let member = try event.decode(CircleMemberLeft.self).payload.member
            return [.remove(.circle, member.circleId, member.userId)]
        case .circleDeleted:
            return [.removeAll(.circle, try event.decode(CircleDeleted.self).payload.circle.id)]
        case .hiveCreated:
            let payload = try event.decode(HiveCreated.self).payload
            return [.add(.hive, payload.owner.hiveId, [payload.owner.userId])]
        case .hiveJoined:
            let payload = try event.decode(HiveJoined.self).payload
            // The event names every member: it also heals a projection that missed an event.
            return [.add(.hive, payload.member.hiveId, Array(Set(payload.memberIds + [payload.member.userId])))]
        case .hiveLeft:
            let member = try event.decode(HiveLeft.self).payload.member
            return [.remove(.hive, member.hiveId, member.userId)]
        case .hiveDeleted:
            return [.removeAll(.hive, try event.decode(HiveDeleted.self).payload.hive.id)]
        case .groupMemberImported:
            let member = try event.decode(GroupMemberImported.self).payload.member
            return [.add(.group, member.groupId, [member.userId])]
        case .circleMemberImported:
            let member = try event.decode(CircleMemberImported.self).payload.member
            return [.add(.circle, member.circleId, [member.userId])]
        case .hiveMemberImported:
            let member = try event.decode(HiveMemberImported.self).payload.member
            return [.add(.hive, member.hiveId, [member.userId])]
        default:
            return []
        }
    }
}
