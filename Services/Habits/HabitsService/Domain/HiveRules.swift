import ColonyModels
import Foundation

/// The hive rules that need no database: sizes, invite limits, the shared streak, at-risk.
public enum HiveRules {
    public static let maxMembers = 10
    public static let milestones: Set<Int> = [7, 30, 100, 365]

    public static let defaultInviteTTLMinutes = 10080  // 7 days, as the seed
    public static let inviteTTLMinutes = 1...43200     // up to 30 days
    public static let defaultInviteMaxUses = 20
    public static let inviteMaxUses = 1...100

    /// Converting a habit may copy its last 30–90 days of logs; 0 copies nothing.
    public static func checkBackfillDays(_ days: Int) throws {
        guard days == 0 || (30...90).contains(days) else {
            throw HabitsErrors.validation("backfill_days must be 0 or between 30 and 90")
        }
    }

    /// Why a join by code fails, checked in this order (the seed's, plus "already a member").
    public enum JoinRefusal: Error, Equatable {
        case expired, exhausted, alreadyMember, full
    }

    public static func checkJoin(expiresAt: Date, useCount: Int, maxUses: Int, isMember: Bool, memberCount: Int, now: Date) -> JoinRefusal? {
        if expiresAt <= now { return .expired }
        if useCount >= maxUses { return .exhausted }
        if isMember { return .alreadyMember }
        if memberCount >= maxMembers { return .full }
        return nil
    }

    /// Invite codes: 12 lowercase hex characters (the seed's `encode(gen_random_bytes(6),'hex')`).
    public static func newInviteCode() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<6).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
    }
}

/// A hive's shared streak and the day-by-day rules that move it (`advance_hive_day`, plus the
/// close-out the seed leaves to a worker): a day advances the streak once, when every member
/// is done; a scheduled day that closes without advancing resets it.
public struct SharedStreak: Sendable, Equatable {
    public var currentLength: Int
    public var lastAdvancedOn: LocalDate?

    public init(currentLength: Int, lastAdvancedOn: LocalDate?) {
        self.currentLength = currentLength
        self.lastAdvancedOn = lastAdvancedOn
    }

    /// Every member is done on `day`: the streak grows unless `day` already advanced it.
    /// Returns whether it grew, and the milestone reached, if any.
    public mutating func advance(on day: LocalDate) -> (grew: Bool, milestone: Int?) {
        if let last = lastAdvancedOn, last >= day { return (false, nil) }
        currentLength += 1
        lastAdvancedOn = day
        return (true, HiveRules.milestones.contains(currentLength) ? currentLength : nil)
    }

    public enum Closing: Equatable {
        /// The day advanced (now or earlier).
        case advanced(grew: Bool, milestone: Int?)
        /// A scheduled day closed short: the streak of `previousLength` was reset.
        case broken(previousLength: Int)
        /// Closed short with no streak to lose, or not a scheduled day.
        case nothing
    }

    /// Closes `day`: advances when everyone was done, resets a running streak otherwise.
    public mutating func close(day: LocalDate, everyoneDone: Bool, scheduled: Bool) -> Closing {
        if everyoneDone {
            let (grew, milestone) = advance(on: day)
            return .advanced(grew: grew, milestone: milestone)
        }
        guard scheduled, currentLength > 0 else { return .nothing }
        let previous = currentLength
        currentLength = 0
        return .broken(previousLength: previous)
    }

    /// The days a hive can close now: after its last closed day, up to the last day that has
    /// ended for every member (the day before the earliest member's today).
    public static func closableDays(lastClosedOn: LocalDate, memberToday: [LocalDate]) -> [LocalDate] {
        guard let earliest = memberToday.min() else { return [] }
        let through = earliest.adding(days: -1)
        guard through > lastClosedOn else { return [] }
        return (lastClosedOn.dayNumber + 1...through.dayNumber).map(LocalDate.init(dayNumber:))
    }
}

/// "Hive at risk": from 20:00 on a member's wall clock until their day ends, a member who is
/// not done while another member is done on that day is missing; only on the hive's scheduled
/// days (on its days off nothing is at risk).
public enum HiveRisk {
    /// Minutes into the user's day at which 20:00 falls. For days starting late in the
    /// afternoon or evening (unusual), 20 hours into the day stands in for 20:00.
    public static func riskStartMinute(dayStartHour: Int) -> Int {
        let minutes = ((20 - dayStartHour + 24) % 24) * 60
        return minutes < 12 * 60 ? 20 * 60 : minutes
    }

    public struct Member: Sendable {
        public var userId: UUID
        public var clock: UserClock

        public init(userId: UUID, clock: UserClock) {
            self.userId = userId
            self.clock = clock
        }
    }

    /// The members missing at `now`, each with the day they are missing; `doneOn` tells
    /// whether a member is done on a day.
    public static func missing(members: [Member], now: Date, schedule: Schedule = .everyDay, doneOn: (UUID, LocalDate) -> Bool) -> [(userId: UUID, day: LocalDate)] {
        var result: [(UUID, LocalDate)] = []
        for member in members {
            let day = member.clock.localDay(at: now)
            guard schedule.isScheduled(day) else { continue }
            guard member.clock.minutesIntoDay(at: now) >= riskStartMinute(dayStartHour: member.clock.dayStartHour) else { continue }
            guard !doneOn(member.userId, day) else { continue }
            if members.contains(where: { $0.userId != member.userId && doneOn($0.userId, day) }) {
                result.append((member.userId, day))
            }
        }
        return result
    }
}
