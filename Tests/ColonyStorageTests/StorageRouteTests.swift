import ColonyTesting
import Foundation
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing
@testable import ColonyStorage

@Suite("Storage: download routes")
struct StorageRouteTests {
    /// A service router (as `ServiceHost` builds it) serving the avatars (public) and voice
    /// (private) buckets from a fresh directory.
    func withApp(_ body: @escaping @Sendable (Storage, any TestClientProtocol) async throws -> Void) async throws {
        try await withFileStorage { storage, _, _ in
            let router = ColonyRouter.make(metrics: HTTPMetrics(), maxBodyBytes: 1 << 20, readiness: ReadinessChecks())
            storage.addRoutes(to: router, buckets: [avatars, voice])
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
            let object = try await storage.upload(Fixtures.m4a, contentType: "audio/x-m4a", to: voice, key: "g1/m1")
            let valid = try await client.execute(uri: path(object.publicURL), method: .get)
            #expect(valid.status == .ok)
            #expect(valid.body == Fixtures.m4a)
            #expect(valid.headers[.contentType] == "audio/mp4")
            #expect(valid.headers[.cacheControl]?.hasPrefix("private, max-age=") == true)

            // A signed URL works for a public bucket's object too.
            _ = try await storage.upload(Fixtures.jpeg, contentType: "image/jpeg", to: avatars, key: "u1")
            let publicSigned = try await client.execute(uri: path(storage.signedURL(avatars, key: "u1", expiresIn: .seconds(30))), method: .get)
            #expect(publicSigned.status == .ok && publicSigned.body == Fixtures.jpeg)

            let otherKey = path(object.publicURL).replacingOccurrences(of: "/g1/m1?", with: "/g1/m2?")
            let tampered = try await client.execute(uri: otherKey, method: .get)
            #expect(tampered.status == .badRequest)
            #expect(try error(tampered) == ["code": "invalid_signature", "message": "invalid signature"])

            let expired = try await client.execute(uri: path(storage.signedURL(voice, key: "g1/m1", expiresIn: .seconds(-5))), method: .get)
            #expect(expired.status == .badRequest)
            #expect(try error(expired) == ["code": "invalid_signature", "message": "signature expired"])

            let noToken = try await client.execute(uri: "/storage/v1/object/sign/voice-messages/g1/m1", method: .get)
            #expect(noToken.status == .badRequest)
            #expect(try error(noToken)["code"] == "invalid_signature")

            let gone = try await client.execute(uri: path(storage.signedURL(voice, key: "g1/gone", expiresIn: .seconds(30))), method: .get)
            #expect(gone.status == .notFound)
            #expect(try error(gone)["code"] == "not_found")
        }
    }
}
