import ColonyModels
import ColonyPlatform
import ColonyStorage
import ColonyTesting
import Foundation
import Testing
import ProjectsService

/// Blocks in I Believe In You (`/projects/v1/blocks`, issue 39.2): a blocked user cannot send the
/// blocker support messages, anonymous or not; their projects, posts, named messages and follows
/// are gone from the blocker's reads (the feed's fast path and its generated route alike);
/// pushes of their follows are withheld from the blocker; unblocking brings everything back.
@Suite("Projects blocks")
struct ProjectsBlockTests {
    typealias User = RunningService.User

    @Test("block, list and unblock: idempotent, most recent first; self, malformed ids and the 1000th block refused")
    func blockListUnblock() async throws {
        try await withRunningProjects { projects in
            let alice = try await projects.user(), bob = try await projects.user(), carol = try await projects.user()
            #expect(try await projects.get("/blocks", as: alice).array.isEmpty)

            let first = try await projects.service.request(.POST, "/blocks", as: alice, json: ["user_id": bob.id.uuidString])
            #expect(first.status == 201 && first.array.count == 1 && uuid(first.array.first?["user_id"]) == bob.id && first.array.first?["created_at"] != nil, "\(first.body)")
            let again = try await projects.service.request(.POST, "/blocks", as: alice, json: ["user_id": bob.id.uuidString.lowercased()])
            #expect(again.status == 201 && again.array.count == 1, "blocking again changes nothing")
            #expect(try await projects.service.request(.POST, "/blocks", as: alice, json: ["user_id": carol.id.uuidString]).array.compactMap { uuid($0["user_id"]) } == [carol.id, bob.id])
            #expect(try await projects.get("/blocks", as: alice).array.compactMap { uuid($0["user_id"]) } == [carol.id, bob.id])
            #expect(try await projects.get("/blocks", as: bob).array.isEmpty, "who blocked you is not listed")

            let own = try await projects.service.request(.POST, "/blocks", as: alice, json: ["user_id": alice.id.uuidString])
            #expect(own.status == 409 && own.code == "cannot_block_self")
            #expect(try await projects.service.request(.POST, "/blocks", as: alice, json: ["user_id": "bob"]).status == 422)
            #expect(try await projects.service.request(.POST, "/blocks", as: alice, json: [:]).status == 422)
            let malformed = try await projects.service.request(.DELETE, "/blocks/not-a-uuid", as: alice)
            #expect(malformed.status == 404 && malformed.code == "user_not_found")

            #expect(try await projects.service.request(.DELETE, "/blocks/\(bob.id)", as: alice).status == 204)
            #expect(try await projects.service.request(.DELETE, "/blocks/\(bob.id)", as: alice).status == 204, "fine when there is none")
            #expect(try await projects.get("/blocks", as: alice).array.compactMap { uuid($0["user_id"]) } == [carol.id])

            // 1000 blocks is the most one account may hold.
            _ = try await projects.count("""
                WITH x AS (INSERT INTO user_blocks (blocker_id, blocked_id) SELECT '\(alice.id)', gen_random_uuid() FROM generate_series(1, 999) RETURNING 1)
                SELECT count(*)::int8 FROM x
                """)
            let full = try await projects.service.request(.POST, "/blocks", as: alice, json: ["user_id": bob.id.uuidString])
            #expect(full.status == 409 && full.code == "block_limit", "\(full.body)")
            #expect(try await projects.service.request(.POST, "/blocks", as: alice, json: ["user_id": carol.id.uuidString]).status == 201, "one already blocked is fine")
        }
    }

