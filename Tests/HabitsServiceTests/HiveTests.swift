import ColonyClientTesting
import ColonyModels
import ColonyPlatform
import ColonyTesting
import Foundation
import HabitsAPI
@testable import HabitsService
import Testing

/// Hives from the outside: membership, invites under concurrency, the shared streak, jobs, feed.
@Suite("Hives")
struct HiveTests {
    var today: LocalDate { UserClock.utc.localDay(at: Date()) }

    func createHive(_ habits: RunningHabits, _ owner: RunningHabits.User, name: String = "Morning run") async throws -> String {
        try await habits.api(owner).createHive(body: .json(.init(name: name, colorHex: "#4BBF8B"))).created.body.json.hive.id
    }

    func invite(_ habits: RunningHabits, _ owner: RunningHabits.User, hive: String, maxUses: Int = 20) async throws -> String {
        try await habits.api(owner).createHiveInvite(path: .init(hiveId: hive), body: .json(.init(maxUses: maxUses))).created.body.json.code
    }

    func join(_ api: HabitsClient, code: String) async throws -> Answer<HabitsOperations.JoinHive.Output> {
        try await answer { try await api.joinHive(body: .json(.init(code: code))) }
    }

    @Test("a non-member learns nothing: 404 for the hive, its days, feed, invites and logs; members are not owners")
    func nonMembers() async throws {
        try await withRunningHabits { habits in
            let owner = try await habits.user(timezone: "UTC", dayStartHour: 0)
            let member = try await habits.user(timezone: "UTC", dayStartHour: 0)
            let outsider = try await habits.user()
            let owners = habits.api(owner), members = habits.api(member), outsiders = habits.api(outsider)
            let hive = try await createHive(habits, owner)
            let code = try await invite(habits, owner, hive: hive)
            #expect(try await join(members, code: code).status == 200)
            let path = HabitsOperations.GetHive.Input.Path(hiveId: hive)
            let day = today.description
            let attempts: [(String, () async throws -> (status: Int, code: String?))] = [
                ("getHive", { try await outcome { try await outsiders.getHive(path: path) } }),
                ("listHiveDays", { try await outcome { try await outsiders.listHiveDays(path: .init(hiveId: hive), query: .init(from: day, to: day)) } }),
                ("listHiveActivity", { try await outcome { try await outsiders.listHiveActivity(path: .init(hiveId: hive)) } }),
                ("listHiveInvites", { try await outcome { try await outsiders.listHiveInvites(path: .init(hiveId: hive)) } }),
                ("logHiveToday", { try await outcome { try await outsiders.logHiveToday(path: .init(hiveId: hive), body: .json(.init())) } }),
                ("leaveHive", { try await outcome { try await outsiders.leaveHive(path: .init(hiveId: hive)) } }),
                ("deleteHive", { try await outcome { try await outsiders.deleteHive(path: .init(hiveId: hive)) } }),
                ("createHiveInvite", { try await outcome { try await outsiders.createHiveInvite(path: .init(hiveId: hive), body: .json(.init())) } }),
                ("advanceHive", { try await outcome { try await outsiders.advanceHive(path: .init(hiveId: hive), body: .json(.init())) } }),
            ]
            for (operation, attempt) in attempts {
                let reply = try await attempt()
                #expect(reply.status == 404 && reply.code == "hive_not_found", "\(operation): \(reply.status)")
            }
            #expect(try await outsiders.listHives().ok.body.json.isEmpty)
            // A member reads, but owner-only actions are 403.
            _ = try await members.listHiveInvites(path: .init(hiveId: hive)).ok
            #expect(try await answer { try await members.createHiveInvite(path: .init(hiveId: hive), body: .json(.init())) }.code == "owner_only")
            #expect(try await answer { try await members.deleteHive(path: .init(hiveId: hive)) }.code == "owner_only")
            #expect(try await answer { try await members.removeHiveMember(path: .init(hiveId: hive, userId: owner.id.uuidString)) }.code == "owner_only")
            #expect(try await answer { try await owners.leaveHive(path: .init(hiveId: hive)) }.code == "owner_cannot_leave")
            #expect(try await answer { try await owners.removeHiveMember(path: .init(hiveId: hive, userId: owner.id.uuidString)) }.code == "cannot_remove_owner")
            // The owner removes the member; then the member is an outsider.
            #expect(try await answer { try await owners.removeHiveMember(path: .init(hiveId: hive, userId: member.id.uuidString)) }.status == 204)
            #expect(try await answer { try await members.getHive(path: path) }.status == 404)
            let left = try await habits.events(count: .hiveLeft, atLeast: 1)
            #expect(try left.first?.decode(HiveLeft.self).payload.reason == .removed)
        }
    }

