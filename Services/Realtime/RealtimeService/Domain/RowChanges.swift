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

    /// The row changes an event presents to subscribers, with who may see each. INSERT carries
    /// the new row; UPDATE the new row and, as `old_record`, the previous one where the event
    /// carries it (else its primary key, as under Postgres's default replica identity); DELETE
    /// the removed row whole (Supabase trims it to the key on row-secured tables because it
    /// cannot tell who may see a deleted row; Colony's audience is decided before delivery).
    public static func changes(for event: ReceivedEvent) throws -> [RowChange] {
        // Those who blocked the author see none of the author's rows (`EventEnvelope.withheldFrom`).
        let withheld = Set(event.header.withheldFrom ?? [])
        guard !withheld.isEmpty else { return try presented(event) }
        let authorsOwn = authorsOwnTables[event.type]
        return try presented(event).map { change in
            guard authorsOwn?.contains(change.table) ?? true else { return change }
            var change = change
            change.audience.withheldFrom.formUnion(withheld)
            return change
        }
    }

    /// Events whose rows are partly the hive's shared state, which a block leaves in view (who is
    /// done today, who is a member), and partly the author's own: only these tables are withheld.
    /// Every other event withheld is withheld whole.
    static let authorsOwnTables: [EventType: Set<String>] = [
        .hiveDayLogged: ["activity_events"],
        .hiveJoined: ["activity_events"],
    ]

    static func presented(_ event: ReceivedEvent) throws -> [RowChange] {
        guard let app = event.header.app ?? app(of: event.header.source) else { return [] }
        let at = event.header.occurredAt
        func change(_ table: String, _ operation: RowOperation, _ row: some Encodable, previous: (any Encodable)? = nil, _ audience: Audience) throws -> RowChange {
            let shape = SeedTables.table(table, of: app)
            func shaped(_ value: any Encodable) throws -> [String: JSONValue] {
                let raw = try Self.row(value)
                return shape?.complete(raw) ?? raw
            }
            let current = try shaped(row)
            let record: [String: JSONValue]
            let oldRecord: [String: JSONValue]
            switch operation {
            case .insert: (record, oldRecord) = (current, [:])
            case .update: (record, oldRecord) = (current, try previous.map(shaped) ?? shape?.key(of: current) ?? current)
            case .delete: (record, oldRecord) = ([:], current)
            }
            return RowChange(app: app, table: table, operation: operation, record: record, oldRecord: oldRecord, commitTimestamp: at, audience: audience,
                             columns: shape?.columnsJSON)
        }
        /// A row that went, with the audience that saw it.
        func removed(_ table: String, _ rows: [some Encodable], _ audience: Audience) throws -> [RowChange] {
            try rows.map { try change(table, .delete, $0, audience) }
        }
        /// INSERT (no previous), UPDATE (both) or DELETE (no current) of a row the event carries
        /// before and after.
        func transition<Row: Encodable>(_ table: String, _ current: Row?, _ previous: Row?, _ audience: Audience) throws -> [RowChange] {
            switch (current, previous) {
            case (let current?, nil): [try change(table, .insert, current, audience)]
            case (let current?, let previous?): [try change(table, .update, current, previous: previous, audience)]
            case (nil, let previous?): [try change(table, .delete, previous, audience)]
            case (nil, nil): []
            }
        }
        switch event.type {
        // Unify (chat)
        case .messageSent:
            let message = try event.decode(MessageSent.self).payload.message
            return [try change("message", .insert, message, .members(.group, message.groupId))]
        case .messageEdited:
            let payload = try event.decode(MessageEdited.self).payload
            return [try change("message", .update, payload.message, previous: payload.previous, .members(.group, payload.message.groupId))]
        case .messageDeleted:
            let message = try event.decode(MessageDeleted.self).payload.message
            return [try change("message", .delete, message, .members(.group, message.groupId))]
        case .groupCreated:
            let payload = try event.decode(GroupCreated.self).payload
            return [try change("group", .insert, payload.group, .members(.group, payload.group.id))]
                + (try payload.members.map { try change("group_members", .insert, $0, .members(.group, payload.group.id)) })
        case .groupUpdated:
            let payload = try event.decode(GroupUpdated.self).payload
            return [try change("group", .update, payload.group, previous: payload.previous, .members(.group, payload.group.id))]
        case .groupDeleted:
            // Its members' rows go one by one (a group has few); its messages and events, history
            // of any length, go with the group's own DELETE.
            let payload = try event.decode(GroupDeleted.self).payload
            let audience = Audience.only(payload.memberIds)
            return try removed("group_members", payload.members ?? [], audience) + [try change("group", .delete, payload.group, audience)]
        case .groupMemberAdded:
            let member = try event.decode(GroupMemberAdded.self).payload.member
            return [try change("group_members", .insert, member, .members(.group, member.groupId, plus: [member.userId]))]
        case .groupMemberRemoved:
            let member = try event.decode(GroupMemberRemoved.self).payload.member
            return [try change("group_members", .delete, member, .members(.group, member.groupId, plus: [member.userId]))]
        case .groupRoleChanged:
            let payload = try event.decode(GroupRoleChanged.self).payload
            var previous = payload.member
            previous.role = payload.previousRole
            return [try change("group_members", .update, payload.member, previous: previous, .members(.group, payload.member.groupId))]
        case .calendarEventCreated, .calendarEventUpdated, .calendarEventDeleted:
            var previous: CalendarEventRow?
            let (row, operation): (CalendarEventRow, RowOperation)
            switch event.type {
            case .calendarEventCreated: (row, operation) = (try event.decode(CalendarEventCreated.self).payload.event, .insert)
            case .calendarEventUpdated:
                let payload = try event.decode(CalendarEventUpdated.self).payload
                (row, operation, previous) = (payload.event, .update, payload.previous)
            default: (row, operation) = (try event.decode(CalendarEventDeleted.self).payload.event, .delete)
            }
            let audience: Audience = row.groupId.map { .members(.group, $0) } ?? .only([row.createdBy])
            return [try change("event", operation, row, previous: previous, audience)]
        case .userErased:
            // One event for an erased account: its messages (history of any length) went with it.
            let payload = try event.decode(UserErased.self).payload
            let row: [String: JSONValue] = ["id": uuid(payload.userId), "display_name": .string(payload.displayName)]
            return [try change("user", .delete, row, .only(payload.sharedWith))]
        // MyCirclee (circles)
        case .postCreated:
            let post = try event.decode(PostCreated.self).payload.post
            return [try change("posts", .insert, post, .members(.circle, post.circleId))]
        case .postUpdated:
            let payload = try event.decode(PostUpdated.self).payload
            return [try change("posts", .update, payload.post, previous: payload.previous, .members(.circle, payload.post.circleId))]
        case .postDeleted:
            let post = try event.decode(PostDeleted.self).payload.post
            return [try change("posts", .delete, post, .members(.circle, post.circleId))]
        case .postExpired:
            let post = try event.decode(PostExpired.self).payload.post
            return [try change("posts", .delete, post, .members(.circle, post.circleId))]
        case .postReacted:
            let payload = try event.decode(PostReacted.self).payload
            var row: [String: JSONValue] = ["post_id": uuid(payload.postId), "user_id": uuid(payload.userId), "emoji": .string(payload.emoji)]
            row["created_at"] = payload.createdAt.map { .string(ISO8601.format($0)) } ?? .null
            return [try change("post_reactions", payload.operation, row, .members(.circle, payload.circleId))]
        case .pollVoted:
            let payload = try event.decode(PollVoted.self).payload
            let audience = Audience.members(.circle, payload.circleId)
            if payload.vote != nil || payload.previous != nil { return try transition("poll_votes", payload.vote, payload.previous, audience) }
            let row: [String: JSONValue] = ["post_id": uuid(payload.postId), "user_id": uuid(payload.userId), "option_id": payload.optionId.map(uuid) ?? .null]
            return [try change("poll_votes", payload.optionId == nil ? .delete : .update, row, audience)]
        case .eventRsvped:
            let payload = try event.decode(EventRsvped.self).payload
            let audience = Audience.members(.circle, payload.circleId)
            if payload.rsvp != nil || payload.previous != nil { return try transition("event_rsvps", payload.rsvp, payload.previous, audience) }
            var row: [String: JSONValue] = ["post_id": uuid(payload.postId), "user_id": uuid(payload.userId)]
            row["status"] = payload.status.map { .string($0.rawValue) } ?? .null
            return [try change("event_rsvps", payload.status == nil ? .delete : .update, row, audience)]
        case .dmSent:
            let payload = try event.decode(DMSent.self).payload
            return [try change("dm_messages", .insert, payload.message, .only(payload.participantIds))]
        case .dmRead:
            let payload = try event.decode(DMRead.self).payload
            if let messages = payload.messages {
                // They were unread: the previous rows are the same with no `read_at`.
                return try messages.map { message in
                    var previous = message
                    previous.readAt = nil
                    return try change("dm_messages", .update, message, previous: previous, .only(payload.participantIds))
                }
            }
            return try payload.messageIds.map { id in
                let row: [String: JSONValue] = ["id": uuid(id), "thread_id": uuid(payload.threadId), "read_at": .string(ISO8601.format(payload.readAt))]
                return try change("dm_messages", .update, row, .only(payload.participantIds))
            }
        case .dmDeleted:
            let payload = try event.decode(DMDeleted.self).payload
            return [try change("dm_messages", .delete, payload.message, .only(payload.participantIds))]
        case .dmReacted:
            let payload = try event.decode(DMReacted.self).payload
            return [try change("dm_reactions", payload.operation, payload.reaction, .only(payload.participantIds))]
        case .presenceChanged:
            let payload = try event.decode(PresenceChanged.self).payload
            return [try change("presence_states", payload.operation ?? .update, payload.presence, previous: payload.previous, .members(.circle, payload.presence.circleId))]
        case .circleCreated:
            let payload = try event.decode(CircleCreated.self).payload
            return [try change("circles", .insert, payload.circle, .members(.circle, payload.circle.id)),
                    try change("circle_members", .insert, payload.owner, .members(.circle, payload.circle.id))]
        case .circleUpdated:
            let payload = try event.decode(CircleUpdated.self).payload
            return [try change("circles", .update, payload.circle, previous: payload.previous, .members(.circle, payload.circle.id))]
        case .circleMemberJoined:
            let member = try event.decode(CircleMemberJoined.self).payload.member
            return [try change("circle_members", .insert, member, .members(.circle, member.circleId, plus: [member.userId]))]
        case .circleMemberUpdated:
            let payload = try event.decode(CircleMemberUpdated.self).payload
            return [try change("circle_members", .update, payload.member, previous: payload.previous, .members(.circle, payload.member.circleId))]
        case .circleMemberLeft:
            let payload = try event.decode(CircleMemberLeft.self).payload
            let audience = Audience.members(.circle, payload.member.circleId, plus: [payload.member.userId])
            return try circleRemovals(payload.removed, audience: audience)
                + [try change("circle_members", .delete, payload.member, audience)]
        case .circleDeleted:
            let payload = try event.decode(CircleDeleted.self).payload
            let audience = Audience.only(payload.memberIds)
            return try circleRemovals(payload.removed, audience: audience)
                + (try removed("circle_members", payload.removed?.members ?? [], audience))
                + [try change("circles", .delete, payload.circle, audience)]
        // HabitHive (habits)
        case .habitLogged:
            let payload = try event.decode(HabitLogged.self).payload
            return [try change("habit_logs", payload.operation, payload.log, .only([payload.log.userId]))]
        case .habitStreakMilestone:
            let payload = try event.decode(HabitStreakMilestone.self).payload
            return [try activity(payload.activity, .only([payload.userId]))]
        case .hiveCreated:
            let payload = try event.decode(HiveCreated.self).payload
            return [try change("hives", .insert, payload.hive, .members(.hive, payload.owner.hiveId)),
                    try change("hive_members", .insert, payload.owner, .members(.hive, payload.owner.hiveId))]
        case .hiveUpdated:
            let payload = try event.decode(HiveUpdated.self).payload
            return [try change("hives", .update, payload.hive, previous: payload.previous, .members(.hive, payload.hive.id))]
        case .hiveJoined:
            let payload = try event.decode(HiveJoined.self).payload
            let audience = Audience.members(.hive, payload.member.hiveId, plus: [payload.member.userId])
            return [try change("hive_members", .insert, payload.member, audience), try activity(payload.activity, audience)]
        case .hiveLeft:
            let payload = try event.decode(HiveLeft.self).payload
            return [try change("hive_members", .delete, payload.member, .members(.hive, payload.member.hiveId, plus: [payload.member.userId]))]
        case .hiveDeleted:
            // Members one by one (at most ten); days and the feed go with the hive's DELETE.
            let payload = try event.decode(HiveDeleted.self).payload
            let audience = Audience.only(payload.memberIds)
            return try removed("hive_members", payload.members ?? [], audience) + [try change("hives", .delete, payload.hive, audience)]
        case .hiveInvited:
            let invitation = try event.decode(HiveInvited.self).payload.invitation
            return [try change("hive_invitations", .insert, invitation, .only([invitation.userId, invitation.invitedBy]))]
        case .hiveInvitationAnswered:
            let payload = try event.decode(HiveInvitationAnswered.self).payload
            return [try change("hive_invitations", .update, payload.invitation, previous: payload.previous, .only([payload.invitation.userId, payload.invitation.invitedBy]))]
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

        /// The bounded rows that left a circle (with a member or with the circle): each one's
        /// DELETE. A DM thread's only for its two parties; its messages go with it.
        func circleRemovals(_ rows: CircleRemovedRows?, audience: Audience) throws -> [RowChange] {
            guard let rows else { return [] }
            return try removed("posts", rows.posts, audience) + removed("post_reactions", rows.reactions, audience)
                + removed("poll_votes", rows.votes, audience) + removed("event_rsvps", rows.rsvps, audience)
                + removed("presence_states", rows.presence, audience)
                + rows.threads.map { try change("dm_threads", .delete, $0, .only([$0.userA, $0.userB])) }
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
