import ColonyModels
import ColonyPlatform
import Foundation
import Logging
import PostgresNIO

/// Hives: create or convert, membership, invites, logging a day, the shared streak, the feed.
/// Membership gates everything: a non-member gets "hive not found".
struct Hives: Sendable {
    let outbox: Outbox
    let logger: Logger
    var store: HiveStore { HiveStore(logger: logger) }
    var habits: HabitStore { HabitStore(logger: logger) }
    var profiles: ProfileStore { ProfileStore(logger: logger) }
    var activity: ActivityStore { ActivityStore(logger: logger) }
    var closer: HiveDayCloser { HiveDayCloser(outbox: outbox, logger: logger) }

    func memberHive(_ hiveID: UUID, userID: UUID, forUpdate: Bool = false, on connection: PostgresConnection) async throws -> HiveRow {
        guard let hive = try await store.findForMember(hiveID, userID: userID, forUpdate: forUpdate, on: connection) else { throw HabitsErrors.hiveNotFound }
        return hive
    }

    func ownedHive(_ hiveID: UUID, userID: UUID, forUpdate: Bool = false, on connection: PostgresConnection) async throws -> HiveRow {
        let hive = try await memberHive(hiveID, userID: userID, forUpdate: forUpdate, on: connection)
        guard hive.ownerId == userID else { throw HabitsErrors.ownerOnly }
        return hive
    }

    // MARK: create

    func create(name: String, draft: HabitDraft, userID: UUID, now: Date = Date(), on connection: PostgresConnection) async throws -> HiveDetail {
        let draft = try draft.validated()
        let owner = try await profiles.require(userID, on: connection)
        return try await create(.init(name: draft.name, colorHex: draft.colorHex, type: draft.type, targetPerDay: draft.targetPerDay, scheduleDaily: draft.scheduleDaily,
                                      scheduleWeekmask: draft.scheduleWeekmask, sourceHabitID: nil), owner: owner, now: now, on: connection).detail
    }

    /// The seed's `create_hive_from_habit`: the habit's metadata, the owner as first member, and
    /// optionally the habit's last `backfillDays` days copied into the owner's hive days.
    func convert(habitID: UUID, name: String?, backfillDays: Int, userID: UUID, now: Date = Date(), on connection: PostgresConnection) async throws -> HiveDetail {
        try HiveRules.checkBackfillDays(backfillDays)
        guard let (habit, clock) = try await habits.findWithClock(habitID, userID: userID, on: connection) else { throw HabitsErrors.habitNotFound }
        guard habit.hiveId == nil else { throw HabitsErrors.habitHasHive }
        if let name { guard TextRules.fits(name, 1...100) else { throw HabitsErrors.validation("name must be 1–100 characters, not blank") } }
        let name = name.map(TextRules.trimmed) ?? habit.name
        let owner = try await profiles.require(userID, on: connection)
        let (hiveID, detail) = try await create(.init(name: name, colorHex: habit.colorHex, type: habit.type, targetPerDay: habit.targetPerDay, scheduleDaily: habit.scheduleDaily,
                                            scheduleWeekmask: habit.scheduleWeekmask, sourceHabitID: habit.id), owner: owner, now: now, on: connection)
        if backfillDays > 0 {
            try await store.backfill(hiveID: hiveID, userID: userID, habitID: habit.id, since: clock.localDay(at: now).adding(days: -backfillDays), on: connection)
        }
        return detail
    }

    private func create(_ hive: HiveStore.NewHive, owner: ProfileRow, now: Date, on connection: PostgresConnection) async throws -> (id: UUID, detail: HiveDetail) {
        let (row, member) = try await store.create(hive, owner: owner.id, openFrom: owner.clock.localDay(at: now), on: connection)
        if let habitID = hive.sourceHabitID { try await store.linkHabit(habitID, toHive: row.id, on: connection) }
        try await outbox.publish(EventEnvelope(app: .habithive, aggregateId: row.id.lowercased, actor: owner.id, payload: HiveCreated(hive: row, owner: member)), on: connection, logger: logger)
        return (row.id, try await detail(row.id, userID: owner.id, now: now, on: connection))
    }

    // MARK: read

    // The answers are the document's types (Domain/Schemas.swift).
    typealias Today = Components.Schemas.HiveToday
    typealias HiveSummary = Components.Schemas.HiveSummary

