import ColonyModels
import ColonyTesting
import Foundation
import NIOCore
import NIOHTTP1
import Testing
import ProjectsService

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
        let method: HTTPMethod
        let path: @Sendable (Fixture) -> String
        var json: [String: any Sendable]? = nil
        var upload: Bool = false
        /// Expected status for the owner and another user on a published project; on an
        /// unpublished one the owner's is the same and everyone else gets 404.
        let expected: [Int]
    }

    static let cases: [Case] = [
        Case(name: "edit project", method: .PATCH, path: { "/projects/\($0.project)" }, json: ["title": "Renamed", "mood": "red"], expected: [200, 403]),
        Case(name: "unpublish project", method: .PATCH, path: { "/projects/\($0.project)" }, json: ["is_published": false], expected: [200, 403]),
        Case(name: "delete project", method: .DELETE, path: { "/projects/\($0.project)" }, expected: [204, 403]),
        Case(name: "set cover", method: .PUT, path: { "/projects/\($0.project)/cover" }, upload: true, expected: [200, 403]),
        Case(name: "remove cover", method: .DELETE, path: { "/projects/\($0.project)/cover" }, expected: [200, 403]),
        Case(name: "create post", method: .POST, path: { "/projects/\($0.project)/posts" }, json: ["content": "news"], expected: [201, 403]),
        Case(name: "upload post picture", method: .POST, path: { "/projects/\($0.project)/images" }, upload: true, expected: [201, 403]),
        Case(name: "edit post", method: .PATCH, path: { "/posts/\($0.post)" }, json: ["content": "edited"], expected: [200, 403]),
        Case(name: "delete post", method: .DELETE, path: { "/posts/\($0.post)" }, expected: [204, 403]),
        Case(name: "create milestone", method: .POST, path: { "/projects/\($0.project)/milestones" }, json: ["title": "Next"], expected: [201, 403]),
        Case(name: "edit milestone", method: .PATCH, path: { "/milestones/\($0.milestone)" }, json: ["title": "Moved"], expected: [200, 403]),
        Case(name: "toggle milestone", method: .POST, path: { "/milestones/\($0.milestone)/toggle" }, expected: [200, 403]),
        Case(name: "delete milestone", method: .DELETE, path: { "/milestones/\($0.milestone)" }, expected: [204, 403]),
        Case(name: "follow", method: .POST, path: { "/projects/\($0.project)/follow" }, expected: [200, 200]),
        Case(name: "unfollow", method: .DELETE, path: { "/projects/\($0.project)/follow" }, expected: [200, 200]),
        Case(name: "like", method: .POST, path: { "/posts/\($0.post)/like" }, expected: [200, 200]),
        Case(name: "unlike", method: .DELETE, path: { "/posts/\($0.post)/like" }, expected: [200, 200]),
        Case(name: "send support", method: .POST, path: { "/projects/\($0.project)/support-messages" }, json: ["message": "go"], expected: [403, 201]),
        Case(name: "read project", method: .GET, path: { "/projects/\($0.project)" }, expected: [200, 200]),
        Case(name: "read posts", method: .GET, path: { "/projects/\($0.project)/posts" }, expected: [200, 200]),
        Case(name: "read post", method: .GET, path: { "/posts/\($0.post)" }, expected: [200, 200]),
        Case(name: "read milestones", method: .GET, path: { "/projects/\($0.project)/milestones" }, expected: [200, 200]),
        Case(name: "read support messages", method: .GET, path: { "/projects/\($0.project)/support-messages" }, expected: [200, 200]),
        Case(name: "read supporters", method: .GET, path: { "/projects/\($0.project)/supporters" }, expected: [200, 200]),
    ]

    func fixture(_ projects: RunningProjects, owner: RunningService.User, published: Bool) async throws -> Fixture {
        let project = try await projects.project(owner, title: "Fixture", published: published).id
        let post = try await projects.post(owner, project: project)
        let milestone = try await projects.service.request(.POST, "/projects/\(project)/milestones", as: owner, json: ["title": "First"])
        #expect(milestone.status == 201)
        return Fixture(project: project, post: post, milestone: try #require(uuid(milestone.body["id"])))
    }

    @Test("every project route × owner and another user, published and unpublished")
    func matrix() async throws {
        try await withRunningProjects { projects in
            let owner = try await projects.user(), other = try await projects.user()
            for published in [true, false] {
                for testCase in Self.cases {
                    for (index, actor) in Actor.allCases.enumerated() {
                        let fixture = try await fixture(projects, owner: owner, published: published)
                        let user = actor == .owner ? owner : other
                        let path = testCase.path(fixture)
                        let reply: RunningService.Reply
                        if testCase.upload {
                            reply = try await projects.service.request(testCase.method, path, as: user, bytes: ImageFixtures.png, contentType: "image/png")
                        } else {
                            reply = try await projects.service.request(testCase.method, path, as: user, json: testCase.json ?? [:])
                        }
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
            for (method, path, json) in [(HTTPMethod.PATCH, "/projects/\(fixture.project)", ["title": "Hijacked", "is_published": false] as [String: Any]),
                                         (.DELETE, "/projects/\(fixture.project)", [:]),
                                         (.PATCH, "/posts/\(fixture.post)", ["content": "hijacked"]),
                                         (.DELETE, "/milestones/\(fixture.milestone)", [:])] {
                #expect(try await projects.service.request(method, path, as: other, json: json).status == 403)
            }
            let after = try await projects.get("/projects/\(fixture.project)", as: owner)
            #expect(after.body["title"] == before.body["title"] && after.body["updated_at"] == before.body["updated_at"] && after.body["is_published"]?.boolValue == true)
            #expect(try await projects.get("/posts/\(fixture.post)", as: owner).body["content"]?.stringValue == "Day 1: seeds in")
            #expect(try await projects.get("/projects/\(fixture.project)/milestones", as: owner).array.count == 1)
        }
    }
}
