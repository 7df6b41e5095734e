import ColonyModels
import ColonyPlatform
import ColonyTesting
import Foundation
@testable import HabitsService
import Testing

/// The seed's flows that were missing: inviting a contact match, the owner editing a hive, a
/// converted habit and its hive counting each other's logs, who completed the day, at-risk only
/// on scheduled days, personal milestones, erasure of saved answers, the user's local date.
@Suite("HabitHive flows")
struct HabitHiveFlowTests {
    var today: LocalDate { UserClock.utc.localDay(at: Date()) }

    func makeHive(_ habits: RunningHabits, _ owner: RunningHabits.User, _ fields: [String: Any] = [:]) async throws -> String {
        var body: [String: Any] = ["name": "Stretch", "color_hex": "#4BBF8B"]
        body.merge(fields) { $1 }
        let reply = try await habits.request(.POST, "/hives", as: owner, json: body)
        #expect(reply.status == 201, "\(reply.body)")
        return try #require(reply.body["hive"]?["id"]?.stringValue).lowercased()
    }

    func join(_ habits: RunningHabits, _ owner: RunningHabits.User, _ member: RunningHabits.User, hive: String) async throws {
        let code = try #require(try await habits.request(.POST, "/hives/\(hive)/invites", as: owner, json: [:]).body["code"]?.stringValue)
        #expect(try await habits.request(.POST, "/hives/join", as: member, json: ["code": code]).status == 200)
    }

    /// `owner` has `contacts` among their contact matches: each signed up with a number (auth
    /// announced its hash), and the owner uploads the numbers in one go (an upload replaces the
    /// owner's set; the server hashes them as auth hashed the accounts' phones).
    func match(_ habits: RunningHabits, owner: RunningHabits.User, contacts: [RunningHabits.User]) async throws {
        var phones: [String] = []
        for contact in contacts {
            let phone = "+1555\(Int.random(in: 1_000_000...9_999_999))"
            phones.append(phone)
            try await habits.publishAuthEvent(UserRegistered(userId: contact.id, app: .habithive, email: nil, phone: phone, phoneHash: PhoneHash.of(e164: phone, pepper: "test-pepper"),
                                                             userMetadata: ["display_name": .string("Contact")], createdAt: Date()), user: contact.id)
        }
        for contact in contacts {
            try await waitUntil(timeout: .seconds(120)) { try await habits.request(.GET, "/profile", as: contact).body["display_name"]?.stringValue == "Contact" }
        }
        let upload = try await habits.request(.POST, "/contacts", as: owner, json: ["contacts": phones.map { ["phone": $0] }])
        let matched = Set(upload.body["matches"]?.arrayValue?.compactMap { $0["user_id"]?.stringValue.flatMap(UUID.init(uuidString:)) } ?? [])
        #expect(matched == Set(contacts.map(\.id)), "\(upload.body)")
    }

