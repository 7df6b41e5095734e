import ColonyClientTesting
import ColonyModels
import ColonyPlatform
import ColonyStorage
import ColonyTesting
import Foundation
import HabitsAPI
@testable import HabitsService
import NIOCore
import Testing

/// Habits' part of a user's data export (`user_export_requested`): the plan against the schema,
/// and a part written from data made through the API, with another member in the same hive.
@Suite("Habits: the user's data export")
struct HabitsExportTests {
    @Test("the plan covers every table of the schema, and describes exactly the columns it exports")
    func planMatchesSchema() async throws {
        try await withRunningHabits { habits in
            let problems = try await exportPlanProblems(HabitsExport.plan, database: habits.database)
            #expect(problems == [])
        }
    }

    /// A habithive user with a phone and a name, as auth announces them.
    func registered(_ habits: RunningHabits, phone: String, name: String) async throws -> RunningHabits.User {
        let user = try await habits.user()
        try await habits.publishAuthEvent(UserRegistered(userId: user.id, app: .habithive, email: nil, phone: phone, phoneHash: PhoneHash.of(e164: phone, pepper: "test-pepper"),
                                                         userMetadata: ["display_name": .string(name)], createdAt: Date()), user: user.id)
        try await waitUntil(timeout: .seconds(120)) { (try? await habits.api(user).getProfile().ok.body.json.displayName) == name }
        return user
    }