    @Test("a blocked user's support message is refused (anonymous too) and their content is gone from the blocker's reads until unblocked")
    func refusedAndHidden() async throws {
        try await withRunningProjects { projects in
            let alice = try await projects.user(name: "Alice"), bob = try await projects.user(name: "Bob"), carol = try await projects.user(name: "Carol")
            let garden = try await projects.project(alice, title: "Alice Garden").id
            let (bakery, bakerySlug) = try await projects.project(bob, title: "Bob Bakery", tagline: "Bread for all")
            let rocket = try await projects.project(carol, title: "Carol Rocket").id
            let bobPost = try await projects.post(bob, project: bakery, content: "Bob's first loaf")
            let carolPost = try await projects.post(carol, project: rocket, content: "Carol's launch")
            for project in [bakery, rocket] { #expect(try await projects.service.request(.POST, "/projects/\(project)/follow", as: alice).status == 200) }
            for fan in [bob, carol] { #expect(try await projects.service.request(.POST, "/projects/\(garden)/follow", as: fan).status == 200) }
            for (sender, name, anonymous) in [(bob, "bob", false), (bob, "bob", true), (carol, "carol", false)] {
                let sent = try await projects.service.request(.POST, "/projects/\(garden)/support-messages", as: sender,
                                                              json: ["message": "go \(name) \(anonymous)", "is_anonymous": anonymous])
                #expect(sent.status == 201, "\(sent.body)")
            }
            let bobBuilder = try #require(try await projects.get("/me", as: bob).body["id"]?.stringValue)

            /// What Alice sees of Bob, through every read that shows his content.
            @Sendable func aliceSeesBob(_ visible: Bool, _ when: String, fastPathsOff generated: RunningService? = nil) async throws {
                let status = visible ? 200 : 404
                #expect(try await projects.get("/projects/\(bakery)", as: alice).status == status, "\(when): the project")
                #expect(try await projects.get("/projects/by-slug/\(bakerySlug)", as: alice).status == status, "\(when): by slug")
                for part in ["posts", "milestones", "supporters", "support-messages"] {
                    let read = try await projects.get("/projects/\(bakery)/\(part)", as: alice)
                    #expect(read.status == status && (visible || read.code == "project_not_found"), "\(when): \(part)")
                }
                let post = try await projects.get("/posts/\(bobPost)", as: alice)
                #expect(post.status == status && (visible || post.code == "post_not_found"), "\(when): the post")
                for path in ["/projects", "/projects?sort=trending", "/projects?q=bakery", "/me/following"] {
                    let ids = try await projects.get(path, as: alice).body["projects"]?.arrayValue?.compactMap { uuid($0["id"]) } ?? []
                    #expect(ids.contains(bakery) == visible, "\(when): \(path)")
                }
                #expect(try await projects.get("/projects", as: alice).body["projects"]?.arrayValue?.compactMap { uuid($0["id"]) }.contains(rocket) == true)
                #expect(try await projects.get("/builders/\(bobBuilder)/projects", as: alice).array.count == (visible ? 1 : 0), "\(when): Bob's projects")
                #expect(try await projects.get("/builders/\(bobBuilder)", as: alice).status == 200, "\(when): builders stay public")
                // The feed's fast path (its page size, and another) and, when given, the generated route.
                var feeds = [try await projects.get("/feed", as: alice), try await projects.get("/feed?limit=5", as: alice)]
                if let generated { feeds.append(try await generated.request(.GET, "/feed", as: alice)) }
                for feed in feeds {
                    let ids = feed.body["posts"]?.arrayValue?.compactMap { uuid($0["id"]) } ?? []
                    #expect(ids.contains(bobPost) == visible && ids.contains(carolPost), "\(when): the feed \(ids)")
                }
                let supporters = try await projects.get("/projects/\(garden)/supporters", as: alice).array.compactMap { uuid($0["user_id"]) }
                #expect(supporters.contains(bob.id) == visible && supporters.contains(carol.id), "\(when): Alice's supporters")
                let messages = try await projects.get("/projects/\(garden)/support-messages?limit=50", as: alice).array.compactMap { $0["message"]?.stringValue }
                #expect(messages.contains("go bob false") == visible, "\(when): Bob's named message")
                #expect(messages.contains("go bob true") && messages.contains("go carol false"), "\(when): an anonymous one stays, never telling whose it was")
            }

            try await aliceSeesBob(true, "before the block")
            #expect(try await projects.service.request(.POST, "/blocks", as: alice, json: ["user_id": bob.id.uuidString]).status == 201)
            try await withRunningTwin(of: projects.service, .projects, configure: { $0.fastPaths = .off; $0.maxUploadBytes = 128 << 10 }, definition: { base in
                let storage = Storage(backend: FileSystemStorageBackend(root: projects.storageRoot), publicBaseURL: base,
                                      signingKey: Array("projects-tests-signing-key-0123456789abcdef".utf8))
                return ProjectsService.definition(settings: ProjectsSettings(maxImageBytes: 64 << 10, supportMessageLimit: 5, supportWindowSeconds: 3600), storage: storage)
            }) { generated in
                try await aliceSeesBob(false, "blocked", fastPathsOff: generated)
            }

            // Nothing of Bob's can be acted on by Alice either: it is out of her sight.
            #expect(try await projects.service.request(.POST, "/posts/\(bobPost)/like", as: alice).code == "post_not_found")
            #expect(try await projects.service.request(.POST, "/projects/\(bakery)/support-messages", as: alice, json: ["message": "hi"]).code == "project_not_found")
            // Yet she can report what she saw before she blocked him (block, then report).
            let report = try await projects.service.request(.POST, "/reports", as: alice, json: ["object_type": "post", "object_id": bobPost.uuidString, "category": "spam"])
            #expect(report.status == 201, "\(report.body)")

            // Bob's support messages to Alice are refused, named or anonymous; nothing is written.
            let karma = try await projects.karma(bob)
            let before = try await projects.count("SELECT count(*)::int8 FROM support_messages")
            for anonymous in [false, true] {
                let refused = try await projects.service.request(.POST, "/projects/\(garden)/support-messages", as: bob, json: ["message": "still here", "is_anonymous": anonymous])
                #expect(refused.status == 403 && refused.code == "blocked", "anonymous \(anonymous): \(refused.body)")
            }
            #expect(try await projects.count("SELECT count(*)::int8 FROM support_messages") == before)
            #expect(try await projects.karma(bob) == karma, "karma earned stays; a refusal earns nothing")
            // A block is one way and personal: Bob still sees Alice's project, Carol still sees Bob's and writes to Alice.
            #expect(try await projects.get("/projects/\(garden)", as: bob).status == 200)
            #expect(try await projects.get("/projects/\(bakery)", as: carol).status == 200)
            #expect(try await projects.get("/posts/\(bobPost)", as: carol).status == 200)
            #expect(try await projects.service.request(.POST, "/projects/\(garden)/support-messages", as: carol, json: ["message": "carol again"]).status == 201)
            #expect(try await projects.get("/projects/\(garden)", as: alice).body["follower_count"]?.intValue == 2, "Bob's follow stays and counts")

            #expect(try await projects.service.request(.DELETE, "/blocks/\(bob.id)", as: alice).status == 204)
            try await aliceSeesBob(true, "after unblocking")
            #expect(try await projects.service.request(.POST, "/projects/\(garden)/support-messages", as: bob, json: ["message": "back again"]).status == 201)
        }
    }

    @Test("a blocked user's follow is published withheld from the builder who blocked them; the blocker may still unfollow their project")
    func followsWithheld() async throws {
        try await withRunningProjects { projects in
            let alice = try await projects.user(), bob = try await projects.user(), carol = try await projects.user()
            let garden = try await projects.project(alice, title: "Alice Garden").id
            let bakery = try await projects.project(bob, title: "Bob Bakery").id
            #expect(try await projects.service.request(.POST, "/projects/\(bakery)/follow", as: alice).status == 200)
            #expect(try await projects.service.request(.POST, "/blocks", as: alice, json: ["user_id": bob.id.uuidString]).status == 201)

            // Following is no message: Bob may follow, and earns as anyone does, but Alice hears nothing of it.
            let followed = try await projects.service.request(.POST, "/projects/\(garden)/follow", as: bob)
            #expect(followed.status == 200 && followed.body["karma_earned"]?.intValue == 5, "\(followed.body)")
            #expect(try await projects.service.request(.POST, "/projects/\(garden)/follow", as: carol).status == 200)
            #expect(try await projects.service.request(.POST, "/projects/\(garden)/support-messages", as: carol, json: ["message": "go"]).status == 201)

            let events = try await projects.service.events(of: .projects) { events in
                events.filter { $0.type == .projectFollowed }.count >= 3 && events.contains { $0.type == .supportSent }
            }
            let follows = try events.filter { $0.type == .projectFollowed }.map { ($0.header.withheldFrom, try $0.decode(ProjectFollowed.self).payload) }
            let bobs = try #require(follows.first { $0.1.follow.userId == bob.id })
            #expect(bobs.0 == [alice.id] && bobs.1.notifyOwner == true, "withheld from Alice: \(String(describing: bobs.0))")
            #expect(follows.first { $0.1.follow.userId == carol.id }?.0 == nil, "Carol's follow is not withheld")
            #expect(follows.first { $0.1.follow.userId == alice.id }?.0 == nil, "Alice's follow of Bob's project: Bob blocked nobody")
            #expect(events.first { $0.type == .supportSent }?.header.withheldFrom == nil)

            // Alice still follows Bob's project (a block removes nothing) and may end it; then it is out of sight.
            let left = try await projects.service.request(.DELETE, "/projects/\(bakery)/follow", as: alice)
            #expect(left.status == 200 && left.body["following"]?.boolValue == false && left.body["follower_count"]?.intValue == 0, "\(left.body)")
            #expect(try await projects.service.request(.DELETE, "/projects/\(bakery)/follow", as: alice).code == "project_not_found")
            #expect(try await projects.service.request(.POST, "/projects/\(bakery)/follow", as: alice).code == "project_not_found")
        }
    }
}
