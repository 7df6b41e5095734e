import ColonyTesting
import Foundation
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

/// The platform's HTTP layer without a database: token verification, JSON errors, limits,
/// health and metrics.
@Suite("HTTP scaffolding and token middleware")
struct HTTPScaffoldingTests {
    let tokens = TestTokens()
    let metrics = HTTPMetrics()

    struct Echo: Codable, ResponseEncodable {
        var displayName: String
        var targetPerDay: Int
    }

    func makeApp(ready: Bool = true) -> some ApplicationProtocol {
        let router = ColonyRouter.make(
            metrics: metrics,
            maxBodyBytes: 1024,
            readiness: ReadinessChecks([(name: "database", check: { ready })])
        )
        let verifier = TokenVerifier(configuration: tokens.verifierConfiguration(audience: .habithive), logger: TestEnvironment.logger)
        let api = router.group("habits/v1").add(middleware: TokenMiddleware(verifier: verifier))
        api.get("me") { _, context -> [String: String] in
            let user = try context.requireUser()
            return ["user_id": user.id.uuidString.lowercased(), "role": user.role, "app": user.app.rawValue]
        }
        api.post("echo") { request, context -> Echo in
            let body = try await request.decode(as: Echo.self, context: context)
            var problems = ValidationErrors()
            problems.check(!body.displayName.isEmpty, "display_name must not be empty")
            problems.check(body.targetPerDay > 0, "target_per_day must be greater than 0")
            try problems.throwIfAny()
            return body
        }
        api.get("conflict") { _, _ -> String in throw APIError.conflict("already a member", code: "already_member") }
        api.get("crash") { _, _ -> String in throw CancellationError() }
        api.get("items/special") { _, _ -> String in "special" }
        api.get("items/{id}") { _, _ -> String in "item" }
        api.delete("items/{id}") { _, _ -> String in "deleted" }
        api.get("files/**") { _, _ -> String in "file" }
        return Application(router: router)
    }

    func bearer(_ token: String) -> HTTPFields { [.authorization: "Bearer \(token)"] }

    func errorBody(_ response: TestResponse) throws -> [String: String] {
        try JSONDecoder().decode([String: String].self, from: Data(buffer: response.body))
    }

    @Test("a valid token reaches the handler with the user id and role")
    func validToken() async throws {
        let user = UUID()
        let token = try await tokens.token(user: user, app: .habithive)
        try await makeApp().test(.router) { client in
            let response = try await client.execute(uri: "/habits/v1/me", method: .get, headers: bearer(token))
            #expect(response.status == .ok)
            let body = try JSONDecoder().decode([String: String].self, from: Data(buffer: response.body))
            #expect(body == ["user_id": user.uuidString.lowercased(), "role": "authenticated", "app": "habithive"])
            #expect(response.headers[.requestID] != nil)
        }
    }

    @Test("bad tokens are 401 with a JSON error")
    func rejectedTokens() async throws {
        let otherKey = TestTokens()
        let cases: [(String, String)] = [
            ("expired", try await tokens.token(app: .habithive, expiresIn: -60)),
            ("wrongly signed", try await otherKey.token(app: .habithive)),
            ("wrong audience", try await tokens.token(app: .unify)),
            ("unknown audience", try await tokens.token(app: .habithive, audience: "authenticated")),
            ("wrong issuer", try await tokens.token(app: .habithive, issuer: "someone-else")),
            ("malformed", "not.a.jwt"),
            ("garbage", "abc"),
            ("tampered", try await tokens.token(app: .habithive).replacingOccurrences(of: ".", with: ".x", options: [], range: nil)),
        ]
        try await makeApp().test(.router) { client in
            for (name, token) in cases {
                let response = try await client.execute(uri: "/habits/v1/me", method: .get, headers: bearer(token))
                #expect(response.status == .unauthorized, "\(name)")
                let body = try errorBody(response)
                #expect(body["code"] != nil && body["message"] != nil, "\(name)")
            }
            let expired = try await client.execute(uri: "/habits/v1/me", method: .get, headers: bearer(cases[0].1))
            #expect(try errorBody(expired)["code"] == "token_expired")
            let missing = try await client.execute(uri: "/habits/v1/me", method: .get)
            #expect(missing.status == .unauthorized)
            #expect(try errorBody(missing)["code"] == "missing_token")
            let basic = try await client.execute(uri: "/habits/v1/me", method: .get, headers: [.authorization: "Basic Zm9vOmJhcg=="])
            #expect(basic.status == .unauthorized)
        }
    }

