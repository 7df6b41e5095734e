import ColonyClientTesting
import ColonyModels
import ColonyPlatform
import ColonyStorage
import ColonyTesting
import Foundation
import NIOCore
import ProjectsAPI
import ProjectsService
import Testing

// The client module's names, for the files that also see the service's own `ProjectsAPI` (its
// handlers) and generated types through `@testable import ProjectsService`.
typealias ProjectsClient = ProjectsAPI.Client
typealias Schemas = ProjectsAPI.Components.Schemas

/// A running projects service (see `RunningService`) with its storage directory.
struct RunningProjects: Sendable {
    let service: RunningService
    let storageRoot: String

    typealias User = RunningService.User

    /// An ibelieveinyou user whose builder exists (as `user_registered` would make it).
    func user(name: String? = nil) async throws -> User {
        let id = UUID()
        let user = try await service.user(id, email: "u\(id.uuidString.prefix(8).lowercased())@example.com")
        let me = try await service.request(.GET, "/me", as: user)
        #expect(me.status == 200, "\(me.body)")
        if let name {
            let renamed = try await call(user) { try await $0.updateMe(body: .json(.init(name: name))) }
            #expect(renamed.status == 200, "\(renamed.body)")
        }
        return user
    }

    /// The service's generated client, as `user` (nil sends no token).
    func api(_ user: User?) -> ProjectsClient { ProjectsClient(service.connection(as: user)) }

    /// One call of the generated client as `user`, with the status and JSON body it got (any status).
    func call<Output: Sendable>(_ user: User?, _ operation: (ProjectsClient) async throws -> Output) async throws -> Answer<Output> {
        let api = api(user)
        return try await answer { try await operation(api) }
    }

    /// `count` users made concurrently.
    func users(_ count: Int) async throws -> [User] {
        try await withThrowingTaskGroup(of: User.self) { group in
            for _ in 0..<count { group.addTask { try await user() } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
    }

    /// A project of `owner`; its id and slug.
    @discardableResult
    func project(_ owner: User, title: String = "Rocket Garden", tagline: String = "Plants in space", published: Bool = true) async throws -> (id: UUID, slug: String) {
        let created = try await api(owner).createProject(body: .json(.init(title: title, tagline: tagline, isPublished: published))).created.body.json
        return (try #require(UUID(uuidString: created.id)), created.publicSlug)
    }

    /// A post on the project; its id.
    func post(_ owner: User, project: UUID, content: String = "Day 1: seeds in", images: [String]? = nil) async throws -> UUID {
        let created = try await api(owner).createPost(path: .init(projectId: project.lowercased), body: .json(.init(content: content, images: images))).created.body.json
        return try #require(UUID(uuidString: created.id))
    }

    func karma(_ user: User) async throws -> Int {
        try await service.request(.GET, "/me/karma", as: user).body["total_points"]?.intValue ?? -1
    }

    func get(_ path: String, as user: User) async throws -> RunningService.Reply {
        try await service.request(.GET, path, as: user)
    }

    /// One number from the service's own database.
    func count(_ sql: String) async throws -> Int {
        try await service.withDatabase { database in
            try await database.query("\(unescaped: sql)").collect().first?.decode(Int.self) ?? -1
        }
    }

    /// Files in the storage directory, relative to it.
    var storedFiles: [String] {
        var result: [String] = []
        let enumerator = FileManager.default.enumerator(atPath: storageRoot)
        while let path = enumerator?.nextObject() as? String {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: "\(storageRoot)/\(path)", isDirectory: &isDirectory), !isDirectory.boolValue { result.append(path) }
        }
        return result.sorted()
    }
}

/// What a call got, whatever its operation: the status and the JSON body.
struct Outcome: Sendable {
    var status: Int
    var body: [String: JSONValue]
    var code: String? { body["code"]?.stringValue }
}

extension Answer {
    var outcome: Outcome { Outcome(status: status, body: body) }
}

extension RunningService.Reply {
    var outcome: Outcome { Outcome(status: status, body: body) }
}

/// JSON ids compared as UUIDs (their case is not part of the contract).
func uuid(_ value: JSONValue?) -> UUID? { value?.stringValue.flatMap(UUID.init(uuidString:)) }

enum ImageFixtures {
    static let png = ByteBuffer(bytes: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D] + Array("IHDR".utf8) + [UInt8](repeating: 1, count: 64))
    static let jpeg = ByteBuffer(bytes: [0xFF, 0xD8, 0xFF, 0xE0] + [UInt8](repeating: 2, count: 64))
}

/// Starts the projects service with filesystem storage in a fresh directory and small limits
/// (with `consoleKey`, the console's routes answer it: `ModerationCalls`).
func withRunningProjects(settings: ProjectsSettings = ProjectsSettings(maxImageBytes: 64 << 10, supportMessageLimit: 5, supportWindowSeconds: 3600),
                         consoleKey: InternalKey? = nil,
                         _ body: @Sendable (RunningProjects) async throws -> Void) async throws {
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("colony-projects-\(UUID().uuidString)").path
    defer { try? FileManager.default.removeItem(atPath: root) }
    try await withRunningService(.projects, app: .ibelieveinyou, apiPrefix: "/projects/v1", configure: {
        $0.maxUploadBytes = settings.maxUploadBytes
        if let consoleKey { $0.consoleKey = consoleKey }
    }, definition: { base in
        let storage = Storage(backend: FileSystemStorageBackend(root: root), publicBaseURL: base, signingKey: Array("projects-tests-signing-key-0123456789abcdef".utf8))
        return ProjectsService.definition(settings: settings, storage: storage)
    }) { service in
        try await body(RunningProjects(service: service, storageRoot: root))
    }
}
