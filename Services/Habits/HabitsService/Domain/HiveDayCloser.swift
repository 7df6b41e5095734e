import ColonyModels
import ColonyPlatform
import Foundation
import Logging
import PostgresNIO

/// Moves shared streaks: closes the days that have ended for every member of a hive (advance
/// or reset) and advances an open day once everyone is done. The hourly job runs it over all
/// hives in chunks; logging and "advance now" run it for one hive. Same rules, same statements.
struct HiveDayCloser: Sendable {
    let outbox: Outbox
    let logger: Logger
    var hives: HiveStore { HiveStore(logger: logger) }
    var activity: ActivityStore { ActivityStore(logger: logger) }

    /// A hive locked for settling, with its members' clocks.
    struct Candidate: Sendable {
        var hive: HiveRow
        var lastClosedOn: LocalDate
        var members: [UUID: UserClock]
    }

    struct Outcome: Sendable {
        var hives: [UUID: HiveRow] = [:]
        /// The tally of each open day checked.
        var openDays: [UUID: HiveDayRow] = [:]
        var closedDays = 0
        var advanced = 0
        var broken = 0
    }

    /// Locks the hives and loads what settling needs, in id order.
    func lockCandidates(_ hiveIDs: [UUID], on connection: PostgresConnection) async throws -> [Candidate] {
        let locked = try await hives.lockForClosing(hiveIDs, on: connection)
        var members: [UUID: [UUID: UserClock]] = [:]
        for clock in try await hives.memberClocks(hiveIDs: hiveIDs, on: connection) {
            members[clock.hiveID, default: [:]][clock.userID] = clock.clock
        }
        return locked.map { Candidate(hive: $0.hive, lastClosedOn: $0.lastClosedOn, members: members[$0.hive.id] ?? [:]) }
    }