    @Test("errors are JSON {code, message} with the right status")
    func errorShapes() async throws {
        let token = try await tokens.token(app: .habithive)
        try await makeApp().test(.router) { client in
            let conflict = try await client.execute(uri: "/habits/v1/conflict", method: .get, headers: bearer(token))
            #expect(conflict.status == .conflict)
            #expect(try errorBody(conflict) == ["code": "already_member", "message": "already a member"])

            let unknownRoute = try await client.execute(uri: "/habits/v1/nothing-here", method: .get, headers: bearer(token))
            #expect(unknownRoute.status == .notFound)
            #expect(try errorBody(unknownRoute)["code"] == "route_not_found")

            let malformed = try await client.execute(uri: "/habits/v1/echo", method: .post, headers: bearer(token), body: ByteBuffer(string: "{not json"))
            #expect(malformed.status == .badRequest)
            #expect(try errorBody(malformed)["code"] == "malformed_json")

            let missingField = try await client.execute(uri: "/habits/v1/echo", method: .post, headers: bearer(token), body: ByteBuffer(string: #"{"display_name":"Ada"}"#))
            #expect(missingField.status == .unprocessableContent)
            #expect(try errorBody(missingField)["message"] == "target_per_day is required")

            let invalid = try await client.execute(uri: "/habits/v1/echo", method: .post, headers: bearer(token), body: ByteBuffer(string: #"{"display_name":"","target_per_day":0}"#))
            #expect(invalid.status == .unprocessableContent)
            #expect(try errorBody(invalid)["message"] == "display_name must not be empty; target_per_day must be greater than 0")

            let ok = try await client.execute(uri: "/habits/v1/echo", method: .post, headers: bearer(token), body: ByteBuffer(string: #"{"display_name":"Ada","target_per_day":3}"#))
            #expect(ok.status == .ok)
            #expect(String(buffer: ok.body) == #"{"display_name":"Ada","target_per_day":3}"#)

            let tooLarge = try await client.execute(uri: "/habits/v1/echo", method: .post, headers: bearer(token), body: ByteBuffer(string: String(repeating: "x", count: 2048)))
            #expect(tooLarge.status == .contentTooLarge)
            #expect(try errorBody(tooLarge)["code"] == "payload_too_large")

            let crash = try await client.execute(uri: "/habits/v1/crash", method: .get, headers: bearer(token))
            #expect(crash.status == .internalServerError)
            #expect(try errorBody(crash) == ["code": "internal_error", "message": "something went wrong on our side"])
        }
    }

    @Test("health is live, ready reflects its checks, metrics count requests per route")
    func healthAndMetrics() async throws {
        try await makeApp(ready: false).test(.router) { client in
            let health = try await client.execute(uri: "/health", method: .get)
            #expect(health.status == .ok)
            let ready = try await client.execute(uri: "/ready", method: .get)
            #expect(ready.status == .serviceUnavailable)
            #expect(String(buffer: ready.body).contains(#""database":"unavailable""#))
            _ = try await client.execute(uri: "/habits/v1/me", method: .get)
            let metrics = try await client.execute(uri: "/metrics", method: .get)
            let text = String(buffer: metrics.body)
            #expect(text.contains(#"http_requests_total{method="GET",route="/habits/v1/me",status="401"} 1"#))
            #expect(text.contains("http_request_duration_seconds_bucket"))
        }
        try await makeApp(ready: true).test(.router) { client in
            let ready = try await client.execute(uri: "/ready", method: .get)
            #expect(ready.status == .ok)
        }
    }

    @Test("the caller's request id is echoed; a traceparent sets the trace id")
    func requestIDs() async throws {
        try await makeApp().test(.router) { client in
            let response = try await client.execute(uri: "/health", method: .get, headers: [.requestID: "abc-123"])
            #expect(response.headers[.requestID] == "abc-123")
            let unsafe = try await client.execute(uri: "/health", method: .get, headers: [.requestID: "bad id\nwith newline"])
            #expect(unsafe.headers[.requestID] != "bad id\nwith newline")
        }
    }

    @Test("NUL and unpaired surrogates in a JSON body or the query are 422, whatever the field; escaped text and real pairs pass")
    func unstorableText() async throws {
        let token = try await tokens.token(app: .habithive)
        try await makeApp().test(.router) { client in
            func echo(_ json: String) async throws -> TestResponse {
                try await client.execute(uri: "/habits/v1/echo", method: .post, headers: bearer(token), body: ByteBuffer(string: json))
            }
            for json in [#"{"display_name":"A\u0000da","target_per_day":1}"#, #"{"display_name":"\ud800","target_per_day":1}"#,
                         #"{"display_name":"\udc00x","target_per_day":1}"#, #"{"display_name":"\ud83d\u0041","target_per_day":1}"#,
                         #"{"display_name":"x\ud83d","target_per_day":1}"#, #"{"display_name":"Ada","target_per_day":1,"\u0000":1}"#] {
                let response = try await echo(json)
                #expect(response.status == .unprocessableContent, "\(json)")
                #expect(try errorBody(response)["code"] == "validation_failed", "\(json)")
            }
            // A pair is one character; an escaped backslash before u0000 is plain text.
            let pair = try await echo(#"{"display_name":"\ud83d\ude00","target_per_day":1}"#)
            #expect(pair.status == .ok)
            #expect(String(buffer: pair.body) == #"{"display_name":"😀","target_per_day":1}"#)
            let escaped = try await echo(#"{"display_name":"\\u0000","target_per_day":1}"#)
            #expect(escaped.status == .ok)

            let query = try await client.execute(uri: "/habits/v1/me?before=a%00b", method: .get, headers: bearer(token))
            #expect(query.status == .unprocessableContent)
            #expect(try errorBody(query)["code"] == "validation_failed")
            let path = try await client.execute(uri: "/habits/v1/items/a%00b", method: .get, headers: bearer(token))
            #expect(path.status == .unprocessableContent)
        }
    }

    @Test("a method a known path does not serve is 405 with Allow, matched as the router matches; unknown paths stay 404")
    func methodNotAllowed() async throws {
        try await makeApp().test(.router) { client in
            let cases: [(String, HTTPRequest.Method, String)] = [
                ("/habits/v1/me", .post, "GET"),
                ("/habits/v1/echo", .get, "POST"),
                ("/health", .delete, "GET"),
                ("/habits/v1/items/42", .put, "DELETE, GET"),
                // The literal route wins over the capture, as in the router: only GET there.
                ("/habits/v1/items/special", .delete, "GET"),
            ]
            for (uri, method, allow) in cases {
                let response = try await client.execute(uri: uri, method: method)
                #expect(response.status == .methodNotAllowed, "\(method) \(uri)")
                #expect(response.headers[.allow] == allow, "\(method) \(uri)")
                #expect(try errorBody(response)["code"] == "method_not_allowed")
            }
            let unknown = try await client.execute(uri: "/habits/v1/items/42/more", method: .get)
            #expect(unknown.status == .notFound)
            #expect(try errorBody(unknown)["code"] == "route_not_found")
            // `**` takes one segment or more, as the router's recursive wildcard does: with none it is
            // no route (a 405 there would refuse the very method it names).
            let wildcard = try await client.execute(uri: "/habits/v1/files/a/b", method: .post)
            #expect(wildcard.status == .methodNotAllowed)
            #expect(wildcard.headers[.allow] == "GET")
            let bare = try await client.execute(uri: "/habits/v1/files", method: .get)
            #expect(bare.status == .notFound)
            #expect(try errorBody(bare)["code"] == "route_not_found")
        }
    }
}
