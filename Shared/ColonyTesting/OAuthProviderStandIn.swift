import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import Synchronization

/// A stand-in OAuth 2.0 / OpenID Connect provider for tests, never the real Google, Apple or
/// GitHub: scripts/lib/oauth-provider.py (Python stdlib + `cryptography`) run on a free port, one
/// process serving three flavours by path (`/oidc` Google-like and generic OIDC, `/apple` Sign in
/// with Apple on the web with its form_post, `/github`). It approves every authorization at once
/// with the identity a test queued (`next`), checks what the real providers check at the token
/// endpoint (client authentication, redirect_uri, single-use codes, PKCE), and records every
/// request (`log`). The script's docstring is the protocol's reference.
public final class OAuthProviderStandIn: Sendable {
    public enum Flavour: String, Sendable, CaseIterable { case oidc, apple, github }

    /// One request the provider saw, as its log keeps it (`client_secret` redacted).
    public struct LoggedRequest: Decodable, Sendable {
        public var method: String
        public var path: String
        public var query: [String: String]
        public var form: [String: String]
        /// `client_secret_basic` or `client_secret_post` at a token endpoint, else nil.
        public var clientAuth: String?
        /// The scheme of the Authorization header (`Basic`, `Bearer`), if any.
        public var authorization: String?
        public var accept: String?
        public var status: Int
        /// What it answered in a word: `code`, `tokens`, `userinfo`, or the error code.
        public var answer: String?

        /// A parameter of the query or the form.
        public subscript(_ name: String) -> String? { form[name] ?? query[name] }

        enum CodingKeys: String, CodingKey {
            case method, path, query, form, clientAuth = "client_auth", authorization, accept, status, answer
        }
    }

    public let port: Int
    /// `http://127.0.0.1:<port>`; the flavours' issuers are `<base>/oidc`, `<base>/apple`, and GitHub's URLs start at `<base>/github`.
    public let base: String
    private let process: Mutex<Process?>

    private init(port: Int, process: sending Process) {
        self.port = port
        base = "http://127.0.0.1:\(port)"
        self.process = Mutex(process)
    }

    /// Starts the provider on a free port with `clients` (`(id, secret)`) registered; its codes
    /// expire `codeLifetimeSeconds` after the authorization (60, as short as real providers keep them).
    public static func start(clients: [(id: String, secret: String)] = [], codeLifetimeSeconds: Int = 60) async throws -> OAuthProviderStandIn {
        let port = try freePort()
        var arguments = ["python3", PythonClient.path("scripts/lib/oauth-provider.py"), "serve", "--port", "\(port)", "--code-lifetime", "\(codeLifetimeSeconds)"]
        for client in clients { arguments += ["--client", "\(client.id):\(client.secret)"] }
        let process = try await ChildProcess.startServer("/usr/bin/env", arguments, port: port, hint: "the OAuth stand-in provider (is python3's cryptography installed? scripts/setup)")
        return OAuthProviderStandIn(port: port, process: process)
    }

    /// The issuer (OIDC flavours) or URL prefix (GitHub) of a flavour.
    public func issuer(_ flavour: Flavour) -> String { "\(base)/\(flavour.rawValue)" }

    /// GitHub's URLs as auth's settings name them.
    public var githubAuthorizeURL: String { "\(base)/github/login/oauth/authorize" }
    public var githubTokenURL: String { "\(base)/github/login/oauth/access_token" }
    public var githubAPIURL: String { "\(base)/github/api" }

    /// Registers a client; with `redirectURIs` the authorization endpoint accepts only those.
    public func registerClient(id: String, secret: String, redirectURIs: [String] = []) async throws {
        _ = try await control("POST", "/clients", ["client_id": id, "client_secret": secret, "redirect_uris": redirectURIs])
    }

    /// Registers an Apple client whose secret is an ES256 JWT by the team's key (`publicKeyPEM`), as Apple checks it.
    public func registerAppleClient(id: String, teamID: String, keyID: String, publicKeyPEM: String) async throws {
        _ = try await control("POST", "/clients", ["client_id": id, "team_id": teamID, "key_id": keyID, "public_key_pem": publicKeyPEM])
    }

