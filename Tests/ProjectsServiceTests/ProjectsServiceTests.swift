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

/// The projects service from the outside: real Postgres, real broker, HTTP with ibelieveinyou tokens.
@Suite("Projects service")
struct ProjectsServiceTests {
    typealias User = RunningService.User

    @Test("the OpenAPI document lists exactly the routes the service registered, and each answers")
    func openAPIMatchesRoutes() async throws {
        try await withRunningProjects { running in
            let user = try await running.user()
            #expect(try await running.service.openAPIProblems(ProjectsService.openAPIDocument, as: user) == [])
        }
    }

    @Test("the database's karma_level() is the same table as KarmaLevel, at every boundary")
    func karmaLevelInSQL() async throws {
        try await withRunningProjects { projects in
            for points in [0, 1, 50, 51, 52, 200, 201, 500, 501, 1000, 1001, 5000] {
                let level = try await projects.count("SELECT karma_level(\(points))::int8")
                #expect(level == KarmaLevel.of(points: points).level, "\(points) points")
            }
        }
    }

    @Test("tokens of other apps get 401; the builder and karma appear from user_registered with the sign-up name, or on first request")
    func builders() async throws {
        try await withRunningProjects { projects in
            #expect(try await projects.service.request(.GET, "/me", as: nil).status == 401)
            let other = try await projects.service.user(app: .unify)
            #expect(try await projects.service.request(.GET, "/me", as: other).status == 401)

            let registered = UUID()
            try await projects.service.publishAuthEvent(UserRegistered(userId: registered, app: .ibelieveinyou, email: "grace@example.com", phone: nil, phoneHash: nil,
                                                                       userMetadata: ["name": .string("Grace Hopper")], createdAt: Date()), user: registered)
            let grace = try await projects.service.user(registered)
            try await waitUntil { try await projects.get("/me", as: grace).body["name"]?.stringValue == "Grace Hopper" }
            let karma = try await projects.get("/me/karma", as: grace)
            #expect(karma.body["total_points"]?.intValue == 0 && karma.body["level"]?.intValue == 1 && karma.body["label"]?.stringValue == "New Supporter")
            #expect(karma.body["emoji"]?.stringValue == "🌱" && karma.body["next_level_at"]?.intValue == 51)

            // Early request, late event: the email's name first, then the sign-up name.
            let late = UUID()
            let lateUser = try await projects.service.user(late, email: "ada@example.com")
            #expect(try await projects.get("/me", as: lateUser).body["name"]?.stringValue == "ada")
            try await projects.service.publishAuthEvent(UserRegistered(userId: late, app: .ibelieveinyou, email: "ada@example.com", phone: nil, phoneHash: nil,
                                                                       userMetadata: ["display_name": .string("Ada Lovelace")], createdAt: Date()), user: late)
            try await waitUntil { try await projects.get("/me", as: lateUser).body["name"]?.stringValue == "Ada Lovelace" }

            // Profile edit, with validation.
            let edit = try await projects.call(lateUser) {
                try await $0.updateMe(body: .json(.init(bio: "Analyst", websiteUrl: "ada.dev", twitterHandle: "@ada", isCreator: true)))
            }
            #expect(edit.status == 200 && edit.body["website_url"]?.stringValue == "https://ada.dev" && edit.body["twitter_handle"]?.stringValue == "ada")
            #expect(edit.body["is_creator"]?.boolValue == true && edit.body["bio"]?.stringValue == "Analyst")
            let bad = try await projects.call(lateUser) { try await $0.updateMe(body: .json(.init(websiteUrl: "ftp://nope", twitterHandle: "no spaces allowed"))) }
            #expect(bad.status == 422 && bad.body["message"]?.stringValue?.contains("website_url") == true && bad.body["message"]?.stringValue?.contains("twitter_handle") == true)
            // An explicit null (what clears a field) as raw JSON: the generated client leaves nil out.
            let cleared = try await projects.service.request(.PATCH, "/me", as: lateUser, json: ["bio": NSNull()])
            #expect(cleared.status == 200 && cleared.body["bio"] == nil && cleared.body["website_url"]?.stringValue == "https://ada.dev")
            let builderID = try #require(uuid(edit.body["id"]))
            let publicView = try await projects.get("/builders/\(builderID)", as: grace)
            #expect(publicView.status == 200 && publicView.body["name"]?.stringValue == "Ada Lovelace")
            #expect(try await projects.get("/users/\(late)/builder", as: grace).body["id"]?.stringValue?.lowercased() == builderID.uuidString.lowercased())

            // Avatar in `builder-avatars`, under a key of its own per upload: the old one stops working.
            let first = try await projects.service.request(.PUT, "/me/avatar", as: lateUser, bytes: ImageFixtures.png, contentType: "image/png")
            let oldURL = try #require(first.body["avatar_url"]?.stringValue)
            let avatar = try await projects.service.request(.PUT, "/me/avatar", as: lateUser, bytes: ImageFixtures.png, contentType: "image/png")
            let url = try #require(avatar.body["avatar_url"]?.stringValue)
            #expect(url != oldURL && url.contains("/storage/v1/object/public/builder-avatars/\(builderID.uuidString.lowercased())/") && url.contains("?v="))
            #expect(try await projects.service.request(.GET, url, as: nil).status == 200)
            #expect(try await projects.service.request(.GET, oldURL, as: nil).status == 404, "the old picture key after a change")
            let removed = try await projects.service.request(.DELETE, "/me/avatar", as: lateUser)
            #expect(removed.status == 200 && removed.body["avatar_url"] == nil && projects.storedFiles.isEmpty)
        }
    }

