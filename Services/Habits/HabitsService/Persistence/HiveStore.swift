import ColonyModels
import ColonyPlatform
import Foundation
import Logging
import PostgresNIO

/// `hives`, `hive_members`, `hive_member_days`, `hive_days` and `hive_invites`.
struct HiveStore: Sendable {
    let logger: Logger

    struct NewHive: Sendable {
        var name: String
        var colorHex: String
        var type: HabitType
        var targetPerDay: Int
        var scheduleDaily: Bool
        var scheduleWeekmask: Int
        var sourceHabitID: UUID?
    }

    /// Creates the hive with its owner as first member. Days before `openFrom` count as closed.
    func create(_ hive: NewHive, owner: UUID, openFrom: LocalDate, on connection: PostgresConnection) async throws -> (HiveRow, HiveMemberRow) {
        let row = try await connection.query("""
            INSERT INTO hives (name, owner_id, color_hex, type, target_per_day, rule, schedule_daily, schedule_weekmask, source_habit_id, last_closed_on)
            VALUES (\(hive.name), \(owner), \(hive.colorHex), \(hive.type.rawValue)::habit_type, \(hive.targetPerDay), 'all_must_complete',
                    \(hive.scheduleDaily), \(hive.scheduleWeekmask), \(hive.sourceHabitID), \(openFrom.adding(days: -1)))
            RETURNING \(unescaped: HiveRow.columns)
            """, logger: logger).collect().first.map(HiveRow.init(row:))!
        let member = try await addMember(hiveID: row.id, userID: owner, role: "owner", on: connection)
        return (row, member)
    }

    func addMember(hiveID: UUID, userID: UUID, role: String, on connection: PostgresConnection) async throws -> HiveMemberRow {
        try await connection.query("""
            INSERT INTO hive_members (hive_id, user_id, role) VALUES (\(hiveID), \(userID), \(role))
            RETURNING \(unescaped: HiveMemberRow.columns)
            """, logger: logger).collect().first.map(HiveMemberRow.init(row:))!
    }

    /// The hive if `userID` is a member (the RLS rule "members read hives"); nil otherwise, so a
    /// non-member cannot tell a foreign hive from a missing one.
    func findForMember(_ hiveID: UUID, userID: UUID, forUpdate: Bool = false, on connection: PostgresConnection) async throws -> HiveRow? {
        try await connection.query("""
            SELECT \(unescaped: prefixed(HiveRow.columns, "h")) FROM hives h
            WHERE h.id = \(hiveID) AND EXISTS (SELECT 1 FROM hive_members m WHERE m.hive_id = h.id AND m.user_id = \(userID))
            \(unescaped: forUpdate ? "FOR UPDATE OF h" : "")
            """, logger: logger).collect().first.map(HiveRow.init(row:))
    }

    func lock(_ hiveID: UUID, on connection: PostgresConnection) async throws -> HiveRow? {
        try await connection.query("SELECT \(unescaped: HiveRow.columns) FROM hives WHERE id = \(hiveID) FOR UPDATE", logger: logger)
            .collect().first.map(HiveRow.init(row:))
    }

    /// Hives the user belongs to, with member count and today's tally for the user's day.
    func listForMember(_ userID: UUID, today: LocalDate, on connection: PostgresConnection) async throws -> [(hive: HiveRow, memberCount: Int, doneToday: Int, doneByMe: Bool)] {
        try await connection.query("""
            SELECT \(unescaped: prefixed(HiveRow.columns, "h")),
                (SELECT count(*) FROM hive_members c WHERE c.hive_id = h.id),
                (SELECT count(*) FROM hive_member_days d JOIN hive_members dm ON dm.hive_id = d.hive_id AND dm.user_id = d.user_id
                  WHERE d.hive_id = h.id AND d.day_date = \(today) AND d.done),
                EXISTS (SELECT 1 FROM hive_member_days d WHERE d.hive_id = h.id AND d.user_id = \(userID) AND d.day_date = \(today) AND d.done)
            FROM hives h JOIN hive_members m ON m.hive_id = h.id AND m.user_id = \(userID)
            ORDER BY m.joined_at DESC, h.id
            """, logger: logger).read { c in
            (hive: try HiveRow(cells: &c), memberCount: try c.next(Int.self), doneToday: try c.next(Int.self), doneByMe: try c.next(Bool.self))
        }
    }