    /// Queues the identity the next authorization of `flavour` approves (of `clientID` only, when
    /// given); returns its `sub` (a fresh one when nil). `extra` adds fields of the script's
    /// `/_control/next` (`picture`, `is_private_email`, `emails`, `public_email`, `claims`, …).
    @discardableResult
    public func next(flavour: Flavour, sub: String? = nil, email: String? = nil, emailVerified: Bool = true, name: String? = nil,
                     clientID: String? = nil, extra: [String: any Sendable] = [:]) async throws -> String {
        var body: [String: Any] = ["flavour": flavour.rawValue, "email_verified": emailVerified]
        if let sub { body["sub"] = sub }
        if let email { body["email"] = email }
        if let name { body["name"] = name }
        if let clientID { body["client_id"] = clientID }
        body.merge(extra.mapValues { $0 as Any }) { _, new in new }
        let answer = try await control("POST", "/next", body)
        guard let sub = answer["sub"] as? String else { throw TestSetupError("the OAuth stand-in did not answer a sub: \(answer)") }
        return sub
    }

    /// Makes the next authorization of `flavour` refused by the user (`access_denied`; Apple's
    /// `user_cancelled_authorize`), or with `error`.
    public func deny(flavour: Flavour, error: String? = nil) async throws {
        var body: [String: Any] = ["flavour": flavour.rawValue, "deny": true]
        if let error { body["error"] = error }
        _ = try await control("POST", "/next", body)
    }

    /// Drops identities queued and not yet used.
    public func clearQueued() async throws {
        _ = try await control("DELETE", "/next", nil)
    }

    /// An id_token signed by the flavour's published key, as the provider gives a native app
    /// (`grant_type=id_token` tests). `nonce` goes in as given (Apple's native flow carries the
    /// SHA-256 hex of the app's nonce: hash it yourself). `expiresIn` may be negative (expired);
    /// `claims` overrides any claim; `untrustedKey` signs with a key not in the JWKS (same kid).
    public func idToken(flavour: Flavour = .oidc, audience: String, sub: String? = nil, email: String? = nil, emailVerified: Bool = true,
                        nonce: String? = nil, expiresIn: Int = 3600, claims: [String: any Sendable] = [:], untrustedKey: Bool = false) async throws -> String {
        var body: [String: Any] = ["flavour": flavour.rawValue, "aud": audience, "email_verified": emailVerified, "exp_in": expiresIn]
        if let sub { body["sub"] = sub }
        if let email { body["email"] = email }
        if let nonce { body["nonce"] = nonce }
        if !claims.isEmpty { body["claims"] = claims }
        if untrustedKey { body["untrusted_key"] = true }
        let answer = try await control("POST", "/id_token", body)
        guard let token = answer["id_token"] as? String else { throw TestSetupError("the OAuth stand-in did not answer an id_token: \(answer)") }
        return token
    }

    /// The requests it saw (control calls left out), oldest first; only paths starting with `pathPrefix` when given.
    public func log(pathPrefix: String = "") async throws -> [LoggedRequest] {
        var request = HTTPClientRequest(url: "\(base)/_control/log?path=\(pathPrefix.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")")
        request.method = .GET
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(10))
        let body = try await response.body.collect(upTo: 16 << 20)
        struct Log: Decodable { var requests: [LoggedRequest] }
        return try JSONDecoder().decode(Log.self, from: Data(body.readableBytesView)).requests
    }

    /// Forgets the requests logged so far.
    public func clearLog() async throws {
        _ = try await control("DELETE", "/log", nil)
    }

    public func stop() {
        guard let process = process.withLock({ value -> Process? in
            defer { value = nil }
            return value
        }) else { return }
        killAndReap(process)
    }

    deinit { stop() }

    private func control(_ method: String, _ path: String, _ body: [String: Any]?) async throws -> [String: Any] {
        var request = HTTPClientRequest(url: "\(base)/_control\(path)")
        request.method = .init(rawValue: method)
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(data: try JSONSerialization.data(withJSONObject: body)))
        }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(10))
        let data = Data(try await response.body.collect(upTo: 1 << 20).readableBytesView)
        guard response.status == .ok, let answer = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw TestSetupError("OAuth stand-in \(method) /_control\(path) answered \(response.status.code): \(String(decoding: data, as: UTF8.self))")
        }
        return answer
    }
}
