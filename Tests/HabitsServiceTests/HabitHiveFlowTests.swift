import ColonyClientTesting
import ColonyModels
import ColonyPlatform
import ColonyTesting
import Foundation
import HabitsAPI
import HTTPTypes
@testable import HabitsService
import Testing

/// The seed's flows that were missing: inviting a contact match, the owner editing a hive, a
/// converted habit and its hive counting each other's logs, who completed the day, at-risk only
/// on scheduled days, personal milestones, erasure of saved answers, the user's local date.
@Suite("HabitHive flows")
struct HabitHiveFlowTests {
    var today: LocalDate { UserClock.utc.localDay(at: Date()) }

    func makeHive(_ habits: RunningHabits, _ owner: RunningHabits.User, _ body: Schemas.HiveCreate = .init(name: "Stretch", colorHex: "#4BBF8B")) async throws -> String {
        try await habits.api(owner).createHive(body: .json(body)).created.body.json.hive.id.lowercased()
    }

    func join(_ habits: RunningHabits, _ owner: RunningHabits.User, _ member: RunningHabits.User, hive: String) async throws {
        let code = try await habits.api(owner).createHiveInvite(path: .init(hiveId: hive), body: .json(.init())).created.body.json.code
        _ = try await habits.api(member).joinHive(body: .json(.init(code: code))).ok
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
            try await waitUntil(timeout: .seconds(120)) { (try? await habits.api(contact).getProfile().ok.body.json.displayName) == "Contact" }
        }
        let upload = try await habits.api(owner).uploadContacts(body: .json(.init(contacts: phones.map { .init(phone: $0) }))).ok.body.json
        let matched = Set(upload.matches.compactMap { UUID(uuidString: $0.userId) })
        #expect(matched == Set(contacts.map(\.id)), "\(upload)")
    }

    @Test("the owner invites a contact match: a pending invitation the invitee sees, accepts (and joins) or declines; nobody else can be invited or answer")
    func inviteContactMatch() async throws {
        try await withRunningHabits { habits in
            let owner = try await habits.user(timezone: "UTC", dayStartHour: 0)
            let friend = try await habits.user(timezone: "UTC", dayStartHour: 0), other = try await habits.user(), stranger = try await habits.user()
            let hive = try await makeHive(habits, owner)
            try await match(habits, owner: owner, contacts: [friend, other])

            let owners = habits.api(owner), friends = habits.api(friend), others = habits.api(other), strangers = habits.api(stranger)
            func invite(_ api: HabitsClient, _ user: RunningHabits.User) async throws -> Answer<HabitsOperations.InviteContactToHive.Output> {
                try await answer { try await api.inviteContactToHive(path: .init(hiveId: hive), body: .json(.init(userId: user.id.uuidString))) }
            }
            // Only contact matches, only by the owner, one pending at a time.
            for notAMatch in [stranger, owner] {
                let refused = try await invite(owners, notAMatch)
                #expect(refused.status == 409 && refused.code == "contact_not_found", "\(refused.body)")
            }
            let invited = try await invite(owners, friend)
            #expect(try invited.status == 201 && (try invited.output.created.body.json.status) == .pending, "\(invited.body)")
            let invitation = try invited.output.created.body.json.id
            #expect(try await invite(owners, friend).code == "invitation_pending")
            #expect(try await invite(strangers, friend).code == "hive_not_found")

            let pending = try await friends.listMyInvitations().ok.body.json
            #expect(pending.count == 1 && pending.first?.hiveName == "Stretch" && pending.first?.memberCount == 1)
            #expect(try await strangers.listMyInvitations().ok.body.json.isEmpty)
            // Someone else cannot answer it.
            #expect(try await answer { try await strangers.acceptHiveInvitation(path: .init(invitationId: invitation)) }.code == "invitation_not_found")
            #expect(try await answer { try await strangers.getHive(path: .init(hiveId: hive)) }.status == 404)

            let accepted = try await answer { try await friends.acceptHiveInvitation(path: .init(invitationId: invitation)) }
            #expect(try accepted.status == 200 && (try accepted.output.ok.body.json.members.count) == 2, "\(accepted.body)")
            #expect(try await answer { try await friends.acceptHiveInvitation(path: .init(invitationId: invitation)) }.code == "invitation_answered")
            #expect(try await invite(owners, friend).code == "already_member")

            let second = try await invite(owners, other).output.created.body.json.id
            let declined = try await others.declineHiveInvitation(path: .init(invitationId: second)).ok.body.json
            #expect(declined.status == .declined)
            #expect(try await answer { try await others.getHive(path: .init(hiveId: hive)) }.status == 404)

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
            let hive = try await makeHive(habits, owner, .init(name: "Stretch", colorHex: "#4BBF8B", _type: .counter, targetPerDay: 3))
            try await join(habits, owner, member, hive: hive)
            let owners = habits.api(owner)
            func edit(_ api: HabitsClient, _ hive: String, _ update: Schemas.HiveUpdate) async throws -> Answer<HabitsOperations.UpdateHive.Output> {
                try await answer { try await api.updateHive(path: .init(hiveId: hive), body: .json(update)) }
            }
            #expect(try await edit(habits.api(member), hive, .init(name: "Mine")).code == "owner_only")
            let bads: [Schemas.HiveUpdate] = [.init(name: " "), .init(colorHex: "orange"), .init(targetPerDay: 0), .init(scheduleWeekmask: 0), .init(scheduleWeekmask: 128)]
            for bad in bads {
                #expect(try await edit(owners, hive, bad).status == 422, "\(bad)")
            }
            // Raw: a number sent as a string, which the typed client cannot send.
            #expect(try await habits.request(.PATCH, "/hives/\(hive)", as: owner, json: ["target_per_day": "5"]).status == 422)
            let edited = try await edit(owners, hive, .init(name: "Evening stretch", colorHex: "#ff9f1c", targetPerDay: 5, scheduleDaily: false, scheduleWeekmask: 31))
            let row = try edited.output.ok.body.json.hive
            #expect(edited.status == 200 && row.name == "Evening stretch" && row.colorHex == "#FF9F1C", "\(edited.body)")
            #expect(row.targetPerDay == 5 && row.scheduleDaily == false && row.scheduleWeekmask == 31)
            #expect(try await edit(owners, hive, .init(name: "Evening stretch")).status == 200, "the same values again")
            let checkbox = try await makeHive(habits, owner)
            let conflicting = try await edit(owners, checkbox, .init(targetPerDay: 2))
            #expect(conflicting.status == 409 && conflicting.code == "checkbox_target", "a checkbox hive keeps target 1: \(conflicting.body)")
            #expect(try await edit(owners, checkbox, .init(targetPerDay: 1001)).status == 422, "out of range whatever the type")
            // Raw: explicit nulls, which the typed client leaves out (null keeps a field here, as leaving it out does).
            #expect(try await habits.request(.PATCH, "/hives/\(checkbox)", as: owner, raw: #"{"name": " ", "schedule_weekmask": null}"#).status == 422, "a blank name")
            #expect(try await habits.request(.PATCH, "/hives/\(checkbox)", as: owner, raw: #"{"name": null, "schedule_weekmask": null}"#).status == 200, "null keeps a field")
            #expect(try await edit(owners, hive, .init(name: "Final")).status == 200)
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
            let owners = habits.api(owner), members = habits.api(member)
            let habit = try await owners.createHabit(body: .json(.init(name: "Walk", _type: .counter, targetPerDay: 2))).created.body.json.id
            let converted = try await owners.convertHabitToHive(path: .init(habitId: habit), body: .json(.init(backfillDays: 0))).created.body.json
            let hive = converted.hive.id
            #expect(converted.hive.sourceHabitId?.lowercased() == habit.lowercased())
            #expect(try await owners.getHabit(path: .init(habitId: habit)).ok.body.json.hiveId?.lowercased() == hive.lowercased())
            #expect(try await answer { try await owners.convertHabitToHive(path: .init(habitId: habit), body: .json(.init(backfillDays: 0))) }.code == "habit_has_hive")
            try await join(habits, owner, member, hive: hive)

            // Logging the habit counts in the hive…
            _ = try await owners.logHabit(path: .init(habitId: habit), body: .json(.init(value: 1))).ok
            var days = try await members.listHiveDays(path: .init(hiveId: hive), query: .init(from: today.description, to: today.description)).ok.body.json
            #expect(days.memberDays.map(\.value) == [1])
            // …and logging the hive counts for the habit (the owner's own habit only).
            let logged = try await answer { try await owners.logHiveToday(path: .init(hiveId: hive), body: .json(.init(value: 2))) }
            #expect(try logged.status == 200 && (try logged.output.ok.body.json.day.value) == 2)
            #expect(try await owners.listHabitLogs(path: .init(habitId: habit), query: .init(from: today.description, to: today.description)).ok.body.json.first?.value == 2)
            _ = try await members.logHiveToday(path: .init(hiveId: hive), body: .json(.init()))
            #expect(try await habits.count("habit_logs WHERE user_id = '\(member.id.uuidString.lowercased())'") == 0)
            days = try await members.listHiveDays(path: .init(hiveId: hive), query: .init(from: today.description, to: today.description)).ok.body.json
            #expect(days.hiveDays.first?.advanced == true)

            // Deleting the hive unlinks the habit.
            #expect(try await answer { try await owners.deleteHive(path: .init(hiveId: hive)) }.status == 204)
            #expect(try await owners.getHabit(path: .init(habitId: habit)).ok.body.json.hiveId == nil)
        }
    }

    @Test("the member whose log completes the day is named on hive_advanced (payload, actor, feed line), so they are not pushed \"everyone's done\"")
    func completedBy() async throws {
        try await withRunningHabits { habits in
            let owner = try await habits.user(timezone: "UTC", dayStartHour: 0), member = try await habits.user(timezone: "UTC", dayStartHour: 0)
            let hive = try await makeHive(habits, owner)
            try await join(habits, owner, member, hive: hive)
            _ = try await habits.api(owner).logHiveToday(path: .init(hiveId: hive), body: .json(.init()))
            _ = try await habits.api(member).logHiveToday(path: .init(hiveId: hive), body: .json(.init()))
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
            let hive = try await makeHive(habits, owner, .init(name: "Stretch", colorHex: "#4BBF8B", scheduleDaily: false, scheduleWeekmask: offDays))
            try await join(habits, owner, member, hive: hive)
            _ = try await habits.api(owner).logHiveToday(path: .init(hiveId: hive), body: .json(.init()))
            let evening = try #require(ISO8601.parse("\(today)T20:30:00.000Z"))
            #expect(try await habits.withDatabase { try await habits.jobs($0).alertHivesAtRisk(now: evening) } == 0, "today is not one of its days")
            _ = try await habits.api(owner).updateHive(path: .init(hiveId: hive), body: .json(.init(scheduleDaily: true))).ok
            #expect(try await habits.withDatabase { try await habits.jobs($0).alertHivesAtRisk(now: evening) } == 1)
        }
    }

    @Test("a habit's own streak reaching 7 days is a habit_streak_milestone with its feed line, once")
    func personalMilestone() async throws {
        try await withRunningHabits { habits in
            let user = try await habits.user(timezone: "UTC", dayStartHour: 0)
            let api = habits.api(user)
            let habit = try await api.createHabit(body: .json(.init(name: "Floss", emoji: "🦷"))).created.body.json.id
            for offset in (1...6).reversed() {
                _ = try await api.logHabit(path: .init(habitId: habit), body: .json(.init(date: today.adding(days: -offset).description))).ok
            }
            for _ in 0..<2 { _ = try await api.logHabit(path: .init(habitId: habit), body: .json(.init())) }
            let milestones = try await habits.events(count: .habitStreakMilestone, atLeast: 1).map { try $0.decode(HabitStreakMilestone.self).payload }
            #expect(milestones.count == 1 && milestones.first?.length == 7 && milestones.first?.dayDate == today && milestones.first?.userId == user.id)
            #expect(milestones.first?.habitName == "Floss" && milestones.first?.activity.type == .streakMilestone && milestones.first?.activity.hiveId == nil)
        }
    }

    @Test("an erased account's saved idempotent answers go with the rest of its data")
    func erasureRemovesSavedAnswers() async throws {
        try await withRunningHabits { habits in
            let user = try await habits.user(timezone: "UTC", dayStartHour: 0)
            let api = habits.api(user)
            func create() async throws -> Answer<HabitsOperations.CreateHabit.Output> {
                try await answer { try await api.createHabit(headers: .init(idempotencyKey: "create-journal"), body: .json(.init(name: "Journal"))) }
            }
            #expect(try await create().status == 201)
            #expect(try await habits.count("idempotency_keys WHERE user_id = '\(user.id.uuidString.lowercased())'") == 1)
            // The erasure `user_deleted` runs (HiveTests covers the event's way in), on the service's database.
            try await habits.withDatabase { database in
                let profiles = Profiles(outbox: Outbox(schema: database.schema, topicPrefix: habits.topicPrefix), contacts: ContactMatching(settings: HabitsSettings(phonePepper: "test-pepper")), logger: TestEnvironment.logger)
                try await database.transaction { connection in try await profiles.erase(user.id, on: connection) }
            }
            #expect(try await answer { try await api.getProfile() }.status == 401)
            #expect(try await habits.count("idempotency_keys WHERE user_id = '\(user.id.uuidString.lowercased())'") == 0)
            let replay = try await create()
            #expect(replay.status == 401 && replay.headers[HTTPField.Name("Idempotent-Replayed")!] == nil, "no saved answer is handed out after erasure")
        }
    }

    @Test("the user's local date (the seed's user_local_date): their zone and day start, now or at a given time")
    func localDate() async throws {
        try await withRunningHabits { habits in
            let user = try await habits.user(timezone: "America/New_York", dayStartHour: 4)
            let api = habits.api(user)
            let beforeDayStart: Date = try #require(ISO8601.parse("2026-03-10T07:30:00.000Z")), afterDayStart: Date = try #require(ISO8601.parse("2026-03-10T08:30:00.000Z"))
            let early = try await api.getLocalDate(query: .init(at: beforeDayStart)).ok.body.json  // 03:30 in New York: still the 9th
            #expect(early.date == "2026-03-09" && early.timezone == "America/New_York" && early.dayStartHour == 4)
            #expect(try await api.getLocalDate(query: .init(at: afterDayStart)).ok.body.json.date == "2026-03-10")
            let now = try await api.getLocalDate().ok.body.json
            #expect(now.date == UserClock(timeZoneIdentifier: "America/New_York", dayStartHour: 4)?.localDay(at: Date()).description)
            // Raw: a time that is not one, which the typed client cannot send.
            #expect(try await habits.request(.GET, "/local-date?at=yesterday", as: user).status == 422)
        }
    }
}

extension RunningHabits {
    func count(_ table: String) async throws -> Int {
        try await withDatabase { database in try await database.query("SELECT count(*)::int FROM \(unescaped: table)").collect()[0].decode(Int.self) }
    }
}