    @Test("slugs: made from the title, a random suffix on collision, a chosen slug must be free; checkSlugExists")
    func slugCollisions() async throws {
        try await withRunningProjects { projects in
            let alice = try await projects.user(), bob = try await projects.user()
            let first = try await projects.project(alice, title: "Hello, Wörld!")
            #expect(first.slug == "hello-world")
            let second = try await projects.project(bob, title: "hello world")
            #expect(second.slug.hasPrefix("hello-world-") && second.slug.count == "hello-world-".count + Slug.suffixLength, "\(second.slug)")
            let third = try await projects.project(bob, title: "HELLO WORLD", published: false)
            #expect(Set([first.slug, second.slug, third.slug]).count == 3)

            let exists = try await projects.get("/slugs/hello-world", as: bob)
            #expect(exists.status == 200 && exists.body["exists"]?.boolValue == true)
            #expect(try await projects.get("/slugs/\(third.slug)", as: alice).body["exists"]?.boolValue == true, "taken even when unpublished")
            #expect(try await projects.get("/slugs/brand-new", as: alice).body["exists"]?.boolValue == false)
            #expect(try await projects.get("/slugs/Not%20A%20Slug", as: alice).status == 422)

            let taken = try await projects.call(bob) { try await $0.createProject(body: .json(.init(title: "Mine", publicSlug: "hello-world"))) }
            #expect(taken.status == 409 && taken.code == "slug_taken")
            let chosen = try await projects.call(bob) { try await $0.createProject(body: .json(.init(title: "Mine", publicSlug: "Bobs-Thing"))) }
            #expect(chosen.status == 201 && chosen.body["public_slug"]?.stringValue == "bobs-thing")
            let rename = try await projects.call(bob) { try await $0.updateProject(path: .init(projectId: second.id.lowercased), body: .json(.init(publicSlug: "bobs-thing"))) }
            #expect(rename.status == 409 && rename.code == "slug_taken")
            let renamed = try await projects.call(bob) { try await $0.updateProject(path: .init(projectId: second.id.lowercased), body: .json(.init(publicSlug: "hello-bob"))) }
            #expect(renamed.status == 200 && renamed.body["public_slug"]?.stringValue == "hello-bob")

            let bySlug = try await projects.get("/projects/by-slug/hello-bob", as: alice)
            #expect(bySlug.status == 200 && uuid(bySlug.body["id"]) == second.id && bySlug.body["builder"]?["user_id"]?.stringValue?.lowercased() == bob.id.uuidString.lowercased())
            #expect(try await projects.get("/projects/by-slug/\(third.slug)", as: alice).status == 404, "unpublished: only its owner sees it")
            #expect(try await projects.get("/projects/by-slug/\(third.slug)", as: bob).status == 200)
            #expect(try await projects.count("SELECT count(*)::int8 FROM projects") == 4)
        }
    }