    @Test("invites: invalid, expired, exhausted, already a member; concurrent joins fill the hive to exactly 10")
    func invitesUnderConcurrency() async throws {
        try await withRunningHabits { habits in
            let owner = try await habits.user(timezone: "UTC", dayStartHour: 0)
            let owners = habits.api(owner)
            let hive = try await createHive(habits, owner)
            #expect(try await join(owners, code: "nope").code == "invite_invalid")
            #expect(try await answer { try await owners.createHiveInvite(path: .init(hiveId: hive), body: .json(.init(ttlMinutes: 0))) }.status == 422)

            // 14 people race for a 20-use code: 9 get in (10 members), 5 find the hive full.
            let code = try await invite(habits, owner, hive: hive)
            var joiners: [RunningHabits.User] = []
            for _ in 0..<14 { joiners.append(try await habits.user()) }
            let results = try await withThrowingTaskGroup(of: String.self) { group in
                for joiner in joiners {
                    group.addTask {
                        let reply = try await join(habits.api(joiner), code: code)
                        return reply.status == 200 ? "joined" : reply.code ?? "\(reply.status)"
                    }
                }
                return try await group.reduce(into: [String]()) { $0.append($1) }
            }
            #expect(results.filter { $0 == "joined" }.count == 9, "\(results)")
            #expect(results.filter { $0 == "hive_full" }.count == 5, "\(results)")
            let detail = try await owners.getHive(path: .init(hiveId: hive)).ok.body.json
            #expect(detail.members.count == 10)
            #expect(try await join(habits.api(joiners[0]), code: code).code != "joined")

            // A 3-use code raced by 6 people: 3 join, 3 find it used up; uses counted exactly.
            let second = try await createHive(habits, owner, name: "Reading")
            let small = try await invite(habits, owner, hive: second, maxUses: 3)
            let outcomes = try await withThrowingTaskGroup(of: String.self) { group in
                for joiner in joiners.prefix(6) {
                    group.addTask { try await join(habits.api(joiner), code: small).code ?? "joined" }
                }
                return try await group.reduce(into: [String]()) { $0.append($1) }
            }
            #expect(outcomes.filter { $0 == "joined" }.count == 3 && outcomes.filter { $0 == "invite_exhausted" }.count == 3, "\(outcomes)")
            let invites = try await owners.listHiveInvites(path: .init(hiveId: second)).ok.body.json
            #expect(invites.first?.useCount == 3)
            #expect(try await join(habits.api(joiners[0]), code: small).code == "invite_exhausted")

            // Already a member; then an expired code.
            let third = try await createHive(habits, owner, name: "Stretch")
            let fresh = try await invite(habits, owner, hive: third)
            #expect(try await join(habits.api(joiners[0]), code: fresh).status == 200)
            #expect(try await join(habits.api(joiners[0]), code: fresh).code == "already_member")
            _ = try await habits.withDatabase { database in
                try await database.query("UPDATE hive_invites SET expires_at = now() - interval '1 minute' WHERE code = \(fresh)")
            }
            #expect(try await join(habits.api(joiners[1]), code: fresh).code == "invite_expired")
        }
    }

