import ColonyStorage

/// What habits exports of a user (`user_export_requested`): their profile, habits and logs, the
/// hives they made or belong to with their own days in them, the invites and invitations they
/// sent or got, their at-risk alerts and the feed lines about them. Other members appear by id
/// only; the contacts they uploaded stay out (hashes of other people's numbers). Habits keeps
/// no files.
enum HabitsExport {
    static let plan = ExportPlan(
        service: .habits,
        about: "HabitHive: your profile, your habits and what you logged, the hives you created or joined (your own days in them), "
            + "hive invites and invitations, at-risk alerts sent to you and the feed lines about you. Other members appear by their id only.",
        tables: [
            ExportTable("profile", about: "Your profile.", sources: ["profiles"], sql: """
                SELECT id, display_name, avatar_url, timezone, day_start_hour, theme, phone_hash, created_at, updated_at FROM profiles WHERE id = $1
                """, fields: [
                    "id": "Your user id.",
                    "display_name": "The name other members of your hives see.",
                    "avatar_url": "The address of the picture you chose for your profile, if any.",
                    "timezone": "Your time zone: your days are counted in it.",
                    "day_start_hour": "The hour (0–23) at which your day begins, for logging.",
                    "theme": "The app's colour theme you chose: honey, mint or night.",
                    "phone_hash": "A keyed hash of your account's phone number, so friends who have your number find you; empty without a number.",
                    "created_at": "When your profile was made.",
                    "updated_at": "When your profile last changed.",
                ]),
            ExportTable("habits", about: "The habits you created.", sql: """
                SELECT id, name, emoji, color_hex, type::text AS type, target_per_day, schedule_daily, schedule_weekmask, reminder_times, is_active, hive_id,
                       created_at, updated_at
                FROM habits WHERE user_id = $1 ORDER BY created_at, id
                """, fields: [
                    "id": "The habit's id.",
                    "name": "The habit's name.",
                    "emoji": "The habit's emoji.",
                    "color_hex": "The habit's colour.",
                    "type": "checkbox (done or not) or counter (counted up to a daily target).",
                    "target_per_day": "How many a day count as done.",
                    "schedule_daily": "Whether the habit is due every day.",
                    "schedule_weekmask": "The weekdays it is due when not daily, as bits Monday (1) to Sunday (64).",
                    "reminder_times": "The times of day (HH:MM) you asked to be reminded.",
                    "is_active": "False once you archived the habit.",
                    "hive_id": "The hive you turned the habit into, if any.",
                    "created_at": "When you created the habit.",
                    "updated_at": "When the habit last changed.",
                ]),
            ExportTable("habit_logs", about: "What you logged for your habits, one row per habit and day.", sql: """
                SELECT id, habit_id, log_date, value, source, created_at FROM habit_logs WHERE user_id = $1 ORDER BY log_date, habit_id
                """, fields: [
                    "id": "The log's id.",
                    "habit_id": "The habit it is for.",
                    "log_date": "The day it counts for, in your time zone.",
                    "value": "How many you logged that day (1 for a checkbox habit).",
                    "source": "How it was logged: api (for today), manual (a past day) or hive (through the hive made from the habit).",
                    "created_at": "When you logged it.",
                ]),
            ExportTable("hives", about: "The hives you created or belong to, with your place in each.", sources: ["hives", "hive_members"], sql: """
                SELECT h.id, h.name, h.owner_id, m.role, m.joined_at, h.color_hex, h.type::text AS type, h.target_per_day, h.rule, h.threshold,
                       h.schedule_daily, h.schedule_weekmask, h.current_length, h.last_advanced_on,
                       CASE WHEN h.owner_id = $1 THEN h.source_habit_id END AS source_habit_id, h.created_at
                FROM hives h LEFT JOIN hive_members m ON m.hive_id = h.id AND m.user_id = $1
                WHERE h.owner_id = $1 OR m.user_id = $1 ORDER BY h.created_at, h.id
                """, fields: [
                    "id": "The hive's id.",
                    "name": "The hive's name.",
                    "owner_id": "The id of the member who created the hive (yours, if you did).",
                    "role": "Your role in the hive: owner or member.",
                    "joined_at": "When you joined the hive.",
                    "color_hex": "The hive's colour.",
                    "type": "checkbox or counter, as for a habit.",
                    "target_per_day": "How many a day count as done for each member.",
                    "rule": "When a day counts for the hive: all_must_complete (every member completes it).",
                    "threshold": "How many members must complete a day under a threshold rule; empty under all_must_complete.",
                    "schedule_daily": "Whether the hive is due every day.",
                    "schedule_weekmask": "The weekdays it is due when not daily, as bits Monday (1) to Sunday (64).",
                    "current_length": "The hive's current shared streak, in days.",
                    "last_advanced_on": "The last day the shared streak grew.",
                    "source_habit_id": "The habit of yours the hive was made from, if you created it that way.",
                    "created_at": "When the hive was created.",
                ]),
            ExportTable("hive_member_days", about: "Your own days in your hives.", sql: """
                SELECT hive_id, day_date, value, done FROM hive_member_days WHERE user_id = $1 ORDER BY day_date, hive_id
                """, fields: [
                    "hive_id": "The hive.",
                    "day_date": "The day, in your time zone.",
                    "value": "How many you logged for the hive that day.",
                    "done": "Whether that was enough for the day.",
                ]),
            ExportTable("hive_invites", about: "The invite codes you made for your hives. A code that can still be used is left out: anyone holding it could join.", sql: """
                SELECT id, hive_id, CASE WHEN expires_at <= now() OR use_count >= max_uses THEN code END AS code, expires_at, max_uses, use_count, created_at
                FROM hive_invites WHERE created_by = $1 ORDER BY created_at, id
                """, fields: [
                    "id": "The invite's id.",
                    "hive_id": "The hive it lets people join.",
                    "code": "The code, once it can no longer be used; empty while it still can.",
                    "expires_at": "When the code stops working.",
                    "max_uses": "How many people the code may let in.",
                    "use_count": "How many joined with it.",
                    "created_at": "When you made it.",
                ]),
            ExportTable("hive_invitations", about: "Invitations to a hive you sent to a contact, or a hive's owner sent to you.", sql: """
                SELECT id, hive_id, user_id, invited_by, status::text AS status, created_at, decided_at
                FROM hive_invitations WHERE user_id = $1 OR invited_by = $1 ORDER BY created_at, id
                """, fields: [
                    "id": "The invitation's id.",
                    "hive_id": "The hive it is to.",
                    "user_id": "Who was invited (you, or the id of the person you invited).",
                    "invited_by": "Who invited (you, or the id of the hive's owner).",
                    "status": "pending, accepted or declined.",
                    "created_at": "When it was sent.",
                    "decided_at": "When it was accepted or declined.",
                ]),
            ExportTable("hive_risk_alerts", about: "The warnings you were sent that a hive's streak was at risk because you had not logged yet.", sql: """
                SELECT hive_id, day_date, sent_at FROM hive_risk_alerts WHERE user_id = $1 ORDER BY day_date, hive_id
                """, fields: [
                    "hive_id": "The hive.",
                    "day_date": "The day it was about.",
                    "sent_at": "When the warning was sent.",
                ]),
            ExportTable("activity", about: "The lines about you in hive feeds and your own milestones: days you completed, hives you joined or left, streaks you reached.",
                        sources: ["activity_events"], sql: """
                SELECT id, hive_id, habit_id, type::text AS type, data, created_at FROM activity_events WHERE actor_id = $1 ORDER BY created_at, id
                """, fields: [
                    "id": "The line's id.",
                    "hive_id": "The hive's feed it is in; empty for a habit of your own.",
                    "habit_id": "Your habit it is about, when it is not a hive's.",
                    "type": "habit_completed (a day done, of a habit or in a hive), streak_milestone, hive_joined, hive_left or hive_advanced (your log completed the hive's day).",
                    "data": "Its details: the day, a streak's length, why you left a hive.",
                    "created_at": "When it happened.",
                ]),
            .blocks,
            .reportsFiled,
        ],
        // The platform's tables (`ExportPlan.platformTables`, quota_hits among them) are covered already.
        notExported: [
            "deleted_users": "ids of erased accounts only",
            "idempotency_keys": "saved answers to retried requests, kept a day (copies of the rows above)",
            "hive_days": "each hive's daily tally over all its members; your own days are in hive_member_days",
            "contact_hashes": "hashes of the phone numbers in your address book, with the names you gave them: other people's numbers and names, not yours",
        ]
    )
}
