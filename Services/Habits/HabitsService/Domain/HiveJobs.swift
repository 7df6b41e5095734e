import ColonyModels
import ColonyPlatform
import Foundation
import Logging
import PostgresNIO

/// The hourly work on all hives: close the days that ended for every member, and warn hives at
/// risk. Both start from one scan of members' clocks and write in chunks, each chunk its own
/// transaction, so 10,000 hives take about a hundred statements rather than tens of thousands.
public struct HiveJobs: Sendable {
    let database: Database
    let outbox: Outbox
    let logger: Logger
    let chunkSize: Int

    public init(database: Database, outbox: Outbox, logger: Logger, chunkSize: Int = 1000) {
        self.database = database
        self.outbox = outbox
        self.logger = logger
        self.chunkSize = chunkSize
    }

    var hives: HiveStore { HiveStore(logger: logger) }

    public struct ClosingReport: Sendable, Equatable {
        public var hives = 0
        public var closedDays = 0
        public var advanced = 0
        public var broken = 0
    }

    /// Closes every day that has ended for all members of its hive.
    @discardableResult
    public func closeDueDays(now: Date = Date()) async throws -> ClosingReport {
        let clocks = try await database.withConnection { try await hives.memberClocks(on: $0) }
        var byHive: [UUID: (closed: LocalDate, todays: [LocalDate])] = [:]
        var todayCache: [String: LocalDate] = [:]
        for entry in clocks {
            let key = "\(entry.clock.timeZone.identifier)|\(entry.clock.dayStartHour)"
            let today = todayCache[key] ?? entry.clock.localDay(at: now)
            todayCache[key] = today
            byHive[entry.hiveID, default: (entry.lastClosedOn, [])].todays.append(today)
        }
        let due = byHive.filter { !SharedStreak.closableDays(lastClosedOn: $0.value.closed, memberToday: $0.value.todays).isEmpty }.keys.sorted { $0.uuidString < $1.uuidString }
        var report = ClosingReport()
        let closer = HiveDayCloser(outbox: outbox, logger: logger)
        for start in stride(from: 0, to: due.count, by: chunkSize) {
            let chunk = Array(due[start..<min(start + chunkSize, due.count)])
            let outcome = try await database.transaction { connection in
                try await closer.settle(try await closer.lockCandidates(chunk, on: connection), now: now, on: connection)
            }
            report.hives += outcome.hives.count
            report.closedDays += outcome.closedDays
            report.advanced += outcome.advanced
            report.broken += outcome.broken
        }
        if report.hives > 0 {
            logger.info("hive days closed", metadata: ["hives": "\(report.hives)", "days": "\(report.closedDays)", "advanced": "\(report.advanced)", "broken": "\(report.broken)"])
        }
        return report
    }

    /// Emits `hive_at_risk` for members past 20:00 on their day who are not done while another
    /// member is; once per hive, member and day.
    @discardableResult
    public func alertHivesAtRisk(now: Date = Date()) async throws -> Int {
        let clocks = try await database.withConnection { try await hives.memberClocks(on: $0) }
        var members: [UUID: [HiveRisk.Member]] = [:]
        var schedules: [UUID: Schedule] = [:]
        var inWindow = Set<UUID>()
        for entry in clocks {
            members[entry.hiveID, default: []].append(HiveRisk.Member(userId: entry.userID, clock: entry.clock))
            schedules[entry.hiveID] = entry.schedule
            if entry.clock.minutesIntoDay(at: now) >= HiveRisk.riskStartMinute(dayStartHour: entry.clock.dayStartHour) {
                inWindow.insert(entry.hiveID)
            }
        }
        let candidates = inWindow.sorted { $0.uuidString < $1.uuidString }
        var sent = 0
        for start in stride(from: 0, to: candidates.count, by: chunkSize) {
            let chunk = Array(candidates[start..<min(start + chunkSize, candidates.count)])
            sent += try await database.transaction { connection in
                var pairs = Set<HiveDayKey>()
                for hive in chunk {
                    for member in members[hive] ?? [] { pairs.insert(HiveDayKey(hive: hive, day: member.clock.localDay(at: now))) }
                }
                let done = try await hives.doneMembers(pairs.map { ($0.hive, $0.day) }, on: connection)
                var alerts: [HiveMemberDayKey] = []
                for hive in chunk {
                    let missing = HiveRisk.missing(members: members[hive] ?? [], now: now, schedule: schedules[hive] ?? .everyDay) { user, day in
                        done.contains(HiveMemberDayKey(hive: hive, user: user, day: day))
                    }
                    alerts += missing.map { HiveMemberDayKey(hive: hive, user: $0.userId, day: $0.day) }
                }
                let fresh = try await hives.recordRiskAlerts(alerts, on: connection)
                guard !fresh.isEmpty else { return 0 }
                let names = try await hiveNames(Array(Set(fresh.map(\.hive))), on: connection)
                var messages: [OutboxMessage] = []
                for (key, group) in Dictionary(grouping: fresh, by: { HiveDayKey(hive: $0.hive, day: $0.day) }) {
                    let doneIDs = (members[key.hive] ?? []).map(\.userId).filter { done.contains(HiveMemberDayKey(hive: key.hive, user: $0, day: key.day)) }
                    let payload = HiveAtRisk(hiveId: key.hive, hiveName: names[key.hive] ?? "", dayDate: key.day, missingUserIds: group.map(\.user).sorted { $0.uuidString < $1.uuidString }, doneUserIds: doneIDs)
                    messages.append(try OutboxMessage(EventEnvelope(app: .habithive, aggregateId: key.hive.lowercased, payload: payload)))
                }
                try await outbox.publish(messages, on: connection, logger: logger)
                return messages.count
            }
        }
        return sent
    }

    private func hiveNames(_ ids: [UUID], on connection: PostgresConnection) async throws -> [UUID: String] {
        var names: [UUID: String] = [:]
        for try await row in try await connection.query("SELECT id, name FROM hives WHERE id = ANY(\(ids))", logger: logger) {
            let (id, name) = try row.read { c in (try c.next(UUID.self), try c.next(String.self)) }
            names[id] = name
        }
        return names
    }
}
