import ColonyClientTesting
import ColonyModels
import ColonyPlatform
import ColonyTesting
import Foundation
import NIOCore
import NIOHTTP1
import Testing
@testable import ProjectsService

/// Karma, counters and support from the outside: what earns points, what cannot be farmed,
/// counters under concurrency, the support rate limit and anonymity.
@Suite("Projects: karma, counters and support")
struct ProjectsKarmaTests {
    typealias User = RunningService.User

    @Test("a follow earns 5, a like 1, a support message 10; stats and recent actions")
    func karmaTable() async throws {
        try await withRunningProjects { projects in
            let owner = try await projects.user(), fan = try await projects.user()
            let project = try await projects.project(owner).id
            let post = try await projects.post(owner, project: project)

            let follow = try await projects.service.request(.POST, "/projects/\(project)/follow", as: fan)
            #expect(follow.status == 200 && follow.body["karma_earned"]?.intValue == 5 && follow.body["follower_count"]?.intValue == 1)
            #expect(follow.body["karma"]?["total_points"]?.intValue == 5 && follow.body["following"]?.boolValue == true)
            let like = try await projects.service.request(.POST, "/posts/\(post)/like", as: fan)
            #expect(like.body["karma_earned"]?.intValue == 1 && like.body["karma"]?["total_points"]?.intValue == 6)
            let message = try await projects.call(fan) { try await $0.sendSupportMessage(path: .init(projectId: project.lowercased), body: .json(.init(message: "Keep going!"))) }
            #expect(message.status == 201 && message.body["karma_earned"]?.intValue == 10 && message.body["karma"]?["total_points"]?.intValue == 16, "\(message.body)")
            #expect(try await projects.karma(fan) == 16)
            #expect(try await projects.karma(owner) == 0, "the owner earns nothing from being supported")

            let stats = try await projects.get("/me/stats", as: fan)
            #expect(stats.body["projects_supported"]?.intValue == 1 && stats.body["messages_sent"]?.intValue == 1 && stats.body["posts_liked"]?.intValue == 1)
            let actions = try await projects.get("/me/support-actions", as: fan)
            #expect(actions.array.compactMap { $0["action_type"]?.stringValue } == ["message", "like", "follow"])
            #expect(actions.array.compactMap { $0["points_earned"]?.intValue } == [10, 1, 5])
            #expect(actions.array.allSatisfy { $0["project"]?["title"]?.stringValue == "Rocket Garden" })
            #expect(try await projects.get("/me/support-actions", as: owner).array.isEmpty)
        }
    }

    @Test("levels rise at 51, 201, 501 and 1001 (not at 50, 200, 500, 1000), each with karma_level_up")
    func levelBoundaries() async throws {
        try await withRunningProjects(settings: ProjectsSettings(maxImageBytes: 64 << 10, supportMessageLimit: 100)) { projects in
            let owner = try await projects.user(), fan = try await projects.user()
            var postIDs: [UUID] = []
            var projectIDs: [UUID] = []
            for n in 0..<4 {
                let project = try await projects.project(owner, title: "P\(n)").id
                projectIDs.append(project)
                postIDs.append(try await projects.post(owner, project: project))
            }
            func setKarma(_ points: Int) async throws {
                try await projects.service.withDatabase { database in
                    _ = try await database.query("UPDATE karma SET total_points = \(points), level = karma_level(\(Int32(points))) WHERE user_id = \(fan.id)")
                }
            }
            func check(_ reply: Outcome, points: Int, level: Int) {
                #expect(reply.body["karma"]?["total_points"]?.intValue == points && reply.body["karma"]?["level"]?.intValue == level, "\(reply.body)")
            }
            try await setKarma(45)
            check(try await projects.service.request(.POST, "/projects/\(projectIDs[0])/follow", as: fan).outcome, points: 50, level: 1)
            check(try await projects.service.request(.POST, "/posts/\(postIDs[0])/like", as: fan).outcome, points: 51, level: 2)
            try await setKarma(190)
            check(try await projects.call(fan) { try await $0.sendSupportMessage(path: .init(projectId: projectIDs[0].lowercased), body: .json(.init(message: "a"))) }.outcome, points: 200, level: 2)
            check(try await projects.service.request(.POST, "/posts/\(postIDs[1])/like", as: fan).outcome, points: 201, level: 3)
            try await setKarma(499)
            check(try await projects.service.request(.POST, "/posts/\(postIDs[2])/like", as: fan).outcome, points: 500, level: 3)
            check(try await projects.service.request(.POST, "/posts/\(postIDs[3])/like", as: fan).outcome, points: 501, level: 4)
            try await setKarma(995)
            check(try await projects.service.request(.POST, "/projects/\(projectIDs[1])/follow", as: fan).outcome, points: 1000, level: 4)
            check(try await projects.call(fan) { try await $0.sendSupportMessage(path: .init(projectId: projectIDs[1].lowercased), body: .json(.init(message: "b"))) }.outcome, points: 1010, level: 5)
            let karma = try await projects.get("/me/karma", as: fan)
            #expect(karma.body["label"]?.stringValue == "Legend" && karma.body["emoji"]?.stringValue == "👑" && karma.body["next_level_at"] == nil)

            let events = try await projects.service.events(of: .projects) { events in events.filter { $0.type == .karmaLevelUp }.count >= 4 }
            let ups = try events.filter { $0.type == .karmaLevelUp }.map { try $0.decode(KarmaLevelUp.self) }
            #expect(ups.map { "\($0.payload.previousLevel)→\($0.payload.karma.level)" } == ["1→2", "2→3", "3→4", "4→5"])
            #expect(ups.allSatisfy { $0.aggregateId == fan.id.uuidString.lowercased() })
            #expect(ups.map(\.payload.label) == ["Supporter", "Super Supporter", "Champion", "Legend"])
        }
    }

