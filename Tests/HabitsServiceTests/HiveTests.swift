import ColonyModels
import ColonyPlatform
import ColonyTesting
import Foundation
@testable import HabitsService
import Testing

/// Hives from the outside: membership, invites under concurrency, the shared streak, jobs, feed.
@Suite("Hives")
struct HiveTests {
    var today: LocalDate { UserClock.utc.localDay(at: Date()) }

    func createHive(_ habits: RunningHabits, _ owner: RunningHabits.User, name: String = "Morning run") async throws -> String {
        let reply = try await habits.request(.POST, "/hives", as: owner, json: ["name": name, "color_hex": "#4BBF8B"])
        #expect(reply.status == 201, "\(reply.body)")
        return try #require(reply.body["hive"]?["id"]?.stringValue)
    }

    func invite(_ habits: RunningHabits, _ owner: RunningHabits.User, hive: String, maxUses: Int = 20) async throws -> String {
        let reply = try await habits.request(.POST, "/hives/\(hive)/invites", as: owner, json: ["max_uses": maxUses])
        #expect(reply.status == 201, "\(reply.body)")
        return try #require(reply.body["code"]?.stringValue)
    }

    @Test("a non-member learns nothing: 404 for the hive, its days, feed, invites and logs; members are not owners")
    func nonMembers() async throws {
        try await withRunningHabits { habits in
            let owner = try await habits.user(timezone: "UTC", dayStartHour: 0)
            let member = try await habits.user(timezone: "UTC", dayStartHour: 0)
            let outsider = try await habits.user()
            let hive = try await createHive(habits, owner)
            let code = try await invite(habits, owner, hive: hive)
            #expect(try await habits.request(.POST, "/hives/join", as: member, json: ["code": code]).status == 200)
            for (method, path) in [("GET", "/hives/\(hive)"), ("GET", "/hives/\(hive)/days?from=\(today)&to=\(today)"), ("GET", "/hives/\(hive)/activity"),
                                   ("GET", "/hives/\(hive)/invites"), ("POST", "/hives/\(hive)/logs"), ("POST", "/hives/\(hive)/leave"), ("DELETE", "/hives/\(hive)"),
                                   ("POST", "/hives/\(hive)/invites"), ("POST", "/hives/\(hive)/advance")] {
                let reply = try await habits.request(.init(rawValue: method), path, as: outsider, json: method == "POST" ? [:] : nil)
                #expect(reply.status == 404 && reply.code == "hive_not_found", "\(method) \(path): \(reply.status)")
            }
            #expect(try await habits.request(.GET, "/hives", as: outsider).array.isEmpty)
            // A member reads, but owner-only actions are 403.
            #expect(try await habits.request(.GET, "/hives/\(hive)/invites", as: member).status == 200)
            #expect(try await habits.request(.POST, "/hives/\(hive)/invites", as: member, json: [:]).code == "owner_only")
            #expect(try await habits.request(.DELETE, "/hives/\(hive)", as: member).code == "owner_only")
            #expect(try await habits.request(.DELETE, "/hives/\(hive)/members/\(owner.id)", as: member).code == "owner_only")
            #expect(try await habits.request(.POST, "/hives/\(hive)/leave", as: owner).code == "owner_cannot_leave")
            #expect(try await habits.request(.DELETE, "/hives/\(hive)/members/\(owner.id)", as: owner).code == "cannot_remove_owner")
            // The owner removes the member; then the member is an outsider.
            #expect(try await habits.request(.DELETE, "/hives/\(hive)/members/\(member.id)", as: owner).status == 204)
            #expect(try await habits.request(.GET, "/hives/\(hive)", as: member).status == 404)
            let left = try await habits.events(count: .hiveLeft, atLeast: 1)
            #expect(try left.first?.decode(HiveLeft.self).payload.reason == .removed)
        }
    }

