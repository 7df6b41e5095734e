import AsyncHTTPClient
import ChatService
import ColonyModels
import ColonyPlatform
import ColonyStorage
import ColonyTesting
import Foundation
import Testing

/// The deployment's service credential in these tests.
let chatAuthInternalKey = InternalKey("chat-auth-internal-key-9f86d081884c7d659a2feaa0c55a")

/// Auth, and chat asking auth about addresses it has not heard of, with chat's broker
/// unreachable: no `user_registered` reaches chat, so every address it knows came from auth's answer.
func withChatAskingAuth(budget: Quota = Quota(100, perSeconds: 3600),
                        _ body: @Sendable (_ auth: RunningAuth, _ chat: RunningService) async throws -> Void) async throws {
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("colony-chat-ryw-\(UUID().uuidString)").path
    defer { try? FileManager.default.removeItem(atPath: root) }
    let deadBroker = "127.0.0.1:\(try freePort())"
    try await withRunningAuth(service: { $0.internalKey = chatAuthInternalKey }) { auth in
        let configured = ChatSettings(memberEmailLookups: budget)
        try await withRunningService(.chat, app: .unify, apiPrefix: "/chat/v1", configure: { configuration in
            configuration.internalKey = chatAuthInternalKey
            configuration.authURL = auth.base
            configuration.kafkaBrokers = deadBroker
        }, definition: { base in
            let storage = Storage(backend: FileSystemStorageBackend(root: root), publicBaseURL: base, signingKey: Array("chat-ryw-signing-key-0123456789abcdef".utf8))
            return ChatService.definition(settings: configured, storage: storage)
        }) { chat in
            try await body(auth, chat)
        }
    }
}

/// An account made through auth's admin API (committed when it answers); its id.
func adminUser(_ auth: RunningAuth, app: App, email: String, name: String? = nil) async throws -> UUID {
    let service = try #require(auth.serviceKeys[app])
    var body: [String: Any] = ["email": email, "password": "Correct-Horse-7", "email_confirm": true]
    if let name { body["user_metadata"] = ["full_name": name] }
    let created = try await auth.request(.POST, "/admin/users", app: app, bearer: service, apiKey: service, json: body)
    try #require(created.status == 200 || created.status == 201, "\(created.json)")
    return try #require((created.json["id"] as? String).flatMap(UUID.init(uuidString:)))
}

@Suite("Chat's add-by-email knows an account whose sign-up committed before its event arrived (read-your-writes)", .serialized)
struct ChatAddByEmailReadYourWritesTests {
    @Test("with chat's broker down, a group is created with, and members added by, addresses chat asked auth about; other apps' accounts stay unknown")
    func addByEmailDuringBrokerOutage() async throws {
        try await withChatAskingAuth(budget: Quota(6, perSeconds: 3600)) { auth, chat in
            let ada = "\(uniqueName("ada"))@example.com", carol = "\(uniqueName("carol"))@example.com", elsewhere = "\(uniqueName("bob"))@example.com"
            let adaID = try await adminUser(auth, app: .unify, email: ada, name: "Ada Lovelace")
            let carolID = try await adminUser(auth, app: .unify, email: carol)
            _ = try await adminUser(auth, app: .mycirclee, email: elsewhere, name: "Bob")
            let owner = try await chat.user(email: "\(uniqueName("owner"))@example.com")

            let group = try await chat.request(.POST, "/groups", as: owner, json: ["name": "Book club", "member_emails": [ada.uppercased()]])
            #expect(group.status == 201, "\(group.body)")
            let groupID = try #require(group.body["id"]?.stringValue)
            let added = try await chat.request(.POST, "/groups/\(groupID)/members", as: owner, json: ["emails": [carol]])
            #expect(added.status < 300, "\(added.status) \(added.body)")

            let members = try await chat.request(.GET, "/groups/\(groupID)/members", as: owner)
            let byID = Dictionary(members.array.compactMap { member in member["user_id"]?.stringValue.map { ($0.lowercased(), member) } }, uniquingKeysWith: { a, _ in a })
            #expect(byID[adaID.lowercased]?["display_name"]?.stringValue == "Ada Lovelace", "\(members.array)")
            #expect(byID[carolID.lowercased] != nil, "\(members.array)")

            // An account of another app, and no account at all, are unknown to Unify.
            let unknown = try await chat.request(.POST, "/groups/\(groupID)/members", as: owner, json: ["emails": [elsewhere, "nobody-\(UUID().uuidString.prefix(6))@example.com"]])
            #expect(unknown.code == "unknown_emails", "\(unknown.status) \(unknown.body)")
            #expect(unknown.body["unknown_emails"]?.arrayValue?.count == 2 || "\(unknown.body)".contains(elsewhere), "\(unknown.body)")

            // The budget counted every address asked (1 + 1 + 2 of 6): three more are refused.
            let over = try await chat.request(.POST, "/groups/\(groupID)/members", as: owner,
                                              json: ["emails": ["x1-\(UUID().uuidString.prefix(6))@example.com", "x2@example.com", "x3@example.com"]])
            #expect(over.status == 429 && over.code == "email_lookup_quota_exceeded", "\(over.status) \(over.body)")
        }
    }