    @Test("no farming: unfollow and refollow, unlike and relike earn once; your own project earns nothing")
    func noFarming() async throws {
        try await withRunningProjects { projects in
            let owner = try await projects.user(), fan = try await projects.user()
            let project = try await projects.project(owner).id
            let post = try await projects.post(owner, project: project)
            for _ in 0..<3 {
                let follow = try await projects.service.request(.POST, "/projects/\(project)/follow", as: fan)
                #expect(follow.status == 200 && follow.body["follower_count"]?.intValue == 1)
                let again = try await projects.service.request(.POST, "/projects/\(project)/follow", as: fan)
                #expect(again.body["karma_earned"]?.intValue == 0 && again.body["follower_count"]?.intValue == 1, "a repeated follow changes nothing")
                let unfollow = try await projects.service.request(.DELETE, "/projects/\(project)/follow", as: fan)
                #expect(unfollow.status == 200 && unfollow.body["following"]?.boolValue == false && unfollow.body["follower_count"]?.intValue == 0)
                #expect(try await projects.service.request(.DELETE, "/projects/\(project)/follow", as: fan).body["follower_count"]?.intValue == 0)
                _ = try await projects.service.request(.POST, "/posts/\(post)/like", as: fan)
                #expect(try await projects.service.request(.POST, "/posts/\(post)/like", as: fan).body["like_count"]?.intValue == 1)
                let unlike = try await projects.service.request(.DELETE, "/posts/\(post)/like", as: fan)
                #expect(unlike.status == 200 && unlike.body["liked"]?.boolValue == false && unlike.body["like_count"]?.intValue == 0)
            }
            #expect(try await projects.karma(fan) == 6, "5 for the first follow, 1 for the first like, nothing after")
            #expect(try await projects.count("SELECT count(*)::int8 FROM support_actions WHERE user_id = '\(fan.id)'") == 2)

            let own = try await projects.service.request(.POST, "/projects/\(project)/follow", as: owner)
            #expect(own.status == 200 && own.body["karma_earned"]?.intValue == 0 && own.body["follower_count"]?.intValue == 1)
            let ownLike = try await projects.service.request(.POST, "/posts/\(post)/like", as: owner)
            #expect(ownLike.status == 200 && ownLike.body["karma_earned"]?.intValue == 0 && ownLike.body["like_count"]?.intValue == 1)
            let ownSupport = try await projects.call(owner) { try await $0.sendSupportMessage(path: .init(projectId: project.lowercased), body: .json(.init(message: "me!"))) }
            #expect(ownSupport.status == 403 && ownSupport.code == "own_project")
            #expect(try await projects.karma(owner) == 0)
            #expect(try await projects.count("SELECT count(*)::int8 FROM support_actions WHERE user_id = '\(owner.id)'") == 0)
        }
    }