    @Test("the owner invites a contact match: a pending invitation the invitee sees, accepts (and joins) or declines; nobody else can be invited or answer")
    func inviteContactMatch() async throws {
        try await withRunningHabits { habits in
            let owner = try await habits.user(timezone: "UTC", dayStartHour: 0)
            let friend = try await habits.user(timezone: "UTC", dayStartHour: 0), other = try await habits.user(), stranger = try await habits.user()
            let hive = try await makeHive(habits, owner)
            try await match(habits, owner: owner, contacts: [friend, other])

            // Only contact matches, only by the owner, one pending at a time.
            #expect(try await habits.request(.POST, "/hives/\(hive)/invitations", as: owner, json: ["user_id": stranger.id.uuidString]).code == "contact_not_found")
            #expect(try await habits.request(.POST, "/hives/\(hive)/invitations", as: owner, json: ["user_id": owner.id.uuidString]).code == "contact_not_found")
            let invited = try await habits.request(.POST, "/hives/\(hive)/invitations", as: owner, json: ["user_id": friend.id.uuidString])
            #expect(invited.status == 201 && invited.body["status"]?.stringValue == "pending", "\(invited.body)")
            let invitation = try #require(invited.body["id"]?.stringValue)
            #expect(try await habits.request(.POST, "/hives/\(hive)/invitations", as: owner, json: ["user_id": friend.id.uuidString]).code == "invitation_pending")
            #expect(try await habits.request(.POST, "/hives/\(hive)/invitations", as: stranger, json: ["user_id": friend.id.uuidString]).code == "hive_not_found")

            let pending = try await habits.request(.GET, "/invitations", as: friend)
            #expect(pending.array.count == 1 && pending.array.first?["hive_name"]?.stringValue == "Stretch" && pending.array.first?["member_count"]?.intValue == 1)
            #expect(try await habits.request(.GET, "/invitations", as: stranger).array.isEmpty)
            // Someone else cannot answer it.
            #expect(try await habits.request(.POST, "/invitations/\(invitation)/accept", as: stranger).code == "invitation_not_found")
            #expect(try await habits.request(.GET, "/hives/\(hive)", as: stranger).status == 404)

            let accepted = try await habits.request(.POST, "/invitations/\(invitation)/accept", as: friend)
            #expect(accepted.status == 200 && accepted.body["members"]?.arrayValue?.count == 2, "\(accepted.body)")
            #expect(try await habits.request(.POST, "/invitations/\(invitation)/accept", as: friend).code == "invitation_answered")
            #expect(try await habits.request(.POST, "/hives/\(hive)/invitations", as: owner, json: ["user_id": friend.id.uuidString]).code == "already_member")

            let second = try await habits.request(.POST, "/hives/\(hive)/invitations", as: owner, json: ["user_id": other.id.uuidString])
            let declined = try await habits.request(.POST, "/invitations/\(second.body["id"]?.stringValue ?? "")/decline", as: other)
            #expect(declined.status == 200 && declined.body["status"]?.stringValue == "declined")
            #expect(try await habits.request(.GET, "/hives/\(hive)", as: other).status == 404)

            let events = try await habits.events { events in events.filter { $0.type == .hiveInvitationAnswered }.count == 2 }
            let sent = try events.filter { $0.type == .hiveInvited }.map { try $0.decode(HiveInvited.self) }
            #expect(sent.count == 2 && sent.first?.payload.hiveName == "Stretch" && sent.first?.payload.invitation.userId == friend.id && sent.first?.actor == owner.id)
            let answers = try events.filter { $0.type == .hiveInvitationAnswered }.map { try $0.decode(HiveInvitationAnswered.self).payload }
            #expect(answers.map(\.invitation.status) == [.accepted, .declined] && answers.allSatisfy { $0.previous.status == .pending })
            #expect(try events.filter { $0.type == .hiveJoined }.map { try $0.decode(HiveJoined.self).payload.member.userId } == [friend.id])
        }
    }

    @Test("the owner edits a hive's name, colour, schedule and target; members may not; bad values change nothing; each change is a hive_updated with the row before")
    func ownerEditsHive() async throws {
        try await withRunningHabits { habits in
            let owner = try await habits.user(timezone: "UTC", dayStartHour: 0), member = try await habits.user(timezone: "UTC", dayStartHour: 0)
            let hive = try await makeHive(habits, owner, ["type": "counter", "target_per_day": 3])
            try await join(habits, owner, member, hive: hive)
            #expect(try await habits.request(.PATCH, "/hives/\(hive)", as: member, json: ["name": "Mine"]).code == "owner_only")
            for bad: [String: Any] in [["name": " "], ["color_hex": "orange"], ["target_per_day": 0], ["schedule_weekmask": 0], ["schedule_weekmask": 128], ["target_per_day": "5"]] {
                #expect(try await habits.request(.PATCH, "/hives/\(hive)", as: owner, json: bad).status == 422, "\(bad)")
            }
            let edited = try await habits.request(.PATCH, "/hives/\(hive)", as: owner,
                                                  json: ["name": "Evening stretch", "color_hex": "#ff9f1c", "target_per_day": 5, "schedule_daily": false, "schedule_weekmask": 31])
            let row = edited.body["hive"]
            #expect(edited.status == 200 && row?["name"]?.stringValue == "Evening stretch" && row?["color_hex"]?.stringValue == "#FF9F1C", "\(edited.body)")
            #expect(row?["target_per_day"]?.intValue == 5 && row?["schedule_daily"]?.boolValue == false && row?["schedule_weekmask"]?.intValue == 31)
            #expect(try await habits.request(.PATCH, "/hives/\(hive)", as: owner, json: ["name": "Evening stretch"]).status == 200, "the same values again")
            let checkbox = try await makeHive(habits, owner)
            let conflicting = try await habits.request(.PATCH, "/hives/\(checkbox)", as: owner, json: ["target_per_day": 2])
            #expect(conflicting.status == 409 && conflicting.code == "checkbox_target", "a checkbox hive keeps target 1: \(conflicting.body)")
            #expect(try await habits.request(.PATCH, "/hives/\(checkbox)", as: owner, json: ["target_per_day": 1001]).status == 422, "out of range whatever the type")
            #expect(try await habits.request(.PATCH, "/hives/\(checkbox)", as: owner, raw: #"{"name": " ", "schedule_weekmask": null}"#).status == 422, "a blank name")
            #expect(try await habits.request(.PATCH, "/hives/\(checkbox)", as: owner, raw: #"{"name": null, "schedule_weekmask": null}"#).status == 200, "null keeps a field")
            #expect(try await habits.request(.PATCH, "/hives/\(hive)", as: owner, json: ["name": "Final"]).status == 200)
            // One event per real change, in order: the repeated values made none.
            let updates = try await habits.events { events in events.contains { $0.type == .hiveUpdated && (try? $0.decode(HiveUpdated.self).payload.hive.name) == "Final" } }
                .filter { $0.type == .hiveUpdated }.map { try $0.decode(HiveUpdated.self).payload }
            #expect(updates.map(\.hive.name) == ["Evening stretch", "Final"] && updates.first?.previous.name == "Stretch" && updates.first?.previous.targetPerDay == 3)
            #expect(Set(updates.first?.memberIds ?? []) == [owner.id, member.id])
        }
    }

