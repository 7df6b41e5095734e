import ColonyClientTesting
import ColonyModels
import ColonyTesting
import Foundation
import NIOCore
import OpenAPIRuntime
import ProjectsAPI
import ProjectsService
import Testing

/// Who may do what, from the outside: every route that touches a project × its owner and
/// another user, on a published project (others: 403 for changes) and an unpublished one
/// (others: 404 for everything), each on a fresh project so one case cannot disturb the next.
@Suite("Projects: owners and others")
struct ProjectsRBACTests {
    enum Actor: String, CaseIterable, CustomStringConvertible {
        case owner, other
        var description: String { rawValue }
    }

    struct Fixture: Sendable {
        let project: UUID
        let post: UUID
        let milestone: UUID
    }

    struct Case: Sendable {
        let name: String
        /// The operation, through the generated client, on the fixture.
        let call: @Sendable (ProjectsClient, Fixture) async throws -> Outcome
        /// Expected status for the owner and another user on a published project; on an
        /// unpublished one the owner's is the same and everyone else gets 404.
        let expected: [Int]

        init(_ name: String, expected: [Int], _ call: @escaping @Sendable (ProjectsClient, Fixture) async throws -> Outcome) {
            self.name = name
            self.call = call
            self.expected = expected
        }
    }

    static let png = HTTPBody(Array(buffer: ImageFixtures.png))

    static let cases: [Case] = [
        Case("edit project", expected: [200, 403]) { api, f in
            try await answer { try await api.updateProject(path: .init(projectId: f.project.lowercased), body: .json(.init(title: "Renamed", mood: .red))) }.outcome
        },
        Case("unpublish project", expected: [200, 403]) { api, f in
            try await answer { try await api.updateProject(path: .init(projectId: f.project.lowercased), body: .json(.init(isPublished: false))) }.outcome
        },
        Case("delete project", expected: [204, 403]) { api, f in try await answer { try await api.deleteProject(path: .init(projectId: f.project.lowercased)) }.outcome },
        Case("set cover", expected: [200, 403]) { api, f in
            try await answer { try await api.setCover(path: .init(projectId: f.project.lowercased), body: .png(Self.png)) }.outcome
        },
        Case("remove cover", expected: [200, 403]) { api, f in try await answer { try await api.removeCover(path: .init(projectId: f.project.lowercased)) }.outcome },
        Case("create post", expected: [201, 403]) { api, f in
            try await answer { try await api.createPost(path: .init(projectId: f.project.lowercased), body: .json(.init(content: "news"))) }.outcome
        },
        Case("upload post picture", expected: [201, 403]) { api, f in
            try await answer { try await api.uploadPostImage(path: .init(projectId: f.project.lowercased), body: .png(Self.png)) }.outcome
        },
        Case("edit post", expected: [200, 403]) { api, f in
            try await answer { try await api.updatePost(path: .init(postId: f.post.lowercased), body: .json(.init(content: "edited"))) }.outcome
        },
        Case("delete post", expected: [204, 403]) { api, f in try await answer { try await api.deletePost(path: .init(postId: f.post.lowercased)) }.outcome },
        Case("create milestone", expected: [201, 403]) { api, f in
            try await answer { try await api.createMilestone(path: .init(projectId: f.project.lowercased), body: .json(.init(title: "Next"))) }.outcome
        },
        Case("edit milestone", expected: [200, 403]) { api, f in
            try await answer { try await api.updateMilestone(path: .init(milestoneId: f.milestone.lowercased), body: .json(.init(title: "Moved"))) }.outcome
        },
        Case("toggle milestone", expected: [200, 403]) { api, f in
            try await answer { try await api.toggleMilestone(path: .init(milestoneId: f.milestone.lowercased)) }.outcome
        },
        Case("delete milestone", expected: [204, 403]) { api, f in
            try await answer { try await api.deleteMilestone(path: .init(milestoneId: f.milestone.lowercased)) }.outcome
        },
        Case("follow", expected: [200, 200]) { api, f in try await answer { try await api.followProject(path: .init(projectId: f.project.lowercased)) }.outcome },
        Case("unfollow", expected: [200, 200]) { api, f in try await answer { try await api.unfollowProject(path: .init(projectId: f.project.lowercased)) }.outcome },
        Case("like", expected: [200, 200]) { api, f in try await answer { try await api.likePost(path: .init(postId: f.post.lowercased)) }.outcome },
        Case("unlike", expected: [200, 200]) { api, f in try await answer { try await api.unlikePost(path: .init(postId: f.post.lowercased)) }.outcome },
        Case("send support", expected: [403, 201]) { api, f in
            try await answer { try await api.sendSupportMessage(path: .init(projectId: f.project.lowercased), body: .json(.init(message: "go"))) }.outcome
        },
        Case("read project", expected: [200, 200]) { api, f in try await answer { try await api.getProject(path: .init(projectId: f.project.lowercased)) }.outcome },
        Case("read posts", expected: [200, 200]) { api, f in
            try await answer { try await api.listProjectPosts(path: .init(projectId: f.project.lowercased)) }.outcome
        },
        Case("read post", expected: [200, 200]) { api, f in try await answer { try await api.getPost(path: .init(postId: f.post.lowercased)) }.outcome },
        Case("read milestones", expected: [200, 200]) { api, f in
            try await answer { try await api.listMilestones(path: .init(projectId: f.project.lowercased)) }.outcome
        },
        Case("read support messages", expected: [200, 200]) { api, f in
            try await answer { try await api.listSupportMessages(path: .init(projectId: f.project.lowercased)) }.outcome
        },
        Case("read supporters", expected: [200, 200]) { api, f in
            try await answer { try await api.listSupporters(path: .init(projectId: f.project.lowercased)) }.outcome
        },
    ]