    struct MemberView: Sendable {
        var member: HiveMemberRow
        var displayName: String
        var avatarUrl: String?
        var clock: UserClock
    }

    /// Members with their profile and clock, owner first, then by join time.
    func members(of hiveID: UUID, on connection: PostgresConnection) async throws -> [MemberView] {
        try await connection.query("""
            SELECT \(unescaped: prefixed(HiveMemberRow.columns, "m")), p.display_name, p.avatar_url, p.timezone, p.day_start_hour
            FROM hive_members m JOIN profiles p ON p.id = m.user_id
            WHERE m.hive_id = \(hiveID)
            ORDER BY (m.role = 'owner') DESC, m.joined_at, m.user_id
            """, logger: logger).read { c in
            let member = try HiveMemberRow(cells: &c)
            let name: String = try c.next(), avatar: String? = try c.next(), zone: String = try c.next(), hour: Int = try c.next()
            return MemberView(member: member, displayName: name, avatarUrl: avatar, clock: UserClock(timeZoneIdentifier: zone, dayStartHour: hour) ?? .utc)
        }
    }

    func memberCount(_ hiveID: UUID, on connection: PostgresConnection) async throws -> Int {
        try await connection.query("SELECT count(*) FROM hive_members WHERE hive_id = \(hiveID)", logger: logger).firstValue(Int.self)!
    }

    /// Whether two people are in one hive together now: each sees the other's name and avatar
    /// in that hive's member list.
    func shareAHive(_ userID: UUID, _ otherID: UUID, on connection: PostgresConnection) async throws -> Bool {
        try await !connection.query("""
            SELECT 1 FROM hive_members a JOIN hive_members b ON b.hive_id = a.hive_id
            WHERE a.user_id = \(userID) AND b.user_id = \(otherID) LIMIT 1
            """, logger: logger).collect().isEmpty
    }

    func memberIDs(_ hiveID: UUID, on connection: PostgresConnection) async throws -> [UUID] {
        try await connection.query("SELECT user_id FROM hive_members WHERE hive_id = \(hiveID) ORDER BY joined_at, user_id", logger: logger)
            .values(UUID.self)
    }

    func removeMember(hiveID: UUID, userID: UUID, on connection: PostgresConnection) async throws -> HiveMemberRow? {
        try await connection.query("""
            DELETE FROM hive_members WHERE hive_id = \(hiveID) AND user_id = \(userID) RETURNING \(unescaped: HiveMemberRow.columns)
            """, logger: logger).collect().first.map(HiveMemberRow.init(row:))
    }

    func delete(_ hiveID: UUID, on connection: PostgresConnection) async throws {
        try await connection.query("DELETE FROM hives WHERE id = \(hiveID)", logger: logger)
    }

    /// Hives owned by the user, locked (for erasing an account).
    func owned(by userID: UUID, on connection: PostgresConnection) async throws -> [HiveRow] {
        try await connection.query("SELECT \(unescaped: HiveRow.columns) FROM hives WHERE owner_id = \(userID) ORDER BY id FOR UPDATE", logger: logger)
            .collect().map(HiveRow.init(row:))
    }

    /// Hives the user is a member of but does not own.
    func joined(by userID: UUID, on connection: PostgresConnection) async throws -> [HiveRow] {
        try await connection.query("""
            SELECT \(unescaped: prefixed(HiveRow.columns, "h")) FROM hives h JOIN hive_members m ON m.hive_id = h.id AND m.user_id = \(userID)
            WHERE h.owner_id <> \(userID) ORDER BY h.id FOR UPDATE OF h
            """, logger: logger).collect().map(HiveRow.init(row:))
    }

    // MARK: days

