import ColonyClientTesting
import ColonyModels
import ColonyPlatform
import ColonyStorage
import ColonyTesting
import Foundation
import HabitsAPI
@testable import HabitsService
import Testing

/// Reports from the outside: who may report a hive or a person (`HabitsReportables`), and what
/// the console's moderation routes then do with them.
@Suite("Habits reports")
struct HabitsReportTests {
    let key = InternalKey((0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined())

    func withReportingHabits(_ body: @Sendable (RunningHabits, ModerationCalls) async throws -> Void) async throws {
        let settings = HabitsSettings(phonePepper: "test-pepper")
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("colony-habits-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        let key = key
        try await withRunningService(.habits, app: .habithive, apiPrefix: "/habits/v1", configure: { $0.consoleKey = key }, definition: { _ in
            HabitsService.definition(settings: settings, exports: FileSystemStorageBackend(root: root))
        }) { habits in try await body(habits, ModerationCalls(service: habits, key: key)) }
    }

    func report(_ api: HabitsClient, _ type: Schemas.ReportCreate.ObjectTypePayload, _ id: String,
                _ category: Schemas.ReportCreate.CategoryPayload = .harassment, words: String? = nil) async throws -> Answer<HabitsOperations.CreateReport.Output> {
        try await answer { try await api.createReport(body: .json(.init(objectType: type, objectId: id, category: category, words: words))) }
    }

    /// A hive owned by `owner` with `members` joined by code.
    func makeHive(_ habits: RunningHabits, owner: RunningHabits.User, members: [RunningHabits.User], name: String) async throws -> String {
        let id = try await habits.api(owner).createHive(body: .json(.init(name: name, colorHex: "#4BBF8B"))).created.body.json.hive.id
        let code = try await habits.api(owner).createHiveInvite(path: .init(hiveId: id), body: .json(.init())).created.body.json.code
        for member in members { _ = try await habits.api(member).joinHive(body: .json(.init(code: code))).ok }
        return id
    }


    func outboxCount(_ habits: RunningHabits, type: String, key: String) async throws -> Int {
        try await habits.withDatabase { database in
            try await database.query("SELECT count(*)::int8 FROM outbox WHERE event_type = \(type) AND event_key = \(key)").collect().first!.decode(Int.self)
        }
    }

    @Test("hive: members report it once, outsiders and random ids get 404, the owner 403; removed, it is deleted as its owner deletes it")
    func hives() async throws {
        try await withReportingHabits { habits, moderation in
            let owner = try await habits.user(), ann = try await habits.user(), bob = try await habits.user(), stranger = try await habits.user()
            let hive = try await makeHive(habits, owner: owner, members: [ann, bob], name: "Gym rats, losers only")
            let other = try await makeHive(habits, owner: owner, members: [ann], name: "Reading")

            let filed = try await report(habits.api(ann), .hive, hive, .harassment, words: "  the name is aimed at me  ")
            #expect(filed.status == 201)
            let created = try filed.output.created.body.json
            #expect(created.status == .open && created.objectType == "hive" && created.objectId == hive && created.category == .harassment)
            #expect(created.words == "the name is aimed at me")
            #expect(try await report(habits.api(ann), .hive, hive).code == "already_reported")
            #expect(try await report(habits.api(ann), .hive, hive).status == 409)
            #expect(try await report(habits.api(bob), .hive, hive, .hate).status == 201)
            for (reporter, id) in [(stranger, hive), (ann, UUID().uuidString.lowercased())] {
                let refused = try await report(habits.api(reporter), .hive, id)
                #expect(refused.status == 404 && refused.code == "not_found")
            }
            #expect(try await report(habits.api(ann), .hive, "not-a-uuid").status == 422)
            let own = try await report(habits.api(owner), .hive, hive)
            #expect(own.status == 403 && own.code == "own_content")

            let queue = try await moderation.queue()
            let item = try #require(queue.first { $0.objectId.lowercased == hive })
            #expect(item.objectType == "hive" && item.reportedUserId == owner.id && item.openReports == 2)
            #expect(Set(item.categories.map(\.category)) == [.harassment, .hate])
            let review = try #require(try await moderation.review("hive", UUID(uuidString: hive)!))
            #expect(review.content == "Gym rats, losers only" && review.reports.count == 2 && review.reportedUserId == owner.id)

            let resolution = try await moderation.resolve("hive", UUID(uuidString: hive)!, .remove)
            #expect(resolution.removed && resolution.action == .remove)
            #expect(Set(resolution.reporterIds) == [ann.id, bob.id])
            // Gone for everyone in it, as after its owner's delete: the members were told (`hive_deleted`).
            for member in [ann, bob, owner] {
                #expect(try await answer { try await habits.api(member).getHive(path: .init(hiveId: hive)) }.code == "hive_not_found")
            }
            #expect(try await habits.api(bob).listHives().ok.body.json.isEmpty)
            #expect(try await habits.api(ann).listHives().ok.body.json.map(\.hive.id) == [other])
            #expect(try await outboxCount(habits, type: "hive_deleted", key: hive) == 1)
            let deleted = try await habits.events(count: .hiveDeleted, atLeast: 1).map { try $0.decode(HiveDeleted.self).payload }
            #expect(deleted.first?.hive.id.lowercased == hive && Set(deleted.first?.memberIds ?? []) == [owner.id, ann.id, bob.id])
            #expect(deleted.first?.reason == .removed)
            #expect(try await moderation.review("hive", UUID(uuidString: hive)!)?.content == nil)
            #expect(try await moderation.queue().allSatisfy { $0.objectId.lowercased != hive })
            // Acted on already.
            #expect(try await moderation.refusal("hive", UUID(uuidString: hive)!, .remove) == "404 no_open_reports")

            // Dismissed, a hive stays, and may be reported again.
            #expect(try await report(habits.api(ann), .hive, other, .spam).status == 201)
            let dismissed = try await moderation.resolve("hive", UUID(uuidString: other)!, .dismiss)
            #expect(!dismissed.removed && dismissed.reporterIds == [ann.id])
            #expect(try await habits.api(ann).getHive(path: .init(hiveId: other)).ok.body.json.hive.name == "Reading")
            #expect(try await outboxCount(habits, type: "hive_deleted", key: other) == 0)
            #expect(try await report(habits.api(ann), .hive, other, .spam).status == 201)
        }
    }

    @Test("profile: only someone in a hive with them may report a person; removed, their name and avatar are reset as they could reset them")
    func profiles() async throws {
        try await withReportingHabits { habits, moderation in
            let owner = try await habits.user(), ann = try await habits.user(), leaver = try await habits.user(), stranger = try await habits.user()
            _ = try await habits.api(owner).updateProfile(body: .json(.init(displayName: "Rude Name", avatarUrl: "https://images.example/rude.png"))).ok
            let hive = try await makeHive(habits, owner: owner, members: [ann, leaver], name: "Steps")
            _ = try await habits.api(leaver).leaveHive(path: .init(hiveId: hive))
            let target = owner.id.uuidString.lowercased()

            #expect(try await report(habits.api(ann), .profile, target, .sexual).status == 201)
            #expect(try await report(habits.api(ann), .profile, target).code == "already_reported")
            // A stranger, someone who left the hive, and an id nobody has: the same 404.
            for (reporter, id) in [(stranger, target), (leaver, target), (ann, UUID().uuidString.lowercased())] {
                let refused = try await report(habits.api(reporter), .profile, id)
                #expect(refused.status == 404 && refused.code == "not_found")
            }
            let own = try await report(habits.api(owner), .profile, target)
            #expect(own.status == 403 && own.code == "own_content")
            // The owner reports Ann back (dismissed below).
            #expect(try await report(habits.api(owner), .profile, ann.id.uuidString.lowercased(), .spam).status == 201)

            let queue = try await moderation.queue()
            let item = try #require(queue.first { $0.objectType == "profile" && $0.objectId == owner.id })
            #expect(item.reportedUserId == owner.id && item.categories.map(\.category) == [.sexual])
            let review = try #require(try await moderation.review("profile", owner.id))
            #expect(review.content?.contains("Rude Name") == true && review.content?.contains("https://images.example/rude.png") == true)

            let resolution = try await moderation.resolve("profile", owner.id, .remove)
            #expect(resolution.removed && resolution.reporterIds == [ann.id])
            let defaultName = "Bee " + String(target.prefix(6))
            let mine = try await habits.api(owner).getProfile().ok.body.json
            #expect(mine.displayName == defaultName && mine.avatarUrl == nil)
            let seen = try await habits.api(ann).getHive(path: .init(hiveId: hive)).ok.body.json.members.first { $0.userId == target }
            #expect(seen?.displayName == defaultName && seen?.avatarUrl == nil)
            #expect(try await moderation.review("profile", owner.id)?.content == defaultName)
            #expect(try await moderation.refusal("profile", owner.id, .dismiss) == "404 no_open_reports")

            _ = try await habits.api(ann).updateProfile(body: .json(.init(displayName: "Ann"))).ok
            let dismissed = try await moderation.resolve("profile", ann.id, .dismiss)
            #expect(!dismissed.removed && dismissed.reporterIds == [owner.id])
            #expect(try await habits.api(ann).getProfile().ok.body.json.displayName == "Ann")
        }
    }
}