    func fixture(_ projects: RunningProjects, owner: RunningService.User, published: Bool) async throws -> Fixture {
        let project = try await projects.project(owner, title: "Fixture", published: published).id
        let post = try await projects.post(owner, project: project)
        let milestone = try await projects.api(owner).createMilestone(path: .init(projectId: project.lowercased), body: .json(.init(title: "First"))).created.body.json
        return Fixture(project: project, post: post, milestone: try #require(UUID(uuidString: milestone.id)))
    }

    @Test("every project route × owner and another user, published and unpublished")
    func matrix() async throws {
        try await withRunningProjects { projects in
            let owner = try await projects.user(), other = try await projects.user()
            for published in [true, false] {
                for testCase in Self.cases {
                    for (index, actor) in Actor.allCases.enumerated() {
                        let fixture = try await fixture(projects, owner: owner, published: published)
                        let reply = try await testCase.call(projects.api(actor == .owner ? owner : other), fixture)
                        let expected = published || actor == .owner ? testCase.expected[index] : 404
                        #expect(reply.status == expected, "\(testCase.name) as \(actor) on a\(published ? " published" : "n unpublished") project: \(reply.status) \(reply.body)")
                        if reply.status == 403 { #expect(reply.code == (testCase.name == "send support" ? "own_project" : "not_project_owner")) }
                    }
                }
            }
        }
    }

    @Test("a refused change leaves the project as it was")
    func refusedChangesWriteNothing() async throws {
        try await withRunningProjects { projects in
            let owner = try await projects.user(), other = try await projects.user()
            let fixture = try await fixture(projects, owner: owner, published: true)
            let before = try await projects.get("/projects/\(fixture.project)", as: owner)
            let api = projects.api(other)
            #expect(try await answer { try await api.updateProject(path: .init(projectId: fixture.project.lowercased),
                                                                  body: .json(.init(title: "Hijacked", isPublished: false))) }.status == 403)
            #expect(try await answer { try await api.deleteProject(path: .init(projectId: fixture.project.lowercased)) }.status == 403)
            #expect(try await answer { try await api.updatePost(path: .init(postId: fixture.post.lowercased), body: .json(.init(content: "hijacked"))) }.status == 403)
            #expect(try await answer { try await api.deleteMilestone(path: .init(milestoneId: fixture.milestone.lowercased)) }.status == 403)
            let after = try await projects.get("/projects/\(fixture.project)", as: owner)
            #expect(after.body["title"] == before.body["title"] && after.body["updated_at"] == before.body["updated_at"] && after.body["is_published"]?.boolValue == true)
            #expect(try await projects.get("/posts/\(fixture.post)", as: owner).body["content"]?.stringValue == "Day 1: seeds in")
            #expect(try await projects.get("/projects/\(fixture.project)/milestones", as: owner).array.count == 1)
        }
    }
}
