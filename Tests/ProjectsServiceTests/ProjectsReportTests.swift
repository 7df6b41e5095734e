import ColonyClientTesting
import ColonyModels
import ColonyPlatform
import ColonyTesting
import Foundation
import Testing

/// Reports (`POST /projects/v1/reports`) of projects, posts, support messages and builders, and the
/// console's moderation routes on them (`ModerationCalls`), against the running service.
@Suite("Projects reports")
struct ProjectsReportTests {
    typealias User = RunningService.User
    typealias ObjectType = Schemas.ReportCreate.ObjectTypePayload

    static func randomKey() -> String {
        (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
    }

    /// The service with the console's key, and the console's moderation calls on it.
    func withModeratedProjects(_ body: @Sendable (RunningProjects, ModerationCalls) async throws -> Void) async throws {
        let key = InternalKey(Self.randomKey())
        try await withRunningProjects(consoleKey: key) { projects in
            try await body(projects, ModerationCalls(service: projects.service, key: key))
        }
    }

    @Test("a project: its viewers report it once (404 for a draft or no project, 403 for its owner); removed as its builder deletes it")
    func projects() async throws {
        try await withModeratedProjects { projects, moderation in
            let owner = try await projects.user(), fan = try await projects.user(), other = try await projects.user()
            let project = try await projects.project(owner, title: "Crypto Riches", tagline: "Send me coins").id
            let draft = try await projects.project(owner, title: "Secret draft", published: false).id
            let kept = try await projects.project(owner, title: "Honest Garden").id
            #expect(try await projects.service.request(.POST, "/projects/\(project)/follow", as: fan).status == 200)
            let fanKarma = try await projects.karma(fan)

            let filed = try await projects.report(fan, .project, project, .spam, words: "  a scam  ")
            #expect(filed.status == 201, "\(filed.body)")
            #expect(filed.body["status"]?.stringValue == "open" && filed.body["object_type"]?.stringValue == "project" && uuid(filed.body["object_id"]) == project)
            #expect(filed.body["category"]?.stringValue == "spam" && filed.body["words"]?.stringValue == "a scam" && uuid(filed.body["id"]) != nil)
            #expect(try await projects.report(fan, .project, project, .hate).code == "already_reported")
            #expect(try await projects.report(other, .project, project, .harassment).status == 201)
            let own = try await projects.report(owner, .project, project)
            #expect(own.status == 403 && own.code == "own_content")
            #expect(try await projects.report(owner, .project, draft).code == "own_content", "the owner sees their draft")
            for missing in [draft, UUID()] {
                let answer = try await projects.report(fan, .project, missing)
                #expect(answer.status == 404 && answer.code == "not_found", "\(missing)")
            }
            #expect(try await projects.service.request(.POST, "/reports", as: fan, json: ["object_type": "project", "object_id": "not-a-uuid", "category": "spam"]).status == 422)
            #expect(try await projects.report(fan, .project, kept, .other).status == 201)

            let queue = try await moderation.queue()
            let item = try #require(queue.first { $0.objectType == "project" && $0.objectId == project })
            #expect(item.openReports == 2 && item.reportedUserId == owner.id && Set(item.categories.map(\.category)) == [.spam, .harassment])
            let review = try #require(try await moderation.review("project", project))
            #expect(review.content?.contains("Crypto Riches") == true && review.content?.contains("Send me coins") == true && review.reports.count == 2)
            #expect(review.anonymous == false && review.reportedUserId == owner.id && review.app == .ibelieveinyou)

            let removed = try await moderation.resolve("project", project, .remove)
            #expect(removed.removed && removed.reportedUserId == owner.id && removed.reporterIds == [fan.id, other.id].sorted { $0.uuidString < $1.uuidString })
            #expect(try await projects.get("/projects/\(project)", as: fan).status == 404)
            #expect(try await projects.get("/projects/\(project)", as: owner).status == 404)
            #expect(try await projects.get("/me/following", as: fan).body["projects"]?.arrayValue?.isEmpty == true)
            #expect(try await projects.karma(fan) == fanKarma, "a follower keeps the karma of a project deleted")
            #expect(try await moderation.review("project", project)?.content == nil)
            let events = try await projects.service.events(of: .projects) { events in events.contains { $0.type == .projectDeleted } }
            let deleted = try #require(events.first { $0.type == .projectDeleted }).decode(ProjectDeleted.self)
            #expect(deleted.payload.project.id == project && deleted.payload.followerIds == [fan.id] && deleted.actor == owner.id)

            let again = try await moderation.failure { try await $0.resolve("project", project, .remove) }
            #expect(again?.status == 404 && again?.code == "no_open_reports")

            let dismissed = try await moderation.resolve("project", kept, .dismiss)
            #expect(!dismissed.removed && dismissed.reporterIds == [fan.id])
            #expect(try await projects.get("/projects/\(kept)", as: fan).status == 200)
            #expect(try await moderation.review("project", kept)?.reports.map(\.status) == ["dismissed"])
            #expect(try await moderation.queue().isEmpty)
        }
    }

    @Test("a post: viewers of its project report it (404 on a draft's post); removed as its author deletes it, pictures and likes with it")
    func posts() async throws {
        try await withModeratedProjects { projects, moderation in
            let owner = try await projects.user(), fan = try await projects.user()
            let project = try await projects.project(owner).id
            let draft = try await projects.project(owner, title: "Draft", published: false).id
            let upload = try await projects.service.request(.POST, "/projects/\(project)/images", as: owner, bytes: ImageFixtures.png, contentType: "image/png")
            let image = try #require(upload.body["key"]?.stringValue)
            let post = try await projects.post(owner, project: project, content: "Buy followers at spam.example", images: [image])
            let kept = try await projects.post(owner, project: project, content: "Day 2: sprouts")
            let hidden = try await projects.post(owner, project: draft, content: "Not yet")
            #expect(try await projects.service.request(.POST, "/projects/\(project)/follow", as: fan).status == 200)
            #expect(try await projects.service.request(.POST, "/posts/\(post)/like", as: fan).status == 200)
            let fanKarma = try await projects.karma(fan)
            #expect(projects.storedFiles.count == 1)

            let filed = try await projects.report(fan, .post, post, .spam)
            #expect(filed.status == 201 && filed.body["status"]?.stringValue == "open" && uuid(filed.body["object_id"]) == post, "\(filed.body)")
            #expect(try await projects.report(fan, .post, post).code == "already_reported")
            #expect(try await projects.report(owner, .post, post).code == "own_content")
            for missing in [hidden, UUID()] { #expect(try await projects.report(fan, .post, missing).status == 404) }
            #expect(try await projects.report(fan, .post, kept, .other).status == 201)

            let item = try #require(try await moderation.queue().first { $0.objectId == post })
            #expect(item.objectType == "post" && item.reportedUserId == owner.id && item.categories.map(\.category) == [.spam])
            let review = try #require(try await moderation.review("post", post))
            #expect(review.content == "Buy followers at spam.example\n[1 picture]")

            let removed = try await moderation.resolve("post", post, .remove)
            #expect(removed.removed && removed.reporterIds == [fan.id])
            #expect(try await projects.get("/posts/\(post)", as: fan).status == 404)
            let list = try await projects.get("/projects/\(project)/posts", as: fan)
            #expect(list.body["posts"]?.arrayValue?.compactMap { uuid($0["id"]) } == [kept])
            #expect(try await projects.get("/feed", as: fan).body["posts"]?.arrayValue?.compactMap { uuid($0["id"]) } == [kept])
            #expect(projects.storedFiles.isEmpty, "\(projects.storedFiles)")
            #expect(try await projects.count("SELECT count(*)::int8 FROM likes WHERE post_id = '\(post)'") == 0)
            #expect(try await projects.karma(fan) == fanKarma, "a liker keeps the karma of a post deleted")
            #expect(try await moderation.review("post", post)?.content == nil)
            #expect(try await moderation.failure { try await $0.resolve("post", post, .dismiss) }?.code == "no_open_reports")

            #expect(try await moderation.resolve("post", kept, .dismiss).removed == false)
            #expect(try await projects.get("/posts/\(kept)", as: fan).status == 200)
        }
    }

    @Test("a support message: its receiver reports it (an anonymous sender stays unnamed), its sender gets 403, others 404; removed with its karma")
    func supportMessages() async throws {
        try await withModeratedProjects { projects, moderation in
            let owner = try await projects.user(), named = try await projects.user(), hidden = try await projects.user(), stranger = try await projects.user()
            let project = try await projects.project(owner).id
            let anonymous = try await projects.supportMessage(hidden, project: project, "You will fail", anonymous: true)
            let signed = try await projects.supportMessage(named, project: project, "Keep going")
            #expect(try await projects.karma(hidden) == 10)
            #expect(try await projects.karma(named) == 10)

            let filed = try await projects.report(owner, .supportMessage, anonymous, .harassment)
            #expect(filed.status == 201 && filed.body["status"]?.stringValue == "open", "\(filed.body)")
            // The answer names the report only: nothing of who sent the message.
            #expect(Set(filed.body.keys) == ["id", "object_type", "object_id", "category", "status", "created_at"])
            #expect(!"\(filed.body)".lowercased().contains(hidden.id.uuidString.lowercased()))
            #expect(try await projects.report(owner, .supportMessage, anonymous).code == "already_reported")
            #expect(try await projects.report(hidden, .supportMessage, anonymous).code == "own_content")
            // Anyone may read a project's messages, but only its builder received them.
            for (user, id) in [(stranger, anonymous), (named, anonymous), (owner, UUID())] {
                let answer = try await projects.report(user, .supportMessage, id)
                #expect(answer.status == 404 && answer.code == "not_found")
            }
            #expect(try await projects.report(owner, .supportMessage, signed, .other).status == 201)

            let item = try #require(try await moderation.queue().first { $0.objectId == anonymous })
            #expect(item.objectType == "support_message" && item.reportedUserId == hidden.id)
            let review = try #require(try await moderation.review("support_message", anonymous))
            #expect(review.content == "You will fail" && review.anonymous)

            let removed = try await moderation.resolve("support_message", anonymous, .remove)
            #expect(removed.removed && removed.reporterIds == [owner.id])
            let messages = try await projects.get("/projects/\(project)/support-messages", as: owner)
            #expect(messages.array.compactMap { uuid($0["id"]) } == [signed])
            #expect(try await projects.karma(hidden) == 0, "a removed message earned nothing")
            #expect(try await projects.get("/me/stats", as: hidden).body["messages_sent"]?.intValue == 0)
            #expect(try await projects.get("/me/support-actions", as: hidden).array.isEmpty)
            #expect(try await moderation.review("support_message", anonymous)?.content == nil)
            #expect(try await moderation.failure { try await $0.resolve("support_message", anonymous, .remove) }?.code == "no_open_reports")

            #expect(try await moderation.resolve("support_message", signed, .dismiss).removed == false)
            #expect(try await projects.karma(named) == 10)
            #expect(try await projects.get("/projects/\(project)/support-messages", as: stranger).array.count == 1)
        }
    }

    @Test("a profile: anyone reports a builder by user id (403 for oneself, 404 for no builder); removed resets name, bio, links and avatar")
    func profiles() async throws {
        try await withModeratedProjects { projects, moderation in
            let troll = try await projects.user(name: "Troll King"), reporter = try await projects.user(), kept = try await projects.user(name: "Nice Person")
            let edit = try await projects.call(troll) { try await $0.updateMe(body: .json(.init(bio: "I hate you all", websiteUrl: "https://troll.example", twitterHandle: "trollking"))) }
            #expect(edit.status == 200)
            #expect(try await projects.service.request(.PUT, "/me/avatar", as: troll, bytes: ImageFixtures.png, contentType: "image/png").status == 200)
            #expect(projects.storedFiles.count == 1)

            let filed = try await projects.report(reporter, .profile, troll.id, .hate, words: "see the bio")
            #expect(filed.status == 201 && uuid(filed.body["object_id"]) == troll.id, "\(filed.body)")
            #expect(try await projects.report(reporter, .profile, troll.id).code == "already_reported")
            #expect(try await projects.report(troll, .profile, troll.id).code == "own_content")
            #expect(try await projects.report(reporter, .profile, UUID()).status == 404)
            #expect(try await projects.report(reporter, .profile, kept.id).status == 201)

            let review = try #require(try await moderation.review("profile", troll.id))
            #expect(review.content == "Name: Troll King\nBio: I hate you all\nWebsite: https://troll.example\nTwitter: @trollking\n[avatar picture]")
            #expect(review.reportedUserId == troll.id && review.reports.first?.words == "see the bio")

            let removed = try await moderation.resolve("profile", troll.id, .remove)
            #expect(removed.removed && removed.reporterIds == [reporter.id])
            let profile = try await projects.get("/users/\(troll.id)/builder", as: reporter)
            #expect(profile.status == 200 && profile.body["name"]?.stringValue == "Supporter")
            for field in ["bio", "website_url", "twitter_handle", "avatar_url"] { #expect(profile.body[field] == nil, "\(field)") }
            #expect(projects.storedFiles.isEmpty, "\(projects.storedFiles)")
            #expect(try await moderation.review("profile", troll.id)?.content == "Name: Supporter")
            let events = try await projects.service.events(of: .projects) { events in
                events.contains { $0.type == .builderUpdated && (try? $0.decode(BuilderUpdated.self).payload.builder.name) == "Supporter" }
            }
            let updated = try #require(events.last { $0.type == .builderUpdated }).decode(BuilderUpdated.self)
            #expect(updated.payload.builder.userId == troll.id && updated.payload.builder.bio == nil && updated.payload.builder.avatarUrl == nil)
            #expect(try await moderation.failure { try await $0.resolve("profile", troll.id, .remove) }?.code == "no_open_reports")

            #expect(try await moderation.resolve("profile", kept.id, .dismiss).removed == false)
            #expect(try await projects.get("/users/\(kept.id)/builder", as: reporter).body["name"]?.stringValue == "Nice Person")
        }
    }
}

extension RunningProjects {
    /// `user` reports an object through the generated client; the status and body it got.
    func report(_ user: User, _ type: Schemas.ReportCreate.ObjectTypePayload, _ id: UUID, _ category: Schemas.ReportCreate.CategoryPayload = .spam,
                words: String? = nil) async throws -> Outcome {
        try await call(user) {
            try await $0.createReport(body: .json(.init(objectType: type, objectId: id.uuidString.lowercased(), category: category, words: words)))
        }.outcome
    }

    /// A support message from `sender` to the project; its id.
    func supportMessage(_ sender: User, project: UUID, _ message: String, anonymous: Bool = false) async throws -> UUID {
        let sent = try await api(sender).sendSupportMessage(path: .init(projectId: project.lowercased), body: .json(.init(message: message, isAnonymous: anonymous)))
        return try #require(UUID(uuidString: try sent.created.body.json.message.id))
    }
}

extension ModerationCalls {
    /// The console's answer when `call` fails (nil when it succeeded).
    func failure<Value>(_ call: (ModerationCalls) async throws -> Value) async throws -> RunningService.Reply? {
        do {
            _ = try await call(self)
            return nil
        } catch let failure as Failure {
            return failure.reply
        }
    }
}
