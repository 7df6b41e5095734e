import ColonyTesting
import Foundation
import Hummingbird
import NIOCore
import Testing
@testable import ColonyStorage

/// Bytes that start like real files of each type.
enum Fixtures {
    static let jpeg = ByteBuffer(bytes: [0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10] + Array("JFIF".utf8) + [0x00, 0x01, 0x02, 0x03])
    static let png = ByteBuffer(bytes: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D] + Array("IHDR".utf8))
    static let m4a = ByteBuffer(bytes: [0x00, 0x00, 0x00, 0x20] + Array("ftypM4A ".utf8) + [0x00, 0x00, 0x02, 0x00])
    static let mp3 = ByteBuffer(bytes: Array("ID3".utf8) + [0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00])
    static let mp3Frame = ByteBuffer(bytes: [0xFF, 0xFB, 0x90, 0x64, 0x00, 0x00])
    static let aac = ByteBuffer(bytes: [0xFF, 0xF1, 0x50, 0x80, 0x02, 0x1F, 0xFC])
    static let wav = ByteBuffer(bytes: Array("RIFF".utf8) + [0x24, 0x00, 0x00, 0x00] + Array("WAVEfmt ".utf8))
    static let ogg = ByteBuffer(bytes: Array("OggS".utf8) + [0x00, 0x02, 0x00, 0x00])
    static let webm = ByteBuffer(bytes: [0x1A, 0x45, 0xDF, 0xA3, 0x9F, 0x42, 0x86, 0x81])
}

let testSigningKey = Array("0123456789abcdef0123456789abcdef".utf8)
let avatars = StorageBucket.images("avatars")
let voice = StorageBucket.audio("voice-messages", isPublic: false)

/// A storage on a fresh directory, removed afterwards.
func withFileStorage(_ body: (Storage, FileSystemStorageBackend, String) async throws -> Void) async throws {
    let root = FileManager.default.temporaryDirectory.appendingPathComponent(uniqueName("colony-storage")).path
    defer { try? FileManager.default.removeItem(atPath: root) }
    let backend = FileSystemStorageBackend(root: root)
    let storage = Storage(backend: backend, publicBaseURL: "https://api.example.com/", signingKey: testSigningKey)
    try await body(storage, backend, root)
}

/// The regular files under `root`, relative to it.
func files(under root: String) -> [String] {
    let enumerator = FileManager.default.enumerator(atPath: root)
    var result: [String] = []
    while let path = enumerator?.nextObject() as? String {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: "\(root)/\(path)", isDirectory: &isDirectory), !isDirectory.boolValue {
            result.append(path)
        }
    }
    return result.sorted()
}

/// Runs `body`, which must throw exactly this API error (status and code).
func expectAPIError(_ status: HTTPResponse.Status, _ code: String, _ comment: Comment? = nil, _ body: () async throws -> Void) async {
    do {
        try await body()
        Issue.record("expected \(status.code) \(code), nothing was thrown. \(comment?.rawValue ?? "")")
    } catch let error as APIError {
        #expect(error.status == status && error.code == code, "\(error.code): \(error.message). \(comment?.rawValue ?? "")")
    } catch {
        Issue.record("expected APIError \(code), got \(error). \(comment?.rawValue ?? "")")
    }
}

@Suite("Storage: filesystem backend and upload checks")
struct StorageTests {
    @Test("an upload round-trips with its normalised type, size, version and public URL")
    func roundTrip() async throws {
        try await withFileStorage { storage, backend, root in
            let before = Int64(Date().timeIntervalSince1970 * 1000)
            let object = try await storage.upload(Fixtures.jpeg, contentType: "Image/JPEG; charset=binary", to: avatars, key: "u1/avatar.jpg")
            #expect(object.bucket == "avatars" && object.key == "u1/avatar.jpg")
            #expect(object.contentType == "image/jpeg" && object.size == Fixtures.jpeg.readableBytes)
            #expect(object.version >= before)
            #expect(object.publicURL == "https://api.example.com/storage/v1/object/public/avatars/u1/avatar.jpg?v=\(object.version)")
            let stored = try #require(try await backend.get(bucket: "avatars", key: "u1/avatar.jpg"))
            #expect(stored.body == Fixtures.jpeg && stored.contentType == "image/jpeg")
            #expect(files(under: root) == ["avatars/u1/avatar.jpg"])
        }
    }

