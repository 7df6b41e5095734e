import ColonyImport
import ColonyModels
import ColonyPlatform
import Foundation
import PostgresNIO

/// HabitHive's Supabase tables (`habithive.md`, section 2) into the habits schema, ids kept. Per
/// table:
///
/// | Supabase (`public`) | Colony (`habits`) |
/// |---|---|
/// | `profiles` | `profiles` (timezone an IANA zone, `day_start_hour` 0–23, theme honey/mint/night; a display name over 60 characters cut there, reported); the phone hash comes with the account's `user_registered` |
/// | `habits`, `habit_logs` | as is (a habit's name over 100 characters cut there, a blank one "Habit", an emoji over 8 cut, reported); a log's value is capped at its habit's `target_per_day`, and a log by anyone but the habit's owner is skipped |
/// | `hives` | `hives` (a name over 60 characters cut there, a blank one "Untitled hive", reported); `current_length`, `last_advanced_on` recomputed from the imported days (below) |
/// | `hive_members` | as is, at most 10 per hive |
/// | `hive_member_days` | as is (`done` is generated) |
/// | `hive_days` | as is with `complete_count` recounted from the members' days |
/// | `hive_invites` | as is; expired ones are not imported |
/// | `contact_hashes`, `activity_events` | as is |
/// | `device_tokens` | the notifications service's devices (`SupabaseNotificationsImport`) |
///
/// The shared streak is replayed with Colony's own rule (`SharedStreak`) over every day that has
/// ended for all members: a day advanced when everyone was done (or the project recorded it
/// advanced), a scheduled day short of that resets it. The hourly job carries on from there.
/// Every membership is announced (`hive_member_imported`).
public enum SupabaseHabitsImport {
    public static func run(_ job: ServiceImport, from source: SourceDatabase, accounts: ImportedAccounts) async throws {
        let logger = job.logger
        let profiles = ProfileStore(logger: logger)

        try await job.importRows("public.profiles", from: source.rows("public", "profiles", orderBy: "id"), id: { try $0.uuid("id").lowercased }) { row, writer in
            let userID = try row.uuid("id")
            try accounts.require(userID, "id")
            let zone = try row.text("timezone") ?? "America/New_York"
            guard UserClock.isValidTimeZone(zone) else { throw RowProblem("timezone \(zone) is not an IANA time zone") }
            try await writer.connection.query("""
                INSERT INTO profiles (id, display_name, avatar_url, timezone, day_start_hour, theme, created_at, updated_at)
                SELECT \(userID), \(writer.fit(try row.optionalString("display_name"), "display_name", max: 60, fallback: ProfileStore.defaultName(for: userID)) ?? ProfileStore.defaultName(for: userID)), \(try row.text("avatar_url")), \(zone),
                       \(try row.int("day_start_hour", default: 4)), \(try row.text("theme") ?? "honey"),
                       \(try row.optionalDate("created_at") ?? job.now), \(try row.optionalDate("updated_at") ?? job.now)
                WHERE NOT EXISTS (SELECT 1 FROM deleted_users WHERE user_id = \(userID))
                ON CONFLICT (id) DO UPDATE SET display_name = EXCLUDED.display_name, avatar_url = EXCLUDED.avatar_url, timezone = EXCLUDED.timezone,
                    day_start_hour = EXCLUDED.day_start_hour, theme = EXCLUDED.theme, created_at = EXCLUDED.created_at, updated_at = EXCLUDED.updated_at
                """, logger: logger)
            return .imported
        }
        try await job.once("profiles#ensured", keys: accounts.all.map(\.id.lowercased)) { key, writer in
            guard let id = UUID(uuidString: key) else { return }
            _ = try await profiles.ensure(id, on: writer.connection)
        }

        try await job.importRows("public.habits", from: source.rows("public", "habits", orderBy: "created_at, id"), id: { try $0.uuid("id").lowercased }) { row, writer in
            let userID = try row.uuid("user_id")
            try accounts.require(userID, "user_id")
            var draft = HabitDraft(name: writer.fit(try row.optionalString("name"), "name", max: 100, fallback: "Habit") ?? "Habit",
                                   emoji: writer.fit(try row.optionalString("emoji"), "emoji", max: 8), colorHex: try row.text("color_hex") ?? "#FF9F1C",
                                   type: try row.enumeration("type", HabitType.self, default: .checkbox), targetPerDay: try row.int("target_per_day", default: 1),
                                   scheduleDaily: try row.bool("schedule_daily", default: true), scheduleWeekmask: try row.int("schedule_weekmask", default: 127),
                                   reminderTimes: try row.stringArray("reminder_times"))
            do { draft = try draft.validated() } catch { throw RowProblem(Self.message(error)) }
            let createdAt = try row.optionalDate("created_at") ?? job.now
            try await writer.connection.query("""
                INSERT INTO habits (id, user_id, name, emoji, color_hex, type, target_per_day, schedule_daily, schedule_weekmask, reminder_times, is_active, created_at, updated_at)
                VALUES (\(try row.uuid("id")), \(userID), \(draft.name), \(draft.emoji), \(draft.colorHex), \(draft.type.rawValue)::habit_type, \(draft.targetPerDay),
                        \(draft.scheduleDaily), \(draft.scheduleWeekmask), \(draft.reminderTimes), \(try row.bool("is_active", default: true)), \(createdAt),
                        \(try row.optionalDate("updated_at") ?? createdAt))
                """, logger: logger)
            return .imported
        }

        try await job.importRows("public.habit_logs", from: source.rows("public", "habit_logs", orderBy: "log_date, id"), id: { try $0.uuid("id").lowercased }) { row, writer in
            let habitID = try row.uuid("habit_id"), userID = try row.uuid("user_id")
            guard let (owner, target) = try await writer.connection.query("SELECT user_id, target_per_day FROM habits WHERE id = \(habitID)", logger: logger)
                .read({ c in (try c.next(UUID.self), try c.next(Int.self)) }).first else { throw RowProblem("habit_id \(habitID.lowercased) is not an imported habit") }
            guard owner == userID else { throw RowProblem("user_id is not the habit's owner") }
            let value = try row.int("value", default: 1)
            guard value >= 1 else { throw RowProblem("value \(value) is below 1") }
            try await writer.connection.query("""
                INSERT INTO habit_logs (id, habit_id, user_id, log_date, value, source, created_at)
                VALUES (\(try row.uuid("id")), \(habitID), \(userID), \(try row.localDate("log_date")), \(min(value, target)), \(try row.text("source") ?? "manual"),
                        \(try row.optionalDate("created_at") ?? job.now))
                """, logger: logger)
            return .imported
        }

        try await job.importRows("public.hives", from: source.rows("public", "hives", orderBy: "created_at, id"), id: { try $0.uuid("id").lowercased }) { row, writer in
            let ownerID = try row.uuid("owner_id")
            try accounts.require(ownerID, "owner_id")
            let name = writer.fit(try row.optionalString("name"), "name", max: 60, fallback: "Untitled hive") ?? "Untitled hive"
            let createdAt = try row.optionalDate("created_at") ?? job.now
            let target = try row.int("target_per_day", default: 1)
            guard target > 0 else { throw RowProblem("target_per_day must be above 0") }
            // The streak and its last closed day are set once the days are in (hives#streak).
            try await writer.connection.query("""
                INSERT INTO hives (id, name, owner_id, color_hex, type, target_per_day, rule, threshold, schedule_daily, schedule_weekmask, last_closed_on, created_at)
                VALUES (\(try row.uuid("id")), \(name), \(ownerID), \(try row.text("color_hex") ?? "#FF9F1C"), \(try row.enumeration("type", HabitType.self, default: .checkbox).rawValue)::habit_type,
                        \(target), \(try row.text("rule") ?? "all_must_complete"), \(try row.optionalInt("threshold")), \(try row.bool("schedule_daily", default: true)),
                        \(try row.int("schedule_weekmask", default: 127)), \(LocalDate.utcDay(of: createdAt).adding(days: -1)), \(createdAt))
                """, logger: logger)
            return .imported
        }

        try await job.importRows("public.hive_members", from: source.rows("public", "hive_members", orderBy: "joined_at, hive_id, user_id"),
                                 id: { "\(try $0.uuid("hive_id").lowercased)|\(try $0.uuid("user_id").lowercased)" }) { row, writer in
            let hiveID = try row.uuid("hive_id"), userID = try row.uuid("user_id")
            try accounts.require(userID, "user_id")
            guard let (name, owner, count) = try await writer.connection.query("""
                SELECT name, owner_id, (SELECT count(*) FROM hive_members WHERE hive_id = \(hiveID))::int FROM hives WHERE id = \(hiveID)
                """, logger: logger).read({ c in (try c.next(String.self), try c.next(UUID.self), try c.next(Int.self)) }).first else { throw RowProblem("hive_id \(hiveID.lowercased) is not an imported hive") }
            guard count < HiveRules.maxMembers else { throw RowProblem("the hive has \(HiveRules.maxMembers) members already") }
            let member = HiveMemberRow(hiveId: hiveID, userId: userID, role: userID == owner ? "owner" : "member", joinedAt: try row.optionalDate("joined_at") ?? job.now)
            try await writer.connection.query("""
                INSERT INTO hive_members (hive_id, user_id, role, joined_at) VALUES (\(hiveID), \(userID), \(member.role), \(member.joinedAt))
                """, logger: logger)
            try await writer.publish(EventEnvelope(app: .habithive, aggregateId: hiveID.lowercased, occurredAt: job.now, payload: HiveMemberImported(member: member, hiveName: name)))
            return .imported
        }

        try await job.importRows("public.hive_member_days", from: source.rows("public", "hive_member_days", orderBy: "day_date, hive_id, user_id"),
                                 id: { "\(try $0.uuid("hive_id").lowercased)|\(try $0.uuid("user_id").lowercased)|\(try $0.localDate("day_date"))" }) { row, writer in
            let userID = try row.uuid("user_id")
            try accounts.require(userID, "user_id")
            try await writer.connection.query("""
                INSERT INTO hive_member_days (hive_id, user_id, day_date, value)
                VALUES (\(try row.uuid("hive_id")), \(userID), \(try row.localDate("day_date")), \(try row.int("value", default: 1)))
                """, logger: logger)
            return .imported
        }

        try await job.importRows("public.hive_days", from: source.rows("public", "hive_days", orderBy: "day_date, hive_id"),
                                 id: { "\(try $0.uuid("hive_id").lowercased)|\(try $0.localDate("day_date"))" }) { row, writer in
            let hiveID = try row.uuid("hive_id"), day = try row.localDate("day_date")
            try await writer.connection.query("""
                INSERT INTO hive_days (hive_id, day_date, complete_count, required_count, advanced)
                SELECT \(hiveID), \(day), (SELECT count(*) FROM hive_member_days WHERE hive_id = \(hiveID) AND day_date = \(day) AND done),
                       \(try row.int("required_count")), \(try row.bool("advanced", default: false))
                """, logger: logger)
            return .imported
        }

        let hives = try await job.ledger("public.hives").keys.sorted()
        let store = HiveStore(logger: logger)
        try await job.once("hives#streak", keys: hives) { key, writer in
            guard let hiveID = UUID(uuidString: key) else { return }
            try await recomputeStreak(hiveID, store: store, now: job.now, on: writer.connection)
        }

        try await job.importRows("public.hive_invites", from: source.rows("public", "hive_invites", orderBy: "created_at, id"), id: { try $0.uuid("id").lowercased }) { row, writer in
            let creator = try row.uuid("created_by")
            let expiresAt = try row.date("expires_at")
            if expiresAt <= job.now { return .notImported("expired") }
            try accounts.require(creator, "created_by")
            try await writer.connection.query("""
                INSERT INTO hive_invites (id, hive_id, code, created_by, expires_at, max_uses, use_count, created_at)
                VALUES (\(try row.uuid("id")), \(try row.uuid("hive_id")), \(try row.string("code")), \(creator), \(expiresAt),
                        \(try row.int("max_uses", default: 20)), \(try row.int("use_count", default: 0)), \(try row.optionalDate("created_at") ?? job.now))
                """, logger: logger)
            return .imported
        }

        try await job.importRows("public.contact_hashes", from: source.rows("public", "contact_hashes", orderBy: "imported_at, id"), id: { try $0.uuid("id").lowercased }) { row, writer in
            let userID = try row.uuid("user_id")
            try accounts.require(userID, "user_id")
            try await writer.connection.query("""
                INSERT INTO contact_hashes (id, user_id, contact_hash, display_name, imported_at)
                VALUES (\(try row.uuid("id")), \(userID), \(try row.string("contact_hash")), \(try row.text("display_name")), \(try row.optionalDate("imported_at") ?? job.now))
                """, logger: logger)
            return .imported
        }

        try await job.importRows("public.activity_events", from: source.rows("public", "activity_events", orderBy: "created_at, id"), id: { try $0.uuid("id").lowercased }) { row, writer in
            let actor = try row.uuid("actor_id")
            try accounts.require(actor, "actor_id")
            let type = try row.enumeration("type", ActivityType.self)
            try await writer.connection.query("""
                INSERT INTO activity_events (id, actor_id, hive_id, habit_id, type, data, created_at)
                VALUES (\(try row.uuid("id")), \(actor), \(try row.optionalUUID("hive_id")), \(try row.optionalUUID("habit_id")), \(type.rawValue)::activity_type,
                        \(try ImportJSON.text(row.object("data")))::jsonb, \(try row.optionalDate("created_at") ?? job.now))
                """, logger: logger)
            return .imported
        }
    }

