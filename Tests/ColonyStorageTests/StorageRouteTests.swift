import ColonyTesting
import Foundation
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing
@testable import ColonyStorage

@Suite("Storage: download routes")
struct StorageRouteTests {
    let tokens = TestTokens()

    /// A service router (as `ServiceHost` builds it) serving the avatars (public) and voice
    /// (private) buckets from a fresh directory.
    func withApp(_ body: @escaping @Sendable (Storage, any TestClientProtocol) async throws -> Void) async throws {
        try await withFileStorage { storage, _, _ in
            let router = ColonyRouter.make(metrics: HTTPMetrics(), maxBodyBytes: 1 << 20, readiness: ReadinessChecks())
            storage.addRoutes(to: router, buckets: [avatars, voice], tokenMiddleware: TokenMiddleware(verifier: TokenVerifier(configuration: tokens.verifierConfiguration(audience: .unify), logger: TestEnvironment.logger)),
                              access: [voice.name: StorageAccess { user, key in key.hasPrefix("\(user.uuidString.lowercased())/") }])
            try await Application(router: router).test(.router) { client in
                try await body(storage, client)
            }
        }
    }

    /// The path and query of a URL `Storage` handed out.
    func path(_ url: String) -> String {
        String(url.dropFirst("https://api.example.com".count))
    }

    func error(_ response: TestResponse) throws -> [String: String] {
        #expect(response.headers[.contentType]?.hasPrefix("application/json") == true)
        return try JSONDecoder().decode([String: String].self, from: Data(buffer: response.body))
    }

    @Test("a public object is served with its type; cached for good only when versioned")
    func publicObject() async throws {
        try await withApp { storage, client in
            let object = try await storage.upload(Fixtures.png, contentType: "image/png", to: avatars, key: "u1/avatar")
            let versioned = try await client.execute(uri: path(object.publicURL), method: .get)
            #expect(versioned.status == .ok)
            #expect(versioned.body == Fixtures.png)
            #expect(versioned.headers[.contentType] == "image/png")
            #expect(versioned.headers[.cacheControl] == "public, max-age=31536000, immutable")
            #expect(versioned.headers[.xContentTypeOptions] == "nosniff")

            let plain = try await client.execute(uri: "/storage/v1/object/public/avatars/u1/avatar", method: .get)
            #expect(plain.status == .ok && plain.body == Fixtures.png)
            #expect(plain.headers[.cacheControl] == "public, max-age=60")
        }
    }

    @Test("missing objects, private buckets on the public route and bad keys are JSON errors")
    func notServed() async throws {
        try await withApp { storage, client in
            _ = try await storage.upload(Fixtures.m4a, contentType: "audio/mp4", to: voice, key: "g1/m1")
            let missing = try await client.execute(uri: "/storage/v1/object/public/avatars/nobody", method: .get)
            #expect(missing.status == .notFound)
            #expect(try error(missing)["code"] == "not_found")

            let privateObject = try await client.execute(uri: "/storage/v1/object/public/voice-messages/g1/m1", method: .get)
            #expect(privateObject.status == .notFound)
            #expect(try error(privateObject)["code"] == "not_found")

            let badKey = try await client.execute(uri: "/storage/v1/object/public/avatars/a%2F..%2Fb", method: .get)
            #expect(badKey.status == .badRequest)
            #expect(try error(badKey)["code"] == "invalid_key")

            let unknownBucket = try await client.execute(uri: "/storage/v1/object/public/other/x", method: .get)
            #expect(unknownBucket.status == .notFound)
        }
    }

    @Test("signed URLs: valid, tampered, expired, missing token, missing object")
    func signed() async throws {
        try await withApp { storage, client in
            // The voice bucket is members-only: its signed URLs name a signer the bucket admits.
            let signer = UUID()
            let g1 = signer.uuidString.lowercased()
            _ = try await storage.upload(Fixtures.m4a, contentType: "audio/x-m4a", to: voice, key: "\(g1)/m1")
            let signedURL = storage.signedURL(voice, key: "\(g1)/m1", expiresIn: .seconds(60), signer: signer)
            let valid = try await client.execute(uri: path(signedURL), method: .get)
            #expect(valid.status == .ok)
            #expect(valid.body == Fixtures.m4a)
            #expect(valid.headers[.contentType] == "audio/mp4")
            #expect(valid.headers[.cacheControl]?.hasPrefix("private, max-age=") == true)

            // A signed URL works for a public bucket's object too.
            _ = try await storage.upload(Fixtures.jpeg, contentType: "image/jpeg", to: avatars, key: "u1")
            let publicSigned = try await client.execute(uri: path(storage.signedURL(avatars, key: "u1", expiresIn: .seconds(30))), method: .get)
            #expect(publicSigned.status == .ok && publicSigned.body == Fixtures.jpeg)

            let otherKey = path(signedURL).replacingOccurrences(of: "/\(g1)/m1?", with: "/\(g1)/m2?")
            let tampered = try await client.execute(uri: otherKey, method: .get)
            #expect(tampered.status == .forbidden)
            #expect(try error(tampered) == ["code": "invalid_signature", "message": "invalid signature"])

            let expired = try await client.execute(uri: path(storage.signedURL(voice, key: "\(g1)/m1", expiresIn: .seconds(-5), signer: signer)), method: .get)
            #expect(expired.status == .forbidden)
            #expect(try error(expired) == ["code": "invalid_signature", "message": "signature expired"])

            let noToken = try await client.execute(uri: "/storage/v1/object/sign/voice-messages/\(g1)/m1", method: .get)
            #expect(noToken.status == .badRequest)
            #expect(try error(noToken)["code"] == "invalid_signature")

            let gone = try await client.execute(uri: path(storage.signedURL(voice, key: "\(g1)/gone", expiresIn: .seconds(30), signer: signer)), method: .get)
            #expect(gone.status == .notFound)
            #expect(try error(gone)["code"] == "not_found")
        }
    }

