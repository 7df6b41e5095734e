import ColonyTesting
import Foundation
import Hummingbird
import HummingbirdTesting
import NIOCore
import Synchronization
import Testing
@testable import ColonyStorage

/// Who the members-only bucket admits right now: `{member id}/…` keys of the members in the set.
final class Members: Sendable {
    private let ids = Mutex<Set<UUID>>([])
    private let asked = Mutex(0)

    func add(_ id: UUID) { ids.withLock { _ = $0.insert(id) } }
    func remove(_ id: UUID) { ids.withLock { _ = $0.remove(id) } }
    /// How often the rule was asked.
    var questions: Int { asked.withLock { $0 } }

    var access: StorageAccess {
        StorageAccess { user, key in
            self.asked.withLock { $0 += 1 }
            return self.ids.withLock { $0.contains(user) } && key.hasPrefix("\(user.uuidString.lowercased())/")
        }
    }
}

@Suite("Storage: signed URLs of members-only buckets follow the signer's right to read")
struct SignedURLSignerTests {
    let tokens = TestTokens()

    func withApp(signerCheckTTL: Duration, _ body: @escaping @Sendable (Storage, Members, any TestClientProtocol) async throws -> Void) async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent(uniqueName("colony-signer")).path
        defer { try? FileManager.default.removeItem(atPath: root) }
        let storage = Storage(backend: FileSystemStorageBackend(root: root), publicBaseURL: "https://api.example.com", signingKey: testSigningKey,
                              signerCheckTTL: signerCheckTTL)
        let members = Members()
        let router = ColonyRouter.make(metrics: HTTPMetrics(), maxBodyBytes: 1 << 20, readiness: ReadinessChecks())
        storage.addRoutes(to: router, buckets: [avatars, voice], tokenMiddleware: TokenMiddleware(verifier: TokenVerifier(configuration: tokens.verifierConfiguration(audience: .unify), logger: TestEnvironment.logger)),
                          access: [voice.name: members.access])
        try await Application(router: router).test(.router) { client in
            try await body(storage, members, client)
        }
    }

    func bearer(_ user: UUID) async throws -> HTTPFields { [.authorization: "Bearer \(try await tokens.token(user: user, app: .unify))"] }

    /// `POST …/sign/…` as `user`: the relative URL answered.
    func sign(_ client: any TestClientProtocol, _ bucket: String, _ key: String, as user: UUID, seconds: Int = 604_800) async throws -> String {
        let signed = try await client.execute(uri: "/storage/v1/object/sign/\(bucket)/\(key)", method: .post, headers: try await bearer(user),
                                              body: ByteBuffer(string: #"{"expiresIn": \#(seconds)}"#))
        #expect(signed.status == .ok, "\(String(buffer: signed.body))")
        let answer = try JSONDecoder().decode([String: String].self, from: Data(buffer: signed.body))
        return "/storage/v1" + (try #require(answer["signedURL"]))
    }

    func code(_ response: TestResponse) -> String {
        (try? JSONDecoder().decode([String: String].self, from: Data(buffer: response.body)))?["code"] ?? "(not JSON: \(String(buffer: response.body)))"
    }

    @Test("a member's week-long URL stops serving once they are removed; without caching at once")
    func removedSignerImmediately() async throws {
        try await withApp(signerCheckTTL: .zero) { storage, members, client in
            let member = UUID(), key = "\(member.uuidString.lowercased())/m1"
            members.add(member)
            _ = try await storage.upload(Fixtures.m4a, contentType: "audio/mp4", to: voice, key: key)
            let url = try await sign(client, voice.name, key, as: member)
            #expect(url.contains("token=") && url.contains(".\(member.uuidString.lowercased())."), "the token names its signer: \(url)")
            let token = try #require(url.split(separator: "token=").last.map(String.init))
            #expect(token.range(of: Storage.signedByMemberTokenPattern, options: .regularExpression) != nil)
            #expect(token.range(of: Storage.tokenPattern, options: .regularExpression) != nil)
            let served = try await client.execute(uri: url, method: .get)
            #expect(served.status == .ok && served.body == Fixtures.m4a)
            #expect(served.headers[.cacheControl] == "private, max-age=0", "a browser keeps it no longer than the signer check")

            members.remove(member)
            let refused = try await client.execute(uri: url, method: .get)
            #expect(refused.status == .forbidden && code(refused) == "invalid_signature")
            // Taken back in: the same URL serves again (it is the membership that counts, not a revocation list).
            members.add(member)
            #expect(try await client.execute(uri: url, method: .get).status == .ok)
        }
    }

    @Test("the answer is reused for at most the check's TTL, then asked again")
    func cachedWithinBound() async throws {
        try await withApp(signerCheckTTL: .seconds(2)) { storage, members, client in
            let member = UUID(), stayer = UUID()
            let key = "\(member.uuidString.lowercased())/m1", stayerKey = "\(stayer.uuidString.lowercased())/m1"
            members.add(member)
            members.add(stayer)
            _ = try await storage.upload(Fixtures.m4a, contentType: "audio/mp4", to: voice, key: key)
            _ = try await storage.upload(Fixtures.m4a, contentType: "audio/mp4", to: voice, key: stayerKey)
            let url = try await sign(client, voice.name, key, as: member)
            let stayerURL = try await sign(client, voice.name, stayerKey, as: stayer)
            let questionsBefore = members.questions
            for _ in 0..<5 { #expect(try await client.execute(uri: url, method: .get).status == .ok) }
            #expect(members.questions == questionsBefore + 1, "five fetches within the TTL ask the rule once")
            let served = try await client.execute(uri: url, method: .get)
            #expect(served.headers[.cacheControl] == "private, max-age=2")

            members.remove(member)
            // The kept answer was made before this moment: a fetch sent once the TTL (2 s) has passed
            // since is asked again and refused, however long a busy machine takes to answer it.
            let removed = ContinuousClock.now
            try await Task.sleep(until: removed.advanced(by: .milliseconds(2_050)), clock: .continuous)
            #expect(try await client.execute(uri: url, method: .get).status == .forbidden, "refused once the TTL has passed since the removal")
            #expect(try await client.execute(uri: stayerURL, method: .get).status == .ok, "a current member's URL keeps working")
        }
    }

    @Test("tampered, for another object, for another signer, expired, signer-less: refused before any object is read")
    func refusedTokens() async throws {
        try await withApp(signerCheckTTL: .seconds(30)) { storage, members, client in
            let member = UUID(), other = UUID()
            members.add(member)
            members.add(other)
            let key = "\(member.uuidString.lowercased())/m1", otherKey = "\(other.uuidString.lowercased())/m1"
            _ = try await storage.upload(Fixtures.m4a, contentType: "audio/mp4", to: voice, key: key)
            _ = try await storage.upload(Fixtures.wav, contentType: "audio/wav", to: voice, key: otherKey)
            let url = try await sign(client, voice.name, key, as: member)
            let token = try #require(url.split(separator: "token=").last.map(String.init))
            let parts = token.split(separator: ".").map(String.init)
            #expect(parts.count == 3 && parts[1] == member.uuidString.lowercased())

            func status(_ token: String, key: String? = nil) async throws -> (Int, String) {
                let response = try await client.execute(uri: "/storage/v1/object/sign/voice-messages/\(key ?? "\(member.uuidString.lowercased())/m1")?token=\(token)", method: .get)
                return (Int(response.status.code), response.status == .ok ? "" : code(response))
            }
            #expect(try await status(token) == (200, ""))
            // Another member's id in place of the signer: the MAC covers it.
            #expect(try await status("\(parts[0]).\(other.uuidString.lowercased()).\(parts[2])") == (403, "invalid_signature"))
            // Upper case is not how the service writes a signer: another spelling of the same URL is refused.
            #expect(try await status("\(parts[0]).\(member.uuidString).\(parts[2])") == (400, "invalid_signature"))
            #expect(try await status("\(parts[0]).\(parts[2])") == (400, "invalid_signature"), "members-only tokens name their signer")
            #expect(try await status("\(Int64(parts[0])! + 1).\(parts[1]).\(parts[2])") == (403, "invalid_signature"))
            #expect(try await status(token, key: otherKey) == (403, "invalid_signature"), "another object's path")
            #expect(try await status("\(parts[0]).\(parts[1]).\(parts[1]).\(parts[2])") == (400, "invalid_signature"))
            #expect(try await status("\(parts[0])..\(parts[2])") == (400, "invalid_signature"))
            let expired = storage.signedURL(voice, key: key, expiresIn: .seconds(-5), signer: member)
            #expect(try await client.execute(uri: String(expired.dropFirst("https://api.example.com".count)), method: .get).status == .forbidden)
            // The service's own signer-less URL of a members-only object: nobody's right to check.
            let own = try await storage.upload(Fixtures.m4a, contentType: "audio/mp4", to: voice, key: "\(member.uuidString.lowercased())/m2")
            #expect(try await client.execute(uri: String(own.publicURL.dropFirst("https://api.example.com".count)), method: .get).status == .badRequest)
            // A signer who never could read the object (a token made by hand with the key): refused.
            let stranger = storage.signedURL(voice, key: key, expiresIn: .seconds(60), signer: UUID())
            #expect(try await client.execute(uri: String(stranger.dropFirst("https://api.example.com".count)), method: .get).status == .forbidden)
        }
    }

    @Test("public buckets are unchanged: their signed URLs name nobody and serve whoever holds them")
    func publicUnchanged() async throws {
        try await withApp(signerCheckTTL: .seconds(30)) { storage, _, client in
            let user = UUID()
            _ = try await storage.upload(Fixtures.png, contentType: "image/png", to: avatars, key: "u1/1")
            let url = try await sign(client, avatars.name, "u1/1", as: user, seconds: 60)
            let token = try #require(url.split(separator: "token=").last)
            #expect(token.split(separator: ".").count == 2, "\(token)")
            #expect(String(token).range(of: Storage.tokenPattern, options: .regularExpression) != nil)
            let served = try await client.execute(uri: url, method: .get)
            #expect(served.status == .ok && served.body == Fixtures.png)
            #expect(served.headers[.cacheControl]?.hasPrefix("private, max-age=") == true && served.headers[.cacheControl] != "private, max-age=0")
        }
    }

    @Test("a bucket's path without a key is 400 invalid_key on every route, never a 405 naming the method asked")
    func noKey() async throws {
        try await withApp(signerCheckTTL: .seconds(30)) { _, _, client in
            let member = UUID()
            for bucket in [avatars.name, voice.name] {
                for (method, kind) in [(HTTPRequest.Method.get, "public"), (.get, "sign"), (.post, "sign"), (.get, "authenticated")] {
                    for tail in ["/", "//", ""] {
                        let response = try await client.execute(uri: "/storage/v1/object/\(kind)/\(bucket)\(tail)", method: method, headers: try await bearer(member))
                        #expect(response.status == .badRequest && code(response) == "invalid_key", "\(method) \(kind)/\(bucket)\(tail): \(response.status)")
                    }
                }
            }
        }
    }

    @Test("the memory of answers is bounded and never older than its TTL")
    func boundedMemory() async throws {
        let checks = SignerChecks(ttl: .seconds(30), capacity: 100)
        let members = Members()
        let clock = Mutex(ContinuousClock.now)
        let now: @Sendable () -> ContinuousClock.Instant = { clock.withLock { $0 } }
        for index in 0..<1000 {
            _ = try await checks.allows(UUID(), bucket: "voice-messages", key: "k\(index)", rule: members.access, now: now)
            #expect(checks.count <= 100)
        }
        let member = UUID()
        members.add(member)
        let key = "\(member.uuidString.lowercased())/x"
        #expect(try await checks.allows(member, bucket: "voice-messages", key: key, rule: members.access, now: now))
        members.remove(member)
        clock.withLock { $0 += .seconds(29) }
        #expect(try await checks.allows(member, bucket: "voice-messages", key: key, rule: members.access, now: now), "still within the TTL")
        clock.withLock { $0 += .seconds(1) }
        #expect(try await !checks.allows(member, bucket: "voice-messages", key: key, rule: members.access, now: now), "at the TTL it is asked again")
    }

    @Test("configuration: the check's TTL is 0-60 s, 30 by default")
    func configuration() throws {
        let key = "9f2c41d8a7e35b60c4f18e2a9d73b5c0e6a1f4d2"
        #expect(try Storage.load(environment: EnvironmentReader(["COLONY_STORAGE_SIGNING_KEY": key])).signerCheckTTL == .seconds(30))
        #expect(try Storage.load(environment: EnvironmentReader(["COLONY_STORAGE_SIGNING_KEY": key, "COLONY_STORAGE_SIGNER_CHECK_SECONDS": "0"])).signerCheckTTL == .zero)
        #expect(throws: ConfigurationError.self) {
            try Storage.load(environment: EnvironmentReader(["COLONY_STORAGE_SIGNING_KEY": key, "COLONY_STORAGE_SIGNER_CHECK_SECONDS": "61"]))
        }
        #expect(Storage(backend: FileSystemStorageBackend(root: "/nonexistent"), publicBaseURL: "x", signingKey: testSigningKey, signerCheckTTL: .seconds(600)).signerCheckTTL == .seconds(60))
    }
}