    /// The hive's streak by Colony's rule over every day that has ended for all its members, its
    /// days' tallies recounted.
    static func recomputeStreak(_ hiveID: UUID, store: HiveStore, now: Date, on connection: PostgresConnection) async throws {
        try await connection.query("""
            UPDATE hive_days d SET complete_count = (SELECT count(*) FROM hive_member_days m WHERE m.hive_id = d.hive_id AND m.day_date = d.day_date AND m.done)
            WHERE d.hive_id = \(hiveID)
            """, logger: connection.logger)
        guard let hive = try await store.lock(hiveID, on: connection) else { return }
        let clocks = try await store.memberClocks(hiveIDs: [hiveID], on: connection).map(\.clock)
        var days: [LocalDate: ImportedStreak.Day] = [:]
        for try await row in try await connection.query("""
            SELECT day_date, count(*) FILTER (WHERE done)::int FROM hive_member_days WHERE hive_id = \(hiveID) GROUP BY day_date
            """, logger: connection.logger) {
            let (day, done) = try row.read { c in (try c.next(LocalDate.self), try c.next(Int.self)) }
            days[day, default: ImportedStreak.Day()].done = done
        }
        for try await row in try await connection.query("""
            SELECT day_date, required_count, advanced FROM hive_days WHERE hive_id = \(hiveID)
            """, logger: connection.logger) {
            let (day, required, advanced) = try row.read { c in (try c.next(LocalDate.self), try c.next(Int.self), try c.next(Bool.self)) }
            days[day, default: ImportedStreak.Day()].required = required
            days[day, default: ImportedStreak.Day()].advanced = advanced
        }
        let created = LocalDate.utcDay(of: hive.createdAt)
        let through = (clocks.map { $0.localDay(at: now) }.min() ?? LocalDate.utcDay(of: now)).adding(days: -1)
        let streak = ImportedStreak.replay(days: days, from: min(created, days.keys.min() ?? created), through: through,
                                           members: clocks.count, schedule: Schedule(daily: hive.scheduleDaily, weekmask: hive.scheduleWeekmask))
        try await connection.query("""
            UPDATE hives SET current_length = \(streak.currentLength), last_advanced_on = \(streak.lastAdvancedOn), last_closed_on = greatest(\(through), last_closed_on)
            WHERE id = \(hiveID)
            """, logger: connection.logger)
    }
}

