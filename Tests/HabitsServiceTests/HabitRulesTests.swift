import ColonyModels
import Foundation
@testable import HabitsService
import Testing

/// The rules without HTTP or a database: user-local days, streaks, the shared streak, at-risk.
@Suite("Habits rules")
struct HabitRulesTests {
    func instant(_ text: String) -> Date { ISO8601.parse(text)! }
    func day(_ text: String) -> LocalDate { LocalDate(text)! }
    func clock(_ zone: String, _ hour: Int) -> UserClock { UserClock(timeZoneIdentifier: zone, dayStartHour: hour)! }

    @Test("dates count, order and know their weekday")
    func localDates() {
        #expect(day("2026-11-22").weekdayIndex == 6)  // Sunday
        #expect(day("2026-11-23").weekdayIndex == 0)  // Monday
        #expect(day("2024-02-28").adding(days: 1) == day("2024-02-29"))
        #expect(day("2026-12-31").adding(days: 1) == day("2027-01-01"))
        #expect(LocalDate(dayNumber: day("1999-12-31").dayNumber) == day("1999-12-31"))
        #expect(LocalDate("2026-02-30") == nil)
        #expect(LocalDate("2026-1-01") == nil)
    }

    @Test("the user-local day turns at day_start_hour, not at midnight")
    func dayBoundaries() {
        let berlin4 = clock("Europe/Berlin", 4)
        // 03:59 and 04:00 CET on 22 November.
        #expect(berlin4.localDay(at: instant("2026-11-22T02:59:00Z")) == day("2026-11-21"))
        #expect(berlin4.localDay(at: instant("2026-11-22T03:00:00Z")) == day("2026-11-22"))
        let kolkata = clock("Asia/Kolkata", 4)  // +05:30
        #expect(kolkata.localDay(at: instant("2026-11-21T22:29:00Z")) == day("2026-11-21"))
        #expect(kolkata.localDay(at: instant("2026-11-21T22:30:00Z")) == day("2026-11-22"))
        let auckland = clock("Pacific/Auckland", 0)  // +13:00 in November
        #expect(auckland.localDay(at: instant("2026-11-21T10:59:00Z")) == day("2026-11-21"))
        #expect(auckland.localDay(at: instant("2026-11-21T11:00:00Z")) == day("2026-11-22"))
        let utc = clock("UTC", 0)
        #expect(utc.localDay(at: instant("2026-11-22T00:00:00Z")) == day("2026-11-22"))
        #expect(utc.localDay(at: instant("2026-11-21T23:59:59Z")) == day("2026-11-21"))
    }

    @Test("DST changes move the boundary with the wall clock")
    func daylightSaving() {
        let newYork = clock("America/New_York", 4)
        // 8 March 2026: 02:00 EST jumps to 03:00 EDT. 03:30 EDT is still the 7th; 04:00 EDT the 8th.
        #expect(newYork.localDay(at: instant("2026-03-08T07:30:00Z")) == day("2026-03-07"))
        #expect(newYork.localDay(at: instant("2026-03-08T07:59:00Z")) == day("2026-03-07"))
        #expect(newYork.localDay(at: instant("2026-03-08T08:00:00Z")) == day("2026-03-08"))
        // The day before, 04:00 was still EST (09:00 UTC).
        #expect(newYork.localDay(at: instant("2026-03-07T08:59:00Z")) == day("2026-03-06"))
        #expect(newYork.localDay(at: instant("2026-03-07T09:00:00Z")) == day("2026-03-07"))
        let berlin = clock("Europe/Berlin", 0)
        // 25 October 2026: 03:00 CEST falls back to 02:00 CET; midnight was still CEST (22:00 UTC).
        #expect(berlin.localDay(at: instant("2026-10-24T21:59:00Z")) == day("2026-10-24"))
        #expect(berlin.localDay(at: instant("2026-10-24T22:00:00Z")) == day("2026-10-25"))
        #expect(berlin.localDay(at: instant("2026-10-25T22:59:00Z")) == day("2026-10-25"))
        #expect(berlin.localDay(at: instant("2026-10-25T23:00:00Z")) == day("2026-10-26"))
        // The 25th has 25 hours; minutes into the day follow the wall clock.
        #expect(berlin.minutesIntoDay(at: instant("2026-10-25T19:00:00Z")) == 20 * 60)
    }

    @Test("only known IANA zones and hours 0–23 make a clock")
    func clockValidation() {
        #expect(UserClock(timeZoneIdentifier: "Mars/Olympus", dayStartHour: 4) == nil)
        #expect(UserClock(timeZoneIdentifier: "Europe/Berlin", dayStartHour: 24) == nil)
        #expect(UserClock(timeZoneIdentifier: "UTC", dayStartHour: 0) != nil)
    }

