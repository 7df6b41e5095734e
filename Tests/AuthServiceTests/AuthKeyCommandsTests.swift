import AsyncHTTPClient
import ColonyModels
import ColonyTesting
import Foundation
import Testing
@testable import AuthService

/// The operator's `colony-admin keys`: rotation keeps sessions working, revocation of a leaked
/// signing key or API key takes it out of service at once.
@Suite("Auth keys through colony-admin", .serialized)
struct AuthKeyCommandsTests {
    func admin(_ arguments: [String]) async throws -> (status: Int32, output: String) {
        try await ChildProcess.run(try builtExecutable("colony-admin"), arguments)
    }

    func kids(_ auth: RunningAuth) async throws -> [String] {
        let jwks = try await HTTPClient.shared.execute(HTTPClientRequest(url: "\(auth.authURL)/.well-known/jwks.json"), timeout: .seconds(30))
        let body = try JSONSerialization.jsonObject(with: Data(buffer: try await jwks.body.collect(upTo: 1 << 16))) as? [String: Any]
        return ((body?["keys"] as? [[String: Any]]) ?? []).compactMap { $0["kid"] as? String }
    }

    @Test("keys rotate keeps the old key published (sessions go on); keys revoke takes a leaked key out: its tokens and a revoked API key are refused")
    func rotateAndRevoke() async throws {
        try await withRunningAuth { auth in
            let schema = auth.database.schema
            let email = "\(uniqueName("k"))@example.com"
            let signedUp = try await auth.request(.POST, "/signup", json: ["email": email, "password": "Correct-Horse-9"])
            let oldToken = try #require(signedUp.json["access_token"] as? String, "\(signedUp.json)")
            let before = try await kids(auth)
            #expect(before.count == 1)

            let rotated = try await admin(["keys", "rotate", "--schema", schema])
            #expect(rotated.status == 0 && rotated.output.contains("signing with new key"), "\(rotated.output)")
            // Auth reloads its keys within 30 s; then both are published and the old token still works.
            try await waitUntil(timeout: .seconds(60)) { try await kids(auth).count == 2 }
            #expect(try await auth.request(.GET, "/user", bearer: oldToken).status == 200)
            let listed = try await admin(["keys", "list", "--schema", schema])
            #expect(listed.output.contains(before[0]) && listed.output.contains("retired") && listed.output.contains("current"), "\(listed.output)")

            // The old key leaked: revoke it. The current one cannot be revoked.
            let current = try #require(try await kids(auth).first { $0 != before[0] })
            #expect(try await admin(["keys", "revoke", "--schema", schema, "--kid", current]).status != 0)
            let revoked = try await admin(["keys", "revoke", "--schema", schema, "--kid", before[0]])
            #expect(revoked.status == 0, "\(revoked.output)")
            try await waitUntil(timeout: .seconds(60)) { try await kids(auth) == [current] }
            #expect(try await auth.request(.GET, "/user", bearer: oldToken).status == 401, "a token of the revoked key is refused")

            // An app's anon key leaked: rotate it. The old one is refused at once, the new one works.
            let oldAnon = try #require(auth.anonKeys[.mycirclee])
            let replaced = try await admin(["keys", "rotate", "--schema", schema, "--app", "mycirclee", "--role", "anon"])
            #expect(replaced.status == 0, "\(replaced.output)")
            let newAnon = try #require(replaced.output.split(separator: "\n").last.map(String.init))
            #expect(newAnon != oldAnon)
            try await waitUntil(timeout: .seconds(60)) {
                try await auth.request(.POST, "/token?grant_type=password", app: .mycirclee, apiKey: oldAnon, json: ["email": email, "password": "Correct-Horse-9"]).status == 401
            }
            let withNew = try await auth.request(.POST, "/token?grant_type=password", app: .mycirclee, apiKey: newAnon, json: ["email": email, "password": "Correct-Horse-9"])
            #expect(withNew.status == 200, "\(withNew.json)")
        }
    }
}
