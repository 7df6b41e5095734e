import AsyncHTTPClient
import ChatService
import ColonyModels
import ColonyPlatform
import ColonyStorage
import ColonyTesting
import Foundation
import Testing

/// Issue 39: a suspension (an operator's ban) reaches every service through auth's list of
/// suspended accounts, read every `COLONY_SUSPENSIONS_REFRESH_SECONDS` (1 s here): the user's
/// tokens, valid as signatures, are refused with 403 `user_banned`, and served again once the ban
/// is lifted. Auth and chat run with a real Postgres; chat stands for every service (the check is
/// the platform's `TokenVerifier`).
@Suite("Suspended accounts are refused by every service", .serialized)
struct SuspensionTests {
    func withChatReadingSuspensions(_ body: @Sendable (_ auth: RunningAuth, _ chat: RunningService) async throws -> Void) async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("colony-suspension-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        try await withRunningAuth(service: { $0.internalKey = chatAuthInternalKey }) { auth in
            try await withRunningService(.chat, app: .unify, apiPrefix: "/chat/v1", configure: { configuration in
                configuration.internalKey = chatAuthInternalKey
                configuration.tokens.suspensions = SuspensionSource(authURL: auth.base, interval: .seconds(1))
            }, definition: { base in
                let storage = Storage(backend: FileSystemStorageBackend(root: root), publicBaseURL: base, signingKey: Array("suspension-signing-key-0123456789abcdef".utf8))
                return ChatService.definition(settings: ChatSettings(), storage: storage)
            }) { chat in
                try await body(auth, chat)
            }
        }
    }

    func ban(_ auth: RunningAuth, _ id: UUID, _ duration: String) async throws {
        let service = try #require(auth.serviceKeys[.unify])
        let banned = try await auth.request(.PUT, "/admin/users/\(id.lowercased)", app: .unify, bearer: service, apiKey: service, json: ["ban_duration": duration])
        try #require(banned.status == 200, "\(banned.json)")
    }

    func listed(_ auth: RunningAuth) async throws -> [SuspendedAccountsRoute.Account] {
        let client = InternalMembershipClient(key: chatAuthInternalKey)
        return try await client.get(SuspendedAccountsRoute.path, base: auth.base, as: SuspendedAccountsRoute.Answer.self, decoder: ColonyJSON.decoder()).accounts
    }

    @Test("a banned user's valid token is refused (403 user_banned) within a round of the list, and served again once the ban is lifted; another user is untouched")
    func bannedThenLifted() async throws {
        try await withChatReadingSuspensions { auth, chat in
            let banned = try await chat.user(try await adminUser(auth, app: .unify, email: "\(uniqueName("banned"))@example.com"))
            let other = try await chat.user(try await adminUser(auth, app: .unify, email: "\(uniqueName("other"))@example.com"))
            for user in [banned, other] { #expect(try await chat.request(.GET, "/me", as: user).status == 200) }

            try await ban(auth, banned.id, "2h")
            let accounts = try await listed(auth)
            let entry = try #require(accounts.first { $0.userId == banned.id }, "\(accounts)")
            #expect(entry.app == .unify && entry.until > Date().addingTimeInterval(7000))
            try await waitUntil(timeout: .seconds(30)) { try await chat.request(.GET, "/me", as: banned).status == 403 }
            let refused = try await chat.request(.GET, "/me", as: banned)
            #expect(refused.code == "user_banned", "\(refused.body)")
            #expect(try await chat.request(.GET, "/me", as: other).status == 200)

            try await ban(auth, banned.id, "none")
            #expect(try await listed(auth).allSatisfy { $0.userId != banned.id })
            try await waitUntil(timeout: .seconds(30)) { try await chat.request(.GET, "/me", as: banned).status == 200 }
        }
    }

    @Test("the list holds only bans that began within an access token's lifetime, and answers the service credential only")
    func listIsRecentAndInternal() async throws {
        try await withChatReadingSuspensions { auth, _ in
            let recent = try await adminUser(auth, app: .unify, email: "\(uniqueName("recent"))@example.com")
            let old = try await adminUser(auth, app: .unify, email: "\(uniqueName("old"))@example.com")
            try await ban(auth, recent, "24h")
            try await ban(auth, old, "24h")
            // The old ban began two hours ago: every token issued before it has expired (1 h).
            try await auth.withDatabase { database in
                try await database.query("UPDATE users SET banned_at = now() - interval '2 hours' WHERE id = \(old)")
            }
            let ids = Set(try await listed(auth).map(\.userId))
            #expect(ids.contains(recent) && !ids.contains(old), "\(ids)")

            let url = "\(auth.base)\(SuspendedAccountsRoute.path)"
            let service = try #require(auth.serviceKeys[.unify])
            for headers in [[], [("Authorization", "Bearer \(service)"), ("apikey", service)]] {
                let reply = try await internalGet(url, headers: headers)
                #expect(reply.status == 401 && reply.code == "invalid_service_credential", "\(reply.status) \(reply.body)")
            }
        }
    }
}
