import AsyncHTTPClient
import AuthService
import ColonyModels
import ColonyPlatform
import ColonyTesting
import Foundation
import NIOCore
import NIOHTTP1
import Testing

/// Input that used to reach a trap in auth (issue 33): each is sent as a client or an operator
/// would, and refused with a 4xx JSON error (or a refused setting) while the service keeps serving.
@Suite("Auth: no trap on extreme input", .serialized)
struct AuthTrapTests {
    /// A raw body, for JSON the harness's `JSONSerialization` would not write.
    func raw(_ auth: RunningAuth, _ method: HTTPMethod, _ path: String, key: String, body: String) async throws -> (status: Int, json: [String: Any]) {
        var request = HTTPClientRequest(url: "\(auth.authURL)\(path)")
        request.method = method
        request.headers.add(name: "apikey", value: key)
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(string: body))
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(60))
        let bytes = try await response.body.collect(upTo: 1 << 20)
        return (Int(response.status.code), (try? JSONSerialization.jsonObject(with: Data(buffer: bytes))) as? [String: Any] ?? [:])
    }

    @Test("GET /admin/users?page=<Int.max> answers an empty page (its offset overflowed Int before)")
    func adminPageOverflow() async throws {
        try await withRunningAuth { auth in
            let service = try #require(auth.serviceKeys[.unify])
            for query in ["page=9223372036854775807&per_page=1000", "page=9223372036854775807", "page=-9223372036854775808&per_page=1000", "page=99999999999999999999"] {
                let list = try await auth.request(.GET, "/admin/users?\(query)", app: .unify, bearer: service, apiKey: service)
                #expect(list.status == 200, "\(query): \(list.json)")
                if query.hasPrefix("page=9223372036854775807") { #expect((list.json["users"] as? [Any])?.isEmpty == true) }
            }
        }
    }

    @Test("ban_duration past Go's 292 years (1e300h, infh, 2562048h) is 400; 2562047h and 24h still ban")
    func banDurationBounds() async throws {
        try await withRunningAuth { auth in
            let service = try #require(auth.serviceKeys[.unify])
            let created = try await auth.request(.POST, "/admin/users", app: .unify, bearer: service, apiKey: service,
                                                 json: ["email": "\(uniqueName("ban"))@example.com", "password": "correct-horse-1", "email_confirm": true])
            let id = try #require(created.json["id"] as? String)
            for duration in ["1e300h", "infh", "infinityh", "nanh", "2562048h", "1.8e308s", "0x1p1000m"] {
                let response = try await auth.request(.PUT, "/admin/users/\(id)", app: .unify, bearer: service, apiKey: service, json: ["ban_duration": duration])
                #expect(response.status == 400, "\(duration): \(response.status) \(response.json)")
                #expect(response.json["code"] != nil && (response.json["msg"] ?? response.json["message"]) != nil, "\(duration): \(response.json)")
            }
            for duration in ["2562047h", "24h"] {
                let response = try await auth.request(.PUT, "/admin/users/\(id)", app: .unify, bearer: service, apiKey: service, json: ["ban_duration": duration])
                #expect(response.status == 200 && response.json["banned_until"] is String, "\(duration): \(response.json)")
            }
            #expect(try await auth.request(.GET, "/admin/users/\(id)", app: .unify, bearer: service, apiKey: service).status == 200)
        }
    }

    @Test("a sign-up whose data is nested 100,000 levels deep is a 4xx JSON error, and the service goes on")
    func deepSignUpBody() async throws {
        try await withRunningAuth { auth in
            let key = try #require(auth.anonKeys[.mycirclee])
            for depth in [100_000, 600] {
                let nested = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
                let body = #"{"email":"\#(uniqueName("deep"))@example.com","password":"correct-horse-1","data":{"x":\#(nested)}}"#
                let response = try await raw(auth, .POST, "/signup", key: key, body: body)
                #expect((400..<500).contains(response.status), "\(depth): \(response.status)")
                #expect(response.json["code"] != nil, "\(depth): \(response.json)")
            }
            let fine = try await auth.request(.POST, "/signup", json: ["email": "\(uniqueName("after"))@example.com", "password": "correct-horse-1"])
            #expect(fine.status == 200)
        }
    }

    /// The settings `colony-auth serve` reads, valid but for `changes`.
    func environment(_ changes: [String: String]) -> EnvironmentReader {
        let pepper = Data((0..<32).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
        var values = ["COLONY_AUTH_PHONE_PEPPER": pepper, "COLONY_AUTH_MAIL_DIR": FileManager.default.temporaryDirectory.path]
        values.merge(changes) { _, new in new }
        return EnvironmentReader(values)
    }

    @Test("a public URL links cannot be built from, or a rate rule past what the counters hold, is refused at start")
    func settingsBounds() throws {
        #expect(try AuthSettings.load(environment: environment([:]), port: 9999, issuer: "colony-auth").publicURL == "http://127.0.0.1:9999/auth/v1")
        #expect(try AuthSettings.load(environment: environment(["COLONY_AUTH_RATE_SIGNIN_IP": "30/300"]), port: 9999, issuer: "colony-auth").rateLimits.signInPerIP == RateLimitRule(30, per: 300))
        for url in ["http://exa mple.com/auth/v1", "not a url", "/auth/v1", "http://[::1/x"] {  // empty is unset: the default
            #expect(throws: ConfigurationError.self, "\(url)") { try AuthSettings.load(environment: environment(["COLONY_AUTH_PUBLIC_URL": url]), port: 9999, issuer: "colony-auth") }
        }
        for rule in ["1/9223372036854775807", "9223372036854775807/60", "3000000000/60", "1/31622401"] {
            #expect(throws: ConfigurationError.self, "\(rule)") { try AuthSettings.load(environment: environment(["COLONY_AUTH_RATE_SIGNIN_IP": rule]), port: 9999, issuer: "colony-auth") }
        }
        // An apps file whose lifetimes would overflow a date or a Postgres time at the first sign-in.
        let file = FileManager.default.temporaryDirectory.appendingPathComponent(uniqueName("apps") + ".json")
        defer { try? FileManager.default.removeItem(at: file) }
        for field in ["session_timebox_seconds", "access_token_lifetime_seconds", "session_inactivity_timeout_seconds"] {
            try Data(#"{"unify":{"\#(field)":1000000000000000}}"#.utf8).write(to: file)
            #expect(throws: ConfigurationError.self, "\(field)") {
                try AuthSettings.load(environment: environment(["COLONY_APPS_FILE": file.path]), port: 9999, issuer: "colony-auth")
            }
        }
        try Data(#"{"unify":{"session_timebox_seconds":86400}}"#.utf8).write(to: file)
        #expect(try AuthSettings.load(environment: environment(["COLONY_APPS_FILE": file.path]), port: 9999, issuer: "colony-auth").apps[.unify]?.sessionTimeboxSeconds == 86_400)
    }
}