    @Test("a follower can unfollow a project unpublished since (others still get 404); stats agree with the lists; a re-follow within a day is not announced again")
    func unpublishedFollowsAndRefollows() async throws {
        try await withRunningProjects { projects in
            let owner = try await projects.user(), fan = try await projects.user(), stranger = try await projects.user()
            let shown = try await projects.project(owner, title: "Shown").id
            let hidden = try await projects.project(owner, title: "Hidden").id
            let post = try await projects.post(owner, project: hidden)
            for project in [shown, hidden] { #expect(try await projects.service.request(.POST, "/projects/\(project)/follow", as: fan).status == 200) }
            #expect(try await projects.service.request(.POST, "/posts/\(post)/like", as: fan).status == 200)
            #expect(try await projects.call(owner) { try await $0.updateProject(path: .init(projectId: hidden.lowercased), body: .json(.init(isPublished: false))) }.status == 200)

            // The lists and the stats both count what the fan can see now.
            let following = try await projects.get("/me/following", as: fan)
            let stats = try await projects.get("/me/stats", as: fan)
            #expect(following.body["projects"]?.arrayValue?.count == 1, "\(following.body)")
            #expect(stats.body["projects_supported"]?.intValue == 1 && stats.body["posts_liked"]?.intValue == 0, "\(stats.body)")

            #expect(try await projects.service.request(.DELETE, "/projects/\(hidden)/follow", as: stranger).status == 404, "still hidden from others")
            let left = try await projects.service.request(.DELETE, "/projects/\(hidden)/follow", as: fan)
            #expect(left.status == 200 && left.body["following"]?.boolValue == false && left.body["follower_count"]?.intValue == 0, "\(left.body)")
            #expect(try await projects.service.request(.DELETE, "/projects/\(hidden)/follow", as: fan).status == 404, "no longer following: hidden again")
            #expect(try await projects.count("SELECT count(*)::int8 FROM follows WHERE project_id = '\(hidden)'") == 0)

            // Unfollow and follow again the same day: the owner hears of the first follow only.
            #expect(try await projects.service.request(.DELETE, "/projects/\(shown)/follow", as: fan).status == 200)
            #expect(try await projects.service.request(.POST, "/projects/\(shown)/follow", as: fan).status == 200)
            let follows = try await projects.service.events(of: .projects) { events in events.filter { $0.type == .projectFollowed }.count == 3 }
                .filter { $0.type == .projectFollowed }.map { try $0.decode(ProjectFollowed.self).payload }
            #expect(follows.filter { $0.follow.projectId == shown }.map(\.notifyOwner) == [true, false])
            // A day later it is news again.
            _ = try await projects.count("WITH x AS (UPDATE follow_notices SET notified_at = now() - interval '25 hours' RETURNING 1) SELECT count(*)::int8 FROM x")
            #expect(try await projects.service.request(.DELETE, "/projects/\(shown)/follow", as: fan).status == 200)
            #expect(try await projects.service.request(.POST, "/projects/\(shown)/follow", as: fan).status == 200)
            let later = try await projects.service.events(of: .projects) { events in events.filter { $0.type == .projectFollowed }.count == 4 }
                .filter { $0.type == .projectFollowed }.map { try $0.decode(ProjectFollowed.self).payload }
            #expect(later.last?.notifyOwner == true)
        }
    }

    @Test("counters stay exact: 100 users follow one project and like one post at once (each twice)")
    func concurrentCounters() async throws {
        try await withRunningProjects { projects in
            let owner = try await projects.user()
            let project = try await projects.project(owner).id
            let post = try await projects.post(owner, project: project)
            let fans = try await projects.users(100)
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for fan in fans {
                    for _ in 0..<2 {
                        group.addTask { try await projects.service.request(.POST, "/projects/\(project)/follow", as: fan).status }
                        group.addTask { try await projects.service.request(.POST, "/posts/\(post)/like", as: fan).status }
                    }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(statuses.count == 400 && statuses.allSatisfy { $0 == 200 }, "\(Dictionary(grouping: statuses, by: { $0 }).mapValues(\.count))")
            #expect(try await projects.get("/projects/\(project)", as: owner).body["follower_count"]?.intValue == 100)
            #expect(try await projects.get("/posts/\(post)", as: owner).body["like_count"]?.intValue == 100)
            #expect(try await projects.count("SELECT count(*)::int8 FROM follows") == 100)
            #expect(try await projects.count("SELECT sum(total_points)::int8 FROM karma") == 600, "5 + 1 for each fan, once")
            #expect(try await projects.count("SELECT count(*)::int8 FROM support_actions") == 200)

            try await withThrowingTaskGroup(of: Void.self) { group in
                for fan in fans.prefix(40) {
                    group.addTask { _ = try await projects.service.request(.DELETE, "/projects/\(project)/follow", as: fan) }
                    group.addTask { _ = try await projects.service.request(.DELETE, "/posts/\(post)/like", as: fan) }
                }
                try await group.waitForAll()
            }
            #expect(try await projects.get("/projects/\(project)", as: owner).body["follower_count"]?.intValue == 60)
            #expect(try await projects.get("/posts/\(post)", as: owner).body["like_count"]?.intValue == 60)
            #expect(try await projects.count("SELECT sum(total_points)::int8 FROM karma") == 600, "unfollowing and unliking take nothing back")
        }
    }

    @Test("support messages are rate-limited per sender: 429 with Retry-After, nothing written")
    func rateLimit() async throws {
        try await withRunningProjects { projects in
            let owner = try await projects.user(), fan = try await projects.user(), other = try await projects.user()
            let project = try await projects.project(owner).id
            for n in 0..<5 {
                #expect(try await projects.call(fan) { try await $0.sendSupportMessage(path: .init(projectId: project.lowercased), body: .json(.init(message: "m\(n)"))) }.status == 201)
            }
            let limited = try await projects.call(fan) { try await $0.sendSupportMessage(path: .init(projectId: project.lowercased), body: .json(.init(message: "one more"))) }
            #expect(limited.status == 429 && limited.code == "rate_limited")
            let retry = Int(limited.headers[.retryAfter] ?? "") ?? 0
            #expect((3500...3600).contains(retry), "Retry-After \(retry)")
            #expect(try await projects.karma(fan) == 50)
            #expect(try await projects.count("SELECT count(*)::int8 FROM support_messages") == 5)
            #expect(try await projects.call(other) { try await $0.sendSupportMessage(path: .init(projectId: project.lowercased), body: .json(.init(message: "mine"))) }.status == 201, "per sender")

            // Once the oldest message leaves the window, one more goes through.
            try await projects.service.withDatabase { database in
                _ = try await database.query("""
                    UPDATE support_messages SET created_at = now() - interval '2 hours'
                    WHERE id = (SELECT id FROM support_messages WHERE message = 'm0')
                    """)
            }
            #expect(try await projects.call(fan) { try await $0.sendSupportMessage(path: .init(projectId: project.lowercased), body: .json(.init(message: "again"))) }.status == 201)
            let recent = try await projects.get("/projects/\(project)/support-messages", as: owner)
            #expect(recent.array.count == 5, "the last 5 by default")
            #expect(recent.array.first?["message"]?.stringValue == "again")
        }
    }

    @Test("anonymous support never reveals the sender: not in the answer, not to the owner, not in lists, not in events")
    func anonymity() async throws {
        try await withRunningProjects { projects in
            let owner = try await projects.user(), fan = try await projects.user(name: "Secret Fan"), reader = try await projects.user()
            let project = try await projects.project(owner).id
            let fanBuilder = try #require(uuid(try await projects.get("/me", as: fan).body["id"]))
            let named = try await projects.call(reader) { try await $0.sendSupportMessage(path: .init(projectId: project.lowercased), body: .json(.init(message: "signed"))) }
            #expect(named.body["message"]?["sender"]?["user_id"]?.stringValue?.lowercased() == reader.id.uuidString.lowercased())
            let sent = try await projects.call(fan) { try await $0.sendSupportMessage(path: .init(projectId: project.lowercased), body: .json(.init(message: "you got this", isAnonymous: true))) }
            #expect(sent.status == 201 && sent.body["message"]?["is_anonymous"]?.boolValue == true && sent.body["karma_earned"]?.intValue == 10)
            #expect(sent.body["message"]?["sender"] == nil && sent.body["message"]?["sender_id"] == nil)

            let secrets = [fan.id.uuidString.lowercased(), fanBuilder.uuidString.lowercased(), "Secret Fan"]
            func revealsNothing(_ bytes: ByteBuffer, _ context: String) {
                let text = String(buffer: bytes).lowercased()
                for secret in secrets { #expect(!text.contains(secret.lowercased()), "\(context) reveals \(secret)") }
            }
            for user in [owner, reader] {
                let list = try await projects.get("/projects/\(project)/support-messages?limit=50", as: user)
                #expect(list.array.count == 2)
                let anonymous = try #require(list.array.first { $0["is_anonymous"]?.boolValue == true })
                #expect(anonymous["sender"] == nil && anonymous["sender_id"] == nil && anonymous["message"]?.stringValue == "you got this")
                revealsNothing(list.bytes, "the message list seen by \(user.id)")
                revealsNothing(try await projects.get("/projects/\(project)/supporters", as: user).bytes, "the supporters list")
                revealsNothing(try await projects.get("/projects/\(project)", as: user).bytes, "the project")
            }

            let events = try await projects.service.events(of: .projects) { events in events.filter { $0.type == .supportSent }.count >= 2 }
            let supportEvents = events.filter { $0.type == .supportSent }
            let anonymousEvent = try #require(try supportEvents.first { try $0.decode(SupportSent.self).payload.message.isAnonymous })
            let payload = try anonymousEvent.decode(SupportSent.self)
            #expect(payload.actor == nil && payload.payload.message.senderId == nil && payload.payload.senderName == nil)
            revealsNothing(ByteBuffer(bytes: anonymousEvent.bytes), "the support_sent event")
            let signed = try #require(try supportEvents.first { try !$0.decode(SupportSent.self).payload.message.isAnonymous }).decode(SupportSent.self)
            #expect(signed.actor == reader.id && signed.payload.senderName != nil)

            // The sender sees their own action; the owner's view of anything shows no trace.
            #expect(try await projects.get("/me/support-actions", as: fan).array.first?["action_type"]?.stringValue == "message")
            revealsNothing(try await projects.get("/me/support-actions", as: owner).bytes, "the owner's actions")
        }
    }
}