    @Test("a habit made into a hive shows it (hive_id, source_habit_id) and logging either one counts for both; a habit converts once")
    func convertedHabitCountsForBoth() async throws {
        try await withRunningHabits { habits in
            let owner = try await habits.user(timezone: "UTC", dayStartHour: 0), member = try await habits.user(timezone: "UTC", dayStartHour: 0)
            let habit = try #require(try await habits.request(.POST, "/habits", as: owner, json: ["name": "Walk", "type": "counter", "target_per_day": 2]).body["id"]?.stringValue)
            let converted = try await habits.request(.POST, "/habits/\(habit)/hive", as: owner, json: ["backfill_days": 0])
            let hive = try #require(converted.body["hive"]?["id"]?.stringValue)
            #expect(converted.body["hive"]?["source_habit_id"]?.stringValue?.lowercased() == habit.lowercased())
            #expect(try await habits.request(.GET, "/habits/\(habit)", as: owner).body["hive_id"]?.stringValue?.lowercased() == hive.lowercased())
            #expect(try await habits.request(.POST, "/habits/\(habit)/hive", as: owner, json: ["backfill_days": 0]).code == "habit_has_hive")
            try await join(habits, owner, member, hive: hive)

            // Logging the habit counts in the hive…
            #expect(try await habits.request(.POST, "/habits/\(habit)/logs", as: owner, json: ["value": 1]).status == 200)
            var days = try await habits.request(.GET, "/hives/\(hive)/days?from=\(today)&to=\(today)", as: member)
            #expect(days.body["member_days"]?.arrayValue?.map { $0["value"]?.intValue } == [1])
            // …and logging the hive counts for the habit (the owner's own habit only).
            let logged = try await habits.request(.POST, "/hives/\(hive)/logs", as: owner, json: ["value": 2])
            #expect(logged.status == 200 && logged.body["day"]?["value"]?.intValue == 2)
            #expect(try await habits.request(.GET, "/habits/\(habit)/logs?from=\(today)&to=\(today)", as: owner).array.first?["value"]?.intValue == 2)
            _ = try await habits.request(.POST, "/hives/\(hive)/logs", as: member, json: [:])
            #expect(try await habits.count("habit_logs WHERE user_id = '\(member.id.uuidString.lowercased())'") == 0)
            days = try await habits.request(.GET, "/hives/\(hive)/days?from=\(today)&to=\(today)", as: member)
            #expect(days.body["hive_days"]?.arrayValue?.first?["advanced"]?.boolValue == true)

            // Deleting the hive unlinks the habit.
            #expect(try await habits.request(.DELETE, "/hives/\(hive)", as: owner).status == 204)
            #expect(try await habits.request(.GET, "/habits/\(habit)", as: owner).body["hive_id"] == nil)
        }
    }

    @Test("the member whose log completes the day is named on hive_advanced (payload, actor, feed line), so they are not pushed \"everyone's done\"")
    func completedBy() async throws {
        try await withRunningHabits { habits in
            let owner = try await habits.user(timezone: "UTC", dayStartHour: 0), member = try await habits.user(timezone: "UTC", dayStartHour: 0)
            let hive = try await makeHive(habits, owner)
            try await join(habits, owner, member, hive: hive)
            _ = try await habits.request(.POST, "/hives/\(hive)/logs", as: owner, json: [:])
            _ = try await habits.request(.POST, "/hives/\(hive)/logs", as: member, json: [:])
            let advanced = try #require(try await habits.events(count: .hiveAdvanced, atLeast: 1).first).decode(HiveAdvanced.self)
            #expect(advanced.payload.completedBy == member.id && advanced.actor == member.id && advanced.payload.activity.actorId == member.id)
            #expect(advanced.payload.activity.data["completed_by"]?.stringValue == member.id.uuidString.lowercased())
        }
    }

