import ColonyClientTesting
import ColonyModels
import ColonyPlatform
import ColonyStorage
import ColonyTesting
import Foundation
import NIOCore
import NIOHTTP1
import Testing
@testable import ProjectsService

/// Projects' part of a user's data export (`user_export_requested`): the plan against the
/// schema, and a part written from data made through the API by the user and by another builder
/// who supports them (openly and anonymously) and whom they support.
@Suite("Projects: the user's data export")
struct ProjectsExportTests {
    @Test("the plan covers every table of the schema, and describes exactly the columns it exports")
    func planMatchesSchema() async throws {
        try await withRunningProjects { projects in
            let storage = Storage(backend: FileSystemStorageBackend(root: projects.storageRoot), publicBaseURL: projects.service.base, signingKey: Array("unused-signing-key-0123456789abcdef".utf8))
            let plan = ProjectsExport.plan(media: ProjectsMedia(storage: storage, maxImageBytes: 1 << 20))
            let found = try await exportPlanProblems(plan, database: projects.service.database)
            #expect(found == [])
            // The check itself sees the schema: without the reasons, the unlisted tables are named.
            let bare = ExportPlan(service: .projects, about: plan.about, tables: plan.tables, files: plan.files, notExported: [:])
            let unlisted = try await exportPlanProblems(bare, database: projects.service.database)
            #expect(unlisted.contains("\(projects.service.database.schema).deleted_users is neither exported nor listed with a reason"))
        }
    }