    func list(userID: UUID, now: Date = Date(), on connection: PostgresConnection) async throws -> [HiveSummary] {
        let today = try await profiles.require(userID, on: connection).clock.localDay(at: now)
        return try await store.listForMember(userID, today: today, on: connection).map {
            HiveSummary(hive: .init($0.hive), memberCount: $0.memberCount, today: Today(date: today.description, done: $0.doneToday, required: $0.memberCount, doneByMe: $0.doneByMe))
        }
    }

    /// A member with their own current day and whether they are done on it.
    typealias MemberStatus = Components.Schemas.HiveMemberStatus
    typealias HiveDetail = Components.Schemas.HiveDetail

    func detail(_ hiveID: UUID, userID: UUID, now: Date = Date(), on connection: PostgresConnection) async throws -> HiveDetail {
        let hive = try await memberHive(hiveID, userID: userID, on: connection)
        let members = try await store.members(of: hiveID, on: connection)
        let pairs = Set(members.map { HiveDayKey(hive: hiveID, day: $0.clock.localDay(at: now)) })
        let done = try await store.doneMembers(pairs.map { ($0.hive, $0.day) }, on: connection)
        let statuses = members.map { view in
            let today = view.clock.localDay(at: now)
            // The table's roles are the document's: owner or member.
            return MemberStatus(userId: view.member.userId.lowercased, displayName: view.displayName, avatarUrl: view.avatarUrl,
                                role: MemberStatus.RolePayload(rawValue: view.member.role) ?? .member, joinedAt: view.member.joinedAt, today: today.description, doneToday: done.contains(HiveMemberDayKey(hive: hiveID, user: view.member.userId, day: today)))
        }
        let myToday = members.first { $0.member.userId == userID }?.clock.localDay(at: now) ?? UserClock.utc.localDay(at: now)
        let doneOnMyDay = members.filter { done.contains(HiveMemberDayKey(hive: hiveID, user: $0.member.userId, day: myToday)) }.count
        return HiveDetail(hive: .init(hive), members: statuses, today: Today(date: myToday.description, done: doneOnMyDay, required: members.count,
                                                                        doneByMe: done.contains(HiveMemberDayKey(hive: hiveID, user: userID, day: myToday))))
    }

    typealias Days = Components.Schemas.HiveDays

    func days(_ hiveID: UUID, userID: UUID, from: LocalDate, to: LocalDate, on connection: PostgresConnection) async throws -> Days {
        guard from <= to, to.days(since: from) <= 366 else { throw HabitsErrors.validation("from must not be after to, and the range at most 366 days") }
        _ = try await memberHive(hiveID, userID: userID, on: connection)
        return Days(hiveDays: try await store.hiveDays(hiveID: hiveID, from: from, to: to, on: connection).map(Components.Schemas.HiveDay.init),
                    memberDays: try await store.memberDays(hiveID: hiveID, from: from, to: to, on: connection).map(Components.Schemas.HiveMemberDay.init))
    }

    /// A page of the feed; `next_cursor` is passed as `before` for the next (older) page, nil at the end.
    typealias FeedPage = Components.Schemas.ActivityPage

    func feed(_ hiveID: UUID, userID: UUID, before cursor: String?, limit: Int, on connection: PostgresConnection) async throws -> FeedPage {
        _ = try await memberHive(hiveID, userID: userID, on: connection)
        var before: KeysetCursor?
        if let cursor {
            guard let decoded = KeysetCursor(cursor) else { throw HabitsErrors.validation("before is not a cursor this service gave out") }
            before = decoded
        }
        let rows = try await activity.feed(hiveID: hiveID, viewer: userID, before: before, limit: limit, on: connection)
        let next = rows.count == limit ? rows.last.map { KeysetCursor(micros: KeysetCursor.micros(of: $0.createdAt), id: $0.id).text } : nil
        return FeedPage(events: try rows.map(Components.Schemas.ActivityEvent.init), nextCursor: next)
    }

    // MARK: log and advance

    typealias LogResult = Components.Schemas.HiveLogResult