    @Test("uploading to an existing key replaces the object, leaving no temporary files")
    func overwrite() async throws {
        try await withFileStorage { storage, backend, root in
            _ = try await storage.upload(Fixtures.jpeg, contentType: "image/jpeg", to: avatars, key: "g/pic")
            _ = try await storage.upload(Fixtures.png, contentType: "image/png", to: avatars, key: "g/pic")
            let stored = try #require(try await backend.get(bucket: "avatars", key: "g/pic"))
            #expect(stored.body == Fixtures.png && stored.contentType == "image/png")
            #expect(files(under: root) == ["avatars/g/pic"])
        }
    }

    @Test("removing deletes the object; removing a missing one is fine")
    func remove() async throws {
        try await withFileStorage { storage, backend, _ in
            _ = try await storage.upload(Fixtures.png, contentType: "image/png", to: avatars, key: "a/b/c.png")
            try await storage.remove(avatars, key: "a/b/c.png")
            #expect(try await backend.get(bucket: "avatars", key: "a/b/c.png") == nil)
            try await storage.remove(avatars, key: "a/b/c.png")
            try await storage.remove(avatars, key: "never/was")
            // A key below an existing object, and an existing "directory", are missing objects too.
            _ = try await storage.upload(Fixtures.png, contentType: "image/png", to: avatars, key: "x/y")
            try await backend.delete(bucket: "avatars", key: "x/y/z")
            #expect(try await backend.get(bucket: "avatars", key: "x") == nil)
            #expect(try await backend.get(bucket: "avatars", key: "x/y/z") == nil)
        }
    }

    @Test("keys that could escape the bucket, or are malformed, are rejected with 400 invalid_key", arguments: [
        "", "../escape", "a/../../escape", "/etc/passwd", "a//b", "./a", "a/.", "a/", "a b", "a\\b", "%2e%2e/x",
        "ü", "a\nb", String(repeating: "k", count: 256), (0..<3).map { _ in String(repeating: "k", count: 171) }.joined(separator: "/"),
    ])
    func badKeys(key: String) async throws {
        try await withFileStorage { storage, backend, root in
            await expectAPIError(.badRequest, "invalid_key", "upload \(key)") {
                _ = try await storage.upload(Fixtures.jpeg, contentType: "image/jpeg", to: avatars, key: key)
            }
            await expectAPIError(.badRequest, "invalid_key", "put \(key)") {
                try await backend.put(bucket: "avatars", key: key, body: Fixtures.jpeg, contentType: "image/jpeg")
            }
            await expectAPIError(.badRequest, "invalid_key", "remove \(key)") { try await storage.remove(avatars, key: key) }
            #expect(files(under: root).isEmpty)
            #expect(!FileManager.default.fileExists(atPath: root + "/escape"))
        }
    }

    @Test("the longest allowed key and segment, and every allowed character, work")
    func goodKeys() async throws {
        try await withFileStorage { storage, backend, _ in
            let longest = [200, 200, 110].map { String(repeating: "k", count: $0) }.joined(separator: "/")
            for key in [longest, String(repeating: "s", count: 255), "AZaz09._-/..a/a..b/.hidden"] {
                _ = try await storage.upload(Fixtures.jpeg, contentType: "image/jpeg", to: avatars, key: key)
                #expect(try await backend.get(bucket: "avatars", key: key)?.body == Fixtures.jpeg)
            }
        }
    }

    struct ContentCase: Sendable, CustomTestStringConvertible {
        var name: String
        var body: ByteBuffer
        var contentType: String?
        var bucket: StorageBucket
        var code: String
        var testDescription: String { name }
    }