    @Test("the shared streak advances once when the last member logs, survives replays, and resets when a day closes short")
    func advanceAndReset() async throws {
        try await withRunningHabits { habits in
            let owner = try await habits.user(timezone: "UTC", dayStartHour: 0)
            let member = try await habits.user(timezone: "UTC", dayStartHour: 0)
            let owners = habits.api(owner), members = habits.api(member)
            let hive = try await createHive(habits, owner)
            let code = try await invite(habits, owner, hive: hive)
            #expect(try await join(members, code: code).status == 200)

            let first = try await owners.logHiveToday(path: .init(hiveId: hive), body: .json(.init())).ok.body.json
            #expect(first.hive.currentLength == 0 && first.hiveDay?.completeCount == 1)
            let list = try await members.listHives().ok.body.json
            #expect(list.first?.today.done == 1 && list.first?.today.doneByMe == false)
            let last = try await members.logHiveToday(path: .init(hiveId: hive), body: .json(.init())).ok.body.json
            #expect(last.hive.currentLength == 1 && last.hive.lastAdvancedOn == today.description)
            #expect(last.hiveDay?.advanced == true)
            // Replays and "advance now" do not advance the same day twice.
            #expect(try await members.logHiveToday(path: .init(hiveId: hive), body: .json(.init())).ok.body.json.hive.currentLength == 1)
            let advance = try await owners.advanceHive(path: .init(hiveId: hive), body: .json(.init())).ok.body.json
            #expect(advance.advanced == true && advance.completeCount == 2 && advance.hive.currentLength == 1)
            #expect(try await answer { try await members.advanceHive(path: .init(hiveId: hive), body: .json(.init())) }.code == "owner_only")

            try await habits.withDatabase { database in
                let jobs = habits.jobs(database)
                // Tomorrow: today closes (already advanced). The day after: tomorrow closes short.
                let tomorrowReport = try await jobs.closeDueDays(now: Date().addingTimeInterval(86400))
                #expect(tomorrowReport.closedDays >= 1 && tomorrowReport.broken == 0)
                #expect(try await jobs.closeDueDays(now: Date().addingTimeInterval(86400)).closedDays == 0)
                let report = try await jobs.closeDueDays(now: Date().addingTimeInterval(2 * 86400))
                #expect(report.broken == 1)
            }
            let detail = try await owners.getHive(path: .init(hiveId: hive)).ok.body.json
            #expect(detail.hive.currentLength == 0)
            let days = try await members.listHiveDays(path: .init(hiveId: hive), query: .init(from: today.description, to: today.adding(days: 1).description)).ok.body.json
            #expect(days.hiveDays.map(\.advanced) == [true, false])
            #expect(days.memberDays.count == 2)

            let advanced = try await habits.events(count: .hiveAdvanced, atLeast: 1)
            #expect(advanced.count == 1)
            let broken = try await habits.events(count: .hiveBroken, atLeast: 1)
            #expect(try broken.first?.decode(HiveBroken.self).payload.previousLength == 1)
            let feed = try await members.listHiveActivity(path: .init(hiveId: hive), query: .init(limit: 3)).ok.body.json
            #expect(feed.events.first?._type.rawValue == "hive_broken")
            let cursor = try #require(feed.nextCursor)
            // The client encodes the cursor in the query as a browser would.
            let older = try await members.listHiveActivity(path: .init(hiveId: hive), query: .init(before: cursor, limit: 10)).ok.body.json
            let types = older.events.map(\._type.rawValue)
            #expect(types.contains("hive_joined") && types.count + 3 == 5, "\(types)")
        }
    }

    @Test("a hive at risk is announced once, naming the members still missing at 20:00 their time")
    func atRisk() async throws {
        try await withRunningHabits { habits in
            let owner = try await habits.user(timezone: "UTC", dayStartHour: 0)
            let member = try await habits.user(timezone: "UTC", dayStartHour: 0)
            let hive = try await createHive(habits, owner)
            #expect(try await join(habits.api(member), code: try await invite(habits, owner, hive: hive)).status == 200)
            _ = try await habits.api(owner).logHiveToday(path: .init(hiveId: hive), body: .json(.init())).ok
            let evening = ISO8601.parse("\(today)T20:30:00.000Z")!
            let sent = try await habits.withDatabase { database in
                [try await habits.jobs(database).alertHivesAtRisk(now: ISO8601.parse("\(today)T19:30:00.000Z")!),
                 try await habits.jobs(database).alertHivesAtRisk(now: evening),
                 try await habits.jobs(database).alertHivesAtRisk(now: evening.addingTimeInterval(3600))]
            }
            #expect(sent == [0, 1, 0])
            let events = try await habits.events(count: .hiveAtRisk, atLeast: 1)
            let payload = try #require(try events.first?.decode(HiveAtRisk.self).payload)
            #expect(payload.missingUserIds == [member.id] && payload.doneUserIds == [owner.id] && payload.dayDate == today)
        }
    }