    /// The seed's `log_hive_today`, then the advancement check for that day: when the last
    /// member logs, the hive advances in the same transaction. A hive converted from its owner's
    /// habit counts the owner's log for the habit too.
    func logToday(_ hiveID: UUID, userID: UUID, value: Int, at: Date?, now: Date = Date(), on connection: PostgresConnection) async throws -> LogResult {
        guard value >= 1 else { throw HabitsErrors.validation("value must be at least 1") }
        if let at, at > now.addingTimeInterval(300) { throw HabitsErrors.validation("at cannot be in the future") }
        // Locks the hive and loads its members' clocks; only a member finds their own clock there.
        guard let candidate = try await closer.lockCandidates([hiveID], on: connection).first, let clock = candidate.members[userID] else { throw HabitsErrors.hiveNotFound }
        let day = clock.localDay(at: at ?? now)
        guard day > candidate.lastClosedOn else {
            throw APIError.conflict("the hive's day \(day) is already closed", code: "day_closed")
        }
        let result = try await record(candidate, userID: userID, day: day, value: value, now: now, on: connection)
        // The hive is locked first, then the habit's log: the order logging the habit takes too.
        if let habitID = candidate.hive.sourceHabitId, candidate.hive.ownerId == userID, let habit = try await habits.find(habitID, userID: userID, on: connection) {
            _ = try await Habits(outbox: outbox, logger: logger).write(habit, userID: userID, day: day, value: value, source: "hive", clock: clock, now: now, on: connection)
        }
        return result
    }

    /// Writes a member's value for a day of a locked hive (capped at its target) with its feed
    /// line and event, then settles the day: the member's log that completes it advances it.
    func record(_ candidate: HiveDayCloser.Candidate, userID: UUID, day: LocalDate, value: Int, now: Date, on connection: PostgresConnection) async throws -> LogResult {
        let hive = candidate.hive
        let hiveID = hive.id
        let capped = HabitRules.cappedValue(value, target: hive.targetPerDay)
        var stored: HiveMemberDayRow
        if let (row, operation) = try await store.writeMemberDay(hiveID: hiveID, userID: userID, day: day, value: capped, on: connection) {
            stored = row
            let entry = ActivityStore.Entry(actor: userID, hive: hiveID, type: .habitCompleted, data: ["day": .string(day.description)], dedupeKey: "hive_completed:\(hiveID):\(userID):\(day)", at: now)
            let written = try await activity.record([entry], on: connection).first
            let withheld = try await HabitsBlocks.blockers(of: userID, inHive: hiveID, on: connection, logger: logger)
            try await outbox.publish(EventEnvelope(app: .habithive, aggregateId: hiveID.lowercased, actor: userID, withheldFrom: withheld,
                                                   payload: HiveDayLogged(operation: operation, day: row, activity: written)),
                                     on: connection, logger: logger)
        } else {
            stored = try await store.memberDay(hiveID: hiveID, userID: userID, day: day, on: connection) ?? HiveMemberDayRow(hiveId: hiveID, userId: userID, dayDate: day, value: capped)
        }
        let outcome = try await closer.settle([candidate], openDays: [hiveID: day], completedBy: userID, now: now, on: connection)
        return LogResult(day: .init(stored), hive: .init(outcome.hives[hiveID] ?? hive), hiveDay: outcome.openDays[hiveID].map(Components.Schemas.HiveDay.init))
    }

    typealias AdvanceResult = Components.Schemas.AdvanceResult

    /// The owner's "advance now": closes what can be closed and re-checks `day` (default: the
    /// owner's today), as the seed's `advance_hive_day` answers.
    func advanceNow(_ hiveID: UUID, userID: UUID, day: LocalDate?, now: Date = Date(), on connection: PostgresConnection) async throws -> AdvanceResult {
        guard let candidate = try await closer.lockCandidates([hiveID], on: connection).first, candidate.members[userID] != nil else { throw HabitsErrors.hiveNotFound }
        guard candidate.hive.ownerId == userID else { throw HabitsErrors.ownerOnly }
        let day = day ?? (candidate.members[userID] ?? .utc).localDay(at: now)
        let outcome = try await closer.settle([candidate], openDays: [hiveID: day], now: now, on: connection)
        let hive = outcome.hives[hiveID] ?? candidate.hive
        if let tally = outcome.openDays[hiveID] {
            return AdvanceResult(advanced: tally.advanced, completeCount: tally.completeCount, requiredCount: tally.requiredCount, hive: .init(hive))
        }
        // An already closed day: answer with what was recorded for it.
        let recorded = try await store.hiveDays(hiveID: hiveID, from: day, to: day, on: connection).first
        return AdvanceResult(advanced: recorded?.advanced ?? false, completeCount: recorded?.completeCount ?? 0, requiredCount: recorded?.requiredCount ?? candidate.members.count, hive: .init(hive))
    }