    @Test("the part holds the user's builder, karma, projects with posts, milestones and uploads, what they gave and received; anonymous senders stay hidden")
    func exportPart() async throws {
        try await withRunningProjects { projects in
            let ada = try await projects.user(name: "Ada Builder"), bea = try await projects.user(name: "Bea Otherperson")
            func send(_ method: HTTPMethod, _ path: String, as user: RunningService.User, json: [String: Any]? = nil, png: Bool = false) async throws -> RunningService.Reply {
                let reply = png ? try await projects.service.request(method, path, as: user, bytes: ImageFixtures.png, contentType: "image/png")
                    : try await projects.service.request(method, path, as: user, json: json)
                #expect((200..<300).contains(reply.status), "\(method) \(path): \(reply.status) \(reply.body)")
                return reply
            }
            let adaBuilder = try #require(try await projects.get("/me", as: ada).body["id"]?.stringValue).lowercased()
            let beaBuilder = try #require(try await projects.get("/me", as: bea).body["id"]?.stringValue).lowercased()
            _ = try await send(.PUT, "/me/avatar", as: ada, png: true)
            _ = try await send(.PUT, "/me/avatar", as: bea, png: true)

            // Ada's project: a cover, a post with a picture, a picture uploaded for a post not yet written, a milestone.
            let garden = try await projects.project(ada, title: "Rocket Garden").id.lowercased
            _ = try await send(.PUT, "/projects/\(garden)/cover", as: ada, png: true)
            let posted = try #require(try await send(.POST, "/projects/\(garden)/images", as: ada, png: true).body["key"]?.stringValue)
            let pending = try #require(try await send(.POST, "/projects/\(garden)/images", as: ada, png: true).body["key"]?.stringValue)
            let adaPost = try await projects.post(ada, project: UUID(uuidString: garden) ?? UUID(), content: "Seeds are in", images: [posted]).lowercased
            _ = try await send(.POST, "/projects/\(garden)/milestones", as: ada, json: ["title": "First sprout"])

            // Bea's project, which Ada follows, likes and supports (once openly, once anonymously).
            let hive = try await projects.project(bea, title: "Bea's Hidden Hive").id
            let beaPost = try await projects.post(bea, project: hive, content: "Bea's private diary entry").lowercased
            _ = try await send(.POST, "/projects/\(hive.lowercased)/follow", as: ada)
            _ = try await send(.POST, "/posts/\(beaPost)/like", as: ada)
            _ = try await send(.POST, "/projects/\(hive.lowercased)/support-messages", as: ada, json: ["message": "go bea"])
            _ = try await send(.POST, "/projects/\(hive.lowercased)/support-messages", as: ada, json: ["message": "quietly rooting", "is_anonymous": true])
            // Bea follows and supports Ada's project, once openly and once anonymously.
            _ = try await send(.POST, "/projects/\(garden)/follow", as: bea)
            _ = try await send(.POST, "/projects/\(garden)/support-messages", as: bea, json: ["message": "signed cheer"])
            _ = try await send(.POST, "/projects/\(garden)/support-messages", as: bea, json: ["message": "secret cheer", "is_anonymous": true])
            _ = try await send(.POST, "/posts/\(adaPost)/like", as: bea)

            let export = UUID()
            try await projects.service.publishAuthEvent(UserExportRequested(exportId: export, userId: ada.id, app: .ibelieveinyou, requestedAt: Date()), user: ada.id)
            let backend = FileSystemStorageBackend(root: projects.storageRoot), bucket = UserExport.bucket.name
            let part = try await WrittenExportPart.read(backend, export: export, service: .projects)
            let (prefix, entries, text, data) = (part.prefix, part.manifest.entries, part.text, part.data)
            func rows(_ table: String) -> [JSONValue] { part.rows(table) }
            func strings(_ table: String, _ field: String) -> [String] { rows(table).compactMap { $0[field]?.stringValue } }

            #expect(strings("builders", "name") == ["Ada Builder"] && strings("builders", "id") == [adaBuilder])
            #expect(rows("karma").first?["total_points"]?.intValue ?? 0 > 0)
            #expect(Set(strings("karma_awards", "kind")) == ["follow", "like"])
            #expect(strings("projects", "id") == [garden] && strings("projects", "title") == ["Rocket Garden"])
            #expect(strings("posts", "content") == ["Seeds are in"] && rows("posts").first?["images"]?.arrayValue?.compactMap(\.stringValue) == [posted])
            #expect(strings("post_uploads", "key") == [pending])
            #expect(strings("milestones", "title") == ["First sprout"])
            #expect(strings("follows", "project_id") == [hive.lowercased] && strings("likes", "post_id") == [beaPost])
            #expect(Set(strings("support_messages_sent", "message")) == ["go bea", "quietly rooting"])
            #expect(rows("support_messages_sent").contains { $0["message"]?.stringValue == "quietly rooting" && $0["is_anonymous"]?.boolValue == true })
            // Received: the open message names its sender by builder id; the anonymous one names nobody.
            let received = rows("support_messages_received")
            #expect(received.count == 2)
            #expect(received.first { $0["message"]?.stringValue == "signed cheer" }?["sender_id"]?.stringValue == beaBuilder)
            let anonymous = try #require(received.first { $0["message"]?.stringValue == "secret cheer" })
            #expect(anonymous["sender_id"] == .null && anonymous["is_anonymous"]?.boolValue == true)
            #expect(Set(strings("support_actions", "action_type")) == ["follow", "like", "message"] && rows("support_actions").count == 4)
            #expect(Set(strings("follow_notices", "follower_id")) == [ada.id.lowercased, bea.id.lowercased])
            for absent in ["Bea Otherperson", "Bea's Hidden Hive", "Bea's private diary entry", "@example.com"] {
                #expect(!text.contains(absent), "\(absent) is not in the export")
            }

            // The files: Ada's avatar, her project's cover and both post pictures; nothing of Bea's.
            #expect(entries.contains { $0.hasPrefix("files/builder-avatars/\(adaBuilder)/") }, "\(entries)")
            #expect(entries.contains { $0.hasPrefix("files/project-covers/\(garden)/") }, "\(entries)")
            #expect(entries.contains("files/post-images/\(posted)") && entries.contains("files/post-images/\(pending)"), "\(entries)")
            #expect(entries.count == 6 && !entries.contains { $0.contains(beaBuilder) }, "\(entries)")
            let copied = try #require(try await backend.get(bucket: bucket, key: "\(prefix)/files/post-images/\(posted)"))
            #expect(copied.body == ImageFixtures.png)
        }
    }
}
