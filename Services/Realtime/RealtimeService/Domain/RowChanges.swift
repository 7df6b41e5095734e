import ColonyModels
import Foundation

/// Turns domain events into the seeds' row changes (membership is `Memberships.changes`): the rules of what
/// each app's clients see, as plain functions of the event.
public enum RowChanges {
    /// The app whose clients see a service's rows.
    public static func app(of service: ColonyService) -> App? {
        switch service {
        case .chat: .unify
        case .circles: .mycirclee
        case .habits: .habithive
        case .nearby: .socialspot
        case .projects: .ibelieveinyou
        default: nil
        }
    }

    /// The row changes an event presents to subscribers, with who may see each.
    public static func changes(for event: ReceivedEvent) throws -> [RowChange] {
        guard let app = event.header.app ?? app(of: event.header.source) else { return [] }
        let at = event.header.occurredAt
        func change(_ table: String, _ operation: RowOperation, _ new: some Encodable, old: (any Encodable)? = nil, _ audience: Audience) throws -> RowChange {
            let record = try row(new)
            let oldRecord = try old.map { try row($0) } ?? (operation == .insert ? [:] : record)
            return RowChange(app: app, table: table, operation: operation, record: operation == .delete ? [:] : record,
                             oldRecord: operation == .delete ? record : oldRecord, commitTimestamp: at, audience: audience)
        }
        switch event.type {
        // Unify (chat)
        case .messageSent:
            let message = try event.decode(MessageSent.self).payload.message
            return [try change("message", .insert, message, .members(.group, message.groupId))]
        case .messageEdited:
            let message = try event.decode(MessageEdited.self).payload.message
            return [try change("message", .update, message, .members(.group, message.groupId))]
        case .messageDeleted:
            let message = try event.decode(MessageDeleted.self).payload.message
            return [try change("message", .delete, message, .members(.group, message.groupId))]
        case .groupCreated:
            let payload = try event.decode(GroupCreated.self).payload
            return [try change("group", .insert, payload.group, .members(.group, payload.group.id))]
                + (try payload.members.map { try change("group_members", .insert, $0, .members(.group, payload.group.id)) })
        case .groupUpdated:
            let group = try event.decode(GroupUpdated.self).payload.group
            return [try change("group", .update, group, .members(.group, group.id))]
        case .groupDeleted:
            let payload = try event.decode(GroupDeleted.self).payload
            return [try change("group", .delete, payload.group, .only(payload.memberIds))]
        case .groupMemberAdded:
            let member = try event.decode(GroupMemberAdded.self).payload.member
            return [try change("group_members", .insert, member, .members(.group, member.groupId, plus: [member.userId]))]
        case .groupMemberRemoved:
            let member = try event.decode(GroupMemberRemoved.self).payload.member
            return [try change("group_members", .delete, member, .members(.group, member.groupId, plus: [member.userId]))]
        case .groupRoleChanged:
            let member = try event.decode(GroupRoleChanged.self).payload.member
            return [try change("group_members", .update, member, .members(.group, member.groupId))]
        case .calendarEventCreated, .calendarEventUpdated, .calendarEventDeleted:
            let (row, operation): (CalendarEventRow, RowOperation) = switch event.type {
            case .calendarEventCreated: (try event.decode(CalendarEventCreated.self).payload.event, .insert)
            case .calendarEventUpdated: (try event.decode(CalendarEventUpdated.self).payload.event, .update)
            default: (try event.decode(CalendarEventDeleted.self).payload.event, .delete)
            }
            let audience: Audience = row.groupId.map { .members(.group, $0) } ?? .only([row.createdBy])
            return [try change("event", operation, row, audience)]
        // MyCirclee (circles)
        case .postCreated:
            let post = try event.decode(PostCreated.self).payload.post
            return [try change("posts", .insert, post, .members(.circle, post.circleId))]
        case .postUpdated:
            let post = try event.decode(PostUpdated.self).payload.post
            return [try change("posts", .update, post, .members(.circle, post.circleId))]
        case .postDeleted:
            let post = try event.decode(PostDeleted.self).payload.post
            return [try change("posts", .delete, post, .members(.circle, post.circleId))]
        case .postExpired:
            let post = try event.decode(PostExpired.self).payload.post
            return [try change("posts", .delete, post, .members(.circle, post.circleId))]
        case .postReacted:
            let payload = try event.decode(PostReacted.self).payload
            let row: [String: JSONValue] = ["post_id": uuid(payload.postId), "user_id": uuid(payload.userId), "emoji": .string(payload.emoji)]
            return [try change("post_reactions", payload.operation, row, .members(.circle, payload.circleId))]
        case .pollVoted:
            let payload = try event.decode(PollVoted.self).payload
            let row: [String: JSONValue] = ["post_id": uuid(payload.postId), "user_id": uuid(payload.userId), "option_id": payload.optionId.map(uuid) ?? .null]
            return [try change("poll_votes", payload.optionId == nil ? .delete : .update, row, .members(.circle, payload.circleId))]
        case .eventRsvped:
            let payload = try event.decode(EventRsvped.self).payload
            var row: [String: JSONValue] = ["post_id": uuid(payload.postId), "user_id": uuid(payload.userId)]
            row["status"] = payload.status.map { .string($0.rawValue) } ?? .null
            return [try change("event_rsvps", payload.status == nil ? .delete : .update, row, .members(.circle, payload.circleId))]
        case .dmSent:
            let payload = try event.decode(DMSent.self).payload
            return [try change("dm_messages", .insert, payload.message, .only(payload.participantIds))]
        case .dmRead:
            let payload = try event.decode(DMRead.self).payload
            return try payload.messageIds.map { id in
                let row: [String: JSONValue] = ["id": uuid(id), "thread_id": uuid(payload.threadId), "read_at": .string(ISO8601.format(payload.readAt))]
                return try change("dm_messages", .update, row, .only(payload.participantIds))
            }
        case .presenceChanged:
            let presence = try event.decode(PresenceChanged.self).payload.presence
            return [try change("presence_states", .update, presence, .members(.circle, presence.circleId))]
        case .circleCreated:
            let payload = try event.decode(CircleCreated.self).payload
            return [try change("circles", .insert, payload.circle, .members(.circle, payload.circle.id)),
                    try change("circle_members", .insert, payload.owner, .members(.circle, payload.circle.id))]
        case .circleMemberJoined:
            let member = try event.decode(CircleMemberJoined.self).payload.member
            return [try change("circle_members", .insert, member, .members(.circle, member.circleId, plus: [member.userId]))]
        case .circleMemberLeft:
            let member = try event.decode(CircleMemberLeft.self).payload.member
            return [try change("circle_members", .delete, member, .members(.circle, member.circleId, plus: [member.userId]))]
        case .circleDeleted:
            let payload = try event.decode(CircleDeleted.self).payload
            return [try change("circles", .delete, payload.circle, .only(payload.memberIds))]
        // HabitHive (habits)
        case .habitLogged:
            let payload = try event.decode(HabitLogged.self).payload
            return [try change("habit_logs", payload.operation, payload.log, .only([payload.log.userId]))]
        case .hiveCreated:
            let payload = try event.decode(HiveCreated.self).payload
            return [try change("hives", .insert, payload.hive, .members(.hive, payload.owner.hiveId)),
                    try change("hive_members", .insert, payload.owner, .members(.hive, payload.owner.hiveId))]
        case .hiveJoined:
            let payload = try event.decode(HiveJoined.self).payload
            let audience = Audience.members(.hive, payload.member.hiveId, plus: [payload.member.userId])
            return [try change("hive_members", .insert, payload.member, audience), try activity(payload.activity, audience)]
        case .hiveLeft:
            let payload = try event.decode(HiveLeft.self).payload
            return [try change("hive_members", .delete, payload.member, .members(.hive, payload.member.hiveId, plus: [payload.member.userId]))]
        case .hiveDeleted:
            let payload = try event.decode(HiveDeleted.self).payload
            return [try change("hives", .delete, payload.hive, .only(payload.memberIds))]
        case .hiveDayLogged:
            let payload = try event.decode(HiveDayLogged.self).payload
            let audience = Audience.members(.hive, payload.day.hiveId)
            return [try change("hive_member_days", payload.operation, payload.day, audience)] + (try payload.activity.map { [try activity($0, audience)] } ?? [])
        case .hiveAdvanced:
            let payload = try event.decode(HiveAdvanced.self).payload
            let audience = Audience.members(.hive, payload.day.hiveId)
            return [try change("hive_days", .update, payload.day, audience), try change("hives", .update, payload.hive, audience), try activity(payload.activity, audience)]
        case .hiveBroken:
            let payload = try event.decode(HiveBroken.self).payload
            let audience = Audience.members(.hive, payload.day.hiveId)
            return [try change("hive_days", .update, payload.day, audience), try change("hives", .update, payload.hive, audience), try activity(payload.activity, audience)]
        case .streakMilestone:
            let payload = try event.decode(StreakMilestone.self).payload
            return [try activity(payload.activity, .members(.hive, payload.hiveId))]
        // SocialSpot (nearby): rounded positions and public cards only, to those in range.
        case .locationUpdated:
            // Who sees the row change as a move (UPDATE), as someone appearing (INSERT) or going
            // out of range (DELETE); and the user's own map gains and loses the others it changed.
            let payload = try event.decode(LocationUpdated.self).payload
            let row = try self.row(LocationRow(userId: payload.userId, latitude: payload.position.latitude, longitude: payload.position.longitude,
                                               updatedAt: payload.updatedAt))
            let newcomers = Set(payload.newlyVisibleTo ?? [])
            var changes = [try change("locations", .update, row, .only(payload.visibleTo.filter { !newcomers.contains($0) } + [payload.userId]))]
            if !newcomers.isEmpty { changes.append(try change("locations", .insert, row, .only(Array(newcomers)))) }
            if let hidden = payload.hiddenFrom, !hidden.isEmpty { changes.append(try change("locations", .delete, row, .only(hidden))) }
            for other in payload.appeared ?? [] { changes.append(try change("locations", .insert, other, .only([payload.userId]))) }
            for other in payload.disappeared ?? [] {
                changes.append(try change("locations", .delete, ["user_id": uuid(other)] as [String: JSONValue], .only([payload.userId])))
            }
            return changes
        case .locationRemoved:
            let payload = try event.decode(LocationRemoved.self).payload
            return [try change("locations", .delete, ["user_id": uuid(payload.userId)] as [String: JSONValue], .only(payload.visibleTo + [payload.userId]))]
        case .profileUpdated:
            let payload = try event.decode(ProfileUpdated.self).payload
            return [try change("profiles", .update, payload.profile, .only(payload.visibleTo + [payload.profile.userId]))]
        default:
            return []
        }

        func activity(_ row: ActivityEventRow, _ audience: Audience) throws -> RowChange {
            try change("activity_events", .insert, row, audience)
        }
    }

    static func uuid(_ id: UUID) -> JSONValue { .string(id.uuidString.lowercased()) }

    /// A row as JSON in the seed's shape (snake_case, ISO 8601 times, lower-case UUIDs).
    public static func row(_ value: any Encodable) throws -> [String: JSONValue] {
        if let row = value as? [String: JSONValue] { return row }
        let data = try ColonyJSON.encoder().encode(value)
        guard case .object(let object) = try JSONDecoder().decode(JSONValue.self, from: data) else { return [:] }
        return object.mapValues(lowercasedUUIDs)
    }

    static func lowercasedUUIDs(_ value: JSONValue) -> JSONValue {
        switch value {
        case .string(let text) where text.count == 36 && UUID(uuidString: text) != nil: .string(text.lowercased())
        case .array(let items): .array(items.map(lowercasedUUIDs))
        case .object(let object): .object(object.mapValues(lowercasedUUIDs))
        default: value
        }
    }
}
