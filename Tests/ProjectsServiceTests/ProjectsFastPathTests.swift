import ColonyModels
import ColonyPlatform
import ColonyStorage
import ColonyTesting
import Foundation
import Testing
import ProjectsService

/// The feed's fast path (`GET /projects/v1/feed`, `ProjectsAPI.fastPaths`) against the generated
/// route it stands in for: a second instance on the same data with fast paths off answers every
/// request, good and bad, with the same status, `Content-Type` and bytes.
@Suite("Projects fast paths")
struct ProjectsFastPathTests {
    @Test("the feed's fast path answers byte for byte as the generated route")
    func feedMatchesGeneratedRoute() async throws {
        try await withRunningProjects { projects in
            let alice = try await projects.user(name: "Alice \"the\" / Builder é 🚀")
            let bob = try await projects.user(name: "Bob")
            let reader = try await projects.user(name: "Reader")
            let lonely = try await projects.user()
            let garden = try await projects.project(alice, title: "Garden").id
            let rocket = try await projects.project(bob, title: "Rocket").id
            let cover = try await projects.service.request(.PUT, "/projects/\(garden)/cover", as: alice, bytes: ImageFixtures.png, contentType: "image/png")
            #expect(cover.status == 200, "\(cover.body)")
            let upload = try await projects.service.request(.POST, "/projects/\(rocket)/images", as: bob, bytes: ImageFixtures.jpeg, contentType: "image/jpeg")
            let image = try #require(upload.body["key"]?.stringValue)
            var posted: [UUID] = []
            for n in 0..<6 {
                posted.append(try await projects.post(alice, project: garden, content: "garden \(n): \"quoted\" \\ slash / tab\t newline\n 日本 \u{2028}"))
                posted.append(try await projects.post(bob, project: rocket, content: "rocket \(n)"))
            }
            let withImage = try await projects.call(bob) { try await $0.createPost(path: .init(projectId: rocket.lowercased), body: .json(.init(content: "with a picture", images: [image]))) }
            #expect(withImage.status == 201, "\(withImage.body)")
            for project in [garden, rocket] { _ = try await projects.service.request(.POST, "/projects/\(project)/follow", as: reader) }
            _ = try await projects.service.request(.POST, "/posts/\(posted[2])/like", as: reader)
            let firstPage = try await projects.get("/feed?limit=5", as: reader)
            let cursor = try #require(firstPage.body["next_cursor"]?.stringValue)

            let other = try await projects.service.user(app: .unify)
            let requests: [(String, RunningService.User?, [(String, String)])] = [
                ("/feed", reader, []),
                ("/feed?limit=5", reader, []),
                ("/feed?limit=5&cursor=\(cursor)", reader, []),
                ("/feed?cursor=\(cursor)", reader, []),
                ("/feed?limit=50", reader, []),
                ("/feed?limit=1", reader, [("Accept", "application/json")]),
                ("/feed?limit=3", reader, [("Accept", "*/*")]),
                ("/feed?limit=3&unknown=1", reader, []),
                ("/feed", lonely, []),
                ("/feed", alice, []),
                ("/feed?limit=0", reader, []),
                ("/feed?limit=51", reader, []),
                ("/feed?limit=-1", reader, []),
                ("/feed?limit=abc", reader, []),
                ("/feed?limit=1.5", reader, []),
                ("/feed?limit=", reader, []),
                ("/feed?limit=%35", reader, []),
                ("/feed?limit=+5", reader, []),
                ("/feed?limit=99999999999999999999", reader, []),
                ("/feed?limit=5&limit=abc", reader, []),
                ("/feed?limit", reader, []),
                ("/feed?&limit=2", reader, []),
                ("/feed?limit=2&&cursor=\(cursor)", reader, []),
                ("/feed?cursor=%zz", reader, []),
                ("/feed?limit=3", reader, [("Accept", "application/json; q=0.5, text/html")]),
                ("/feed?limit=3", reader, [("Accept", "application/*")]),
                ("/feed?limit=0", reader, [("Accept", "text/html")]),
                ("/feed?cursor=garbage", reader, []),
                ("/feed?cursor=", reader, []),
                ("/feed?cursor=12_nope", reader, []),
                ("/feed?cursor=99999999999999999999_\(UUID().lowercased)", reader, []),
                ("/feed", nil, []),
                ("/feed", other, []),
                ("/feed", reader, [("Accept", "text/html")]),
            ]
            try await withRunningTwin(of: projects.service, .projects, configure: { $0.fastPaths = .off; $0.maxUploadBytes = 128 << 10 }, definition: { base in
                let storage = Storage(backend: FileSystemStorageBackend(root: projects.storageRoot), publicBaseURL: projects.service.base,
                                      signingKey: Array("projects-tests-signing-key-0123456789abcdef".utf8))
                return ProjectsService.definition(settings: ProjectsSettings(maxImageBytes: 64 << 10, supportMessageLimit: 5, supportWindowSeconds: 3600),
                                                  storage: storage)
            }) { generated in
                for (path, user, headers) in requests {
                    let fast = try await projects.service.request(.GET, path, as: user, headers: headers)
                    let reference = try await generated.request(.GET, path, as: user, headers: headers)
                    #expect(fast.status == reference.status, "\(path): \(fast.status) vs \(reference.status) \(reference.body)")
                    #expect(fast.headers["Content-Type"] == reference.headers["Content-Type"], "\(path)")
                    #expect(Array(buffer: fast.bytes) == Array(buffer: reference.bytes),
                            "\(path):\n\(String(buffer: fast.bytes))\n\(String(buffer: reference.bytes))")
                }
                // A GET that carries a body anyway: the generated route's body checks run all the same.
                for raw in ["{", "{\"limit\": 1}", "\"\\u0000\"", "[" + String(repeating: "1,", count: ColonyRequestContext.defaultBodyLimit / 2) + "1]"] {
                    let fast = try await projects.service.request(.GET, "/feed", as: reader, raw: raw)
                    let reference = try await generated.request(.GET, "/feed", as: reader, raw: raw)
                    #expect(fast.status == reference.status && Array(buffer: fast.bytes) == Array(buffer: reference.bytes),
                            "body \(raw.prefix(20)): \(fast.status) vs \(reference.status) \(reference.body)")
                }
            }
            #expect(firstPage.body["posts"]?.arrayValue?.count == 5)
        }
    }
}