    @Test("uploads failing a content check are 422 with the right code and store nothing", arguments: [
        ContentCase(name: "PNG bytes declared as JPEG", body: Fixtures.png, contentType: "image/jpeg", bucket: avatars, code: "unsupported_media_type"),
        ContentCase(name: "text declared as PNG", body: ByteBuffer(string: "hello, world"), contentType: "image/png", bucket: avatars, code: "unsupported_media_type"),
        ContentCase(name: "MP3 declared as m4a", body: Fixtures.mp3, contentType: "audio/x-m4a", bucket: voice, code: "unsupported_media_type"),
        ContentCase(name: "WAV header without WAVE", body: ByteBuffer(bytes: Array("RIFF....AVI ".utf8)), contentType: "audio/wav", bucket: voice, code: "unsupported_media_type"),
        ContentCase(name: "type not allowed for the bucket", body: Fixtures.jpeg, contentType: "image/gif", bucket: avatars, code: "unsupported_media_type"),
        ContentCase(name: "image into an audio bucket", body: Fixtures.jpeg, contentType: "image/jpeg", bucket: voice, code: "unsupported_media_type"),
        ContentCase(name: "no content type", body: Fixtures.jpeg, contentType: nil, bucket: avatars, code: "unsupported_media_type"),
        ContentCase(name: "empty content type", body: Fixtures.jpeg, contentType: " ", bucket: avatars, code: "unsupported_media_type"),
        ContentCase(name: "over the bucket's limit", body: Fixtures.jpeg, contentType: "image/jpeg", bucket: .images("tiny", maxBytes: 8), code: "file_too_large"),
        ContentCase(name: "empty file", body: ByteBuffer(), contentType: "image/jpeg", bucket: avatars, code: "empty_file"),
    ])
    func contentChecks(_ check: ContentCase) async throws {
        try await withFileStorage { storage, _, root in
            await expectAPIError(.unprocessableContent, check.code) {
                _ = try await storage.upload(check.body, contentType: check.contentType, to: check.bucket, key: "k")
            }
            #expect(files(under: root).isEmpty)
        }
    }

    @Test("each audio format is accepted by its signature, aliases normalised", arguments: [
        ("audio/mp4", Fixtures.m4a, "audio/mp4"), ("audio/x-m4a", Fixtures.m4a, "audio/mp4"), ("audio/m4a; codecs=mp4a.40.2", Fixtures.m4a, "audio/mp4"),
        ("audio/mpeg", Fixtures.mp3, "audio/mpeg"), ("audio/mpeg", Fixtures.mp3Frame, "audio/mpeg"), ("audio/aac", Fixtures.aac, "audio/aac"),
        ("audio/wav", Fixtures.wav, "audio/wav"), ("audio/x-wav", Fixtures.wav, "audio/wav"), ("audio/ogg", Fixtures.ogg, "audio/ogg"),
        ("AUDIO/WEBM;codecs=opus", Fixtures.webm, "audio/webm"),
    ])
    func audioFormats(declared: String, body: ByteBuffer, stored: String) async throws {
        try await withFileStorage { storage, backend, _ in
            let object = try await storage.upload(body, contentType: declared, to: voice, key: "g1/m1")
            #expect(object.contentType == stored)
            #expect(try await backend.get(bucket: voice.name, key: "g1/m1")?.contentType == stored)
        }
    }

    @Test("a private bucket's URL is a signed one")
    func privateURL() async throws {
        try await withFileStorage { storage, _, _ in
            let object = try await storage.upload(Fixtures.m4a, contentType: "audio/mp4", to: voice, key: "g1/m1")
            #expect(object.publicURL.hasPrefix("https://api.example.com/storage/v1/object/sign/voice-messages/g1/m1?token="))
            #expect(storage.publicURL(avatars, key: "u1", version: nil) == "https://api.example.com/storage/v1/object/public/avatars/u1")
        }
    }

    @Test("signed tokens: valid, tampered, for another object, expired")
    func signedTokens() throws {
        let storage = Storage(backend: FileSystemStorageBackend(root: "/nonexistent"), publicBaseURL: "http://x", signingKey: testSigningKey)
        let url = storage.signedURL(voice, key: "g1/m1", expiresIn: .seconds(60))
        let token = try #require(url.split(separator: "token=").last.map(String.init))
        let expires = try storage.verify(token: token, bucket: "voice-messages", key: "g1/m1").expires
        #expect(abs(expires - Int64(Date().timeIntervalSince1970) - 60) <= 1)

        func rejected(_ token: String, bucket: String = "voice-messages", key: String = "g1/m1", now: Date = Date()) -> String? {
            do {
                try storage.verify(token: token, bucket: bucket, key: key, now: now)
                return nil
            } catch {
                return error.code == "invalid_signature" ? "\(error.status.code) \(error.message)" : "wrong code \(error.code)"
            }
        }
        let (expiry, mac) = (String(token.split(separator: ".")[0]), String(token.split(separator: ".")[1]))
        let flipped = (mac.first == "A" ? "B" : "A") + String(mac.dropFirst())
        // The last character's two spare bits: another spelling of the same MAC.
        let respelled = String(mac.dropLast()) + String(Self.respell(mac.last!))
        #expect(rejected(token) == nil)
        #expect(rejected("\(expiry).\(flipped)") == "403 invalid signature")
        #expect(rejected("\(expiry).\(respelled)") == "400 malformed signature")
        #expect(rejected("\(Int64(expiry)! + 3600).\(mac)") == "403 invalid signature")
        #expect(rejected(token, key: "g1/m2") == "403 invalid signature")
        #expect(rejected(token, bucket: "avatars") == "403 invalid signature")
        #expect(rejected("garbage") == "400 malformed signature")
        #expect(rejected("") == "400 malformed signature")
        // The form the documents state: what matches it is refused with 403, anything else with 400.
        #expect(token.range(of: Storage.tokenPattern, options: .regularExpression) != nil)
        #expect(rejected("9999999999999999999.\(mac)") == "403 invalid signature")
        #expect(rejected("99999999999999999999.\(mac)") == "400 malformed signature")
        #expect(rejected("+\(expiry).\(mac)") == "400 malformed signature")
        let other = Storage(backend: FileSystemStorageBackend(root: "/nonexistent"), publicBaseURL: "http://x", signingKey: Array(repeating: 7, count: 32))
        #expect(rejected(other.token(bucket: "voice-messages", key: "g1/m1", expires: Int64(expiry)!)) == "403 invalid signature")
        #expect(rejected(token, now: Date().addingTimeInterval(120)) == "403 signature expired")
    }