    @Test("invites: invalid, expired, exhausted, already a member; concurrent joins fill the hive to exactly 10")
    func invitesUnderConcurrency() async throws {
        try await withRunningHabits { habits in
            let owner = try await habits.user(timezone: "UTC", dayStartHour: 0)
            let hive = try await createHive(habits, owner)
            #expect(try await habits.request(.POST, "/hives/join", as: owner, json: ["code": "nope"]).code == "invite_invalid")
            #expect(try await habits.request(.POST, "/hives/\(hive)/invites", as: owner, json: ["ttl_minutes": 0]).status == 422)

            // 14 people race for a 20-use code: 9 get in (10 members), 5 find the hive full.
            let code = try await invite(habits, owner, hive: hive)
            var joiners: [RunningHabits.User] = []
            for _ in 0..<14 { joiners.append(try await habits.user()) }
            let results = try await withThrowingTaskGroup(of: String.self) { group in
                for joiner in joiners {
                    group.addTask {
                        let reply = try await habits.request(.POST, "/hives/join", as: joiner, json: ["code": code])
                        return reply.status == 200 ? "joined" : reply.code ?? "\(reply.status)"
                    }
                }
                return try await group.reduce(into: [String]()) { $0.append($1) }
            }
            #expect(results.filter { $0 == "joined" }.count == 9, "\(results)")
            #expect(results.filter { $0 == "hive_full" }.count == 5, "\(results)")
            let detail = try await habits.request(.GET, "/hives/\(hive)", as: owner)
            #expect(detail.body["members"]?.arrayValue?.count == 10)
            #expect(try await habits.request(.POST, "/hives/join", as: joiners[0], json: ["code": code]).code != "joined")

            // A 3-use code raced by 6 people: 3 join, 3 find it used up; uses counted exactly.
            let second = try await createHive(habits, owner, name: "Reading")
            let small = try await invite(habits, owner, hive: second, maxUses: 3)
            let outcomes = try await withThrowingTaskGroup(of: String.self) { group in
                for joiner in joiners.prefix(6) {
                    group.addTask { try await habits.request(.POST, "/hives/join", as: joiner, json: ["code": small]).code ?? "joined" }
                }
                return try await group.reduce(into: [String]()) { $0.append($1) }
            }
            #expect(outcomes.filter { $0 == "joined" }.count == 3 && outcomes.filter { $0 == "invite_exhausted" }.count == 3, "\(outcomes)")
            let invites = try await habits.request(.GET, "/hives/\(second)/invites", as: owner)
            #expect(invites.array.first?["use_count"]?.intValue == 3)
            #expect(try await habits.request(.POST, "/hives/join", as: joiners[0], json: ["code": small]).code == "invite_exhausted")

            // Already a member; then an expired code.
            let third = try await createHive(habits, owner, name: "Stretch")
            let fresh = try await invite(habits, owner, hive: third)
            #expect(try await habits.request(.POST, "/hives/join", as: joiners[0], json: ["code": fresh]).status == 200)
            #expect(try await habits.request(.POST, "/hives/join", as: joiners[0], json: ["code": fresh]).code == "already_member")
            _ = try await habits.withDatabase { database in
                try await database.query("UPDATE hive_invites SET expires_at = now() - interval '1 minute' WHERE code = \(fresh)")
            }
            #expect(try await habits.request(.POST, "/hives/join", as: joiners[1], json: ["code": fresh]).code == "invite_expired")
        }
    }

