import CirclesAPI
import CirclesService
import ColonyClientTesting
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

    /// The generated client as `user` (nil: no token).
    func api(_ user: RunningService.User?) -> CirclesAPI.Client { CirclesAPI.Client(service.connection(as: user)) }

    /// A mycirclee user with a profile (and a handle of their own when given).
    func user(handle: String? = nil, privacy: Schemas.DMPrivacy? = nil) async throws -> RunningService.User {
        let user = try await service.user()
        if handle == nil && privacy == nil {
            _ = try await api(user).getProfile().ok
        } else {
            _ = try await api(user).updateProfile(body: .json(.init(handle: handle, dmPrivacy: privacy))).ok
        }
        return user
    }

    /// A circle owned by `owner` that `members` joined through invite codes.
    func circle(owner: RunningService.User, members: [RunningService.User] = [], name: String = "Inner") async throws -> UUID {
        let created = try await api(owner).createCircle(body: .json(.init(name: name))).created.body.json
        let id = try #require(UUID(uuidString: created.id))
        for member in members {
            let invite = try await api(owner).createInvite(path: .init(circleId: created.id)).created.body.json
            _ = try await api(member).claimInvite(body: .json(.init(code: invite.code))).ok
        }
        return id
    }

    /// A post (a note saying hello unless `post` says otherwise); its id, lower case.
    func post(_ circle: UUID, as user: RunningService.User, _ post: Schemas.PostCreate = .init(_type: .note, body: "hello")) async throws -> String {
        try await api(user).createPost(path: .init(circleId: circle.lowercased), body: .json(post)).created.body.json.id.lowercased()
    }

    /// A post as the app shows it to `user`.
    func card(_ post: String, as user: RunningService.User) async throws -> Schemas.Post {
        try await api(user).getPost(path: .init(postId: post)).ok.body.json
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
        try await withRunningTwin(of: service, .circles, configure: configure, definition: { _ in
            let storage = Storage(backend: FileSystemStorageBackend(root: root), publicBaseURL: base, signingKey: Array("circles-tests-signing-key-0123456789abcdef".utf8))
            return CirclesService.definition(settings: CirclesSettings(maxPhotoBytes: 64 << 10), storage: storage)
        }, body)
    }
}

typealias Schemas = CirclesAPI.Components.Schemas

/// Starts the circles service with filesystem storage in a fresh directory (and the console's
/// routes open to `consoleKey`, when given).
func withRunningCircles(settings: CirclesSettings = CirclesSettings(maxPhotoBytes: 64 << 10), consoleKey: InternalKey? = nil,
                        _ body: @Sendable (RunningCircles) async throws -> Void) async throws {
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("colony-circles-\(UUID().uuidString)").path
    defer { try? FileManager.default.removeItem(atPath: root) }
    try await withRunningService(.circles, app: .mycirclee, apiPrefix: "/circles/v1", configure: {
        $0.maxUploadBytes = settings.maxUploadBytes
        if let consoleKey { $0.consoleKey = consoleKey }
    }, definition: { base in
        let storage = Storage(backend: FileSystemStorageBackend(root: root), publicBaseURL: base, signingKey: Array("circles-tests-signing-key-0123456789abcdef".utf8))
        return CirclesService.definition(settings: settings, storage: storage)
    }) { service in
        try await body(RunningCircles(service: service, storageRoot: root))
    }
}