    /// Sets the member's value for a day; nil previous value when the row is new, and no row
    /// back when the stored value was already this one.
    func writeMemberDay(hiveID: UUID, userID: UUID, day: LocalDate, value: Int, on connection: PostgresConnection) async throws -> (row: HiveMemberDayRow, operation: RowOperation)? {
        let written = try await connection.query("""
            WITH previous AS (SELECT value FROM hive_member_days WHERE hive_id = \(hiveID) AND user_id = \(userID) AND day_date = \(day))
            INSERT INTO hive_member_days AS d (hive_id, user_id, day_date, value) VALUES (\(hiveID), \(userID), \(day), \(value))
            ON CONFLICT (hive_id, user_id, day_date) DO UPDATE SET value = EXCLUDED.value WHERE d.value <> EXCLUDED.value
            RETURNING \(unescaped: HiveMemberDayRow.columns), EXISTS (SELECT 1 FROM previous)
            """, logger: logger).read { c in (row: try HiveMemberDayRow(cells: &c), existed: try c.next(Bool.self)) }
        guard let (row, existed) = written.first else { return nil }
        return (row, existed ? .update : .insert)
    }

    func memberDay(hiveID: UUID, userID: UUID, day: LocalDate, on connection: PostgresConnection) async throws -> HiveMemberDayRow? {
        try await connection.query("""
            SELECT \(unescaped: HiveMemberDayRow.columns) FROM hive_member_days WHERE hive_id = \(hiveID) AND user_id = \(userID) AND day_date = \(day)
            """, logger: logger).collect().first.map(HiveMemberDayRow.init(row:))
    }

    /// Copies the habit's logs since `since` into the owner's hive days (convert with backfill).
    func backfill(hiveID: UUID, userID: UUID, habitID: UUID, since: LocalDate, on connection: PostgresConnection) async throws {
        try await connection.query("""
            INSERT INTO hive_member_days (hive_id, user_id, day_date, value)
            SELECT \(hiveID), \(userID), log_date, value FROM habit_logs WHERE habit_id = \(habitID) AND log_date >= \(since)
            ON CONFLICT DO NOTHING
            """, logger: logger)
    }

    func memberDays(hiveID: UUID, from: LocalDate, to: LocalDate, on connection: PostgresConnection) async throws -> [HiveMemberDayRow] {
        try await connection.query("""
            SELECT \(unescaped: HiveMemberDayRow.columns) FROM hive_member_days
            WHERE hive_id = \(hiveID) AND day_date BETWEEN \(from) AND \(to) ORDER BY day_date, user_id
            """, logger: logger).collect().map(HiveMemberDayRow.init(row:))
    }

    func hiveDays(hiveID: UUID, from: LocalDate, to: LocalDate, on connection: PostgresConnection) async throws -> [HiveDayRow] {
        try await connection.query("""
            SELECT \(unescaped: HiveDayRow.columns) FROM hive_days WHERE hive_id = \(hiveID) AND day_date BETWEEN \(from) AND \(to) ORDER BY day_date
            """, logger: logger).collect().map(HiveDayRow.init(row:))
    }

    /// Done members (current members only) per hive and day.
    func doneCounts(_ pairs: [(hive: UUID, day: LocalDate)], on connection: PostgresConnection) async throws -> [HiveDayKey: Int] {
        guard !pairs.isEmpty else { return [:] }
        var result: [HiveDayKey: Int] = [:]
        let rows = try await connection.query("""
            SELECT d.hive_id, d.day, count(m.user_id)
            FROM unnest(\(pairs.map(\.hive))::uuid[], \(pairs.map(\.day))::date[]) AS d(hive_id, day)
            LEFT JOIN hive_member_days md ON md.hive_id = d.hive_id AND md.day_date = d.day AND md.done
            LEFT JOIN hive_members m ON m.hive_id = md.hive_id AND m.user_id = md.user_id
            GROUP BY d.hive_id, d.day
            """, logger: logger)
        for try await row in rows {
            let (hive, day, count) = try row.read { c in (try c.next(UUID.self), try c.next(LocalDate.self), try c.next(Int.self)) }
            result[HiveDayKey(hive: hive, day: day)] = count
        }
        return result
    }