    @Test("a picture's per-upload key: unguessable from the owner's id, and the old key dies when it is replaced")
    func pictureKeys() async throws {
        try await withApp { storage, client in
            let owner = UUID()
            let first = try await storage.uploadPicture(Fixtures.png, contentType: "image/png", to: avatars, owner: owner, replacing: nil)
            let firstURL = try #require(storage.pictureURL(avatars, owner: owner, version: first))
            #expect(firstURL.contains("/avatars/\(owner.uuidString.lowercased())/\(first)?v=\(first)") && first >= 1 << 62)
            #expect(try await client.execute(uri: path(firstURL), method: .get).status == .ok)
            #expect(try await client.execute(uri: "/storage/v1/object/public/avatars/\(owner.uuidString.lowercased())", method: .get).status == .notFound,
                    "the owner's id alone names nothing")
            let second = try await storage.uploadPicture(Fixtures.jpeg, contentType: "image/jpeg", to: avatars, owner: owner, replacing: first)
            #expect(second != first)
            #expect(try await client.execute(uri: path(firstURL), method: .get).status == .notFound, "the old key stopped working")
            let secondURL = try #require(storage.pictureURL(avatars, owner: owner, version: second))
            #expect(try await client.execute(uri: path(secondURL), method: .get).body == Fixtures.jpeg)
            try await storage.removePicture(avatars, owner: owner, version: second)
            #expect(try await client.execute(uri: path(secondURL), method: .get).status == .notFound)
            // A picture stored before per-upload keys (`{owner}`, its upload time as version) keeps its
            // URL until replaced; then it goes like any other.
            let old = UUID()
            let legacy = try await storage.upload(Fixtures.png, contentType: "image/png", to: avatars, key: old.uuidString.lowercased())
            #expect(storage.pictureURL(avatars, owner: old, version: legacy.version) == legacy.publicURL)
            let replaced = try await storage.uploadPicture(Fixtures.jpeg, contentType: "image/jpeg", to: avatars, owner: old, replacing: legacy.version)
            #expect(try await client.execute(uri: path(legacy.publicURL), method: .get).status == .notFound)
            #expect(try await client.execute(uri: path(try #require(storage.pictureURL(avatars, owner: old, version: replaced))), method: .get).body == Fixtures.jpeg)
        }
    }

    @Test("private objects: a stable authenticated URL for those the bucket admits (with their token), and signed on request; nobody else")
    func authenticated() async throws {
        try await withApp { storage, client in
            let owner = UUID(), other = UUID()
            let key = "\(owner.uuidString.lowercased())/m1"
            _ = try await storage.upload(Fixtures.m4a, contentType: "audio/mp4", to: voice, key: key)
            let stable = storage.authenticatedURL(voice, key: key)
            #expect(stable == "https://api.example.com/storage/v1/object/authenticated/voice-messages/\(key)" && !stable.contains("token"))
            func bearer(_ user: UUID) async throws -> HTTPFields { [.authorization: "Bearer \(try await tokens.token(user: user, app: .unify))"] }
            let allowed = try await client.execute(uri: path(stable), method: .get, headers: try await bearer(owner))
            #expect(allowed.status == .ok && allowed.body == Fixtures.m4a && allowed.headers[.cacheControl]?.hasPrefix("private") == true)
            #expect(try await client.execute(uri: path(stable), method: .get, headers: try await bearer(other)).status == .notFound)
            #expect(try await client.execute(uri: path(stable), method: .get).status == .unauthorized)

            // Signed on request, Supabase's createSignedUrl: a URL that works without a token until it expires.
            let signPath = "/storage/v1/object/sign/voice-messages/\(key)"
            let signed = try await client.execute(uri: signPath, method: .post, headers: try await bearer(owner), body: ByteBuffer(string: #"{"expiresIn": 120}"#))
            #expect(signed.status == .ok)
            let answer = try JSONDecoder().decode([String: String].self, from: Data(buffer: signed.body))
            let relative = try #require(answer["signedURL"])
            #expect(relative.hasPrefix("/object/sign/voice-messages/\(key)?token=") && answer["signed_url"] == "https://api.example.com/storage/v1" + relative)
            let fetched = try await client.execute(uri: "/storage/v1" + relative, method: .get)
            #expect(fetched.status == .ok && fetched.body == Fixtures.m4a)
            let expiry = try #require(Int64(relative.split(separator: "=").last?.split(separator: ".").first ?? ""))
            #expect(abs(expiry - Int64(Date().timeIntervalSince1970) - 120) <= 2)
            #expect(try await client.execute(uri: signPath, method: .post, headers: try await bearer(other), body: ByteBuffer(string: "{}")).status == .notFound)
            #expect(try await client.execute(uri: signPath, method: .post, headers: try await bearer(owner), body: ByteBuffer(string: #"{"expiresIn": 0}"#)).status == .unprocessableContent)
            #expect(try await client.execute(uri: "/storage/v1/object/sign/voice-messages/\(owner.uuidString.lowercased())/gone", method: .post,
                                             headers: try await bearer(owner), body: ByteBuffer()).status == .notFound)
        }
    }
}