    // MARK: editing

    struct Patch: Sendable {
        var name: String?
        var colorHex: String?
        var targetPerDay: Int?
        var scheduleDaily: Bool?
        var scheduleWeekmask: Int?
    }

    /// The owner edits name, colour, schedule or target (the type stays: a checkbox hive keeps
    /// target 1). Only a real change is published (`hive_updated`).
    func update(_ hiveID: UUID, _ patch: Patch, userID: UUID, now: Date = Date(), on connection: PostgresConnection) async throws -> HiveDetail {
        let hive = try await ownedHive(hiveID, userID: userID, forUpdate: true, on: connection)
        // A well-formed target the stored type cannot take conflicts with the hive (not 422).
        if hive.type == .checkbox, let target = patch.targetPerDay, target != 1, (1...1000).contains(target) { throw HabitsErrors.checkboxHiveTarget }
        let draft = try HabitDraft(name: patch.name ?? hive.name, colorHex: patch.colorHex ?? hive.colorHex, type: hive.type, targetPerDay: patch.targetPerDay ?? hive.targetPerDay,
                                   scheduleDaily: patch.scheduleDaily ?? hive.scheduleDaily, scheduleWeekmask: patch.scheduleWeekmask ?? hive.scheduleWeekmask).validated()
        let edit = HiveStore.Edit(name: draft.name, colorHex: draft.colorHex, targetPerDay: draft.targetPerDay, scheduleDaily: draft.scheduleDaily, scheduleWeekmask: draft.scheduleWeekmask)
        let current = HiveStore.Edit(name: hive.name, colorHex: hive.colorHex, targetPerDay: hive.targetPerDay, scheduleDaily: hive.scheduleDaily, scheduleWeekmask: hive.scheduleWeekmask)
        if edit != current, let updated = try await store.update(hiveID, edit, on: connection) {
            try await outbox.publish(EventEnvelope(app: .habithive, aggregateId: hiveID.lowercased, actor: userID,
                                                   payload: HiveUpdated(hive: updated, previous: hive, memberIds: try await store.memberIDs(hiveID, on: connection))),
                                     on: connection, logger: logger)
        }
        return try await detail(hiveID, userID: userID, now: now, on: connection)
    }

    // MARK: membership

    func createInvite(_ hiveID: UUID, userID: UUID, ttlMinutes: Int?, maxUses: Int?, now: Date = Date(), on connection: PostgresConnection) async throws -> HiveInviteRow {
        let ttl = ttlMinutes ?? HiveRules.defaultInviteTTLMinutes
        let uses = maxUses ?? HiveRules.defaultInviteMaxUses
        var errors = ValidationErrors()
        errors.check(HiveRules.inviteTTLMinutes.contains(ttl), "ttl_minutes must be between 1 and 43200")
        errors.check(HiveRules.inviteMaxUses.contains(uses), "max_uses must be between 1 and 100")
        try errors.throwIfAny()
        _ = try await ownedHive(hiveID, userID: userID, on: connection)
        return try await store.createInvite(hiveID: hiveID, createdBy: userID, code: HiveRules.newInviteCode(), expiresAt: now.addingTimeInterval(Double(ttl) * 60), maxUses: uses, on: connection)
    }

    func invites(_ hiveID: UUID, userID: UUID, on connection: PostgresConnection) async throws -> [HiveInviteRow] {
        _ = try await memberHive(hiveID, userID: userID, on: connection)
        return try await store.invites(hiveID: hiveID, on: connection)
    }