    /// Which (hive, user, day) triples are done.
    func doneMembers(_ pairs: [(hive: UUID, day: LocalDate)], on connection: PostgresConnection) async throws -> Set<HiveMemberDayKey> {
        guard !pairs.isEmpty else { return [] }
        var result = Set<HiveMemberDayKey>()
        let rows = try await connection.query("""
            SELECT md.hive_id, md.user_id, md.day_date
            FROM unnest(\(pairs.map(\.hive))::uuid[], \(pairs.map(\.day))::date[]) AS d(hive_id, day)
            JOIN hive_member_days md ON md.hive_id = d.hive_id AND md.day_date = d.day AND md.done
            """, logger: logger)
        for try await row in rows {
            let (hive, user, day) = try row.read { c in (try c.next(UUID.self), try c.next(UUID.self), try c.next(LocalDate.self)) }
            result.insert(HiveMemberDayKey(hive: hive, user: user, day: day))
        }
        return result
    }

    func upsertHiveDays(_ days: [HiveDayRow], on connection: PostgresConnection) async throws {
        guard !days.isEmpty else { return }
        try await connection.query("""
            INSERT INTO hive_days AS h (hive_id, day_date, complete_count, required_count, advanced)
            SELECT * FROM unnest(\(days.map(\.hiveId))::uuid[], \(days.map(\.dayDate))::date[], \(days.map(\.completeCount))::int[],
                                 \(days.map(\.requiredCount))::int[], \(days.map(\.advanced))::boolean[])
            ON CONFLICT (hive_id, day_date) DO UPDATE SET complete_count = EXCLUDED.complete_count, required_count = EXCLUDED.required_count,
                advanced = h.advanced OR EXCLUDED.advanced
            """, logger: logger)
    }

    struct StreakUpdate: Sendable {
        var hiveID: UUID
        var currentLength: Int
        var lastAdvancedOn: LocalDate?
        var lastClosedOn: LocalDate
    }

    /// Stands for "no date" in date arrays, which cannot hold NULLs here.
    static let noDate = LocalDate(dayNumber: 0)

    func updateStreaks(_ updates: [StreakUpdate], on connection: PostgresConnection) async throws {
        guard !updates.isEmpty else { return }
        try await connection.query("""
            UPDATE hives h SET current_length = u.length, last_advanced_on = nullif(u.advanced_on, \(Self.noDate)), last_closed_on = u.closed_on
            FROM unnest(\(updates.map(\.hiveID))::uuid[], \(updates.map(\.currentLength))::int[], \(updates.map { $0.lastAdvancedOn ?? Self.noDate })::date[],
                        \(updates.map(\.lastClosedOn))::date[]) AS u(id, length, advanced_on, closed_on)
            WHERE h.id = u.id
            """, logger: logger)
    }

    // MARK: invites

    func createInvite(hiveID: UUID, createdBy: UUID, code: String, expiresAt: Date, maxUses: Int, on connection: PostgresConnection) async throws -> HiveInviteRow {
        try await connection.query("""
            INSERT INTO hive_invites (hive_id, code, created_by, expires_at, max_uses)
            VALUES (\(hiveID), \(code), \(createdBy), \(expiresAt), \(maxUses))
            RETURNING \(unescaped: HiveInviteRow.columns)
            """, logger: logger).collect().first.map(HiveInviteRow.init(row:))!
    }

    func invites(hiveID: UUID, on connection: PostgresConnection) async throws -> [HiveInviteRow] {
        try await connection.query("SELECT \(unescaped: HiveInviteRow.columns) FROM hive_invites WHERE hive_id = \(hiveID) ORDER BY created_at DESC", logger: logger)
            .collect().map(HiveInviteRow.init(row:))
    }

    func invite(code: String, forUpdate: Bool, on connection: PostgresConnection) async throws -> HiveInviteRow? {
        try await connection.query("SELECT \(unescaped: HiveInviteRow.columns) FROM hive_invites WHERE code = \(code) \(unescaped: forUpdate ? "FOR UPDATE" : "")", logger: logger)
            .collect().first.map(HiveInviteRow.init(row:))
    }

    func countInviteUse(_ inviteID: UUID, on connection: PostgresConnection) async throws {
        try await connection.query("UPDATE hive_invites SET use_count = use_count + 1 WHERE id = \(inviteID)", logger: logger)
    }

