import AsyncHTTPClient
import ColonyTesting
import Foundation
import NIOCore
import NIOHTTP1
import Testing
@testable import ColonyStorage

@Suite("Storage: S3 backend")
struct S3StorageTests {
    static let emptyHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

    @Test("SigV4 signs AWS's documented example (GET /test.txt) to the documented signature")
    func signatureV4Example() {
        let signer = SigV4Signer(accessKeyID: "AKIAIOSFODNN7EXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", region: "us-east-1")
        let headers = signer.sign(
            method: "GET", path: "/test.txt",
            headers: ["Host": "examplebucket.s3.amazonaws.com", "Range": "bytes=0-9"],
            payloadHash: Self.emptyHash,
            date: Date(timeIntervalSince1970: 1_369_353_600) // 2013-05-24T00:00:00Z
        )
        #expect(headers["x-amz-date"] == "20130524T000000Z")
        #expect(headers["x-amz-content-sha256"] == Self.emptyHash)
        let (canonical, signedHeaders) = signer.canonicalRequest(
            method: "GET", path: "/test.txt", headers: headers.filter { $0.key != "authorization" }, payloadHash: Self.emptyHash
        )
        #expect(canonical == """
            GET
            /test.txt

            host:examplebucket.s3.amazonaws.com
            range:bytes=0-9
            x-amz-content-sha256:\(Self.emptyHash)
            x-amz-date:20130524T000000Z

            host;range;x-amz-content-sha256;x-amz-date
            \(Self.emptyHash)
            """)
        #expect(signedHeaders == "host;range;x-amz-content-sha256;x-amz-date")
        #expect(headers["authorization"] == "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, "
            + "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41")
        #expect(SigV4Signer.payloadHash(ByteBuffer()) == Self.emptyHash)
        #expect(SigV4Signer.uriEncode("a b/ü~-._") == "a%20b%2F%C3%BC~-._")
    }

    @Test("objects round-trip through a real S3-compatible server (moto) that checks signatures")
    func motoRoundTrip() async throws {
        let moto = try MotoProcess()
        try await moto.start(unauthenticatedCalls: 3)
        defer { moto.stop() }
        let (accessKeyID, secret) = try await createS3User(on: moto)
        let configuration = S3Configuration(endpoint: moto.endpoint, region: "us-east-1", bucket: "colony-test", accessKeyID: accessKeyID, secretAccessKey: secret)
        let backend = S3StorageBackend(configuration: configuration)

        #expect(await !backend.isReachable(), "no bucket yet")
        try await backend.createBucket()
        try await backend.createBucket()
        #expect(await backend.isReachable())

        try await backend.put(bucket: "voice-messages", key: "g1/m1", body: Fixtures.m4a, contentType: "audio/mp4")
        let stored = try #require(try await backend.get(bucket: "voice-messages", key: "g1/m1"))
        #expect(stored.body == Fixtures.m4a && stored.contentType == "audio/mp4")

        try await backend.put(bucket: "voice-messages", key: "g1/m1", body: Fixtures.wav, contentType: "audio/wav")
        let replaced = try #require(try await backend.get(bucket: "voice-messages", key: "g1/m1"))
        #expect(replaced.body == Fixtures.wav && replaced.contentType == "audio/wav")
        #expect(try await backend.get(bucket: "voice-messages", key: "g1/missing") == nil)
        #expect(try await backend.get(bucket: "avatars", key: "g1/m1") == nil, "Colony buckets are separate key prefixes")

        try await backend.delete(bucket: "voice-messages", key: "g1/m1")
        #expect(try await backend.get(bucket: "voice-messages", key: "g1/m1") == nil)
        try await backend.delete(bucket: "voice-messages", key: "g1/m1")

        // Through Storage, with a key of every allowed character.
        let storage = Storage(backend: backend, publicBaseURL: "http://x", signingKey: testSigningKey)
        let object = try await storage.upload(Fixtures.jpeg, contentType: "image/jpeg", to: avatars, key: "u_1/A-z.0..jpg")
        #expect(try await backend.get(bucket: "avatars", key: object.key)?.body == Fixtures.jpeg)
        try await storage.remove(avatars, key: object.key)
        #expect(try await backend.get(bucket: "avatars", key: object.key) == nil)

        // A wrong secret: moto refuses the signature, and the backend says so.
        var forgedConfiguration = configuration
        forgedConfiguration.secretAccessKey = "not-the-secret"
        let forged = S3StorageBackend(configuration: forgedConfiguration)
        await #expect(throws: S3Error.self) {
            try await forged.put(bucket: "avatars", key: "x", body: Fixtures.jpeg, contentType: "image/jpeg")
        }
        #expect(await !forged.isReachable())
    }

    /// An IAM user allowed `s3:*`, made with moto's three unauthenticated calls.
    func createS3User(on moto: MotoProcess) async throws -> (accessKeyID: String, secret: String) {
        // Signed only so moto routes the call to IAM (by its credential scope); not checked.
        let signer = SigV4Signer(accessKeyID: "AKIASETUPEXAMPLE", secretAccessKey: "setup", region: "us-east-1", service: "iam")
        func call(_ parameters: [(String, String)]) async throws -> String {
            let form = (parameters + [("Version", "2010-05-08")]).map { "\($0)=\(SigV4Signer.uriEncode($1))" }.joined(separator: "&")
            let body = ByteBuffer(string: form)
            var request = HTTPClientRequest(url: moto.endpoint + "/")
            request.method = .POST
            let headers = ["host": "127.0.0.1:\(moto.port)", "content-type": "application/x-www-form-urlencoded"]
            for (name, value) in signer.sign(method: "POST", path: "/", headers: headers, payloadHash: SigV4Signer.payloadHash(body), date: Date()) {
                request.headers.add(name: name, value: value)
            }
            request.body = .bytes(body)
            let response = try await HTTPClient.shared.execute(request, timeout: .seconds(10))
            let text = String(buffer: try await response.body.collect(upTo: 1 << 20))
            guard response.status == .ok else { throw TestSetupError("IAM \(parameters[0].1) failed: \(response.status) \(text)") }
            return text
        }
        func element(_ name: String, in xml: String) throws -> String {
            guard let start = xml.range(of: "<\(name)>"), let end = xml.range(of: "</\(name)>", range: start.upperBound..<xml.endIndex) else {
                throw TestSetupError("no \(name) in \(xml)")
            }
            return String(xml[start.upperBound..<end.lowerBound])
        }
        let policy = #"{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:*","Resource":"*"}]}"#
        _ = try await call([("Action", "CreateUser"), ("UserName", "colony")])
        let key = try await call([("Action", "CreateAccessKey"), ("UserName", "colony")])
        _ = try await call([("Action", "PutUserPolicy"), ("UserName", "colony"), ("PolicyName", "s3"), ("PolicyDocument", policy)])
        return (try element("AccessKeyId", in: key), try element("SecretAccessKey", in: key))
    }
}
