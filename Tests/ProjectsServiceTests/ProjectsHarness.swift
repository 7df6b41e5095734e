import ColonyModels
import ColonyPlatform
import ColonyStorage
import ColonyTesting
import Foundation
import NIOCore
import ProjectsService
import Testing

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
            let renamed = try await service.request(.PATCH, "/me", as: user, json: ["name": name])
            #expect(renamed.status == 200, "\(renamed.body)")
        }
        return user
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
    func project(_ owner: User, title: String = "Rocket Garden", published: Bool = true, extra: [String: Any] = [:]) async throws -> (id: UUID, slug: String) {
        var json: [String: Any] = ["title": title, "tagline": "Plants in space", "is_published": published]
        json.merge(extra) { $1 }
        let created = try await service.request(.POST, "/projects", as: owner, json: json)
        #expect(created.status == 201, "\(created.body)")
        return (try #require(uuid(created.body["id"])), created.body["public_slug"]?.stringValue ?? "")
    }

    /// A post on the project; its id.
    func post(_ owner: User, project: UUID, content: String = "Day 1: seeds in") async throws -> UUID {
        let created = try await service.request(.POST, "/projects/\(project)/posts", as: owner, json: ["content": content])
        #expect(created.status == 201, "\(created.body)")
        return try #require(uuid(created.body["id"]))
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

/// JSON ids compared as UUIDs (their case is not part of the contract).
func uuid(_ value: JSONValue?) -> UUID? { value?.stringValue.flatMap(UUID.init(uuidString:)) }

enum ImageFixtures {
    static let png = ByteBuffer(bytes: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D] + Array("IHDR".utf8) + [UInt8](repeating: 1, count: 64))
    static let jpeg = ByteBuffer(bytes: [0xFF, 0xD8, 0xFF, 0xE0] + [UInt8](repeating: 2, count: 64))
}

/// Starts the projects service with filesystem storage in a fresh directory and small limits.
func withRunningProjects(settings: ProjectsSettings = ProjectsSettings(maxImageBytes: 64 << 10, supportMessageLimit: 5, supportWindowSeconds: 3600),
                         _ body: @Sendable (RunningProjects) async throws -> Void) async throws {
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("colony-projects-\(UUID().uuidString)").path
    defer { try? FileManager.default.removeItem(atPath: root) }
    try await withRunningService(.projects, app: .ibelieveinyou, apiPrefix: "/projects/v1", configure: { $0.maxUploadBytes = settings.maxUploadBytes }, definition: { catalog, base in
        let storage = Storage(backend: FileSystemStorageBackend(root: root), publicBaseURL: base, signingKey: Array("projects-tests-signing-key-0123456789abcdef".utf8))
        return ProjectsService.definition(settings: settings, storage: storage, catalog: catalog)
    }) { service in
        try await body(RunningProjects(service: service, storageRoot: root))
    }
}
