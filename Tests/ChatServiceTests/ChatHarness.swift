import ChatAPI
import ChatService
import ColonyClient
import ColonyClientTesting
import ColonyModels
import ColonyPlatform
import ColonyStorage
import ColonyTesting
import Foundation
import NIOCore
import Testing

/// A running chat service (see `RunningService`) with its storage directory.
struct RunningChat: Sendable {
    let service: RunningService
    let storageRoot: String
    let settings: ChatSettings
    /// The service's storage (its URLs name the first instance), for a twin on the same data.
    let storage: Storage

    /// The chat service's generated client, as `user` (nil sends no token).
    func api(_ user: RunningService.User?) -> ChatAPI.Client { ChatAPI.Client(service.connection(as: user)) }

    /// A unify user whose row exists with this email (as `user_registered` would make it).
    func user(email: String? = nil) async throws -> RunningService.User {
        let id = UUID()
        let user = try await service.user(id, email: email ?? "u\(id.uuidString.prefix(8).lowercased())@example.com")
        _ = try await api(user).getMe().ok
        return user
    }

    func email(of user: RunningService.User) async throws -> String {
        try await api(user).getMe().ok.body.json.email ?? ""
    }

    /// A group owned by `owner` with `admins` (promoted) and `members` (plain users).
    func group(owner: RunningService.User, admins: [RunningService.User] = [], members: [RunningService.User] = [], name: String = "Crew") async throws -> UUID {
        var emails: [String] = []
        for user in admins + members { emails.append(try await email(of: user)) }
        let created = try await api(owner).createGroup(body: .json(.init(name: name, memberEmails: emails))).created.body.json
        let id = try #require(UUID(uuidString: created.id))
        for admin in admins {
            _ = try await api(owner).setMemberRole(path: .init(groupId: id.uuidString, userId: admin.id.uuidString), body: .json(.init(role: .admin))).ok
        }
        return id
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

typealias Schemas = ChatAPI.Components.Schemas
/// The client module's names, for files that also see the service's internals (`@testable`),
/// where `ChatAPI` is the service's handlers.
typealias ChatClient = ChatAPI.Client
typealias ChatOperations = ChatAPI.Operations

/// A fixture's bytes as a generated client's request body.
func upload(_ buffer: ByteBuffer) -> HTTPBody { HTTPBody(Array(buffer: buffer)) }

enum AudioFixtures {
    static let m4a = ByteBuffer(bytes: [0x00, 0x00, 0x00, 0x20] + Array("ftypM4A ".utf8) + [UInt8](repeating: 7, count: 200))
    static let png = ByteBuffer(bytes: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D] + Array("IHDR".utf8) + [UInt8](repeating: 1, count: 64))
}

/// Starts the chat service with filesystem storage in a fresh directory, small upload limits and
/// a budget of member lookups no test reaches unless it sets its own (`MemberLookupBudgetTests`);
/// `configure` changes the platform's settings further (a console key, say).
func withRunningChat(settings: ChatSettings = ChatSettings(maxImageBytes: 64 << 10, maxVoiceBytes: 256 << 10, memberEmailLookups: Quota(1_000_000, perSeconds: 3600)),
                     configure: @Sendable (inout ServiceConfiguration) -> Void = { _ in },
                     _ body: @Sendable (RunningChat) async throws -> Void) async throws {
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("colony-chat-\(UUID().uuidString)").path
    defer { try? FileManager.default.removeItem(atPath: root) }
    try await withRunningService(.chat, app: .unify, apiPrefix: "/chat/v1", configure: { $0.maxUploadBytes = settings.maxUploadBytes; configure(&$0) }, definition: { base in
        ChatService.definition(settings: settings, storage: storage(root: root, base: base))
    }) { service in
        try await body(RunningChat(service: service, storageRoot: root, settings: settings, storage: storage(root: root, base: service.base)))
    }
}

private func storage(root: String, base: String) -> Storage {
    Storage(backend: FileSystemStorageBackend(root: root), publicBaseURL: base, signingKey: Array("chat-tests-signing-key-0123456789abcdef".utf8))
}