    @Test("habit drafts are validated as a whole")
    func habitValidation() throws {
        #expect(throws: Never.self) { try HabitDraft(name: " Read ", colorHex: "#34c8ed").validated() }
        #expect(try HabitDraft(name: " Read ").validated().name == "Read")
        #expect(throws: (any Error).self) { try HabitDraft(name: "x", colorHex: "34C8ED").validated() }
        #expect(throws: (any Error).self) { try HabitDraft(name: "x", type: .checkbox, targetPerDay: 3).validated() }
        #expect(throws: (any Error).self) { try HabitDraft(name: "x", type: .counter, targetPerDay: 0).validated() }
        #expect(throws: (any Error).self) { try HabitDraft(name: "x", scheduleWeekmask: 0).validated() }
        #expect(throws: (any Error).self) { try HabitDraft(name: "x", reminderTimes: ["25:00"]).validated() }
        #expect(throws: (any Error).self) { try HabitDraft(name: "").validated() }
        #expect(HabitRules.cappedValue(10, target: 3) == 3)
        #expect(HabitRules.cappedValue(0, target: 3) == 1)
    }

    @Test("streaks count scheduled days only; today open does not break; partial counters do not count")
    func streaks() {
        let today = day("2026-11-22")  // Sunday
        // Mon/Wed/Fri: bits 0, 2, 4.
        let mwf = Schedule(daily: false, weekmask: 0b10101)
        var values: [LocalDate: Int] = [:]
        for text in ["2026-11-09", "2026-11-11", "2026-11-13", "2026-11-16", "2026-11-18", "2026-11-20"] { values[day(text)] = 1 }
        let history = HabitHistory(values: values, target: 1, schedule: mwf, createdOn: day("2026-11-09"))
        #expect(history.currentStreak(today: today) == 6)
        #expect(history.longestStreak(today: today) == 6)
        #expect(history.tally(lastDays: 7, today: today) == (3, 3))

        let daily = HabitHistory(values: [day("2026-11-20"): 2, day("2026-11-21"): 3, day("2026-11-19"): 3, day("2026-11-17"): 3], target: 3, schedule: .everyDay, createdOn: day("2026-11-15"))
        // Today (22nd) not done yet: the streak stands at the 21st; the 20th was partial.
        #expect(daily.currentStreak(today: today) == 1)
        #expect(daily.longestStreak(today: today) == 1)
        let tally = daily.tally(lastDays: 7, today: today)
        #expect(tally.done == 3 && tally.scheduled == 6)  // 16th–21st; today counts once done
        #expect(Completion(done: 1, scheduled: 3).percent == 33.3)
        #expect(daily.heatmap(year: 2026).count == 365)
        #expect(daily.heatmap(year: 2026).first { $0.date == day("2026-11-20") }?.done == false)
    }

    @Test("the shared streak advances once per day and resets when a scheduled day closes short")
    func sharedStreak() {
        var streak = SharedStreak(currentLength: 6, lastAdvancedOn: day("2026-11-20"))
        let first = streak.advance(on: day("2026-11-21"))
        #expect(first.grew && first.milestone == 7)
        #expect(streak.advance(on: day("2026-11-21")).grew == false)
        #expect(streak.currentLength == 7)
        #expect(streak.close(day: day("2026-11-21"), everyoneDone: true, scheduled: true) == .advanced(grew: false, milestone: nil))
        #expect(streak.close(day: day("2026-11-22"), everyoneDone: false, scheduled: false) == .nothing)
        #expect(streak.close(day: day("2026-11-23"), everyoneDone: false, scheduled: true) == .broken(previousLength: 7))
        #expect(streak.currentLength == 0)
        #expect(streak.close(day: day("2026-11-24"), everyoneDone: false, scheduled: true) == .nothing)

        // Days close once they ended for every member: the earliest member's today bounds them.
        #expect(SharedStreak.closableDays(lastClosedOn: day("2026-11-20"), memberToday: [day("2026-11-23"), day("2026-11-22")]) == [day("2026-11-21")])
        #expect(SharedStreak.closableDays(lastClosedOn: day("2026-11-21"), memberToday: [day("2026-11-22")]).isEmpty)
    }

