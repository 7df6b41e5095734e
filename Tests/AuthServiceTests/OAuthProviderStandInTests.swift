import AsyncHTTPClient
import ColonyModels
import ColonyTesting
import Crypto
import Foundation
import JWTKit
import NIOCore
import NIOHTTP1
import Testing

/// The stand-in OAuth/OIDC provider the OAuth tests run against, checked by hand the way a relying
/// party talks to it: if it accepted what a real provider refuses, the OAuth tests would prove nothing.
@Suite("OAuth provider stand-in")
struct OAuthProviderStandInTests {
    static let redirect = "http://127.0.0.1:9/auth/v1/callback"

    /// A client that does not follow redirects: the test reads each Location itself.
    static func withClient<Result: Sendable>(_ body: (HTTPClient) async throws -> Result) async throws -> Result {
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(redirectConfiguration: .disallow))
        do {
            let result = try await body(client)
            try await client.shutdown()
            return result
        } catch {
            try? await client.shutdown()
            throw error
        }
    }

    struct Answer {
        var status: Int
        var headers: HTTPHeaders
        var body: Data
        var json: [String: Any] { (try? JSONSerialization.jsonObject(with: body) as? [String: Any]) ?? [:] }
        var text: String { String(decoding: body, as: UTF8.self) }
        /// The query (or fragment) parameters of the Location header.
        var redirectParameters: [String: String] {
            guard let location = headers.first(name: "location"), let components = URLComponents(string: location) else { return [:] }
            var items = components.queryItems ?? []
            if let fragment = components.fragment { items += URLComponents(string: "?" + fragment)?.queryItems ?? [] }
            return Dictionary(items.map { ($0.name, $0.value ?? "") }, uniquingKeysWith: { first, _ in first })
        }
    }

    static func send(_ client: HTTPClient, _ url: String, headers: [(String, String)] = []) async throws -> Answer {
        try await send(client, .GET, url, headers: headers)
    }

    static func send(_ client: HTTPClient, _ method: HTTPMethod, _ url: String, form: [String: String]? = nil, headers: [(String, String)] = []) async throws -> Answer {
        var request = HTTPClientRequest(url: url)
        request.method = method
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let form {
            request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
            request.body = .bytes(ByteBuffer(string: formEncode(form)))
        }
        let response = try await client.execute(request, timeout: .seconds(10))
        let body = try await response.body.collect(upTo: 1 << 20)
        return Answer(status: Int(response.status.code), headers: response.headers, body: Data(body.readableBytesView))
    }

    static func formEncode(_ values: [String: String]) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return values.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")" }.joined(separator: "&")
    }

    static func query(_ values: [String: String]) -> String { formEncode(values) }

    static func basic(_ id: String, _ secret: String) -> (String, String) {
        ("Authorization", "Basic " + Data("\(id):\(secret)".utf8).base64EncodedString())
    }

    static func pkce() -> (verifier: String, challenge: String) {
        let verifier = Base64URL.encode(Data((0..<32).map { _ in UInt8.random(in: 0...255) }))
        return (verifier, Base64URL.encode(Data(SHA256.hash(data: Data(verifier.utf8)))))
    }

    struct IDClaims: JWTPayload {
        var iss: IssuerClaim
        var aud: AudienceClaim
        var sub: SubjectClaim
        var exp: ExpirationClaim
        var nonce: String?
        var email: String?
        var email_verified: Bool?
        var name: String?
        func verify(using algorithm: some JWTAlgorithm) async throws { try exp.verifyNotExpired() }
    }

    struct AppleClaims: JWTPayload {
        var iss: IssuerClaim
        var aud: AudienceClaim
        var sub: SubjectClaim
        var exp: ExpirationClaim
        var email: String?
        var email_verified: String
        var is_private_email: String
        func verify(using algorithm: some JWTAlgorithm) async throws { try exp.verifyNotExpired() }
    }

    /// The flavour's published keys, fetched as a relying party fetches them (from the discovery document).
    static func keys(_ client: HTTPClient, issuer: String) async throws -> JWTKeyCollection {
        let discovery = try await send(client, "\(issuer)/.well-known/openid-configuration").json
        let jwksURI = try #require(discovery["jwks_uri"] as? String)
        return try await JWTKeyCollection().add(jwksJSON: send(client, jwksURI).text)
    }

    @Test("authorization code + PKCE S256 by hand: discovery, a JWKS-verified id_token, userinfo; the code once only")
    func oidcCodeFlow() async throws {
        let provider = try await OAuthProviderStandIn.start(clients: [("web-client", "s3cret")])
        defer { provider.stop() }
        try await Self.withClient { client in
            let issuer = provider.issuer(.oidc)
            let discovery = try await Self.send(client, "\(issuer)/.well-known/openid-configuration").json
            #expect(discovery["issuer"] as? String == issuer)
            #expect(discovery["authorization_endpoint"] as? String == "\(issuer)/authorize")
            #expect(discovery["token_endpoint"] as? String == "\(issuer)/token")
            #expect(discovery["userinfo_endpoint"] as? String == "\(issuer)/userinfo")
            #expect(discovery["jwks_uri"] as? String == "\(issuer)/jwks")
            #expect((discovery["code_challenge_methods_supported"] as? [String])?.contains("S256") == true)
            #expect(Set(discovery["token_endpoint_auth_methods_supported"] as? [String] ?? []) == ["client_secret_post", "client_secret_basic"])
            #expect(discovery["id_token_signing_alg_values_supported"] as? [String] == ["RS256"])

            let sub = try await provider.next(flavour: .oidc, sub: "g-1001", email: "Ada@Example.test", name: "Ada Lovelace")
            #expect(sub == "g-1001")
            let (verifier, challenge) = Self.pkce()
            let authorize = try await Self.send(client, "\(issuer)/authorize?" + Self.query([
                "response_type": "code", "client_id": "web-client", "redirect_uri": Self.redirect, "scope": "openid email profile",
                "state": "state-1", "nonce": "nonce-1", "code_challenge": challenge, "code_challenge_method": "S256",
            ]))
            #expect(authorize.status == 302)
            #expect(authorize.headers.first(name: "location")?.hasPrefix(Self.redirect + "?") == true)
            let code = try #require(authorize.redirectParameters["code"])
            #expect(authorize.redirectParameters["state"] == "state-1")

            let exchange: [String: String] = ["grant_type": "authorization_code", "code": code, "redirect_uri": Self.redirect, "code_verifier": verifier]
            let tokens = try await Self.send(client, .POST, "\(issuer)/token", form: exchange, headers: [Self.basic("web-client", "s3cret")])
            #expect(tokens.status == 200, "\(tokens.text)")
            #expect(tokens.json["token_type"] as? String == "Bearer")
            #expect(tokens.headers.first(name: "cache-control") == "no-store")
            let accessToken = try #require(tokens.json["access_token"] as? String)
            let idToken = try #require(tokens.json["id_token"] as? String)

            let claims = try await Self.keys(client, issuer: issuer).verify(idToken, as: IDClaims.self)
            #expect(claims.iss.value == issuer)
            #expect(claims.aud.value == ["web-client"])
            #expect(claims.sub.value == "g-1001")
            #expect(claims.nonce == "nonce-1")
            #expect(claims.email == "Ada@Example.test")
            #expect(claims.email_verified == true)
            #expect(claims.name == "Ada Lovelace")

            let userinfo = try await Self.send(client, "\(issuer)/userinfo", headers: [("Authorization", "Bearer \(accessToken)")])
            #expect(userinfo.status == 200)
            #expect(userinfo.json["sub"] as? String == "g-1001")
            #expect(userinfo.json["email_verified"] as? Bool == true)
            #expect(try await Self.send(client, "\(issuer)/userinfo").status == 401)

            // The same code again: refused, and the tokens it gave are revoked (RFC 6749 4.1.2).
            let replay = try await Self.send(client, .POST, "\(issuer)/token", form: exchange, headers: [Self.basic("web-client", "s3cret")])
            #expect(replay.status == 400)
            #expect(replay.json["error"] as? String == "invalid_grant")
            #expect(try await Self.send(client, "\(issuer)/userinfo", headers: [("Authorization", "Bearer \(accessToken)")]).status == 401)

            let log = try await provider.log(pathPrefix: "/oidc/token")
            #expect(log.map(\.status) == [200, 400])
            #expect(log.first?.clientAuth == "client_secret_basic")
            #expect(log.first?["code_verifier"] == verifier)
            #expect(log.first?.form["client_secret"] == nil)
            #expect(try await provider.log(pathPrefix: "/oidc/authorize").first?["nonce"] == "nonce-1")
        }
    }

    @Test("the token endpoint refuses a wrong verifier, a missing one, a wrong redirect_uri, a wrong secret, two client authentications")
    func tokenEndpointRefusals() async throws {
        let provider = try await OAuthProviderStandIn.start(clients: [("web-client", "s3cret"), ("other", "x")])
        defer { provider.stop() }
        try await Self.withClient { client in
            let issuer = provider.issuer(.oidc)
            func code(challenge: String? = nil, method: String = "S256") async throws -> String {
                var parameters = ["response_type": "code", "client_id": "web-client", "redirect_uri": Self.redirect, "scope": "openid email", "state": "s"]
                if let challenge { parameters["code_challenge"] = challenge; parameters["code_challenge_method"] = method }
                let answer = try await Self.send(client, "\(issuer)/authorize?" + Self.query(parameters))
                return try #require(answer.redirectParameters["code"], "\(answer.status) \(answer.text)")
            }
            func exchange(_ form: [String: String], headers: [(String, String)] = [Self.basic("web-client", "s3cret")]) async throws -> Answer {
                try await Self.send(client, .POST, "\(issuer)/token", form: ["grant_type": "authorization_code", "redirect_uri": Self.redirect].merging(form) { $1 }, headers: headers)
            }
            let (verifier, challenge) = Self.pkce()

            let wrongVerifier = try await exchange(["code": code(challenge: challenge), "code_verifier": Self.pkce().verifier])
            #expect(wrongVerifier.status == 400)
            #expect(wrongVerifier.json["error"] as? String == "invalid_grant")
            let missingVerifier = try await exchange(["code": code(challenge: challenge)])
            #expect(missingVerifier.json["error"] as? String == "invalid_grant")
            let verifierWithoutChallenge = try await exchange(["code": code(), "code_verifier": verifier])
            #expect(verifierWithoutChallenge.json["error"] as? String == "invalid_grant")
            let plain = String(repeating: "p", count: 50)
            #expect(try await exchange(["code": code(challenge: plain, method: "plain"), "code_verifier": plain]).status == 200)

            let wrongRedirect = try await exchange(["code": code(), "redirect_uri": "http://127.0.0.1:9/elsewhere"])
            #expect(wrongRedirect.json["error"] as? String == "invalid_grant")
            let wrongSecret = try await exchange(["code": code()], headers: [Self.basic("web-client", "nope")])
            #expect(wrongSecret.status == 401)
            #expect(wrongSecret.json["error"] as? String == "invalid_client")
            let otherClient = try await exchange(["code": code()], headers: [Self.basic("other", "x")])
            #expect(otherClient.json["error"] as? String == "invalid_grant")
            let both = try await exchange(["code": code(), "client_id": "web-client", "client_secret": "s3cret"])
            #expect(both.json["error"] as? String == "invalid_request")
            let post = try await exchange(["code": code(), "client_id": "web-client", "client_secret": "s3cret"], headers: [])
            #expect(post.status == 200)
            #expect(try await exchange(["code": "no-such-code"]).json["error"] as? String == "invalid_grant")
            let grant = try await Self.send(client, .POST, "\(issuer)/token", form: ["grant_type": "password"], headers: [Self.basic("web-client", "s3cret")])
            #expect(grant.json["error"] as? String == "unsupported_grant_type")
            #expect(try await provider.log(pathPrefix: "/oidc/token").last?.clientAuth == "client_secret_basic")

            // Refused at the authorization endpoint: an unknown client (shown, never redirected), a denial (redirected).
            let unknown = try await Self.send(client, "\(issuer)/authorize?" + Self.query(["response_type": "code", "client_id": "nobody", "redirect_uri": Self.redirect, "scope": "openid"]))
            #expect(unknown.status == 400)
            #expect(unknown.headers.first(name: "location") == nil)
            try await provider.deny(flavour: .oidc)
            let denied = try await Self.send(client, "\(issuer)/authorize?" + Self.query(["response_type": "code", "client_id": "web-client", "redirect_uri": Self.redirect, "scope": "openid", "state": "st"]))
            #expect(denied.redirectParameters["error"] == "access_denied")
            #expect(denied.redirectParameters["state"] == "st")
        }
    }

    @Test("a code past its lifetime is refused")
    func expiredCode() async throws {
        let provider = try await OAuthProviderStandIn.start(clients: [("web-client", "s3cret")], codeLifetimeSeconds: 1)
        defer { provider.stop() }
        try await Self.withClient { client in
            let issuer = provider.issuer(.oidc)
            let authorize = try await Self.send(client, "\(issuer)/authorize?" + Self.query(["response_type": "code", "client_id": "web-client", "redirect_uri": Self.redirect, "scope": "openid"]))
            let code = try #require(authorize.redirectParameters["code"])
            try await Task.sleep(for: .milliseconds(1500))
            let late = try await Self.send(client, .POST, "\(issuer)/token", form: ["grant_type": "authorization_code", "code": code, "redirect_uri": Self.redirect], headers: [Self.basic("web-client", "s3cret")])
            #expect(late.status == 400)
            #expect(late.json["error_description"] as? String == "authorization code expired")
        }
    }

    @Test("GitHub: the code exchanged as JSON and as a form, the user and its emails")
    func github() async throws {
        let provider = try await OAuthProviderStandIn.start(clients: [("gh-client", "gh-secret")])
        defer { provider.stop() }
        try await Self.withClient { client in
            let emails: [[String: any Sendable]] = [
                ["email": "octo@example.test", "primary": true, "verified": true, "visibility": "public"],
                ["email": "unverified@example.test", "primary": false, "verified": false],
            ]
            let sub = try await provider.next(flavour: .github, sub: "583231", email: "octo@example.test", name: "The Octocat", extra: ["login": "octocat", "emails": emails])
            func authorize() async throws -> String {
                let answer = try await Self.send(client, provider.githubAuthorizeURL + "?" + Self.query(["client_id": "gh-client", "redirect_uri": Self.redirect, "scope": "read:user user:email", "state": "g"]))
                #expect(answer.redirectParameters["state"] == "g")
                return try #require(answer.redirectParameters["code"])
            }
            let json = try await Self.send(client, .POST, provider.githubTokenURL, form: ["client_id": "gh-client", "client_secret": "gh-secret", "code": authorize(), "redirect_uri": Self.redirect],
                                           headers: [("Accept", "application/json")])
            #expect(json.status == 200)
            let token = try #require(json.json["access_token"] as? String)
            #expect(json.json["token_type"] as? String == "bearer")
            let form = try await Self.send(client, .POST, provider.githubTokenURL, form: ["client_id": "gh-client", "client_secret": "gh-secret", "code": authorize()])
            #expect(form.headers.first(name: "content-type")?.hasPrefix("application/x-www-form-urlencoded") == true)
            #expect(form.text.contains("access_token=gho_"))
            // GitHub answers a bad code with 200 and an error field.
            let bad = try await Self.send(client, .POST, provider.githubTokenURL, form: ["client_id": "gh-client", "client_secret": "gh-secret", "code": "nope"], headers: [("Accept", "application/json")])
            #expect(bad.status == 200)
            #expect(bad.json["error"] as? String == "bad_verification_code")

            let headers = [("Authorization", "Bearer \(token)"), ("User-Agent", "colony-test"), ("Accept", "application/vnd.github+json")]
            let user = try await Self.send(client, provider.githubAPIURL + "/user", headers: headers)
            #expect(user.json["id"] as? Int == Int(sub))
            #expect(user.json["login"] as? String == "octocat")
            #expect(user.json["name"] as? String == "The Octocat")
            let list = try await Self.send(client, provider.githubAPIURL + "/user/emails", headers: headers)
            let addresses = try #require(try JSONSerialization.jsonObject(with: list.body) as? [[String: Any]])
            #expect(addresses.count == 2)
            #expect(addresses.first?["primary"] as? Bool == true)
            #expect(addresses.first?["verified"] as? Bool == true)
            #expect(addresses.last?["verified"] as? Bool == false)
            #expect(try await Self.send(client, provider.githubAPIURL + "/user", headers: [("User-Agent", "t"), ("Authorization", "Bearer nope")]).status == 401)
            #expect(try await Self.send(client, provider.githubAPIURL + "/user", headers: [("Authorization", "Bearer \(token)")]).status == 403)
        }
    }

    @Test("Apple: form_post with the user's name on the first authorization only; string booleans in the id_token")
    func apple() async throws {
        let provider = try await OAuthProviderStandIn.start(clients: [("com.socialspot.web", "apple-secret")])
        defer { provider.stop() }
        try await Self.withClient { client in
            let issuer = provider.issuer(.apple)
            let discovery = try await Self.send(client, "\(issuer)/.well-known/openid-configuration").json
            let authorizeURL = try #require(discovery["authorization_endpoint"] as? String)
            let tokenURL = try #require(discovery["token_endpoint"] as? String)
            let parameters = ["response_type": "code", "response_mode": "form_post", "client_id": "com.socialspot.web", "redirect_uri": Self.redirect, "scope": "name email", "state": "a1", "nonce": "n1"]
            func formFields(_ page: String) -> [String: String] {
                let pattern = #/<input type="hidden" name="([^"]+)" value="([^"]*)"/>/#
                return Dictionary(page.matches(of: pattern).map { (String($0.1), String($0.2).replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&amp;", with: "&")) }, uniquingKeysWith: { a, _ in a })
            }
            try await provider.next(flavour: .apple, sub: "001234.abcd", email: "x7@privaterelay.appleid.com", name: "Grace Hopper", extra: ["is_private_email": true])
            let first = try await Self.send(client, authorizeURL + "?" + Self.query(parameters))
            #expect(first.status == 200)
            #expect(first.text.contains(#"<form method="post" action="\#(Self.redirect)">"#))
            let fields = formFields(first.text)
            #expect(fields["state"] == "a1")
            let user = try #require(fields["user"].flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] })
            #expect((user["name"] as? [String: String])?["firstName"] == "Grace")
            #expect(user["email"] as? String == "x7@privaterelay.appleid.com")

            let tokens = try await Self.send(client, .POST, tokenURL, form: ["grant_type": "authorization_code", "code": try #require(fields["code"]), "redirect_uri": Self.redirect, "client_id": "com.socialspot.web", "client_secret": "apple-secret"])
            #expect(tokens.status == 200, "\(tokens.text)")
            let claims = try await Self.keys(client, issuer: issuer).verify(try #require(tokens.json["id_token"] as? String), as: AppleClaims.self)
            #expect(claims.sub.value == "001234.abcd")
            #expect(claims.email_verified == "true")
            #expect(claims.is_private_email == "true")

            try await provider.next(flavour: .apple, sub: "001234.abcd", email: "x7@privaterelay.appleid.com")
            #expect(formFields(try await Self.send(client, authorizeURL + "?" + Self.query(parameters)).text)["user"] == nil)
            // Apple asks for form_post when name or email is requested.
            let query = try await Self.send(client, authorizeURL + "?" + Self.query(parameters.merging(["response_mode": "query"]) { $1 }))
            #expect(query.redirectParameters["error"] == "invalid_request")
        }
    }

    @Test("a native id_token from the control endpoint verifies against the JWKS; one by an unknown key or expired does not")
    func nativeIDToken() async throws {
        let provider = try await OAuthProviderStandIn.start()
        defer { provider.stop() }
        try await Self.withClient { client in
            let keys = try await Self.keys(client, issuer: provider.issuer(.oidc))
            let token = try await provider.idToken(audience: "ios-client", sub: "g-7", email: "n@example.test", nonce: "abc")
            let claims = try await keys.verify(token, as: IDClaims.self)
            #expect(claims.aud.value == ["ios-client"])
            #expect(claims.nonce == "abc")
            await #expect(throws: (any Error).self) { try await keys.verify(provider.idToken(audience: "ios-client", untrustedKey: true), as: IDClaims.self) }
            await #expect(throws: (any Error).self) { try await keys.verify(provider.idToken(audience: "ios-client", expiresIn: -60), as: IDClaims.self) }
        }
    }

    @Test("garbage on the wire gets an answer or a closed connection, and the provider keeps serving")
    func garbage() async throws {
        let provider = try await OAuthProviderStandIn.start(clients: [("c", "s")])
        defer { provider.stop() }
        try await Self.withClient { client in
            for junk in ["GARBAGE\r\n\r\n", "POST /oidc/token HTTP/1.1\r\nContent-Length: -5\r\n\r\n", "POST /oidc/token HTTP/1.1\r\nContent-Length: 99999999\r\n\r\nx",
                         "GET /oidc/authorize?%ff%fe=\u{1} HTTP/1.1\r\n\r\n", "POST /_control/next HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: 3\r\n\r\n[1]"] {
                _ = try? await ChildProcess.run("/usr/bin/env", ["python3", "-c", "import socket,sys; s=socket.create_connection(('127.0.0.1', int(sys.argv[1])), timeout=5); s.sendall(sys.argv[2].encode()); s.shutdown(socket.SHUT_WR); s.recv(65536)", "\(provider.port)", junk])
            }
            let token = try await Self.send(client, .POST, "\(provider.issuer(.oidc))/token", form: ["grant_type": "authorization_code", "code": "x", "redirect_uri": Self.redirect], headers: [Self.basic("c", "s")])
            #expect(token.status == 400)
            #expect(token.json["error"] as? String == "invalid_grant")
        }
    }
}