    // MARK: edits, the habit link, invitations

    /// What the owner may change.
    struct Edit: Sendable, Equatable {
        var name: String
        var colorHex: String
        var targetPerDay: Int
        var scheduleDaily: Bool
        var scheduleWeekmask: Int
    }

    func update(_ hiveID: UUID, _ edit: Edit, on connection: PostgresConnection) async throws -> HiveRow? {
        try await connection.query("""
            UPDATE hives SET name = \(edit.name), color_hex = \(edit.colorHex), target_per_day = \(edit.targetPerDay),
                schedule_daily = \(edit.scheduleDaily), schedule_weekmask = \(edit.scheduleWeekmask)
            WHERE id = \(hiveID) RETURNING \(unescaped: HiveRow.columns)
            """, logger: logger).collect().first.map(HiveRow.init(row:))
    }

    /// The converted habit shows its hive.
    func linkHabit(_ habitID: UUID, toHive hiveID: UUID, on connection: PostgresConnection) async throws {
        try await connection.query("UPDATE habits SET hive_id = \(hiveID), updated_at = now() WHERE id = \(habitID)", logger: logger)
    }

    /// A pending invitation; nil when one is already pending for this person and hive.
    func createInvitation(hiveID: UUID, userID: UUID, invitedBy: UUID, on connection: PostgresConnection) async throws -> HiveInvitationRow? {
        try await connection.query("""
            INSERT INTO hive_invitations (hive_id, user_id, invited_by) VALUES (\(hiveID), \(userID), \(invitedBy))
            ON CONFLICT (hive_id, user_id) WHERE status = 'pending' DO NOTHING
            RETURNING \(unescaped: HiveInvitationRow.columns)
            """, logger: logger).collect().first.map(HiveInvitationRow.init(row:))
    }

    func invitation(_ id: UUID, forUpdate: Bool, on connection: PostgresConnection) async throws -> HiveInvitationRow? {
        try await connection.query("""
            SELECT \(unescaped: HiveInvitationRow.columns) FROM hive_invitations WHERE id = \(id) \(unescaped: forUpdate ? "FOR UPDATE" : "")
            """, logger: logger).collect().first.map(HiveInvitationRow.init(row:))
    }

    func decide(_ id: UUID, status: HiveInvitationStatus, on connection: PostgresConnection) async throws -> HiveInvitationRow {
        try await connection.query("""
            UPDATE hive_invitations SET status = \(status.rawValue)::hive_invitation_status, decided_at = now() WHERE id = \(id)
            RETURNING \(unescaped: HiveInvitationRow.columns)
            """, logger: logger).collect().map(HiveInvitationRow.init(row:))[0]
    }

    /// An invitation as the invitee sees it: with the hive's name and size and who invited.
    struct PendingInvitation: Codable, Sendable {
        var invitation: HiveInvitationRow
        var hiveName: String
        var memberCount: Int
        var invitedByName: String
    }

    /// The user's pending invitations, newest first; not those from someone the user blocked.
    func pendingInvitations(for userID: UUID, on connection: PostgresConnection) async throws -> [PendingInvitation] {
        try await connection.query("""
            SELECT \(unescaped: prefixed(HiveInvitationRow.columns, "i")), h.name, (SELECT count(*) FROM hive_members m WHERE m.hive_id = h.id), p.display_name
            FROM hive_invitations i JOIN hives h ON h.id = i.hive_id JOIN profiles p ON p.id = i.invited_by
            WHERE i.user_id = \(userID) AND i.status = 'pending'
              AND NOT EXISTS (SELECT 1 FROM user_blocks b WHERE b.blocker_id = \(userID) AND b.blocked_id = i.invited_by)
            ORDER BY i.created_at DESC, i.id
            """, logger: logger).read { c in
            PendingInvitation(invitation: try HiveInvitationRow(cells: &c), hiveName: try c.next(String.self), memberCount: try c.next(Int.self),
                              invitedByName: try c.next(String.self))
        }
    }

    // MARK: the hourly jobs' view