    @Test("at risk: past 20:00 local, not done, while another member is done")
    func atRisk() {
        let done = UUID(), missing = UUID(), elsewhere = UUID()
        let members = [
            HiveRisk.Member(userId: done, clock: clock("UTC", 0)),
            HiveRisk.Member(userId: missing, clock: clock("UTC", 4)),
            HiveRisk.Member(userId: elsewhere, clock: clock("America/Los_Angeles", 4)),
        ]
        let today = day("2026-11-22")
        let doneOn: (UUID, LocalDate) -> Bool = { user, date in user == done && date == today }
        // 20:30 UTC: `missing` is in the window; Los Angeles is at 12:30.
        let evening = HiveRisk.missing(members: members, now: instant("2026-11-22T20:30:00Z"), doneOn: doneOn)
        #expect(evening.map(\.userId) == [missing])
        #expect(HiveRisk.missing(members: members, now: instant("2026-11-22T19:30:00Z"), doneOn: doneOn).isEmpty)
        #expect(HiveRisk.missing(members: members, now: instant("2026-11-22T20:30:00Z")) { _, _ in false }.isEmpty)
        #expect(HiveRisk.riskStartMinute(dayStartHour: 4) == 16 * 60)
        #expect(HiveRisk.riskStartMinute(dayStartHour: 0) == 20 * 60)
        // Only on the hive's days: 2026-11-22 is a Sunday (bit 6).
        let weekdays = Schedule(daily: false, weekmask: 0b0011111)
        #expect(HiveRisk.missing(members: members, now: instant("2026-11-22T20:30:00Z"), schedule: weekdays, doneOn: doneOn).isEmpty)
        #expect(HiveRisk.missing(members: members, now: instant("2026-11-22T20:30:00Z"), schedule: Schedule(daily: false, weekmask: 1 << 6), doneOn: doneOn).map(\.userId) == [missing])
    }

    @Test("joins are refused in the seed's order: expired, exhausted, member, full")
    func joinChecks() {
        let now = Date()
        #expect(HiveRules.checkJoin(expiresAt: now.addingTimeInterval(-1), useCount: 20, maxUses: 20, isMember: true, memberCount: 10, now: now) == .expired)
        #expect(HiveRules.checkJoin(expiresAt: now.addingTimeInterval(60), useCount: 20, maxUses: 20, isMember: true, memberCount: 10, now: now) == .exhausted)
        #expect(HiveRules.checkJoin(expiresAt: now.addingTimeInterval(60), useCount: 1, maxUses: 20, isMember: true, memberCount: 10, now: now) == .alreadyMember)
        #expect(HiveRules.checkJoin(expiresAt: now.addingTimeInterval(60), useCount: 1, maxUses: 20, isMember: false, memberCount: 10, now: now) == .full)
        #expect(HiveRules.checkJoin(expiresAt: now.addingTimeInterval(60), useCount: 1, maxUses: 20, isMember: false, memberCount: 9, now: now) == nil)
        #expect(throws: (any Error).self) { try HiveRules.checkBackfillDays(10) }
        #expect(throws: Never.self) { try HiveRules.checkBackfillDays(90) }
        #expect(HiveRules.newInviteCode().count == 12)
    }

    @Test("a streak read in windows is the whole run up to 365 scheduled days, and more than 365 past them")
    func streakInWindows() async throws {
        let end = day("2026-11-26")
        let daily = Schedule(daily: true, weekmask: 0), mondays = Schedule(daily: false, weekmask: 1)
        #expect(HabitRules.streakWindows(endingOn: end, schedule: daily).map(\.since) == [8, 31, 101, 366].map { end.adding(days: 1 - $0) })
        #expect(HabitRules.streakWindows(endingOn: day("2026-11-23"), schedule: mondays).map(\.since) == [8, 31, 101, 366].map { day("2026-11-23").adding(days: 7 - 7 * $0) })
        #expect(HabitRules.streakWindows(endingOn: end, schedule: Schedule(daily: false, weekmask: 0)).isEmpty)
        for (schedule, last) in [(daily, end), (mondays, day("2026-11-23"))] {
            let step = schedule.daily ? 1 : 7
            for run in [1, 6, 7, 8, 29, 30, 31, 99, 100, 101, 364, 365, 366, 367, 500] {
                // `run` done scheduled days ending on `last`, a miss before them, and older logs before that.
                var all: [LocalDate: Int] = [:]
                for n in 0..<run { all[last.adding(days: -n * step)] = 1 }
                for n in (run + 1)..<(run + 20) { all[last.adding(days: -n * step)] = 1 }
                var reads = 0
                let streak = try await HabitRules.streak(endingOn: last, schedule: schedule, target: 1, createdOn: last.adding(days: -4000)) { since in
                    reads += 1
                    return all.filter { $0.key >= since }
                }
                #expect(run <= 365 ? streak == run : streak == 366, "run \(run): \(streak)")
                #expect(reads == (run < 8 ? 1 : run < 31 ? 2 : run < 101 ? 3 : 4), "run \(run): \(reads) reads")
            }
        }
    }
}