    /// The base64url character with the same upper four bits and other lower two.
    static func respell(_ character: Character) -> Character {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        let index = alphabet.firstIndex(of: character)!
        return alphabet[index ^ 1]
    }

    @Test("configuration: defaults, required signing key, S3 settings")
    func configuration() throws {
        let key = "9f2c41d8a7e35b60c4f18e2a9d73b5c0e6a1f4d2"
        let defaults = try Storage.load(environment: EnvironmentReader(["COLONY_STORAGE_SIGNING_KEY": key]))
        #expect(defaults.publicBaseURL == "http://localhost:8080")
        #expect((defaults.backend as? FileSystemStorageBackend)?.root == "/var/lib/colony/storage")

        let s3 = try Storage.load(environment: EnvironmentReader([
            "COLONY_STORAGE_SIGNING_KEY": key, "COLONY_STORAGE_BACKEND": "s3", "COLONY_STORAGE_PUBLIC_URL": "https://cdn.example.com/",
            "COLONY_STORAGE_S3_ENDPOINT": "http://127.0.0.1:9000", "COLONY_STORAGE_S3_BUCKET": "colony",
            "COLONY_STORAGE_S3_ACCESS_KEY_ID": "id", "COLONY_STORAGE_S3_SECRET_ACCESS_KEY": "secret",
        ]))
        #expect(s3.publicBaseURL == "https://cdn.example.com")
        let configuration = try #require((s3.backend as? S3StorageBackend)?.configuration)
        #expect(configuration.region == "us-east-1" && configuration.bucket == "colony" && configuration.endpoint == "http://127.0.0.1:9000")

        func problem(_ values: [String: String]) -> String? {
            do {
                _ = try Storage.load(environment: EnvironmentReader(values))
                return nil
            } catch {
                return error.variable
            }
        }
        #expect(problem([:]) == "COLONY_STORAGE_SIGNING_KEY")
        #expect(problem(["COLONY_STORAGE_SIGNING_KEY": "short"]) == "COLONY_STORAGE_SIGNING_KEY")
        #expect(problem(["COLONY_STORAGE_SIGNING_KEY": "change-me-storage-signing-key-at-least-32-chars"]) == "COLONY_STORAGE_SIGNING_KEY")
        #expect(problem(["COLONY_STORAGE_SIGNING_KEY": String(repeating: "s", count: 32)]) == "COLONY_STORAGE_SIGNING_KEY")
        #expect(problem(["COLONY_STORAGE_SIGNING_KEY": key, "COLONY_STORAGE_BACKEND": "ftp"]) == "COLONY_STORAGE_BACKEND")
        #expect(problem(["COLONY_STORAGE_SIGNING_KEY": key, "COLONY_STORAGE_BACKEND": "s3"]) == "COLONY_STORAGE_S3_ENDPOINT")
        #expect(problem(["COLONY_STORAGE_SIGNING_KEY": key, "COLONY_STORAGE_BACKEND": "s3", "COLONY_STORAGE_S3_ENDPOINT": "http://h"]) == "COLONY_STORAGE_S3_BUCKET")
    }
}
