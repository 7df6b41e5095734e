import ColonyClientTesting
import ColonyModels
import ColonyPlatform
import ColonyStorage
import ColonyTesting
import Foundation
import NIOCore
import Testing
@testable import ChatService

/// Chat's part of a user's data export (`user_export_requested`): the plan against the schema,
/// and a part written from data made through the API, with another member in the same group.
@Suite("Chat: the user's data export")
struct ChatExportTests {
    @Test("the plan covers every table of the schema, and describes exactly the columns it exports")
    func planMatchesSchema() async throws {
        try await withRunningChat { chat in
            let plan = ChatExport.plan(media: ChatMedia(settings: chat.settings, storage: chat.storage))
            let found = try await exportPlanProblems(plan, database: chat.service.database)
            #expect(found == [])
            // The check itself sees the schema: without the reasons, the unlisted tables are named.
            let bare = ExportPlan(service: .chat, about: plan.about, tables: plan.tables, files: plan.files, notExported: [:])
            let unlisted = try await exportPlanProblems(bare, database: chat.service.database)
            #expect(unlisted.contains("\(chat.service.database.schema).deleted_users is neither exported nor listed with a reason"))
        }
    }

    @Test("the part holds the user's profile, groups, own messages (with the voice file), events and pictures; nothing of the other member")
    func exportPart() async throws {
        try await withRunningChat { chat in
            let ada = try await chat.user(email: "ada.export@example.com"), bea = try await chat.user(email: "bea.other@example.com")
            let adas = chat.api(ada), beas = chat.api(bea)
            _ = try await adas.updateMe(body: .json(.init(displayName: "Ada Exporter"))).ok
            _ = try await beas.updateMe(body: .json(.init(displayName: "Bea Otherperson"))).ok
            _ = try await adas.setAvatar(body: .png(upload(AudioFixtures.png))).ok
            let group = try await chat.group(owner: ada, members: [bea], name: "Export Crew").uuidString.lowercased()
            _ = try await adas.setGroupPicture(path: .init(groupId: group), body: .png(upload(AudioFixtures.png))).ok
            _ = try await adas.sendTextMessage(path: .init(groupId: group), body: .json(.init(content: "hello from ada"))).created
            let voice = try await adas.sendVoiceMessage(path: .init(groupId: group), query: .init(duration: 2.5), body: .audioMp4(upload(AudioFixtures.m4a))).created.body.json.id.lowercased()
            _ = try await beas.sendTextMessage(path: .init(groupId: group), body: .json(.init(content: "bea's secret reply"))).created
            let start = try #require(ISO8601.parse("2031-03-01T10:00:00Z")), end = try #require(ISO8601.parse("2031-03-01T11:00:00Z"))
            _ = try await adas.createEvent(body: .json(.init(title: "Ada's standup", startsAt: start, endsAt: end, groupId: group))).created
            _ = try await beas.createEvent(body: .json(.init(title: "Bea's dentist", startsAt: start, endsAt: end))).created

            // A request from another app is not chat's; the user's own follows it on the same partition.
            let elsewhere = UUID(), export = UUID()
            try await chat.service.publishAuthEvent(UserExportRequested(exportId: elsewhere, userId: ada.id, app: .habithive, requestedAt: Date()), user: ada.id, app: .habithive)
            try await chat.service.publishAuthEvent(UserExportRequested(exportId: export, userId: ada.id, app: .unify, requestedAt: Date()), user: ada.id)
            let backend = chat.storage.backend, bucket = UserExport.bucket.name
            let part = try await WrittenExportPart.read(backend, export: export, service: .chat)
            #expect(try await backend.get(bucket: bucket, key: UserExport.manifestKey(elsewhere, .chat)) == nil)
            let (prefix, entries, text, data) = (part.prefix, part.manifest.entries, part.text, part.data)
            func rows(_ table: String) -> [JSONValue] { part.rows(table) }

            #expect(data["user_id"]?.stringValue == ada.id.lowercased && data["app"]?.stringValue == "unify")
            let me = try #require(rows("users").first)
            #expect(rows("users").count == 1 && me["display_name"]?.stringValue == "Ada Exporter" && me["email"]?.stringValue == "ada.export@example.com")
            let memberships = rows("group_memberships")
            #expect(memberships.count == 1 && memberships.first?["group_id"]?.stringValue == group
                && memberships.first?["group_name"]?.stringValue == "Export Crew" && memberships.first?["role"]?.stringValue == "owner")
            let messages = rows("messages")
            #expect(Set(messages.compactMap { $0["content"]?.stringValue }) == ["hello from ada", ""])
            let voiceRow = try #require(messages.first { $0["message_type"]?.stringValue == "voice" })
            #expect(voiceRow["voice_path"]?.stringValue == "\(group)/\(voice)" && voiceRow["voice_duration"]?.doubleValue == 2.5)
            #expect(rows("events").compactMap { $0["title"]?.stringValue } == ["Ada's standup"])
            for absent in ["bea.other@example.com", "Bea Otherperson", "bea's secret reply", "Bea's dentist", bea.id.lowercased] {
                #expect(!text.contains(absent), "the other member's \(absent) is not in the export")
            }

            // The files: the avatar, the owned group's picture and the voice message, copied as they are.
            #expect(entries.contains("README.md") && entries.contains("data.json"))
            #expect(entries.contains { $0.hasPrefix("files/profile-pictures/\(ada.id.lowercased)/") }, "\(entries)")
            #expect(entries.contains { $0.hasPrefix("files/group-pictures/\(group)/") }, "\(entries)")
            #expect(entries.contains("files/voice-messages/\(group)/\(voice)"), "\(entries)")
            #expect(entries.count == 5, "\(entries)")
            let copied = try #require(try await backend.get(bucket: bucket, key: "\(prefix)/files/voice-messages/\(group)/\(voice)"))
            #expect(copied.body == AudioFixtures.m4a)
            #expect(part.readme.contains("## group_memberships"))
        }
    }
}
