import ColonyModels
import ColonyPlatform
import ColonyStorage
import ColonyTesting
import Foundation
import NIOCore
import NIOHTTP1
import Testing
import ProjectsService

/// The fast paths of the feed (`GET /projects/v1/feed`) and of following a project (`POST
/// /projects/v1/projects/{project_id}/follow`), `ProjectsAPI.fastPaths`, against the generated
/// routes they stand in for: a second instance on the same data with fast paths off answers every
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

    @Test("following a project answers as the generated route: first follows, repeats, own and hidden projects, bad ids, callers and headers")
    func followMatchesGeneratedRoute() async throws {
        try await withRunningProjects { projects in
            let alice = try await projects.user(name: "Alice")
            let garden = try await projects.project(alice, title: "Garden").id
            let hidden = try await projects.project(alice, title: "Hidden", published: false).id
            let follow = "/projects/\(garden.lowercased)/follow"
            // Each first follow goes to the service as one fresh user and to the twin as another,
            // each undone after: the same follower count, 5 karma each (their karma rows' ids, user
            // ids and times compared by shape).
            let fresh = try await projects.users(2 * 32)
            let regular = try await projects.user(), returning = try await projects.user(), stranger = try await projects.user()
            _ = try await projects.service.request(.POST, follow, as: regular)
            for method in [HTTPMethod.POST, .DELETE] { _ = try await projects.service.request(method, follow, as: returning) }
            let other = try await projects.service.user(app: .unify)
            let unfollow: @Sendable (RunningService.User?) async throws -> Void = { user in
                let undone = try await projects.service.request(.DELETE, follow, as: user)
                #expect(undone.status == 200, "\(undone.status) \(undone.body)")
            }

            try await withRunningTwin(of: projects.service, .projects, configure: { $0.fastPaths = .off; $0.maxUploadBytes = 128 << 10 }, definition: { _ in
                let storage = Storage(backend: FileSystemStorageBackend(root: projects.storageRoot), publicBaseURL: projects.service.base,
                                      signingKey: Array("projects-tests-signing-key-0123456789abcdef".utf8))
                return ProjectsService.definition(settings: ProjectsSettings(maxImageBytes: 64 << 10, supportMessageLimit: 5, supportWindowSeconds: 3600),
                                                  storage: storage)
            }) { generated in
                var compared = 0
                var pairs = fresh.chunks2()
                func expectSame(_ path: String, _ users: (RunningService.User?, RunningService.User?), body: String? = nil, contentType: String? = nil,
                                headers: [(String, String)] = [], undo: Bool = false) async throws {
                    let bytes = body.map { ByteBuffer(string: $0) }
                    let fast = try await projects.service.request(.POST, path, as: users.0, bytes: bytes, contentType: contentType, headers: headers)
                    if undo { try await unfollow(users.0) }
                    let reference = try await generated.request(.POST, path, as: users.1, bytes: bytes, contentType: contentType, headers: headers)
                    if undo { try await unfollow(users.1) }
                    let varying: Set<String> = ["id", "user_id", "created_at", "updated_at"]
                    let (a, b) = (Self.masking(varying, String(buffer: fast.bytes)), Self.masking(varying, String(buffer: reference.bytes)))
                    let described = "POST \(path) \(headers) \(body ?? "(no body)"): \(fast.status) \(a)\nagainst the generated \(reference.status) \(b)"
                    #expect(fast.status == reference.status, "\(described)")
                    #expect(fast.status < 500, "\(described)")
                    #expect(fast.headers["Content-Type"] == reference.headers["Content-Type"], "\(described)")
                    #expect(a == b, "\(described)")
                    compared += 1
                }
                // First follows, with ids as the app sends them and as it may not.
                for path in [follow, "/projects/\(garden.uuidString.uppercased())/follow", "/projects/\(garden.lowercased.dropLast())%\(String(format: "%02X", garden.lowercased.utf8.last ?? 0))/follow"] {
                    try await expectSame(path, try #require(pairs.popLast()), undo: true)
                }
                // A follow again, a return after unfollowing (no karma the second time), the owner, the
                // hidden project (404 but for its owner), a stranger's, unknown and malformed ids, no or another app's token.
                try await expectSame(follow, (regular, regular))
                try await expectSame(follow, (returning, returning), undo: true)
                try await expectSame(follow, (alice, alice))
                try await expectSame("/projects/\(hidden.lowercased)/follow", (stranger, stranger))
                try await expectSame("/projects/\(hidden.lowercased)/follow", (alice, alice))
                for path in ["/projects/\(UUID().lowercased)/follow", "/projects/not-a-uuid/follow", "/projects/\(garden.lowercased)x/follow",
                             "/projects/%20/follow", "/projects/\(garden.lowercased)%00/follow"] {
                    try await expectSame(path, (stranger, stranger))
                }
                try await expectSame(follow, (nil, nil))
                try await expectSame(follow, (other, other))
                // Headers and bodies the operation has no use for: the fast path takes only a bare
                // POST with `Accept` absent or plainly JSON; any query is ignored as the generated code ignores it.
                let variants: [(body: String?, contentType: String?, headers: [(String, String)], query: String)] = [
                    (nil, nil, [("Accept", "application/json")], ""), (nil, nil, [("Accept", "*/*")], ""), (nil, nil, [("Accept", "text/html")], ""),
                    (nil, nil, [("Accept", "application/json, text/plain;q=0.5")], ""), (nil, nil, [("Accept", "application/*")], ""),
                    (nil, nil, [("Accept", "application/json"), ("Accept", "text/html")], ""),
                    (nil, nil, [], "?x=1"), (nil, nil, [], "?x"), (nil, nil, [], "?"), (nil, nil, [], "?&"), (nil, nil, [], "?=1"), (nil, nil, [], "?a%20b=1"),
                    (nil, nil, [], "?x=1&x=2"), (nil, nil, [("Content-Type", "application/json")], ""),
                    ("", "application/json", [], ""), ("{}", "application/json", [], ""), ("{\"x\":1}", "application/json", [], ""),
                    ("{", "application/json", [], ""), ("null", "application/json", [], ""), ("\"\\u0000\"", "application/json", [], ""),
                    ("{\"x\":NaN}", "application/json", [], ""), ("hello", "text/plain", [], ""), ("hello", nil, [], ""),
                    (String(repeating: "x", count: ColonyRequestContext.defaultBodyLimit + 1), "application/json", [], ""),
                ]
                for variant in variants {
                    try await expectSame(follow + variant.query, try #require(pairs.popLast()), body: variant.body, contentType: variant.contentType,
                                         headers: variant.headers, undo: true)
                }
                #expect(compared == 3 + 5 + 5 + 2 + variants.count)
            }
            // Each first follow earned its 5 karma once.
            for user in [fresh[0], fresh[1], returning, regular] {
                #expect(try await projects.karma(user) == 5)
            }
        }
    }

    /// `"key":"…"` for each of `keys`, wherever it is in the text.
    static func masking(_ keys: Set<String>, _ text: String) -> String {
        keys.reduce(text) { text, key in
            text.replacingOccurrences(of: "\"\(key)\":\"[^\"]*\"", with: "\"\(key)\":\"…\"", options: .regularExpression)
        }
    }
}

private extension Array {
    /// The elements two by two, the first pair last (`popLast` takes them in order).
    func chunks2() -> [(Element?, Element?)] {
        stride(from: 0, to: count - 1, by: 2).map { (self[$0], self[$0 + 1]) }.reversed()
    }
}
