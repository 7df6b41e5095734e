import CirclesService
import ColonyModels
import ColonyPlatform
import ColonyStorage
import ColonyTesting
import Foundation
import NIOCore
import Testing

/// A running circles service (see `RunningService`) with its storage directory.
struct RunningCircles: Sendable {
    let service: RunningService
    let storageRoot: String

    /// A mycirclee user with a profile (and a handle of their own when given).
    func user(handle: String? = nil, privacy: DMPrivacy? = nil) async throws -> RunningService.User {
        let user = try await service.user()
        var patch: [String: Any] = [:]
        if let handle { patch["handle"] = handle }
        if let privacy { patch["dm_privacy"] = privacy.rawValue }
        let reply = patch.isEmpty ? try await service.request(.GET, "/profile", as: user) : try await service.request(.PATCH, "/profile", as: user, json: patch)
        #expect(reply.status == 200, "\(reply.body)")
        return user
    }

    /// A circle owned by `owner` that `members` joined through invite codes.
    func circle(owner: RunningService.User, members: [RunningService.User] = [], name: String = "Inner") async throws -> UUID {
        let created = try await service.request(.POST, "/circles", as: owner, json: ["name": name])
        #expect(created.status == 201, "\(created.body)")
        let id = try #require(created.body["id"]?.stringValue.flatMap(UUID.init(uuidString:)))
        for member in members {
            let invite = try await service.request(.POST, "/circles/\(id)/invites", as: owner)
            let joined = try await service.request(.POST, "/invites/claim", as: member, json: ["code": invite.body["code"]?.stringValue ?? ""])
            #expect(joined.status == 200, "\(joined.body)")
        }
        return id
    }

    func post(_ circle: UUID, as user: RunningService.User, _ fields: [String: Any] = [:]) async throws -> String {
        var body: [String: Any] = ["type": "note", "body": "hello"]
        body.merge(fields) { $1 }
        let reply = try await service.request(.POST, "/circles/\(circle)/posts", as: user, json: body)
        #expect(reply.status == 201, "\(reply.body)")
        return try #require(reply.body["id"]?.stringValue).lowercased()
    }

    func count(_ table: String) async throws -> Int {
        try await service.withDatabase { database in
            try await database.query("SELECT count(*)::int FROM \(unescaped: table)").collect()[0].decode(Int.self)
        }
    }
}

extension RunningCircles {
    /// A second instance on the same schema and storage, configured by `configure` (fast paths
    /// off, say); its photo URLs name this one, so the two answer alike.
    func withTwin(configure: @escaping @Sendable (inout ServiceConfiguration) -> Void, _ body: @Sendable (RunningService) async throws -> Void) async throws {
        let (root, base) = (storageRoot, service.base)
        try await withRunningTwin(of: service, .circles, configure: configure, definition: { catalog, _ in
            let storage = Storage(backend: FileSystemStorageBackend(root: root), publicBaseURL: base, signingKey: Array("circles-tests-signing-key-0123456789abcdef".utf8))
            return CirclesService.definition(settings: CirclesSettings(maxPhotoBytes: 64 << 10), storage: storage, catalog: catalog)
        }, body)
    }
}

/// Starts the circles service with filesystem storage in a fresh directory.
func withRunningCircles(settings: CirclesSettings = CirclesSettings(maxPhotoBytes: 64 << 10), _ body: @Sendable (RunningCircles) async throws -> Void) async throws {
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("colony-circles-\(UUID().uuidString)").path
    defer { try? FileManager.default.removeItem(atPath: root) }
    try await withRunningService(.circles, app: .mycirclee, apiPrefix: "/circles/v1", configure: { $0.maxUploadBytes = settings.maxUploadBytes }, definition: { catalog, base in
        let storage = Storage(backend: FileSystemStorageBackend(root: root), publicBaseURL: base, signingKey: Array("circles-tests-signing-key-0123456789abcdef".utf8))
        return CirclesService.definition(settings: settings, storage: storage, catalog: catalog)
    }) { service in
        try await body(RunningCircles(service: service, storageRoot: root))
    }
}
