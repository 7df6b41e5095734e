import ColonyPlatform
import ColonyTesting
import Foundation
import ProjectsService
import Testing

/// Every documented write of projects, sent JSON nested 100,000 deep and numbers no field holds
/// (1e300, 2^63, 1.5) in each body property, on the caller's own project: a 4xx JSON error,
/// never a 5xx or a trap (issue 33).
@Suite("Projects: no trap on hostile bodies")
struct ProjectsTrapTests {
    @Test("hostile bodies on every documented write, and hostile values of every documented query parameter, are 4xx JSON errors")
    func hostileBodies() async throws {
        try await withRunningProjects { running in
            let user = try await running.user()
            let project = try await running.project(user)
            let post = try await running.post(user, project: project.id)
            let result = try await running.service.hostileBodyProblems(ProjectsService.openAPIDocument, as: user,
                                                                       values: ["project_id": project.id.uuidString.lowercased(), "post_id": post.uuidString.lowercased()])
            #expect(result.problems == [])
            let query = try await running.service.hostileQueryProblems(ProjectsService.openAPIDocument, as: user, values: ["project_id": project.id.uuidString.lowercased(), "post_id": post.uuidString.lowercased()])
            #expect(query.problems == [])
            #expect(query.requests > 10)
            #expect(result.requests > 100)
        }
    }
}