    @Test("auth's internal users-by-email route answers the service credential only, with the asked app's accounts")
    func internalRouteRefusesEverythingElse() async throws {
        try await withChatAskingAuth { auth, _ in
            let ada = "\(uniqueName("ada"))@example.com"
            let adaID = try await adminUser(auth, app: .unify, email: ada, name: "Ada")
            let signedIn = try await auth.signIn(app: .unify, email: ada, password: "Correct-Horse-7")
            let accessToken = try #require(signedIn.json["access_token"] as? String, "\(signedIn.json)")
            let url = "\(auth.base)\(InternalUsersByEmailRoute.path)?app=unify&email=\(ada)"
            let anon = try #require(auth.anonKeys[.unify]), service = try #require(auth.serviceKeys[.unify])
            let attempts: [(String, [(String, String)])] = [
                ("no credential", []),
                ("a user's access token", [("Authorization", "Bearer \(accessToken)")]),
                ("the anon key", [("Authorization", "Bearer \(anon)"), ("apikey", anon)]),
                ("the service-role key", [("Authorization", "Bearer \(service)"), ("apikey", service)]),
                ("another key", [("Authorization", "Bearer chat-auth-internal-key-9f86d081884c7d659a2feaa0c55b")]),
            ]
            for (name, headers) in attempts {
                let reply = try await internalGet(url, headers: headers)
                #expect(reply.status == 401 && reply.code == "invalid_service_credential", "\(name): \(reply.status) \(reply.body)")
            }
            let client = InternalMembershipClient(key: chatAuthInternalKey)
            let found = try await client.usersByEmail([ada.uppercased(), "nobody@example.com"], app: .unify, base: auth.base)
            #expect(found.count == 1 && found[ada.lowercased()]?.id == adaID && found[ada.lowercased()]?.displayName == "Ada", "\(found)")
            #expect(try await client.usersByEmail([ada], app: .mycirclee, base: auth.base).isEmpty)
            let tooMany = try await internalGet("\(auth.base)\(InternalUsersByEmailRoute.path)?app=unify&" + (0...100).map { "email=a\($0)@example.com" }.joined(separator: "&"),
                                                       headers: [("Authorization", chatAuthInternalKey.authorization)])
            #expect(tooMany.status == 422, "\(tooMany.status) \(tooMany.body)")
        }
    }
}

/// A GET of a full URL with these headers: its status and error code.
func internalGet(_ url: String, headers: [(String, String)]) async throws -> (status: Int, code: String?, body: String) {
    var request = HTTPClientRequest(url: url)
    for (name, value) in headers { request.headers.add(name: name, value: value) }
    let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
    let bytes = try await response.body.collect(upTo: 1 << 20)
    let object = (try? JSONSerialization.jsonObject(with: Data(buffer: bytes))) as? [String: Any]
    return (Int(response.status.code), object?["code"] as? String, String(buffer: bytes))
}