    /// The seed's `join_hive_with_code`, made safe under concurrency: the hive row and then the
    /// invite row are locked, so member count and use count are checked and bumped atomically.
    func join(code: String, userID: UUID, now: Date = Date(), on connection: PostgresConnection) async throws -> HiveDetail {
        let code = code.trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
        guard !code.isEmpty, code.count <= 64, let found = try await store.invite(code: code, forUpdate: false, on: connection) else { throw HabitsErrors.inviteInvalid }
        _ = try await profiles.require(userID, on: connection)
        guard let hive = try await store.lock(found.hiveId, on: connection),
              let invite = try await store.invite(code: code, forUpdate: true, on: connection) else { throw HabitsErrors.inviteInvalid }
        let memberIDs = try await store.memberIDs(hive.id, on: connection)
        let refusal = HiveRules.checkJoin(expiresAt: invite.expiresAt, useCount: invite.useCount, maxUses: invite.maxUses, isMember: memberIDs.contains(userID), memberCount: memberIDs.count, now: now)
        switch refusal {
        case .expired: throw HabitsErrors.inviteExpired
        case .exhausted: throw HabitsErrors.inviteExhausted
        case .alreadyMember: throw HabitsErrors.alreadyMember
        case .full: throw HabitsErrors.hiveFull
        case nil: break
        }
        try await store.countInviteUse(invite.id, on: connection)
        try await addJoined(hive, userID: userID, memberIDs: memberIDs, now: now, on: connection)
        return try await detail(hive.id, userID: userID, now: now, on: connection)
    }

    /// A new member (by code or accepted invitation), with the feed line and `hive_joined`.
    func addJoined(_ hive: HiveRow, userID: UUID, memberIDs: [UUID], now: Date, on connection: PostgresConnection) async throws {
        let member = try await store.addMember(hiveID: hive.id, userID: userID, role: "member", on: connection)
        let entry = ActivityStore.Entry(actor: userID, hive: hive.id, type: .hiveJoined, at: now)
        let written = try await activity.record([entry], on: connection)
        let withheld = try await HabitsBlocks.blockers(of: userID, inHive: hive.id, on: connection, logger: logger)
        try await outbox.publish(EventEnvelope(app: .habithive, aggregateId: hive.id.lowercased, actor: userID, withheldFrom: withheld,
                                               payload: HiveJoined(member: member, hiveName: hive.name, memberIds: memberIDs + [userID], activity: written.first ?? entry.row)),
                                 on: connection, logger: logger)
    }

    func leave(_ hiveID: UUID, userID: UUID, now: Date = Date(), on connection: PostgresConnection) async throws {
        let hive = try await memberHive(hiveID, userID: userID, forUpdate: true, on: connection)
        guard hive.ownerId != userID else { throw HabitsErrors.ownerCannotLeave }
        try await removeMember(hive, userID: userID, reason: .left, now: now, on: connection)
    }

    func remove(_ hiveID: UUID, member: UUID, userID: UUID, now: Date = Date(), on connection: PostgresConnection) async throws {
        let hive = try await ownedHive(hiveID, userID: userID, forUpdate: true, on: connection)
        guard member != hive.ownerId else { throw HabitsErrors.cannotRemoveOwner }
        try await removeMember(hive, userID: member, reason: .removed, now: now, on: connection)
    }

    func removeMember(_ hive: HiveRow, userID: UUID, reason: HiveLeaveReason, now: Date, on connection: PostgresConnection) async throws {
        guard let member = try await store.removeMember(hiveID: hive.id, userID: userID, on: connection) else { throw HabitsErrors.memberNotFound }
        if reason != .accountDeleted {
            try await activity.record([.init(actor: userID, hive: hive.id, type: .hiveLeft, data: ["reason": .string(reason.rawValue)], at: now)], on: connection)
        }
        let remaining = try await store.memberIDs(hive.id, on: connection)
        try await outbox.publish(EventEnvelope(app: .habithive, aggregateId: hive.id.lowercased, actor: userID, payload: HiveLeft(member: member, reason: reason, hiveName: hive.name, memberIds: remaining)),
                                 on: connection, logger: logger)
    }

    func delete(_ hiveID: UUID, userID: UUID, on connection: PostgresConnection) async throws {
        let hive = try await ownedHive(hiveID, userID: userID, forUpdate: true, on: connection)
        try await delete(hive, reason: .removed, on: connection)
    }

    func delete(_ hive: HiveRow, reason: HiveLeaveReason, on connection: PostgresConnection) async throws {
        let members = try await store.members(of: hive.id, on: connection).map(\.member)
        try await store.delete(hive.id, on: connection)
        try await outbox.publish(EventEnvelope(app: .habithive, aggregateId: hive.id.lowercased, actor: hive.ownerId,
                                               payload: HiveDeleted(hive: hive, memberIds: members.map(\.userId), reason: reason, members: members)),
                                 on: connection, logger: logger)
    }
}