    @Test("discovery: new and trending pages, search by title or tagline with wildcards taken literally; unpublished never listed")
    func discovery() async throws {
        try await withRunningProjects { projects in
            let owner = try await projects.user()
            var ids: [UUID] = []
            for n in 0..<7 { ids.append(try await projects.project(owner, title: "Project \(n)", tagline: n == 3 ? "100% organic_garden" : "tag \(n)").id) }
            let hidden = try await projects.project(owner, title: "Project hidden", published: false).id
            let fans = try await projects.users(3)
            // Follows: project 2 ← 3, project 5 ← 2, project 0 ← 1.
            for (index, count) in [(2, 3), (5, 2), (0, 1)] {
                for fan in fans.prefix(count) { #expect(try await projects.service.request(.POST, "/projects/\(ids[index])/follow", as: fan).status == 200) }
            }
            func page(_ query: String, as user: User) async throws -> ([UUID], String?) {
                let reply = try await projects.get("/projects?\(query)", as: user)
                #expect(reply.status == 200, "\(reply.body)")
                return (reply.body["projects"]?.arrayValue?.compactMap { uuid($0["id"]) } ?? [], reply.body["next_cursor"]?.stringValue)
            }
            var newest: [UUID] = []
            var cursor: String?
            repeat {
                let (found, next) = try await page("sort=new&limit=3" + (cursor.map { "&cursor=\($0)" } ?? ""), as: fans[0])
                newest += found
                cursor = next
            } while cursor != nil
            #expect(newest == ids.reversed(), "newest first, every published project once")
            #expect(!newest.contains(hidden))

            var trending: [UUID] = []
            cursor = nil
            repeat {
                let (found, next) = try await page("sort=trending&limit=2" + (cursor.map { "&cursor=\($0)" } ?? ""), as: fans[0])
                trending += found
                cursor = next
            } while cursor != nil
            #expect(Array(trending.prefix(3)) == [ids[2], ids[5], ids[0]] && trending.count == 7)

            let following = try await projects.get("/projects?sort=trending&limit=1", as: fans[0])
            #expect(following.body["projects"]?.arrayValue?.first?["is_following"]?.boolValue == true && following.body["projects"]?.arrayValue?.first?["follower_count"]?.intValue == 3)

            #expect(try await page("q=100%25", as: owner).0 == [ids[3]], "a literal %")
            #expect(try await page("q=organic_garden", as: owner).0 == [ids[3]])
            #expect(try await page("q=%25", as: owner).0 == [ids[3]], "% alone matches only a literal %")
            #expect(try await page("q=tag_1", as: owner).0.isEmpty, "_ is not a wildcard (\"tag 1\" does not match)")
            #expect(try await page("q=tag%201", as: owner).0 == [ids[1]])
            #expect(try await page("q=PROJECT%206", as: owner).0 == [ids[6]], "case-insensitive, by title")
            #expect(try await page("q=hidden", as: owner).0.isEmpty)
            #expect(try await projects.get("/projects?sort=oldest", as: owner).status == 422)
            #expect(try await projects.get("/projects?cursor=garbage", as: owner).status == 422)

            let byBuilder = try await projects.get("/builders/\(try #require(uuid(try await projects.get("/me", as: owner).body["id"])))/projects", as: fans[0])
            #expect(byBuilder.array.count == 7)
            #expect(try await projects.get("/me/projects", as: owner).array.count == 8, "mine includes the unpublished one")
            let supporters = try await projects.get("/projects/\(ids[2])/supporters", as: owner)
            #expect(Set(supporters.array.compactMap { uuid($0["user_id"]) }) == Set(fans.map(\.id)))
            let followed = try await projects.get("/me/following?limit=1", as: fans[0])
            #expect(followed.body["projects"]?.arrayValue?.count == 1 && followed.body["next_cursor"] != nil)
        }
    }

    @Test("posts and the feed: followed projects only, newest first, project and builder embedded, liked_by_me, keyset pages")
    func feed() async throws {
        try await withRunningProjects { projects in
            let alice = try await projects.user(name: "Alice"), bob = try await projects.user(name: "Bob"), reader = try await projects.user()
            let garden = try await projects.project(alice, title: "Garden").id
            let rocket = try await projects.project(bob, title: "Rocket").id
            let ignored = try await projects.project(bob, title: "Ignored").id
            var posted: [UUID] = []
            for n in 0..<5 {
                posted.append(try await projects.post(alice, project: garden, content: "garden \(n)"))
                posted.append(try await projects.post(bob, project: rocket, content: "rocket \(n)"))
            }
            _ = try await projects.post(bob, project: ignored, content: "not followed")
            #expect(try await projects.get("/feed", as: reader).body["posts"]?.arrayValue?.isEmpty == true)
            for project in [garden, rocket] { _ = try await projects.service.request(.POST, "/projects/\(project)/follow", as: reader) }
            let liked = posted[3]
            let like = try await projects.service.request(.POST, "/posts/\(liked)/like", as: reader)
            #expect(like.status == 200 && like.body["liked"]?.boolValue == true && like.body["like_count"]?.intValue == 1)

            var seen: [UUID] = []
            var cursor: String?
            repeat {
                let reply = try await projects.get("/feed?limit=4" + (cursor.map { "&cursor=\($0)" } ?? ""), as: reader)
                #expect(reply.status == 200, "\(reply.body)")
                for post in reply.body["posts"]?.arrayValue ?? [] {
                    seen.append(try #require(uuid(post["id"])))
                    #expect(post["liked_by_me"]?.boolValue == (uuid(post["id"]) == liked))
                    let name = post["project"]?["builder"]?["name"]?.stringValue
                    #expect(name == (post["content"]?.stringValue?.hasPrefix("garden") == true ? "Alice" : "Bob"))
                    #expect(post["project"]?["public_slug"]?.stringValue != nil)
                }
                cursor = reply.body["next_cursor"]?.stringValue
            } while cursor != nil
            #expect(seen == posted.reversed(), "every followed post once, newest first")
            let defaultPage = try await projects.get("/feed", as: reader)
            #expect(defaultPage.body["posts"]?.arrayValue?.compactMap { uuid($0["id"]) } == posted.reversed() && defaultPage.body["next_cursor"] == nil,
                    "the default page size (its own statement) agrees")

            // Unpublishing hides the project's posts from its followers' feeds (not from its owner).
            _ = try await projects.call(bob) { try await $0.updateProject(path: .init(projectId: rocket.lowercased), body: .json(.init(isPublished: false))) }
            let after = try await projects.get("/feed?limit=50", as: reader)
            #expect(after.body["posts"]?.arrayValue?.count == 5)
            #expect(try await projects.get("/posts/\(posted[1])", as: reader).status == 404)
            #expect(try await projects.get("/projects/\(rocket)/posts", as: reader).status == 404)
            _ = try await projects.service.request(.POST, "/projects/\(rocket)/follow", as: bob)
            #expect(try await projects.get("/feed?limit=50", as: bob).body["posts"]?.arrayValue?.count == 5)

            let list = try await projects.get("/projects/\(garden)/posts?limit=2", as: reader)
            #expect(list.body["posts"]?.arrayValue?.map { uuid($0["id"]) } == [posted[8], posted[6]] && list.body["next_cursor"] != nil)
            let single = try await projects.get("/posts/\(posted[0])", as: reader)
            #expect(single.status == 200 && single.body["project"]?["title"]?.stringValue == "Garden")

            let edited = try await projects.call(alice) { try await $0.updatePost(path: .init(postId: posted[0].lowercased), body: .json(.init(content: "garden 0, edited"))) }
            #expect(edited.status == 200 && edited.body["content"]?.stringValue == "garden 0, edited")
            #expect(try await projects.service.request(.DELETE, "/posts/\(posted[0])", as: alice).status == 204)
            #expect(try await projects.get("/posts/\(posted[0])", as: alice).status == 404)
        }
    }

    @Test("post pictures: uploaded to the project first, then used by a post; replaced and deleted files go; unused uploads expire")
    func postImages() async throws {
        try await withRunningProjects(settings: ProjectsSettings(maxImageBytes: 64 << 10, uploadTTLSeconds: 60)) { projects in
            let owner = try await projects.user(), other = try await projects.user()
            let project = try await projects.project(owner).id
            let otherProject = try await projects.project(other, title: "Other").id
            func upload(_ user: User, _ project: UUID) async throws -> RunningService.Reply {
                try await projects.service.request(.POST, "/projects/\(project)/images", as: user, bytes: ImageFixtures.png, contentType: "image/png")
            }
            let first = try await upload(owner, project), second = try await upload(owner, project), third = try await upload(owner, project)
            #expect(first.status == 201, "\(first.body)")
            let url = try #require(first.body["url"]?.stringValue)
            #expect(url.contains("/storage/v1/object/public/post-images/\(project.uuidString.lowercased())/") && url.contains("?v="))
            #expect(try await projects.service.request(.GET, url, as: nil).status == 200)
            let foreign = try await upload(other, otherProject)

            let stolen = try await projects.call(owner) { try await $0.createPost(path: .init(projectId: project.lowercased), body: .json(.init(content: "x", images: [foreign.body["key"]!.stringValue!]))) }
            #expect(stolen.status == 409 && stolen.code == "unknown_image")
            let post = try await projects.call(owner) {
                try await $0.createPost(path: .init(projectId: project.lowercased), body: .json(.init(content: "with pictures", images: [url, second.body["key"]!.stringValue!])))
            }
            #expect(post.status == 201 && post.body["images"]?.arrayValue?.count == 2, "\(post.body)")
            let postID = try #require(uuid(post.body["id"]))
            let reused = try await projects.call(owner) { try await $0.createPost(path: .init(projectId: project.lowercased), body: .json(.init(content: "again", images: [url]))) }
            #expect(reused.status == 409 && reused.code == "unknown_image", "an upload goes into one post")

            let replaced = try await projects.call(owner) { try await $0.updatePost(path: .init(postId: postID.lowercased), body: .json(.init(images: [third.body["key"]!.stringValue!, url]))) }
            #expect(replaced.status == 200 && replaced.body["images"]?.arrayValue?.count == 2, "\(replaced.body)")
            let secondKey = second.body["key"]!.stringValue!
            #expect(!projects.storedFiles.contains { $0.hasSuffix(secondKey) }, "a picture left out is deleted")
            #expect(try await projects.service.request(.DELETE, "/posts/\(postID)", as: owner).status == 204)
            #expect(projects.storedFiles == ["post-images/\(foreign.body["key"]!.stringValue!)"], "\(projects.storedFiles)")

            // The foreign upload is never used: once past the TTL, the job deletes it.
            try await projects.service.withDatabase { database in
                _ = try await database.query("UPDATE post_uploads SET uploaded_at = now() - interval '2 minutes'")
                let posts = Posts(outbox: Outbox(schema: database.schema), media: ProjectsMedia(storage: Storage(backend: FileSystemStorageBackend(root: projects.storageRoot),
                    publicBaseURL: projects.service.base, signingKey: Array("projects-tests-signing-key-0123456789abcdef".utf8)), maxImageBytes: 64 << 10),
                    uploadTTLSeconds: 60, logger: TestEnvironment.logger)
                #expect(try await posts.expireUploads(database: database) == 1)
            }
            #expect(projects.storedFiles.isEmpty)
        }
    }

    @Test("milestones: owner CRUD, toggle sets and clears completed_at, ordered by target date, milestone_completed once")
    func milestones() async throws {
        try await withRunningProjects { projects in
            let owner = try await projects.user(), fan = try await projects.user()
            let project = try await projects.project(owner).id
            let later = try await projects.call(owner) { try await $0.createMilestone(path: .init(projectId: project.lowercased), body: .json(.init(title: "Launch", targetDate: "2031-06-01"))) }
            let sooner = try await projects.call(owner) { try await $0.createMilestone(path: .init(projectId: project.lowercased), body: .json(.init(title: "Beta", description: "first users", targetDate: "2031-01-15"))) }
            let undated = try await projects.call(owner) { try await $0.createMilestone(path: .init(projectId: project.lowercased), body: .json(.init(title: "Someday"))) }
            #expect(later.status == 201 && sooner.status == 201 && undated.status == 201)
            let list = try await projects.get("/projects/\(project)/milestones", as: fan)
            #expect(list.array.compactMap { $0["title"]?.stringValue } == ["Beta", "Launch", "Someday"])
            let id = try #require(uuid(sooner.body["id"]))

            let done = try await projects.service.request(.POST, "/milestones/\(id)/toggle", as: owner)
            #expect(done.status == 200 && done.body["is_completed"]?.boolValue == true && done.body["completed_at"] != nil)
            let stillDone = try await projects.call(owner) { try await $0.toggleMilestone(path: .init(milestoneId: id.lowercased), body: .json(.init(isCompleted: true))) }
            #expect(stillDone.body["completed_at"] == done.body["completed_at"], "completing again keeps the time")
            let reopened = try await projects.service.request(.POST, "/milestones/\(id)/toggle", as: owner)
            #expect(reopened.body["is_completed"]?.boolValue == false && reopened.body["completed_at"] == nil)
            // `target_date: null` clears it: raw JSON, as the generated client leaves nil out.
            let patched = try await projects.service.request(.PATCH, "/milestones/\(id)", as: owner, json: ["title": "Public beta", "target_date": NSNull(), "is_completed": true])
            #expect(patched.status == 200 && patched.body["title"]?.stringValue == "Public beta" && patched.body["target_date"] == nil && patched.body["is_completed"]?.boolValue == true)
            let reordered = try await projects.get("/projects/\(project)/milestones", as: fan).array.compactMap { $0["title"]?.stringValue }
            #expect(reordered == ["Launch", "Public beta", "Someday"], "without a date it goes among the undated, as created")
            #expect(try await projects.service.request(.POST, "/milestones/\(id)/toggle", as: fan).status == 403)
            #expect(try await projects.service.request(.DELETE, "/milestones/\(id)", as: owner).status == 204)
            #expect(try await projects.get("/projects/\(project)/milestones", as: fan).array.count == 2)

            let events = try await projects.service.events(of: .projects) { events in events.filter { $0.type == .milestoneCompleted }.count >= 2 }
            let completed = events.filter { $0.type == .milestoneCompleted }
            #expect(completed.count == 2, "completed twice (toggle, then the patch after reopening), not on the repeated complete")
            let payload = try completed[0].decode(MilestoneCompleted.self)
            #expect(payload.aggregateId == project.uuidString.lowercased() && payload.payload.milestone.id == id && payload.payload.projectTitle == "Rocket Garden")
        }
    }

    @Test("bad input gets 422 and writes nothing")
    func badInput() async throws {
        try await withRunningProjects { projects in
            let owner = try await projects.user(), fan = try await projects.user()
            let project = try await projects.project(owner).id
            let post = try await projects.post(owner, project: project)
            let before = try await projects.count("""
                SELECT (SELECT count(*) FROM projects) + (SELECT count(*) FROM posts) + (SELECT count(*) FROM milestones)
                     + (SELECT count(*) FROM support_messages) + (SELECT count(*) FROM support_actions) + (SELECT sum(total_points) FROM karma)
                """)
            let outbox = try await projects.count("SELECT count(*)::int8 FROM outbox")
            let cases: [(HTTPMethod, String, User, [String: Any])] = [
                (.POST, "/projects", owner, ["title": "   "]),
                (.POST, "/projects", owner, ["title": String(repeating: "t", count: 101)]),
                (.POST, "/projects", owner, ["title": "ok", "tagline": String(repeating: "t", count: 161)]),
                (.POST, "/projects", owner, ["title": "ok", "mood": "purple"]),
                (.POST, "/projects", owner, ["title": "ok", "public_slug": "Not a slug"]),
                (.POST, "/projects", owner, ["title": 5]),
                (.PATCH, "/projects/\(project)", owner, ["title": ""]),
                (.PATCH, "/projects/\(project)", owner, ["mood": "blue"]),
                (.POST, "/projects/\(project)/posts", owner, ["content": "  "]),
                (.POST, "/projects/\(project)/posts", owner, ["content": String(repeating: "x", count: 5001)]),
                (.PATCH, "/posts/\(post)", owner, ["content": ""]),
                (.POST, "/projects/\(project)/milestones", owner, ["title": ""]),
                (.POST, "/projects/\(project)/milestones", owner, ["title": "x", "target_date": "2031-02-30"]),
                (.POST, "/projects/\(project)/milestones", owner, ["title": "x", "target_date": "next week"]),
                (.POST, "/projects/\(project)/support-messages", fan, ["message": " "]),
                (.POST, "/projects/\(project)/support-messages", fan, ["message": String(repeating: "m", count: 1001)]),
                (.POST, "/projects/\(project)/support-messages", fan, ["message": "hi", "is_anonymous": "yes"]),
                (.PATCH, "/me", owner, ["name": ""]),
                (.PATCH, "/me", owner, ["twitter_handle": "@@@"]),
            ]
            for (method, path, user, json) in cases {
                let reply = try await projects.service.request(method, path, as: user, json: json)
                #expect(reply.status == 422, "\(method) \(path) \(json): \(reply.status) \(reply.body)")
            }
            // Well-formed, but refused by what exists: someone else's image is a conflict, support for one's own project forbidden.
            #expect(try await projects.call(owner) { try await $0.createPost(path: .init(projectId: project.lowercased), body: .json(.init(content: "x", images: ["https://evil.example/pic.png"]))) }.status == 409)
            #expect(try await projects.call(owner) { try await $0.sendSupportMessage(path: .init(projectId: project.lowercased), body: .json(.init(message: "go me"))) }.status == 403)
            let malformed = try await projects.service.request(.POST, "/projects", as: owner, raw: "{\"title\": ")
            #expect(malformed.status == 400)
            let wrongType = try await projects.service.request(.PUT, "/projects/\(project)/cover", as: owner, bytes: ImageFixtures.png, contentType: "image/jpeg")
            #expect(wrongType.status == 422 && wrongType.code == "unsupported_media_type")
            var big = ImageFixtures.png
            big.writeRepeatingByte(1, count: 64 << 10)
            let tooBig = try await projects.service.request(.POST, "/projects/\(project)/images", as: owner, bytes: big, contentType: "image/png")
            #expect(tooBig.status == 422 && tooBig.code == "file_too_large")
            #expect(try await projects.get("/projects?limit=0", as: owner).status == 422)
            #expect(try await projects.get("/feed?cursor=12_nope", as: owner).status == 422)

            let after = try await projects.count("""
                SELECT (SELECT count(*) FROM projects) + (SELECT count(*) FROM posts) + (SELECT count(*) FROM milestones)
                     + (SELECT count(*) FROM support_messages) + (SELECT count(*) FROM support_actions) + (SELECT sum(total_points) FROM karma)
                """)
            #expect(after == before)
            #expect(try await projects.count("SELECT count(*)::int8 FROM outbox") <= outbox, "no event for a refused request")
            #expect(try await projects.count("SELECT count(*)::int8 FROM post_uploads") == 0)
            #expect(projects.storedFiles.isEmpty)
        }
    }

    @Test("user_deleted: builder, karma, projects (followers told), follows, likes and actions go; their support messages stay, anonymous")
    func userDeleted() async throws {
        try await withRunningProjects { projects in
            let gone = try await projects.user(name: "Gone Soon"), owner = try await projects.user(), fan = try await projects.user()
            let theirs = try await projects.project(gone, title: "Doomed").id
            _ = try await projects.service.request(.PUT, "/projects/\(theirs)/cover", as: gone, bytes: ImageFixtures.png, contentType: "image/png")
            _ = try await projects.service.request(.PUT, "/me/avatar", as: gone, bytes: ImageFixtures.jpeg, contentType: "image/jpeg")
            _ = try await projects.service.request(.POST, "/projects/\(theirs)/follow", as: fan)
            let kept = try await projects.project(owner, title: "Survivor").id
            let post = try await projects.post(owner, project: kept)
            _ = try await projects.service.request(.POST, "/projects/\(kept)/follow", as: gone)
            _ = try await projects.service.request(.POST, "/projects/\(kept)/follow", as: fan)
            _ = try await projects.service.request(.POST, "/posts/\(post)/like", as: gone)
            let message = try await projects.call(gone) { try await $0.sendSupportMessage(path: .init(projectId: kept.lowercased), body: .json(.init(message: "You can do it"))) }
            #expect(message.status == 201 && message.body["message"]?["sender"]?["name"]?.stringValue == "Gone Soon")
            #expect(projects.storedFiles.count == 2)

            try await projects.service.publishAuthEvent(UserDeleted(userId: gone.id, app: .ibelieveinyou, deletedAt: Date()), user: gone.id)
            try await waitUntil { try await projects.get("/me", as: gone).status == 401 }

            let project = try await projects.get("/projects/\(kept)", as: fan)
            #expect(project.body["follower_count"]?.intValue == 1)
            #expect(try await projects.get("/posts/\(post)", as: fan).body["like_count"]?.intValue == 0)
            let messages = try await projects.get("/projects/\(kept)/support-messages", as: owner)
            #expect(messages.array.count == 1 && messages.array[0]["message"]?.stringValue == "You can do it")
            #expect(messages.array[0]["is_anonymous"]?.boolValue == true && messages.array[0]["sender"] == nil && messages.array[0]["sender_id"] == nil)
            #expect(try await projects.get("/projects/\(theirs)", as: fan).status == 404)
            #expect(try await projects.get("/me/following", as: fan).body["projects"]?.arrayValue?.count == 1)
            #expect(projects.storedFiles.isEmpty, "\(projects.storedFiles)")
            for table in ["builders", "karma", "follows", "likes", "support_actions", "karma_awards"] {
                #expect(try await projects.count("SELECT count(*)::int8 FROM \(table) WHERE user_id = '\(gone.id)'") == 0, "\(table)")
            }
            let events = try await projects.service.events(of: .projects) { events in
                events.contains { $0.type == .projectDeleted } && events.contains { $0.type == .projectUnfollowed }
            }
            let deleted = try #require(events.first { $0.type == .projectDeleted }).decode(ProjectDeleted.self)
            #expect(deleted.aggregateId == theirs.uuidString.lowercased() && deleted.payload.followerIds == [fan.id])
            let unfollowed = try #require(events.first { $0.type == .projectUnfollowed }).decode(ProjectUnfollowed.self)
            #expect(unfollowed.payload.reason == .accountDeleted && unfollowed.payload.followerCount == 1)

            // A request arriving after the erasure does not bring the account back.
            #expect(try await projects.service.request(.POST, "/projects/\(kept)/follow", as: gone).status == 401)
            #expect(try await projects.count("SELECT count(*)::int8 FROM builders WHERE user_id = '\(gone.id)'") == 0)
        }
    }

    @Test("every change leaves through the outbox keyed by project (builder and karma ones by user) with the seed's rows")
    func outboxEvents() async throws {
        try await withRunningProjects { projects in
            let owner = try await projects.user(), fan = try await projects.user()
            _ = try await projects.call(owner) { try await $0.updateMe(body: .json(.init(bio: "hi"))) }
            let project = try await projects.project(owner, title: "Evented").id
            _ = try await projects.call(owner) { try await $0.updateProject(path: .init(projectId: project.lowercased), body: .json(.init(mood: .yellow))) }
            _ = try await projects.service.request(.POST, "/projects/\(project)/follow", as: fan)
            let post = try await projects.post(owner, project: project)
            _ = try await projects.service.request(.POST, "/posts/\(post)/like", as: fan)
            _ = try await projects.call(fan) { try await $0.sendSupportMessage(path: .init(projectId: project.lowercased), body: .json(.init(message: "Go!"))) }
            _ = try await projects.service.request(.DELETE, "/projects/\(project)/follow", as: fan)
            _ = try await projects.service.request(.DELETE, "/projects/\(project)", as: owner)
            // Keyed by user, builder_updated may sit in another partition: wait for both ends.
            let events = try await projects.service.events(of: .projects) { events in
                events.contains { $0.type == .projectDeleted } && events.contains { $0.type == .builderUpdated }
            }
            let types = Set(events.map(\.type))
            for type: EventType in [.builderUpdated, .projectCreated, .projectUpdated, .projectFollowed, .projectPostCreated, .postLiked, .supportSent,
                                    .projectUnfollowed, .projectDeleted] {
                #expect(types.contains(type), "missing \(type)")
            }
            for event in events {
                let key = [EventType.builderUpdated, .karmaLevelUp].contains(event.type) ? (event.header.actor ?? UUID()) : project
                #expect(event.header.aggregateId == key.uuidString.lowercased(), "\(event.type) keyed by \(event.header.aggregateId)")
                #expect(event.header.app == .ibelieveinyou)
            }
            let followed = try #require(events.first { $0.type == .projectFollowed }).decode(ProjectFollowed.self)
            #expect(followed.payload.follow.userId == fan.id && followed.payload.followerCount == 1 && followed.payload.ownerId == owner.id)
            let updated = try #require(events.first { $0.type == .projectUpdated }).decode(ProjectUpdated.self)
            #expect(updated.payload.project.mood == .yellow && updated.payload.project.publicSlug == "evented")
            let created = try #require(events.first { $0.type == .projectPostCreated }).decode(ProjectPostCreated.self)
            #expect(created.payload.post.id == post && created.payload.projectSlug == "evented")
        }
    }
}