    @Test("the part holds the user's profile, habits, logs, hive, days, invites, invitation and feed lines; nothing of the other member but their id")
    func exportPart() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("colony-habits-export-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        try await withRunningHabits(exportsRoot: root) { habits in
            let adaPhone = "+1555\(Int.random(in: 1_000_000...9_999_999))", beaPhone = "+1556\(Int.random(in: 1_000_000...9_999_999))"
            let ada = try await registered(habits, phone: adaPhone, name: "Ada Exporter")
            let bea = try await registered(habits, phone: beaPhone, name: "Bea Otherperson")
            let adas = habits.api(ada), beas = habits.api(bea)
            // One clock for both: their logs today are the hive's same day, whenever the test runs.
            _ = try await adas.updateProfile(body: .json(.init(timezone: "Europe/Berlin", dayStartHour: 0, theme: .mint))).ok
            _ = try await beas.updateProfile(body: .json(.init(timezone: "Europe/Berlin", dayStartHour: 0))).ok
            let walk = try await adas.createHabit(body: .json(.init(name: "Export walk", emoji: "🚶", reminderTimes: ["07:30"]))).created.body.json.id.lowercased()
            _ = try await adas.logHabit(path: .init(habitId: walk), body: .json(.init())).ok
            let secret = try await beas.createHabit(body: .json(.init(name: "Bea's secret habit"))).created.body.json.id
            _ = try await beas.logHabit(path: .init(habitId: secret), body: .json(.init())).ok

            // Ada's hive: an open invite code, and Bea invited as a contact match, who accepts.
            let hive = try await adas.createHive(body: .json(.init(name: "Export hive", colorHex: "#4BBF8B"))).created.body.json.hive.id.lowercased()
            let code = try await adas.createHiveInvite(path: .init(hiveId: hive), body: .json(.init())).created.body.json.code
            let upload = try await adas.uploadContacts(body: .json(.init(contacts: [.init(phone: beaPhone, displayName: "Bea from my address book")]))).ok.body.json
            #expect(upload.matches.map { $0.userId.lowercased() } == [bea.id.lowercased])
            let invitation = try await adas.inviteContactToHive(path: .init(hiveId: hive), body: .json(.init(userId: bea.id.uuidString))).created.body.json.id
            _ = try await beas.acceptHiveInvitation(path: .init(invitationId: invitation)).ok
            _ = try await beas.logHiveToday(path: .init(hiveId: hive), body: .json(.init())).ok
            _ = try await adas.logHiveToday(path: .init(hiveId: hive), body: .json(.init())).ok

            // A request from another app is not habits'; the user's own follows it on the same partition.
            let elsewhere = UUID(), export = UUID()
            try await habits.publishAuthEvent(UserExportRequested(exportId: elsewhere, userId: ada.id, app: .unify, requestedAt: Date()), user: ada.id, app: .unify)
            try await habits.publishAuthEvent(UserExportRequested(exportId: export, userId: ada.id, app: .habithive, requestedAt: Date()), user: ada.id)
            let backend = FileSystemStorageBackend(root: root)
            let part = try await WrittenExportPart.read(backend, export: export, service: .habits)
            #expect(try await backend.get(bucket: UserExport.bucket.name, key: UserExport.manifestKey(elsewhere, .habits)) == nil)
            // Habits keeps no files: the data and its README are the whole part.
            #expect(part.manifest.entries == ["data.json", "README.md"])
            let (text, data) = (part.text, part.data)
            func rows(_ table: String) -> [JSONValue] { part.rows(table) }

            #expect(data["user_id"]?.stringValue == ada.id.lowercased && data["app"]?.stringValue == "habithive")
            let profile = try #require(rows("profile").first)
            #expect(rows("profile").count == 1 && profile["display_name"]?.stringValue == "Ada Exporter" && profile["timezone"]?.stringValue == "Europe/Berlin")
            #expect(profile["theme"]?.stringValue == "mint" && profile["phone_hash"]?.stringValue == PhoneHash.of(e164: adaPhone, pepper: "test-pepper"))
            let habitRows = rows("habits")
            #expect(habitRows.compactMap { $0["name"]?.stringValue } == ["Export walk"])
            #expect(habitRows.first?["reminder_times"]?.arrayValue?.compactMap(\.stringValue) == ["07:30"] && habitRows.first?["type"]?.stringValue == "checkbox")
            #expect(rows("habit_logs").compactMap { $0["habit_id"]?.stringValue } == [walk])
            let hiveRow = try #require(rows("hives").first)
            #expect(rows("hives").count == 1 && hiveRow["id"]?.stringValue == hive && hiveRow["name"]?.stringValue == "Export hive" && hiveRow["role"]?.stringValue == "owner")
            #expect(rows("hive_member_days").map { $0["hive_id"]?.stringValue } == [hive] && rows("hive_member_days").first?["done"]?.boolValue == true)
            // The code can still be used: it is left out.
            #expect(rows("hive_invites").count == 1 && rows("hive_invites").first?["code"] == .null && !text.contains(code))
            let invitationRow = try #require(rows("hive_invitations").first)
            #expect(rows("hive_invitations").count == 1 && invitationRow["user_id"]?.stringValue == bea.id.lowercased
                && invitationRow["invited_by"]?.stringValue == ada.id.lowercased && invitationRow["status"]?.stringValue == "accepted")
            // The lines about Ada: her habit's day and her hive day (Bea's are hers), and the day she completed for the hive.
            let activity = rows("activity")
            let completed = activity.filter { $0["type"]?.stringValue == "habit_completed" }
            #expect(completed.count == 2 && completed.contains { $0["habit_id"]?.stringValue == walk } && completed.contains { $0["hive_id"]?.stringValue == hive }, "\(activity)")
            #expect(activity.contains { $0["type"]?.stringValue == "hive_advanced" && $0["data"]?["completed_by"]?.stringValue == ada.id.lowercased }, "\(activity)")
            #expect(!activity.contains { $0["type"]?.stringValue == "hive_joined" }, "Bea's joining is Bea's: \(activity)")
            // Bea appears only by id, where she is the other side of Ada's invitation.
            for absent in ["Bea Otherperson", "Bea's secret habit", "Bea from my address book", beaPhone, PhoneHash.of(e164: beaPhone, pepper: "test-pepper"), adaPhone] {
                #expect(!text.contains(absent), "\(absent) is not in the export")
            }
            #expect(text.components(separatedBy: bea.id.lowercased).count - 1 == 1, "Bea's id only in the invitation")
            #expect(part.readme.contains("## hive_member_days"))
        }
    }
}

