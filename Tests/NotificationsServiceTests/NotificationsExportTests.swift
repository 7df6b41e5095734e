import ColonyModels
import ColonyPlatform
import ColonyStorage
import ColonyTesting
import Foundation
import NIOCore
import Testing
@testable import NotificationsService

/// Notifications' part of a user's data export (`user_export_requested`, of any app): the plan
/// against the schema, and a part written for a Unify user pushed a message by another member of
/// their group.
@Suite("Notifications: the user's data export")
struct NotificationsExportTests {
    @Test("the plan covers every table of the schema, and describes exactly the columns it exports")
    func planMatchesSchema() async throws {
        try await withRunningNotifications { n in
            let problems = try await exportPlanProblems(NotificationsExport.plan, database: n.service.database)
            #expect(problems == [])
        }
    }

    @Test("the part holds the user's device token, preferences, notifications and delivery log, without the texts; nothing of the sender but their id")
    func exportPart() async throws {
        try await withRunningNotifications { n in
            let ada = try await n.device(.unify), olga = try await n.device(.unify)
            // Quiet hours that do not hold this test's push: an hour, two hours from now.
            let hour = Calendar(identifier: .gregorian).dateComponents(in: TimeZone(identifier: "UTC")!, from: Date()).hour ?? 0
            let quiet = ["start": String(format: "%02d:00", (hour + 2) % 24), "end": String(format: "%02d:00", (hour + 3) % 24), "timezone": "UTC"]
            let patched = try await n.service.request(.PATCH, "/preferences", as: ada.user, json: ["quiet_hours": quiet])
            #expect(patched.status == 200, "\(patched.body)")

            let group = UUID()
            try await n.publish(GroupCreated(group: Rows.group(group, name: "Lerngruppe Export", owner: olga.id),
                                             members: [Rows.groupMember(group, olga.id, role: .owner), Rows.groupMember(group, ada.id)]),
                                app: .unify, aggregate: group, actor: olga.id)
            try await n.publish(MessageSent(message: Rows.message(group: group, sender: olga.id, text: "olga's private words"), senderDisplayName: "Olga Zwetajewa"),
                                app: .unify, aggregate: group, actor: olga.id)
            try await n.waitForPushes([ada.token])

            // Notifications writes a part for every app's request (here Unify's).
            let export = UUID()
            try await n.service.publishAuthEvent(UserExportRequested(exportId: export, userId: ada.id, app: .unify, requestedAt: Date()), user: ada.id, app: .unify)
            let part = try await WrittenExportPart.read(n.exports, export: export, service: .notifications)
            // Notifications keeps no files: the data and its README are the whole part.
            #expect(part.manifest.entries == ["data.json", "README.md"])
            let (text, data) = (part.text, part.data)
            func rows(_ table: String) -> [JSONValue] { part.rows(table) }

            #expect(data["user_id"]?.stringValue == ada.id.lowercased && data["app"]?.stringValue == "unify")
            let device = try #require(rows("devices").first)
            #expect(rows("devices").count == 1 && device["token"]?.stringValue == ada.token && device["app"]?.stringValue == "unify" && device["kind"]?.stringValue == "device")
            let preferences = try #require(rows("preferences").first)
            #expect(preferences["quiet_start"]?.intValue == (hour + 2) % 24 * 60 && preferences["timezone"]?.stringValue == "UTC", "\(preferences)")
            let notification = try #require(rows("notifications").first)
            #expect(rows("notifications").count == 1 && notification["kind"]?.stringValue == "group_message" && notification["actor_id"]?.stringValue == olga.id.lowercased)
            #expect(notification["data"]?["group_id"]?.stringValue == group.lowercased && notification["read_at"] == .null)
            let delivery = try #require(rows("deliveries").first)
            #expect(rows("deliveries").count == 1 && delivery["token_suffix"]?.stringValue == String(ada.token.suffix(8)) && delivery["push_type"]?.stringValue == "alert")
            // The texts quote the sender: left out, as is everything of hers but her id.
            for absent in ["Olga Zwetajewa", "olga's private words", "Lerngruppe Export", olga.token] {
                #expect(!text.contains(absent), "\(absent) is not in the export")
            }
            #expect(part.readme.contains("## deliveries"))
        }
    }
}