    @Test("\"at risk\" only on the hive's scheduled days")
    func atRiskOnScheduledDaysOnly() async throws {
        try await withRunningHabits { habits in
            let owner = try await habits.user(timezone: "UTC", dayStartHour: 0), member = try await habits.user(timezone: "UTC", dayStartHour: 0)
            let offDays = 127 & ~(1 << today.weekdayIndex)
            let hive = try await makeHive(habits, owner, ["schedule_daily": false, "schedule_weekmask": offDays])
            try await join(habits, owner, member, hive: hive)
            _ = try await habits.request(.POST, "/hives/\(hive)/logs", as: owner, json: [:])
            let evening = try #require(ISO8601.parse("\(today)T20:30:00.000Z"))
            #expect(try await habits.withDatabase { try await habits.jobs($0).alertHivesAtRisk(now: evening) } == 0, "today is not one of its days")
            #expect(try await habits.request(.PATCH, "/hives/\(hive)", as: owner, json: ["schedule_daily": true]).status == 200)
            #expect(try await habits.withDatabase { try await habits.jobs($0).alertHivesAtRisk(now: evening) } == 1)
        }
    }

    @Test("a habit's own streak reaching 7 days is a habit_streak_milestone with its feed line, once")
    func personalMilestone() async throws {
        try await withRunningHabits { habits in
            let user = try await habits.user(timezone: "UTC", dayStartHour: 0)
            let habit = try #require(try await habits.request(.POST, "/habits", as: user, json: ["name": "Floss", "emoji": "🦷"]).body["id"]?.stringValue)
            for offset in (1...6).reversed() {
                #expect(try await habits.request(.POST, "/habits/\(habit)/logs", as: user, json: ["date": today.adding(days: -offset).description]).status == 200)
            }
            for _ in 0..<2 { _ = try await habits.request(.POST, "/habits/\(habit)/logs", as: user, json: [:]) }
            let milestones = try await habits.events(count: .habitStreakMilestone, atLeast: 1).map { try $0.decode(HabitStreakMilestone.self).payload }
            #expect(milestones.count == 1 && milestones.first?.length == 7 && milestones.first?.dayDate == today && milestones.first?.userId == user.id)
            #expect(milestones.first?.habitName == "Floss" && milestones.first?.activity.type == .streakMilestone && milestones.first?.activity.hiveId == nil)
        }
    }

    @Test("an erased account's saved idempotent answers go with the rest of its data")
    func erasureRemovesSavedAnswers() async throws {
        try await withRunningHabits { habits in
            let user = try await habits.user(timezone: "UTC", dayStartHour: 0)
            let created = try await habits.request(.POST, "/habits", as: user, json: ["name": "Journal"], headers: [("Idempotency-Key", "create-journal")])
            #expect(created.status == 201)
            #expect(try await habits.count("idempotency_keys WHERE user_id = '\(user.id.uuidString.lowercased())'") == 1)
            // The erasure `user_deleted` runs (HiveTests covers the event's way in), on the service's database.
            try await habits.withDatabase { database in
                let profiles = Profiles(outbox: Outbox(schema: database.schema, topicPrefix: habits.topicPrefix), contacts: ContactMatching(settings: HabitsSettings(phonePepper: "test-pepper")), logger: TestEnvironment.logger)
                try await database.transaction { connection in try await profiles.erase(user.id, on: connection) }
            }
            #expect(try await habits.request(.GET, "/profile", as: user).status == 401)
            #expect(try await habits.count("idempotency_keys WHERE user_id = '\(user.id.uuidString.lowercased())'") == 0)
            let replay = try await habits.request(.POST, "/habits", as: user, json: ["name": "Journal"], headers: [("Idempotency-Key", "create-journal")])
            #expect(replay.status == 401 && replay.headers["Idempotent-Replayed"].isEmpty, "no saved answer is handed out after erasure")
        }
    }

    @Test("the user's local date (the seed's user_local_date): their zone and day start, now or at a given time")
    func localDate() async throws {
        try await withRunningHabits { habits in
            let user = try await habits.user(timezone: "America/New_York", dayStartHour: 4)
            let early = try await habits.request(.GET, "/local-date?at=2026-03-10T07:30:00Z", as: user)  // 03:30 in New York: still the 9th
            #expect(early.status == 200 && early.body["date"]?.stringValue == "2026-03-09" && early.body["timezone"]?.stringValue == "America/New_York" && early.body["day_start_hour"]?.intValue == 4)
            #expect(try await habits.request(.GET, "/local-date?at=2026-03-10T08:30:00Z", as: user).body["date"]?.stringValue == "2026-03-10")
            let now = try await habits.request(.GET, "/local-date", as: user)
            #expect(now.body["date"]?.stringValue == UserClock(timeZoneIdentifier: "America/New_York", dayStartHour: 4)?.localDay(at: Date()).description)
            #expect(try await habits.request(.GET, "/local-date?at=yesterday", as: user).status == 422)
        }
    }
}

extension RunningHabits {
    func count(_ table: String) async throws -> Int {
        try await withDatabase { database in try await database.query("SELECT count(*)::int FROM \(unescaped: table)").collect()[0].decode(Int.self) }
    }
}