    /// `completedBy`: the member whose log is being settled; when an open day advances on it,
    /// the feed line, the event and its actor name them (so they are not told "everyone's done").
    func settle(_ candidates: [Candidate], openDays: [UUID: LocalDate] = [:], completedBy: UUID? = nil, now: Date, on connection: PostgresConnection) async throws -> Outcome {
        // Which days each hive closes now, and which open day it checks.
        var plan: [(candidate: Candidate, closing: [LocalDate], open: LocalDate?)] = []
        var pairs: [(hive: UUID, day: LocalDate)] = []
        for candidate in candidates where !candidate.members.isEmpty {
            let todays = candidate.members.values.map { $0.localDay(at: now) }
            let closing = SharedStreak.closableDays(lastClosedOn: candidate.lastClosedOn, memberToday: todays)
            let open = openDays[candidate.hive.id].flatMap { day in day > (closing.last ?? candidate.lastClosedOn) ? day : nil }
            guard !closing.isEmpty || open != nil else { continue }
            plan.append((candidate, closing, open))
            pairs += closing.map { (candidate.hive.id, $0) }
            if let open { pairs.append((candidate.hive.id, open)) }
        }
        guard !plan.isEmpty else { return Outcome() }
        let done = try await hives.doneCounts(pairs, on: connection)

        var outcome = Outcome()
        var dayRows: [HiveDayRow] = []
        var updates: [HiveStore.StreakUpdate] = []
        var entries: [ActivityStore.Entry] = []
        var events: [(entry: Int, make: (ActivityEventRow) throws -> OutboxMessage)] = []
        for (candidate, closing, open) in plan {
            var hive = candidate.hive
            var streak = hive.streak
            let required = candidate.members.count
            let memberIDs = candidate.members.keys.sorted { $0.uuidString < $1.uuidString }
            func tally(_ day: LocalDate, advanced: Bool) -> HiveDayRow {
                HiveDayRow(hiveId: hive.id, dayDate: day, completeCount: done[HiveDayKey(hive: hive.id, day: day)] ?? 0, requiredCount: required, advanced: advanced)
            }
            func recordAdvance(_ day: HiveDayRow, milestone: Int?, completedBy: UUID? = nil) {
                hive.currentLength = streak.currentLength
                hive.lastAdvancedOn = streak.lastAdvancedOn
                let snapshot = hive
                var data: [String: JSONValue] = ["day": .string(day.dayDate.description), "current_length": .number(Double(streak.currentLength))]
                if let completedBy { data["completed_by"] = .string(completedBy.lowercased) }
                entries.append(.init(actor: completedBy, hive: hive.id, type: .hiveAdvanced, data: data, dedupeKey: "hive_advanced:\(hive.id):\(day.dayDate)", at: now))
                events.append((entries.count - 1, { try OutboxMessage(EventEnvelope(app: .habithive, aggregateId: snapshot.id.lowercased, actor: completedBy,
                                                                                    payload: HiveAdvanced(hive: snapshot, day: day, memberIds: memberIDs, activity: $0, completedBy: completedBy))) }))
                outcome.advanced += 1
                if let milestone {
                    entries.append(.init(actor: nil, hive: hive.id, type: .streakMilestone, data: ["length": .number(Double(milestone)), "day": .string(day.dayDate.description)],
                                         dedupeKey: "streak_milestone:\(hive.id):\(day.dayDate)", at: now))
                    events.append((entries.count - 1, { try OutboxMessage(EventEnvelope(app: .habithive, aggregateId: snapshot.id.lowercased, payload: StreakMilestone(hiveId: snapshot.id, hiveName: snapshot.name, length: milestone, dayDate: day.dayDate, memberIds: memberIDs, activity: $0))) }))
                }
            }
            for day in closing {
                let everyoneDone = (done[HiveDayKey(hive: hive.id, day: day)] ?? 0) >= required
                switch streak.close(day: day, everyoneDone: everyoneDone, scheduled: hive.schedule.isScheduled(day)) {
                case .advanced(let grew, let milestone):
                    let row = tally(day, advanced: true)
                    dayRows.append(row)
                    if grew { recordAdvance(row, milestone: milestone) }
                case .broken(let previous):
                    let row = tally(day, advanced: false)
                    dayRows.append(row)
                    hive.currentLength = 0
                    let snapshot = hive
                    entries.append(.init(actor: nil, hive: hive.id, type: .hiveBroken, data: ["day": .string(day.description), "previous_length": .number(Double(previous))],
                                         dedupeKey: "hive_broken:\(hive.id):\(day)", at: now))
                    events.append((entries.count - 1, { try OutboxMessage(EventEnvelope(app: .habithive, aggregateId: snapshot.id.lowercased, payload: HiveBroken(hive: snapshot, day: row, previousLength: previous, memberIds: memberIDs, activity: $0))) }))
                    outcome.broken += 1
                case .nothing:
                    if hive.schedule.isScheduled(day) { dayRows.append(tally(day, advanced: false)) }
                }
                outcome.closedDays += 1
            }
            if let open {
                let everyoneDone = (done[HiveDayKey(hive: hive.id, day: open)] ?? 0) >= required
                let row = tally(open, advanced: everyoneDone)
                dayRows.append(row)
                outcome.openDays[hive.id] = row
                if everyoneDone {
                    let (grew, milestone) = streak.advance(on: open)
                    if grew { recordAdvance(row, milestone: milestone, completedBy: completedBy.flatMap { candidate.members[$0] != nil ? $0 : nil }) }
                }
            }
            updates.append(.init(hiveID: hive.id, currentLength: streak.currentLength, lastAdvancedOn: streak.lastAdvancedOn, lastClosedOn: closing.last ?? candidate.lastClosedOn))
            outcome.hives[hive.id] = hive
        }
        try await hives.upsertHiveDays(dayRows, on: connection)
        try await hives.updateStreaks(updates, on: connection)
        let written = Set(try await activity.record(entries, on: connection).map(\.id))
        let messages = try events.filter { written.contains(entries[$0.entry].row.id) }.map { try $0.make(entries[$0.entry].row) }
        try await outbox.publish(messages, on: connection, logger: logger)
        return outcome
    }
}