    @Test("the shared streak advances once when the last member logs, survives replays, and resets when a day closes short")
    func advanceAndReset() async throws {
        try await withRunningHabits { habits in
            let owner = try await habits.user(timezone: "UTC", dayStartHour: 0)
            let member = try await habits.user(timezone: "UTC", dayStartHour: 0)
            let hive = try await createHive(habits, owner)
            let code = try await invite(habits, owner, hive: hive)
            #expect(try await habits.request(.POST, "/hives/join", as: member, json: ["code": code]).status == 200)

            let first = try await habits.request(.POST, "/hives/\(hive)/logs", as: owner, json: [:])
            #expect(first.status == 200 && first.body["hive"]?["current_length"]?.intValue == 0 && first.body["hive_day"]?["complete_count"]?.intValue == 1)
            let list = try await habits.request(.GET, "/hives", as: member)
            #expect(list.array.first?["today"]?["done"]?.intValue == 1 && list.array.first?["today"]?["done_by_me"]?.boolValue == false)
            let last = try await habits.request(.POST, "/hives/\(hive)/logs", as: member, json: [:])
            #expect(last.body["hive"]?["current_length"]?.intValue == 1 && last.body["hive"]?["last_advanced_on"]?.stringValue == today.description)
            #expect(last.body["hive_day"]?["advanced"]?.boolValue == true)
            // Replays and "advance now" do not advance the same day twice.
            #expect(try await habits.request(.POST, "/hives/\(hive)/logs", as: member, json: [:]).body["hive"]?["current_length"]?.intValue == 1)
            let advance = try await habits.request(.POST, "/hives/\(hive)/advance", as: owner, json: [:])
            #expect(advance.body["advanced"]?.boolValue == true && advance.body["complete_count"]?.intValue == 2 && advance.body["hive"]?["current_length"]?.intValue == 1)
            #expect(try await habits.request(.POST, "/hives/\(hive)/advance", as: member, json: [:]).code == "owner_only")

            try await habits.withDatabase { database in
                let jobs = habits.jobs(database)
                // Tomorrow: today closes (already advanced). The day after: tomorrow closes short.
                let tomorrowReport = try await jobs.closeDueDays(now: Date().addingTimeInterval(86400))
                #expect(tomorrowReport.closedDays >= 1 && tomorrowReport.broken == 0)
                #expect(try await jobs.closeDueDays(now: Date().addingTimeInterval(86400)).closedDays == 0)
                let report = try await jobs.closeDueDays(now: Date().addingTimeInterval(2 * 86400))
                #expect(report.broken == 1)
            }
            let detail = try await habits.request(.GET, "/hives/\(hive)", as: owner)
            #expect(detail.body["hive"]?["current_length"]?.intValue == 0)
            let days = try await habits.request(.GET, "/hives/\(hive)/days?from=\(today)&to=\(today.adding(days: 1))", as: member)
            #expect(days.body["hive_days"]?.arrayValue?.map { $0["advanced"]?.boolValue } == [true, false])
            #expect(days.body["member_days"]?.arrayValue?.count == 2)

            let advanced = try await habits.events(count: .hiveAdvanced, atLeast: 1)
            #expect(advanced.count == 1)
            let broken = try await habits.events(count: .hiveBroken, atLeast: 1)
            #expect(try broken.first?.decode(HiveBroken.self).payload.previousLength == 1)
            let feed = try await habits.request(.GET, "/hives/\(hive)/activity?limit=3", as: member)
            #expect(feed.body["events"]?.arrayValue?.first?["type"]?.stringValue == "hive_broken")
            let cursor = try #require(feed.body["next_cursor"]?.stringValue)
            let older = try await habits.request(.GET, "/hives/\(hive)/activity?limit=10&before=\(cursor.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)", as: member)
            let types = older.body["events"]?.arrayValue?.compactMap { $0["type"]?.stringValue } ?? []
            #expect(types.contains("hive_joined") && types.count + 3 == 5, "\(types)")
        }
    }