    @Test("converting a habit copies its metadata and backfills its recent logs")
    func convertHabit() async throws {
        try await withRunningHabits { habits in
            let owner = try await habits.user(timezone: "UTC", dayStartHour: 0)
            let owners = habits.api(owner)
            let habitID = try await owners.createHabit(body: .json(.init(name: "Read", colorHex: "#5AC8FA", _type: .counter, targetPerDay: 20))).created.body.json.id
            for offset in [1, 10, 40] {
                _ = try await owners.logHabit(path: .init(habitId: habitID), body: .json(.init(value: 5, date: today.adding(days: -offset).description)))
            }
            #expect(try await answer { try await owners.convertHabitToHive(path: .init(habitId: habitID), body: .json(.init(backfillDays: 10))) }.status == 422)
            let converted = try await owners.convertHabitToHive(path: .init(habitId: habitID), body: .json(.init(backfillDays: 30))).created.body.json
            #expect(converted.hive.name == "Read" && converted.hive.targetPerDay == 20 && converted.hive._type == .counter)
            #expect(converted.members.first?.role == .owner)
            let hive = converted.hive.id
            let days = try await owners.listHiveDays(path: .init(hiveId: hive), query: .init(from: today.adding(days: -60).description, to: today.description)).ok.body.json
            #expect(days.memberDays.count == 2)
            let created = try await habits.events(count: .hiveCreated, atLeast: 1)
            #expect(try created.first?.decode(HiveCreated.self).payload.owner.role == "owner")
        }
    }

    @Test("auth's events: registration names the profile and brings the phone hash; deletion erases the account and tells hive members")
    func authEvents() async throws {
        try await withRunningHabits { habits in
            let ada = try await habits.user()
            let phoneHash = PhoneHash.of(e164: "+14155550100", pepper: "test-pepper")  // as auth computes it
            try await habits.publishAuthEvent(UserRegistered(userId: ada.id, app: .habithive, email: nil, phone: "+14155550100", phoneHash: phoneHash,
                                                             userMetadata: ["display_name": .string("Ada")], createdAt: Date()), user: ada.id)
            try await waitUntil(timeout: .seconds(30)) {
                (try? await habits.api(ada).getProfile().ok.body.json.displayName) == "Ada"
            }
            // Another app's registration is not ours.
            let stranger = UUID()
            try await habits.publishAuthEvent(UserRegistered(userId: stranger, app: .unify, email: nil, phone: nil, phoneHash: nil, userMetadata: [:], createdAt: Date()), user: stranger, app: .unify)

            // Contacts: Bob uploads Ada's number (and one unknown); only Ada comes back, with the number.
            let bob = try await habits.user(timezone: "UTC", dayStartHour: 0)
            let bobs = habits.api(bob), adas = habits.api(ada)
            #expect(try await answer { try await bobs.uploadContacts(body: .json(.init(contacts: [.init(phone: "4155550100")]))) }.status == 422)
            let upload = try await bobs.uploadContacts(body: .json(.init(contacts: [.init(phone: "+14155550100", displayName: "Ada L."), .init(phone: "+14155550199")]))).ok.body.json
            let matches = upload.matches
            #expect(matches.count == 1 && matches.first.flatMap { UUID(uuidString: $0.userId) } == ada.id && matches.first?.contactName == "Ada L.")
            #expect(matches.first?.phone == "+14155550100" && matches.first?.contactHash == phoneHash)

            // Ada owns a hive Bob joined; Ada's account is deleted.
            let hive = try await adas.createHive(body: .json(.init(name: "Ada's hive"))).created.body.json.hive.id
            let code = try await adas.createHiveInvite(path: .init(hiveId: hive), body: .json(.init())).created.body.json.code
            #expect(try await join(bobs, code: code).status == 200)
            try await habits.publishAuthEvent(UserDeleted(userId: ada.id, app: .habithive, deletedAt: Date()), user: ada.id)
            try await waitUntil(timeout: .seconds(30)) {
                try await answer { try await bobs.getHive(path: .init(hiveId: hive)) }.status == 404
            }
            #expect(try await answer { try await adas.getProfile() }.code == "account_deleted")
            #expect(try await bobs.listContactMatches().ok.body.json.matches.isEmpty)
            let deleted = try await habits.events(count: .hiveDeleted, atLeast: 1)
            let payload = try #require(try deleted.first?.decode(HiveDeleted.self).payload)
            #expect(payload.reason == .accountDeleted && payload.memberIds.contains(bob.id))
            let leftovers = try await habits.withDatabase { database in
                try await database.query("SELECT (SELECT count(*) FROM profiles WHERE id = \(stranger)) + (SELECT count(*) FROM habits WHERE user_id = \(ada.id))").collect().first!.decode(Int.self)
            }
            #expect(leftovers == 0)
        }
    }
}

/// An answer's status and refusal code, for a list of different operations tried alike.
func outcome<Output: Sendable>(_ call: () async throws -> Output) async throws -> (status: Int, code: String?) {
    let reply = try await answer(call)
    return (reply.status, reply.code)
}