extension SupabaseHabitsImport {
    /// A refusal in the words the API would have used.
    static func message(_ error: any Error) -> String {
        (error as? APIError)?.message ?? "\(error)"
    }
}

/// A hive's shared streak replayed from its imported days, with the rule the hourly job uses.
public enum ImportedStreak {
    public struct Day: Sendable, Equatable {
        /// Members done that day.
        public var done = 0
        /// What the project recorded for the day, if it did.
        public var required: Int?
        public var advanced = false

        public init(done: Int = 0, required: Int? = nil, advanced: Bool = false) {
            self.done = done
            self.required = required
            self.advanced = advanced
        }
    }

    /// Closes each day from `from` through `through` in order: everyone done (against the
    /// count recorded for the day, else today's `members`) or recorded as advanced advances it,
    /// a scheduled day short of that resets it.
    public static func replay(days: [LocalDate: Day], from: LocalDate, through: LocalDate, members: Int, schedule: Schedule) -> SharedStreak {
        var streak = SharedStreak(currentLength: 0, lastAdvancedOn: nil)
        guard from <= through else { return streak }
        for number in from.dayNumber...through.dayNumber {
            let date = LocalDate(dayNumber: number)
            let day = days[date] ?? Day()
            let required = day.required ?? members
            let everyoneDone = day.advanced || (required > 0 && day.done >= required)
            _ = streak.close(day: date, everyoneDone: everyoneDone, scheduled: schedule.isScheduled(date))
        }
        return streak
    }
}