    @Test("a hive at risk is announced once, naming the members still missing at 20:00 their time")
    func atRisk() async throws {
        try await withRunningHabits { habits in
            let owner = try await habits.user(timezone: "UTC", dayStartHour: 0)
            let member = try await habits.user(timezone: "UTC", dayStartHour: 0)
            let hive = try await createHive(habits, owner)
            #expect(try await habits.request(.POST, "/hives/join", as: member, json: ["code": try await invite(habits, owner, hive: hive)]).status == 200)
            #expect(try await habits.request(.POST, "/hives/\(hive)/logs", as: owner, json: [:]).status == 200)
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
            let habit = try await habits.request(.POST, "/habits", as: owner, json: ["name": "Read", "type": "counter", "target_per_day": 20, "color_hex": "#5AC8FA"])
            let habitID = try #require(habit.body["id"]?.stringValue)
            for offset in [1, 10, 40] {
                _ = try await habits.request(.POST, "/habits/\(habitID)/logs", as: owner, json: ["date": today.adding(days: -offset).description, "value": 5])
            }
            #expect(try await habits.request(.POST, "/habits/\(habitID)/hive", as: owner, json: ["backfill_days": 10]).status == 422)
            let converted = try await habits.request(.POST, "/habits/\(habitID)/hive", as: owner, json: ["backfill_days": 30])
            #expect(converted.status == 201)
            #expect(converted.body["hive"]?["name"]?.stringValue == "Read" && converted.body["hive"]?["target_per_day"]?.intValue == 20 && converted.body["hive"]?["type"]?.stringValue == "counter")
            #expect(converted.body["members"]?.arrayValue?.first?["role"]?.stringValue == "owner")
            let hive = try #require(converted.body["hive"]?["id"]?.stringValue)
            let days = try await habits.request(.GET, "/hives/\(hive)/days?from=\(today.adding(days: -60))&to=\(today)", as: owner)
            #expect(days.body["member_days"]?.arrayValue?.count == 2)
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
                let name = try await habits.request(.GET, "/profile", as: ada).body["display_name"]?.stringValue
                return name == "Ada"
            }
            // Another app's registration is not ours.
            let stranger = UUID()
            try await habits.publishAuthEvent(UserRegistered(userId: stranger, app: .unify, email: nil, phone: nil, phoneHash: nil, userMetadata: [:], createdAt: Date()), user: stranger, app: .unify)

            // Contacts: Bob uploads Ada's number (and one unknown); only Ada comes back, with the number.
            let bob = try await habits.user(timezone: "UTC", dayStartHour: 0)
            #expect(try await habits.request(.POST, "/contacts", as: bob, json: ["contacts": [["phone": "4155550100"]]]).status == 422)
            let upload = try await habits.request(.POST, "/contacts", as: bob, json: ["contacts": [["phone": "+14155550100", "display_name": "Ada L."], ["phone": "+14155550199"]]])
            let matches = upload.body["matches"]?.arrayValue ?? []
            #expect(matches.count == 1 && matches.first?["user_id"]?.stringValue.flatMap(UUID.init(uuidString:)) == ada.id && matches.first?["contact_name"]?.stringValue == "Ada L.")
            #expect(matches.first?["phone"]?.stringValue == "+14155550100" && matches.first?["contact_hash"]?.stringValue == phoneHash)

            // Ada owns a hive Bob joined; Ada's account is deleted.
            let hiveReply = try await habits.request(.POST, "/hives", as: ada, json: ["name": "Ada's hive"])
            let hive = try #require(hiveReply.body["hive"]?["id"]?.stringValue)
            let code = try #require(try await habits.request(.POST, "/hives/\(hive)/invites", as: ada, json: [:]).body["code"]?.stringValue)
            #expect(try await habits.request(.POST, "/hives/join", as: bob, json: ["code": code]).status == 200)
            try await habits.publishAuthEvent(UserDeleted(userId: ada.id, app: .habithive, deletedAt: Date()), user: ada.id)
            try await waitUntil(timeout: .seconds(30)) {
                try await habits.request(.GET, "/hives/\(hive)", as: bob).status == 404
            }
            #expect(try await habits.request(.GET, "/profile", as: ada).code == "account_deleted")
            #expect(try await habits.request(.GET, "/contacts/matches", as: bob).body["matches"]?.arrayValue?.isEmpty == true)
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