    struct MemberClock: Sendable {
        var hiveID: UUID
        var lastClosedOn: LocalDate
        var userID: UUID
        var clock: UserClock
        /// The hive's schedule (at-risk warnings only on its days).
        var schedule: Schedule = .everyDay
    }

    /// Every hive's members with their clocks (the jobs' starting point), or those of `hiveIDs`.
    func memberClocks(hiveIDs: [UUID]? = nil, on connection: PostgresConnection) async throws -> [MemberClock] {
        // Two statements rather than one with "IS NULL OR": the filtered one must use the indexes.
        let rows = if let hiveIDs {
            try await connection.query("""
                SELECT h.id, h.last_closed_on, m.user_id, p.timezone, p.day_start_hour, h.schedule_daily, h.schedule_weekmask
                FROM hives h JOIN hive_members m ON m.hive_id = h.id JOIN profiles p ON p.id = m.user_id
                WHERE h.id = ANY(\(hiveIDs))
                """, logger: logger)
        } else {
            try await connection.query("""
                SELECT h.id, h.last_closed_on, m.user_id, p.timezone, p.day_start_hour, h.schedule_daily, h.schedule_weekmask
                FROM hives h JOIN hive_members m ON m.hive_id = h.id JOIN profiles p ON p.id = m.user_id
                """, logger: logger)
        }
        var result: [MemberClock] = []
        var clocks: [String: UserClock] = [:]
        for try await row in rows {
            var c = RowCells(row)
            let hive: UUID = try c.next(), closed: LocalDate = try c.next(), user: UUID = try c.next(), zone: String = try c.next(), hour: Int = try c.next()
            let daily: Bool = try c.next(), mask: Int = try c.next()
            let key = "\(zone)|\(hour)"
            let clock = clocks[key] ?? (UserClock(timeZoneIdentifier: zone, dayStartHour: hour) ?? .utc)
            clocks[key] = clock
            result.append(MemberClock(hiveID: hive, lastClosedOn: closed, userID: user, clock: clock, schedule: Schedule(daily: daily, weekmask: mask)))
        }
        return result
    }

    /// Locks the hives (in id order) and returns their current rows with `last_closed_on`.
    func lockForClosing(_ hiveIDs: [UUID], on connection: PostgresConnection) async throws -> [(hive: HiveRow, lastClosedOn: LocalDate)] {
        try await connection.query("""
            SELECT \(unescaped: HiveRow.columns), last_closed_on FROM hives WHERE id = ANY(\(hiveIDs)) ORDER BY id FOR UPDATE
            """, logger: logger).read { c in (hive: try HiveRow(cells: &c), lastClosedOn: try c.next(LocalDate.self)) }
    }

    /// Records at-risk alerts; returns those not sent before.
    func recordRiskAlerts(_ alerts: [HiveMemberDayKey], on connection: PostgresConnection) async throws -> [HiveMemberDayKey] {
        guard !alerts.isEmpty else { return [] }
        let rows = try await connection.query("""
            INSERT INTO hive_risk_alerts (hive_id, user_id, day_date)
            SELECT * FROM unnest(\(alerts.map(\.hive))::uuid[], \(alerts.map(\.user))::uuid[], \(alerts.map(\.day))::date[])
            ON CONFLICT DO NOTHING
            RETURNING hive_id, user_id, day_date
            """, logger: logger)
        var result: [HiveMemberDayKey] = []
        for try await row in rows {
            let (hive, user, day) = try row.read { c in (try c.next(UUID.self), try c.next(UUID.self), try c.next(LocalDate.self)) }
            result.append(HiveMemberDayKey(hive: hive, user: user, day: day))
        }
        return result
    }
}

struct HiveDayKey: Hashable, Sendable {
    var hive: UUID
    var day: LocalDate
}

struct HiveMemberDayKey: Hashable, Sendable {
    var hive: UUID
    var user: UUID
    var day: LocalDate
}

/// `a, b` → `h.a, h.b` (casts kept: `type::text` → `h.type::text`).
func prefixed(_ columns: String, _ alias: String) -> String {
    columns.split(separator: ",").map { "\(alias).\($0.trimmingCharacters(in: .whitespaces))" }.joined(separator: ", ")
}
