import ChatService
import CirclesService
import ColonyModels
import ColonyPlatform
import ColonyStorage
import ColonyTesting
import Foundation
import HabitsService
import NearbyService
import ProjectsService
import Testing

/// Profile names across services (issue 33.5): a user's first request to a service whose
/// projection has not received auth's `user_registered` yet already shows the name they signed up
/// with, read from their access token's `user_metadata` (`SignUpProfile`); the event still decides
/// when it arrives. Here with the broker unreachable: no event arrives at all.
@Suite("Profile names: the first answer shows the sign-up name (read-your-writes)", .serialized)
struct ProfileNamesReadYourWritesTests {
    /// The name a user's own profile shows, and its email where the profile has one.
    struct Profile: Sendable {
        var name: String
        var email: String?
    }

    struct Case: Sendable {
        var service: ColonyService
        var app: App
        var prefix: String
        var extensions: [String] = []
        /// The user's own profile, through the service's generated client (a 200, or it throws).
        var read: @Sendable (RunningService, RunningService.User) async throws -> Profile
        /// Renames the user there (the services `theEventWins` runs on).
        var rename: (@Sendable (RunningService, RunningService.User, String) async throws -> Void)? = nil
        var definition: @Sendable (_ base: String, _ root: String) -> ServiceDefinition
    }

    static func storage(_ root: String, _ base: String) -> Storage {
        Storage(backend: FileSystemStorageBackend(root: root), publicBaseURL: base, signingKey: Array("ryw-names-signing-key-0123456789abcdef".utf8))
    }

    static let cases: [Case] = [
        Case(service: .circles, app: .mycirclee, prefix: "/circles/v1", read: { service, user in
            let profile = try await service.circlesAPI(as: user).getProfile().ok.body.json
            return Profile(name: profile.displayName, email: profile.email)
        }, rename: { service, user, name in
            _ = try await service.circlesAPI(as: user).updateProfile(body: .json(.init(displayName: name))).ok
        }) { base, root in
            CirclesService.definition(settings: CirclesSettings(), storage: storage(root, base))
        },
        Case(service: .chat, app: .unify, prefix: "/chat/v1", read: { service, user in
            let me = try await service.chatAPI(as: user).getMe().ok.body.json
            return Profile(name: me.displayName, email: me.email)
        }, rename: { service, user, name in
            _ = try await service.chatAPI(as: user).updateMe(body: .json(.init(displayName: name))).ok
        }) { base, root in
            ChatService.definition(settings: ChatSettings(), storage: storage(root, base))
        },
        Case(service: .habits, app: .habithive, prefix: "/habits/v1", read: { service, user in
            Profile(name: try await service.habitsAPI(as: user).getProfile().ok.body.json.displayName)
        }) { _, root in
            HabitsService.definition(settings: HabitsSettings(phonePepper: "ryw-names-pepper"), exports: FileSystemStorageBackend(root: root))
        },
        Case(service: .nearby, app: .socialspot, prefix: "/nearby/v1", extensions: NearbyService.extensions, read: { service, user in
            Profile(name: try await service.nearbyAPI(as: user).getProfile().ok.body.json.name)
        }) { base, root in
            NearbyService.definition(settings: NearbySettings(), storage: storage(root, base))
        },
        Case(service: .projects, app: .ibelieveinyou, prefix: "/projects/v1", read: { service, user in
            Profile(name: try await service.projectsAPI(as: user).getMe().ok.body.json.name)
        }) { base, root in
            ProjectsService.definition(settings: ProjectsSettings(), storage: storage(root, base))
        },
    ]

    /// Runs one case's service with the broker unreachable (`brokerUp: false`) or on the shared one.
    static func run(_ test: Case, brokerUp: Bool, _ body: @Sendable (RunningService) async throws -> Void) async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("colony-ryw-names-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        let deadBroker = "127.0.0.1:\(try freePort())"
        try await withRunningService(test.service, app: test.app, apiPrefix: test.prefix, extensions: test.extensions, configure: { configuration in
            if !brokerUp { configuration.kafkaBrokers = deadBroker }
        }, definition: { base in test.definition(base, root) }, body)
    }

    @Test("with the broker down, each service's first answer to a new user shows the name from the token's user_metadata", arguments: 0..<5)
    func firstAnswerShowsTheSignUpName(_ index: Int) async throws {
        let test = Self.cases[index]
        try await Self.run(test, brokerUp: false) { service in
            let id = UUID()
            let email = "ada.\(id.uuidString.prefix(8).lowercased())@example.com"
            let token = try await service.tokens.token(user: id, app: test.app, email: email, userMetadata: ["full_name": .string("  Ada Lovelace ")])
            let profile = try await test.read(service, RunningService.User(id: id, token: token))
            #expect(profile.name == "Ada Lovelace", "\(test.service): \(profile)")

            // Without a name in the token, the placeholder as before.
            let other = UUID()
            let plain = try await service.tokens.token(user: other, app: test.app, email: "grace@example.com")
            let placeholder = try await test.read(service, RunningService.User(id: other, token: plain))
            #expect(placeholder.name != "Ada Lovelace", "\(test.service): \(placeholder)")
        }
    }

    @Test("the event still wins: a name auth sends later replaces the token's, a repeat of the sign-up name keeps a rename", arguments: [0, 1])
    func theEventWins(_ index: Int) async throws {
        let test = Self.cases[index]
        try await Self.run(test, brokerUp: true) { service in
            let id = UUID()
            let email = "ada.\(id.uuidString.prefix(8).lowercased())@example.com"
            let user = RunningService.User(id: id, token: try await service.tokens.token(user: id, app: test.app, email: email,
                                                                                         userMetadata: ["full_name": .string("Ada Lovelace")]))
            #expect(try await test.read(service, user).name == "Ada Lovelace")
            let rename = try #require(test.rename, "\(test.service) has no rename")

            // A rename made here is kept when the sign-up's event (the token's name) arrives; the
            // email change that follows is the sign that the event was applied.
            try await rename(service, user, "Countess")
            try await service.publishAuthEvent(UserRegistered(userId: id, app: test.app, email: email, phone: nil, phoneHash: nil,
                                                              userMetadata: ["full_name": .string("Ada Lovelace")], createdAt: Date()), user: id)
            let changed = "new.\(email)"
            try await service.publishAuthEvent(UserUpdated(userId: id, app: test.app, email: changed, phone: nil, phoneHash: nil,
                                                           userMetadata: ["full_name": .string("Ada Lovelace")], updatedAt: Date()), user: id)
            try await waitUntil(timeout: .seconds(60)) { try await test.read(service, user).email == changed }
            #expect(try await test.read(service, user).name == "Countess")
            // A name changed through auth follows.
            try await service.publishAuthEvent(UserUpdated(userId: id, app: test.app, email: email, phone: nil, phoneHash: nil,
                                                           userMetadata: ["full_name": .string("Ada King")], updatedAt: Date()), user: id)
            try await waitUntil(timeout: .seconds(60)) { try await test.read(service, user).name == "Ada King" }
        }
    }
}
