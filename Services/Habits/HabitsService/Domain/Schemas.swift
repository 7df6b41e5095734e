import ColonyModels
import Foundation
import OpenAPIRuntime

// What the service answers with: the document's own types (Generated/). The domain builds its
// composite answers (a hive's detail, insights, a log's result) as these directly; the rows it
// reads and writes (its own and ColonyModels' shared ones, which events carry too) become them
// here: ids lower case, local dates as YYYY-MM-DD, times as `Date`.

extension Components.Schemas.Profile {
    init(_ row: ProfileRow) {
        // The table's CHECK allows only the document's themes.
        self.init(id: row.id.lowercased, displayName: row.displayName, avatarUrl: row.avatarUrl, timezone: row.timezone, dayStartHour: row.dayStartHour,
                  theme: ThemePayload(rawValue: row.theme) ?? .honey, createdAt: row.createdAt, updatedAt: row.updatedAt)
    }
}

extension Components.Schemas.HabitType {
    init(_ type: HabitType) {
        switch type {
        case .checkbox: self = .checkbox
        case .counter: self = .counter
        }
    }
}

extension HabitType {
    init(_ type: Components.Schemas.HabitType) {
        switch type {
        case .checkbox: self = .checkbox
        case .counter: self = .counter
        }
    }
}

extension Components.Schemas.Habit {
    init(_ row: HabitRow) {
        self.init(id: row.id.lowercased, userId: row.userId.lowercased, name: row.name, emoji: row.emoji, colorHex: row.colorHex, _type: .init(row.type),
                  targetPerDay: row.targetPerDay, scheduleDaily: row.scheduleDaily, scheduleWeekmask: row.scheduleWeekmask, reminderTimes: row.reminderTimes,
                  isActive: row.isActive, hiveId: row.hiveId?.lowercased, createdAt: row.createdAt, updatedAt: row.updatedAt)
    }
}

extension Components.Schemas.HabitLog {
    init(_ row: HabitLogRow) {
        // The service writes api, manual or hive; a log imported with another source reads as manual.
        self.init(id: row.id.lowercased, habitId: row.habitId.lowercased, userId: row.userId.lowercased, logDate: row.logDate.description, value: row.value,
                  source: SourcePayload(rawValue: row.source) ?? .manual, createdAt: row.createdAt)
    }
}

extension Components.Schemas.Completion {
    init(_ completion: Completion) {
        self.init(done: completion.done, scheduled: completion.scheduled, percent: completion.percent)
    }
}

extension Components.Schemas.HeatmapDay {
    init(_ day: HeatmapDay) {
        self.init(date: day.date.description, value: day.value, done: day.done)
    }
}

extension Components.Schemas.Hive {
    init(_ row: HiveRow) {
        self.init(id: row.id.lowercased, name: row.name, ownerId: row.ownerId.lowercased, colorHex: row.colorHex, _type: .init(row.type), targetPerDay: row.targetPerDay,
                  rule: row.rule, threshold: row.threshold, scheduleDaily: row.scheduleDaily, scheduleWeekmask: row.scheduleWeekmask, currentLength: row.currentLength,
                  lastAdvancedOn: row.lastAdvancedOn?.description, sourceHabitId: row.sourceHabitId?.lowercased, createdAt: row.createdAt)
    }
}

extension Components.Schemas.HiveMemberDay {
    init(_ row: HiveMemberDayRow) {
        self.init(hiveId: row.hiveId.lowercased, userId: row.userId.lowercased, dayDate: row.dayDate.description, value: row.value, done: row.done)
    }
}

extension Components.Schemas.HiveDay {
    init(_ row: HiveDayRow) {
        self.init(hiveId: row.hiveId.lowercased, dayDate: row.dayDate.description, completeCount: row.completeCount, requiredCount: row.requiredCount, advanced: row.advanced)
    }
}

extension Components.Schemas.HiveInvite {
    init(_ row: HiveInviteRow) {
        self.init(id: row.id.lowercased, hiveId: row.hiveId.lowercased, code: row.code, createdBy: row.createdBy.lowercased, expiresAt: row.expiresAt,
                  maxUses: row.maxUses, useCount: row.useCount, createdAt: row.createdAt)
    }
}

extension Components.Schemas.HiveInvitation {
    init(_ row: HiveInvitationRow) {
        let status: StatusPayload = switch row.status {
        case .pending: .pending
        case .accepted: .accepted
        case .declined: .declined
        }
        self.init(id: row.id.lowercased, hiveId: row.hiveId.lowercased, userId: row.userId.lowercased, invitedBy: row.invitedBy.lowercased, status: status,
                  createdAt: row.createdAt, decidedAt: row.decidedAt)
    }
}

extension Components.Schemas.PendingInvitation {
    init(_ pending: HiveStore.PendingInvitation) {
        self.init(invitation: .init(pending.invitation), hiveName: pending.hiveName, memberCount: pending.memberCount, invitedByName: pending.invitedByName)
    }
}

extension Components.Schemas.ActivityEvent {
    init(_ row: ActivityEventRow) throws {
        let type: _TypePayload = switch row.type {
        case .habitCompleted: .habitCompleted
        case .streakMilestone: .streakMilestone
        case .hiveJoined: .hiveJoined
        case .hiveLeft: .hiveLeft
        case .hiveAdvanced: .hiveAdvanced
        case .hiveBroken: .hiveBroken
        }
        // The line's data is any JSON object: through its JSON into the document's free-form object.
        let data = try JSONDecoder().decode(OpenAPIObjectContainer.self, from: Data(ColonyJSON.encode(row.data)))
        self.init(id: row.id.lowercased, actorId: row.actorId?.lowercased, hiveId: row.hiveId?.lowercased, habitId: row.habitId?.lowercased, _type: type,
                  data: .init(additionalProperties: data), createdAt: row.createdAt)
    }
}

extension Components.Schemas.ContactMatch {
    init(_ match: ContactStore.Match) {
        self.init(userId: match.userId.lowercased, displayName: match.displayName, avatarUrl: match.avatarUrl, contactHash: match.contactHash,
                  contactName: match.contactName, phone: match.phone)
    }
}
