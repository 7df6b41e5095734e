@testable import AuthService
import AsyncHTTPClient
import ColonyModels
import ColonyPlatform
import ColonyTesting
import Crypto
import Foundation
import NIOCore
import NIOHTTP1
import Testing

/// A browser for the web flow: follows redirects one by one and submits Apple's form_post page,
/// until a redirect leaves for the app (a custom scheme, or any URL outside auth and the provider).
struct OAuthBrowser {
    let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(redirectConfiguration: .disallow))

    func shutdown() async { try? await client.shutdown() }

    /// Every stop on the way, the last one where the app was sent.
    func follow(_ start: String, until isApp: (String) -> Bool, method: HTTPMethod = .GET, headers: [(String, String)] = []) async throws -> [String] {
        var visited: [String] = []
        var url = start
        var form: [(String, String)]?
        for _ in 0..<10 {
            var request = HTTPClientRequest(url: url)
            if let fields = form {
                request.method = .POST
                request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
                request.body = .bytes(ByteBuffer(string: fields.map { "\($0.0)=\(Accounts.percentEncoded($0.1))" }.joined(separator: "&")))
            }
            for (name, value) in headers { request.headers.add(name: name, value: value) }
            let response = try await client.execute(request, timeout: .seconds(30))
            let body = String(buffer: try await response.body.collect(upTo: 1 << 20))
            visited.append(url)
            form = nil
            if response.status == .found || response.status == .seeOther {
                let location = try #require(response.headers.first(name: "Location"), "no Location from \(url)")
                if isApp(location) { return visited + [location] }
                url = location
            } else if response.status == .ok, let (action, fields) = Self.formPost(body) {
                url = action
                form = fields
            } else {
                Issue.record("the flow stopped at \(url): \(response.status) \(body)")
                return visited
            }
        }
        Issue.record("too many redirects from \(start)")
        return visited
    }

    /// The action and hidden fields of an auto-submitting form page (Apple's form_post).
    static func formPost(_ html: String) -> (String, [(String, String)])? {
        func unescape(_ text: String) -> String {
            text.replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&#x27;", with: "'").replacingOccurrences(of: "&lt;", with: "<")
                .replacingOccurrences(of: "&gt;", with: ">").replacingOccurrences(of: "&amp;", with: "&")
        }
        /// The value of `attribute="…"` after `marker`, and where it ends.
        func attribute(_ name: String, in text: Substring) -> (String, Substring)? {
            guard let start = text.range(of: "\(name)=\"") else { return nil }
            let rest = text[start.upperBound...]
            guard let end = rest.firstIndex(of: "\"") else { return nil }
            return (String(rest[..<end]), rest[rest.index(after: end)...])
        }
        guard let formStart = html.range(of: "<form method=\"post\""), let (action, _) = attribute("action", in: html[formStart.lowerBound...]) else { return nil }
        var fields: [(String, String)] = []
        var rest = html[formStart.lowerBound...]
        while let input = rest.range(of: "<input type=\"hidden\"") {
            rest = rest[input.upperBound...]
            guard let (name, afterName) = attribute("name", in: rest), let (value, afterValue) = attribute("value", in: afterName) else { break }
            fields.append((unescape(name), unescape(value)))
            rest = afterValue
        }
        return (unescape(String(action)), fields)
    }
}

/// The query and fragment items of a URL, decoded.
func urlItems(_ url: String) -> (query: [String: String], fragment: [String: String]) {
    func items(_ text: Substring?) -> [String: String] {
        guard let text else { return [:] }
        var result: [String: String] = [:]
        for pair in text.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            result[String(parts[0])] = parts.count > 1 ? String(parts[1]).removingPercentEncoding ?? "" : ""
        }
        return result
    }
    let (beforeFragment, fragment) = url.firstIndex(of: "#").map { (url[..<$0], Optional(url[url.index(after: $0)...])) } ?? (Substring(url), nil)
    let query = beforeFragment.firstIndex(of: "?").map { beforeFragment[beforeFragment.index(after: $0)...] }
    return (items(query), items(fragment))
}

@Suite("Auth OAuth web flow, id_token for Google, identities", .serialized)
struct AuthOAuthTests {
    static let secret = "stand-in-secret"
    static let appCallback = "socialspot://auth-callback"

    /// SocialSpot: Google, a generic OIDC issuer, Apple web, GitHub, manual linking on. Unify
    /// (confirms addresses): Google. MyCirclee: Apple web with a team key's ES256 client secret.
    static func configure(_ settings: inout AuthSettings, provider: OAuthProviderStandIn, appleKeyFile: String? = nil, manualLinking: Bool = true) {
        settings.apps[.socialspot]?.oauthProviders = [
            "google": OAuthProviderSettings(clientId: "ss-google", clientSecret: secret, nativeClientIds: ["ss-google-ios"], issuer: provider.issuer(.oidc)),
            "acme": OAuthProviderSettings(kind: "oidc", clientId: "ss-acme", clientSecret: secret, issuer: provider.issuer(.oidc), scopes: ["openid", "email", "profile"]),
            "apple": OAuthProviderSettings(clientId: "com.socialspot.web", clientSecret: secret, issuer: provider.issuer(.apple)),
            "github": OAuthProviderSettings(clientId: "ss-github", clientSecret: secret, authorizeUrl: provider.githubAuthorizeURL, tokenUrl: provider.githubTokenURL, apiUrl: provider.githubAPIURL),
        ]
        settings.apps[.socialspot]?.manualLinking = manualLinking
        settings.apps[.socialspot]?.anonymousSignIns = true
        settings.apps[.unify]?.oauthProviders = [
            "google": OAuthProviderSettings(clientId: "unify-google", clientSecret: secret, issuer: provider.issuer(.oidc)),
        ]
        if let appleKeyFile {
            settings.apps[.mycirclee]?.oauthProviders = [
                "apple": OAuthProviderSettings(clientId: "com.mycirclee.web", issuer: provider.issuer(.apple), teamId: "TEAM123456", keyId: "KEY1234567", privateKeyFile: appleKeyFile),
            ]
        }
    }

    static func withProvider(appleKey: P256.Signing.PrivateKey? = nil, manualLinking: Bool = true, _ body: @Sendable (RunningAuth, OAuthProviderStandIn, OAuthBrowser) async throws -> Void) async throws {
        let provider = try await OAuthProviderStandIn.start(clients: ["ss-google", "ss-google-ios", "ss-acme", "com.socialspot.web", "ss-github", "unify-google"].map { ($0, secret) })
        defer { provider.stop() }
        var keyFile: String?
        if let appleKey {
            let path = FileManager.default.temporaryDirectory.appendingPathComponent(uniqueName("apple-key") + ".p8").path
            try appleKey.pemRepresentation.write(toFile: path, atomically: true, encoding: .utf8)
            try await provider.registerAppleClient(id: "com.mycirclee.web", teamID: "TEAM123456", keyID: "KEY1234567", publicKeyPEM: appleKey.publicKey.pemRepresentation)
            keyFile = path
        }
        let appleKeyFile = keyFile
        defer { if let appleKeyFile { try? FileManager.default.removeItem(atPath: appleKeyFile) } }
        let browser = OAuthBrowser()
        do {
            try await withRunningAuth(configure: { configure(&$0, provider: provider, appleKeyFile: appleKeyFile, manualLinking: manualLinking) }) { auth in
                try await body(auth, provider, browser)
            }
        } catch {
            await browser.shutdown()
            throw error
        }
        await browser.shutdown()
    }

    static func pkcePair() -> (verifier: String, challenge: String) {
        let verifier = Base64URL.encode(Secrets.randomBytes(32))
        return (verifier, Base64URL.encode(SHA256.hash(data: Data(verifier.utf8))))
    }

    static func authorizeURL(_ auth: RunningAuth, app: App = .socialspot, provider: String, redirectTo: String? = appCallback, challenge: String? = nil) -> String {
        var url = "\(auth.authURL)/authorize?provider=\(provider)&apikey=\(auth.anonKeys[app]!)"
        if let redirectTo { url += "&redirect_to=\(Accounts.percentEncoded(redirectTo))" }
        if let challenge { url += "&code_challenge=\(challenge)&code_challenge_method=s256" }
        return url
    }

    static func isApp(_ location: String) -> Bool { !location.hasPrefix("http://127.0.0.1") }

    /// The PKCE web flow to its end: the session the app gets for its code.
    static func pkceSignIn(_ auth: RunningAuth, _ browser: OAuthBrowser, app: App = .socialspot, provider: String) async throws -> [String: Any] {
        let (verifier, challenge) = pkcePair()
        let stops = try await browser.follow(authorizeURL(auth, app: app, provider: provider, challenge: challenge), until: isApp)
        let landing = try #require(stops.last)
        #expect(landing.hasPrefix("\(app.rawValue)://auth-callback?code="), "\(provider): \(landing)")
        let code = try #require(urlItems(landing).query["code"], "\(provider): \(landing)")
        let exchanged = try await auth.request(.POST, "/token?grant_type=pkce", app: app, json: ["auth_code": code, "code_verifier": verifier])
        #expect(exchanged.status == 200, "\(provider): \(exchanged.json)")
        // A code works once.
        #expect(try await auth.request(.POST, "/token?grant_type=pkce", app: app, json: ["auth_code": code, "code_verifier": verifier]).status == 404)
        return exchanged.json
    }

    static func identities(_ user: [String: Any]) -> [[String: Any]] { user["identities"] as? [[String: Any]] ?? [] }

    // MARK: the web flow

    @Test("PKCE and implicit web flows for Google, a generic OIDC issuer, Apple (form_post) and GitHub")
    func webFlowsPerFlavour() async throws {
        try await Self.withProvider(appleKey: P256.Signing.PrivateKey()) { auth, provider, browser in
            let flavours: [(name: String, flavour: OAuthProviderStandIn.Flavour)] = [("google", .oidc), ("acme", .oidc), ("apple", .apple), ("github", .github)]
            for (name, flavour) in flavours {
                let email = "\(uniqueName(name))@example.com"
                let sub = try await provider.next(flavour: flavour, email: email, name: "Ada Lovelace")
                let session = try await Self.pkceSignIn(auth, browser, provider: name)
                let user = try #require(session["user"] as? [String: Any])
                #expect(user["email"] as? String == email, "\(name): \(user)")
                #expect(user["email_confirmed_at"] is String, "\(name)")
                let identity = try #require(Self.identities(user).first { $0["provider"] as? String == name }, "\(name): \(user)")
                #expect(identity["id"] as? String == sub)
                #expect(identity["email"] as? String == email)
                #expect((identity["identity_data"] as? [String: Any])?["email_verified"] as? Bool == true)
                for key in ["identity_id", "user_id", "created_at", "updated_at", "last_sign_in_at"] { #expect(identity[key] != nil, "\(name): \(key) missing") }
                #expect((user["user_metadata"] as? [String: Any])?["full_name"] as? String == "Ada Lovelace", "\(name): \(user)")
                let sessionToken = try #require(session["access_token"] as? String)
                let amr = try #require(try unverifiedClaims(sessionToken)["amr"] as? [[String: Any]])
                #expect(amr.first?["method"] as? String == "oauth")

                // The same identity again, implicit: the same account, tokens in the fragment.
                _ = try await provider.next(flavour: flavour, sub: sub, email: email, name: "Ada Lovelace")
                let stops = try await browser.follow(Self.authorizeURL(auth, provider: name), until: Self.isApp)
                let landing = try #require(stops.last)
                let fragment = urlItems(landing).fragment
                #expect(landing.hasPrefix("\(Self.appCallback)#"), "\(name): \(landing)")
                #expect(fragment["token_type"] == "bearer" && fragment["expires_in"] == "3600" && fragment["refresh_token"] != nil, "\(name): \(fragment)")
                let access = try #require(fragment["access_token"], "\(name): \(landing)")
                let me = try await auth.request(.GET, "/user", app: .socialspot, bearer: access)
                #expect(me.json["id"] as? String == user["id"] as? String, "\(name): implicit sign-in reached another account")
                #expect(Self.identities(me.json).count == 1)
            }
            // What the provider saw: auth's client secret in the body, PKCE toward Google-likes,
            // a nonce that the id_token had to echo, Apple's form_post.
            let log = try await provider.log()
            let oidcAuthorizations = log.filter { $0.path == "/oidc/authorize" }
            #expect(!oidcAuthorizations.isEmpty && oidcAuthorizations.allSatisfy { $0["nonce"] != nil && $0["code_challenge_method"] == "S256" && $0["redirect_uri"] == "\(auth.authURL)/callback" })
            #expect(log.filter { $0.path == "/oidc/token" }.allSatisfy { $0.clientAuth == "client_secret_post" && $0["code_verifier"] != nil && $0.status == 200 })
            #expect(log.contains { $0.path.hasPrefix("/apple/auth/authorize") && $0["response_mode"] == "form_post" })
            #expect(log.filter { $0.path.hasPrefix("/github/api") }.allSatisfy { $0.status == 200 })

            // Apple with a client secret auth signs with the team's key (MyCirclee).
            let appleEmail = "\(uniqueName("apple-key"))@privaterelay.appleid.com"
            _ = try await provider.next(flavour: .apple, email: appleEmail, name: "Grace Hopper")
            let session = try await Self.pkceSignIn(auth, browser, app: .mycirclee, provider: "apple")
            #expect((session["user"] as? [String: Any])?["email"] as? String == appleEmail)
            #expect(try await provider.log(pathPrefix: "/apple/auth/token").last?.status == 200)

            // GET /settings lists the app's providers.
            let settings = try await auth.request(.GET, "/settings", app: .socialspot)
            let external = try #require(settings.json["external"] as? [String: Any])
            for name in ["google", "acme", "apple", "github"] { #expect(external[name] as? Bool == true, "\(name) not listed: \(external)") }
        }
    }

    @Test("a foreign redirect_to goes to the site URL; a replayed or forged state is refused; the provider's refusal reaches the app")
    func redirectAndStateChecks() async throws {
        try await Self.withProvider { auth, provider, browser in
            // A redirect the app does not allow: the code goes to the site URL, never there.
            _ = try await provider.next(flavour: .oidc, email: "\(uniqueName("foreign"))@example.com")
            let foreign = try await browser.follow(Self.authorizeURL(auth, provider: "google", redirectTo: "https://evil.example.com/steal", challenge: Self.pkcePair().challenge),
                                                   until: { !$0.hasPrefix("http://127.0.0.1") })
            let landing = try #require(foreign.last)
            #expect(landing.hasPrefix("\(Self.appCallback)?code="), "\(landing)")
            #expect(!foreign.contains { $0.contains("evil.example.com") && !$0.contains("redirect_to=") }, "\(foreign)")

            // The callback URL replayed (the back button, or someone who read it): refused.
            _ = try await provider.next(flavour: .oidc, email: "\(uniqueName("replay"))@example.com")
            let stops = try await browser.follow(Self.authorizeURL(auth, provider: "google", challenge: Self.pkcePair().challenge), until: Self.isApp)
            let callback = try #require(stops.first { $0.hasPrefix("\(auth.authURL)/callback") }, "\(stops)")
            #expect(stops.last?.contains("code=") == true)
            let replay = try await browser.follow(callback, until: Self.isApp)
            let replayed = urlItems(try #require(replay.last))
            #expect(replayed.query["error_code"] == "flow_state_already_used" && replayed.query["code"] == nil, "\(replay)")
            #expect(replayed.fragment["error_code"] == "flow_state_already_used")

            // A state auth never signed.
            let forged = try await auth.request(.GET, "/callback?state=eyJhbGciOiJub25lIn0.e30.&code=x")
            #expect(forged.status == 400 && forged.json["code"] as? String == "bad_oauth_state", "\(forged.json)")
            let missing = try await auth.request(.GET, "/callback?code=x")
            #expect(missing.status == 400 && missing.json["code"] as? String == "bad_oauth_callback")

            // The user says no at the provider.
            try await provider.deny(flavour: .oidc)
            let denied = try await browser.follow(Self.authorizeURL(auth, provider: "google"), until: Self.isApp)
            let deniedItems = urlItems(try #require(denied.last))
            #expect(deniedItems.query["error"] == "access_denied" && deniedItems.query["error_description"] != nil, "\(denied)")

            // Unknown provider, no apikey, a half PKCE pair.
            #expect(try await auth.request(.GET, "/authorize?provider=myspace&apikey=\(auth.anonKeys[.socialspot]!)").json["code"] as? String == "validation_failed")
            let noKey = try await browser.client.execute(HTTPClientRequest(url: "\(auth.authURL)/authorize?provider=google"), timeout: .seconds(10))
            #expect(noKey.status == .unauthorized)
            #expect(try await auth.request(.GET, "/authorize?provider=google&code_challenge=abc&apikey=\(auth.anonKeys[.socialspot]!)").status == 400)
        }
    }

    // MARK: account takeover

    @Test("a provider's email never takes an account over; a verified one takes a squatted one back")
    func providerEmailAndExistingAccounts() async throws {
        try await Self.withProvider { auth, provider, browser in
            let password = "owner-pass-1"
            // 1. An owner's password account; a provider that did not verify the address claims it.
            let owner = "\(uniqueName("owner"))@example.com"
            let signUp = try await auth.request(.POST, "/signup", app: .socialspot, json: ["email": owner, "password": password])
            let ownerID = try #require((signUp.json["user"] as? [String: Any])?["id"] as? String, "\(signUp.json)")
            for (name, flavour) in [("acme", OAuthProviderStandIn.Flavour.oidc), ("github", .github)] {
                _ = try await provider.next(flavour: flavour, email: owner, emailVerified: false)
                let session = try await Self.pkceSignIn(auth, browser, provider: name)
                let user = try #require(session["user"] as? [String: Any])
                #expect(user["id"] as? String != ownerID, "\(name): an unverified email joined the owner's account")
                #expect((user["email"] as? String ?? "").isEmpty, "\(name): the new account took the owner's address: \(user)")
            }
            #expect(try await auth.signIn(app: .socialspot, email: owner, password: password).status == 200, "the owner lost their sign-in")

            // 2. Pre-hijack: a squatter signs up with the victim's address first (SocialSpot
            // autoconfirms); the victim signs in with Google, which verified it.
            let victim = "\(uniqueName("victim"))@example.com"
            let squatter = try await auth.request(.POST, "/signup", app: .socialspot, json: ["email": victim, "password": "attacker-pass-1"])
            let squatterID = try #require((squatter.json["user"] as? [String: Any])?["id"] as? String)
            let squatterRefresh = try #require(squatter.json["refresh_token"] as? String)
            let squatterAccess = try #require(squatter.json["access_token"] as? String)
            _ = try await provider.next(flavour: .oidc, email: victim, emailVerified: true)
            let victimSession = try await Self.pkceSignIn(auth, browser, provider: "google")
            #expect((victimSession["user"] as? [String: Any])?["id"] as? String == squatterID, "GoTrue links a verified email to its account")
            let again = try await auth.signIn(app: .socialspot, email: victim, password: "attacker-pass-1")
            #expect(again.status == 400 && again.json["code"] as? String == "invalid_credentials", "the squatter's password still works: \(again.json)")
            #expect(try await auth.refresh(squatterRefresh, app: .socialspot).status == 400, "the squatter's refresh token survived")
            #expect(try await auth.request(.GET, "/user", app: .socialspot, bearer: squatterAccess).status == 403, "the squatter's session survived")

            // 3. The squatter came through a provider that did not verify the address: the
            // owner's verified sign-in takes the account and drops that identity.
            let second = "\(uniqueName("victim2"))@example.com"
            _ = try await provider.next(flavour: .github, email: second, emailVerified: false)
            let squatted = try await Self.pkceSignIn(auth, browser, provider: "github")
            let squattedID = try #require((squatted["user"] as? [String: Any])?["id"] as? String)
            _ = try await provider.next(flavour: .oidc, email: second, emailVerified: true)
            let reclaimed = try await Self.pkceSignIn(auth, browser, provider: "google")
            let reclaimedUser = try #require(reclaimed["user"] as? [String: Any])
            #expect(reclaimedUser["id"] as? String == squattedID)
            #expect(Self.identities(reclaimedUser).map { $0["provider"] as? String } == ["google"], "\(Self.identities(reclaimedUser))")
            let squattedRefresh = try #require(squatted["refresh_token"] as? String)
            #expect(try await auth.refresh(squattedRefresh, app: .socialspot).status == 400, "the unverified identity's session survived")

            // 4. An app that confirms addresses (Unify): an unverified provider address is refused.
            _ = try await provider.next(flavour: .oidc, email: "\(uniqueName("unverified"))@example.com", emailVerified: false)
            let refused = try await browser.follow(Self.authorizeURL(auth, app: .unify, provider: "google", redirectTo: nil), until: Self.isApp)
            let refusedItems = urlItems(try #require(refused.last))
            #expect(refusedItems.query["error"] == "access_denied" && refusedItems.query["error_code"] == "provider_email_needs_verification", "\(refused)")
        }
    }

    // MARK: grant_type=id_token

    @Test("grant_type=id_token with provider google: audience, nonce, signature, expiry")
    func googleIDToken() async throws {
        try await Self.withProvider { auth, provider, _ in
            func signIn(_ token: String, nonce: String?, provider name: String = "google") async throws -> (status: Int, json: [String: Any], headers: HTTPHeaders) {
                var body: [String: Any] = ["provider": name, "id_token": token]
                if let nonce { body["nonce"] = nonce }
                return try await auth.request(.POST, "/token?grant_type=id_token", app: .socialspot, json: body)
            }
            let nonce = "raw-nonce-\(UUID().uuidString)"
            let hashed = hex(SHA256.hash(data: Data(nonce.utf8)))
            let email = "\(uniqueName("native"))@example.com"
            let sub = uniqueName("google-sub")
            let token = try await provider.idToken(audience: "ss-google-ios", sub: sub, email: email, nonce: hashed)
            let ok = try await signIn(token, nonce: nonce)
            #expect(ok.status == 200, "\(ok.json)")
            let user = try #require(ok.json["user"] as? [String: Any])
            #expect(user["email"] as? String == email)
            #expect(Self.identities(user).first?["provider"] as? String == "google")
            // The web client id is an audience too; without a nonce on either side it passes.
            #expect(try await signIn(try await provider.idToken(audience: "ss-google", sub: sub, email: email), nonce: nil).json["user"].flatMap { ($0 as? [String: Any])?["id"] as? String } == user["id"] as? String)
            // Refusals.
            let wrongAudience = try await signIn(try await provider.idToken(audience: "someone-else", sub: sub, email: email, nonce: hashed), nonce: nonce)
            #expect(wrongAudience.status == 400 && wrongAudience.json["code"] as? String == "bad_oauth_callback", "\(wrongAudience.json)")
            #expect(try await signIn(try await provider.idToken(audience: "ss-google-ios", sub: sub, email: email, nonce: hashed), nonce: "other").status == 400)
            #expect(try await signIn(try await provider.idToken(audience: "ss-google-ios", sub: sub, email: email, nonce: hashed), nonce: nil).status == 400)
            #expect(try await signIn(try await provider.idToken(audience: "ss-google-ios", sub: sub, email: email), nonce: nonce).status == 400)
            #expect(try await signIn(try await provider.idToken(audience: "ss-google-ios", sub: sub, email: email, expiresIn: -60), nonce: nil).status == 400)
            #expect(try await signIn(try await provider.idToken(audience: "ss-google-ios", sub: sub, email: email, untrustedKey: true), nonce: nil).status == 400)
            #expect(try await signIn(try await provider.idToken(flavour: .apple, audience: "ss-google-ios", sub: sub, email: email), nonce: nil).status == 400, "another issuer's token")
            let unknown = try await signIn(token, nonce: nonce, provider: "myspace")
            #expect(unknown.status == 400 && unknown.json["code"] as? String == "validation_failed")
            // The generic OIDC provider takes id_tokens too.
            let acme = try await signIn(try await provider.idToken(audience: "ss-acme", sub: uniqueName("acme"), email: "\(uniqueName("acme"))@example.com"), nonce: nil, provider: "acme")
            #expect(acme.status == 200, "\(acme.json)")
        }
    }

    // MARK: identities

    @Test("link and unlink identities; an identity of another account is refused; never the last one")
    func linkAndUnlink() async throws {
        try await Self.withProvider { auth, provider, browser in
            let email = "\(uniqueName("linker"))@example.com"
            let signUp = try await auth.request(.POST, "/signup", app: .socialspot, json: ["email": email, "password": "linker-pass-1"])
            let access = try #require(signUp.json["access_token"] as? String, "\(signUp.json)")
            let userID = try #require((signUp.json["user"] as? [String: Any])?["id"] as? String)

            let githubSub = try await provider.next(flavour: .github, email: "\(uniqueName("gh"))@example.com")
            let (verifier, challenge) = Self.pkcePair()
            let start = try await auth.request(.GET, "/user/identities/authorize?provider=github&skip_http_redirect=true&redirect_to=\(Accounts.percentEncoded(Self.appCallback))&code_challenge=\(challenge)&code_challenge_method=s256", app: .socialspot, bearer: access)
            let url = try #require(start.json["url"] as? String, "\(start.status) \(start.json)")
            let stops = try await browser.follow(url, until: Self.isApp)
            let linkLanding = try #require(stops.last)
            let code = try #require(urlItems(linkLanding).query["code"], "\(stops)")
            let exchanged = try await auth.request(.POST, "/token?grant_type=pkce", app: .socialspot, json: ["auth_code": code, "code_verifier": verifier])
            #expect((exchanged.json["user"] as? [String: Any])?["id"] as? String == userID, "\(exchanged.json)")
            let me = try await auth.request(.GET, "/user", app: .socialspot, bearer: access)
            let identities = Self.identities(me.json)
            #expect(Set(identities.compactMap { $0["provider"] as? String }) == ["email", "github"], "\(identities)")
            #expect(((me.json["app_metadata"] as? [String: Any])?["providers"] as? [String]).map(Set.init) == ["email", "github"])
            #expect(me.json["email"] as? String == email, "linking changed the account's email")

            // The same GitHub identity for another account: refused.
            let other = try await auth.request(.POST, "/signup", app: .socialspot, json: ["email": "\(uniqueName("other"))@example.com", "password": "other-pass-1"])
            let otherAccess = try #require(other.json["access_token"] as? String)
            _ = try await provider.next(flavour: .github, sub: githubSub)
            let second = try await auth.request(.GET, "/user/identities/authorize?provider=github&skip_http_redirect=true", app: .socialspot, bearer: otherAccess)
            let refused = try await browser.follow(try #require(second.json["url"] as? String), until: Self.isApp)
            #expect(urlItems(try #require(refused.last)).query["error_code"] == "identity_already_exists", "\(refused)")

            // Unlink GitHub; the last identity stays.
            let github = try #require(identities.first { $0["provider"] as? String == "github" }?["identity_id"] as? String)
            let emailIdentity = try #require(identities.first { $0["provider"] as? String == "email" }?["identity_id"] as? String)
            let unlinked = try await auth.request(.DELETE, "/user/identities/\(github)", app: .socialspot, bearer: access)
            #expect(unlinked.status == 200, "\(unlinked.json)")
            let last = try await auth.request(.DELETE, "/user/identities/\(emailIdentity)", app: .socialspot, bearer: access)
            #expect(last.status == 422 && last.json["code"] as? String == "single_identity_not_deletable", "\(last.json)")
            let after = try await auth.request(.GET, "/user", app: .socialspot, bearer: access)
            #expect(Self.identities(after.json).map { $0["provider"] as? String } == ["email"])
            #expect(try await auth.request(.DELETE, "/user/identities/not-a-uuid", app: .socialspot, bearer: access).status == 404)
            #expect(try await auth.request(.DELETE, "/user/identities/\(UUID().uuidString.lowercased())", app: .socialspot, bearer: access).json["code"] as? String == "single_identity_not_deletable")
            #expect(try await auth.request(.GET, "/user/identities/authorize?provider=github", app: .socialspot).status == 401)
        }
    }

    @Test("linking a provider's verified identity converts an anonymous user, keeping the id")
    func linkingConvertsAnonymous() async throws {
        try await Self.withProvider { auth, provider, browser in
            let anonymous = try await auth.request(.POST, "/signup", app: .socialspot, json: [:])
            let access = try #require(anonymous.json["access_token"] as? String, "\(anonymous.json)")
            let userID = try #require((anonymous.json["user"] as? [String: Any])?["id"] as? String)
            #expect((anonymous.json["user"] as? [String: Any])?["is_anonymous"] as? Bool == true)
            let email = "\(uniqueName("converted"))@example.com"
            _ = try await provider.next(flavour: .oidc, email: email)
            let start = try await auth.request(.GET, "/user/identities/authorize?provider=google&skip_http_redirect=true", app: .socialspot, bearer: access)
            let stops = try await browser.follow(try #require(start.json["url"] as? String, "\(start.json)"), until: Self.isApp)
            let landing = try #require(stops.last)
            let fragment = urlItems(landing).fragment
            let newAccess = try #require(fragment["access_token"], "\(landing)")
            let me = try await auth.request(.GET, "/user", app: .socialspot, bearer: newAccess)
            #expect(me.json["id"] as? String == userID)
            #expect(me.json["is_anonymous"] as? Bool == false, "\(me.json)")
            #expect(me.json["email"] as? String == email)
            #expect(Self.identities(me.json).map { $0["provider"] as? String } == ["google"])
            #expect(try unverifiedClaims(newAccess)["is_anonymous"] as? Bool == false)
        }
    }

    @Test("grant_type=id_token with link_identity: the provider's identity joins the signed-in account (linkIdentityWithIdToken)")
    func linkWithIDToken() async throws {
        try await Self.withProvider { auth, provider, _ in
            let email = "\(uniqueName("idlink"))@example.com"
            let signUp = try await auth.request(.POST, "/signup", app: .socialspot, json: ["email": email, "password": "idlink-pass-1"])
            let access = try #require(signUp.json["access_token"] as? String, "\(signUp.json)")
            let userID = try #require((signUp.json["user"] as? [String: Any])?["id"] as? String)
            let sub = uniqueName("google-link")
            let token = try await provider.idToken(audience: "ss-google-ios", sub: sub, email: "\(uniqueName("g"))@example.com")
            let body: [String: Any] = ["provider": "google", "id_token": token, "link_identity": true]

            let anonymous = try await auth.request(.POST, "/token?grant_type=id_token", app: .socialspot, json: body)
            #expect(anonymous.status == 400 && anonymous.json["code"] as? String == "invalid_request", "\(anonymous.json)")
            let linked = try await auth.request(.POST, "/token?grant_type=id_token", app: .socialspot, bearer: access, json: body)
            #expect(linked.status == 200, "\(linked.json)")
            let user = try #require(linked.json["user"] as? [String: Any])
            #expect(user["id"] as? String == userID)
            #expect(user["email"] as? String == email, "linking changed the account's email")
            #expect(Set(Self.identities(user).compactMap { $0["provider"] as? String }) == ["email", "google"])
            // Signing in with that identity now reaches the same account.
            let signIn = try await auth.request(.POST, "/token?grant_type=id_token", app: .socialspot, json: ["provider": "google", "id_token": try await provider.idToken(audience: "ss-google-ios", sub: sub, email: "\(uniqueName("g"))@example.com")])
            #expect((signIn.json["user"] as? [String: Any])?["id"] as? String == userID, "\(signIn.json)")
            // The same identity for another account, and a token that is not the provider's: refused.
            let other = try await auth.request(.POST, "/signup", app: .socialspot, json: ["email": "\(uniqueName("other"))@example.com", "password": "other-pass-1"])
            let otherAccess = try #require(other.json["access_token"] as? String)
            let taken = try await auth.request(.POST, "/token?grant_type=id_token", app: .socialspot, bearer: otherAccess,
                                               json: ["provider": "google", "id_token": try await provider.idToken(audience: "ss-google-ios", sub: sub), "link_identity": true])
            #expect(taken.status == 422 && taken.json["code"] as? String == "identity_already_exists", "\(taken.json)")
            let forged = try await auth.request(.POST, "/token?grant_type=id_token", app: .socialspot, bearer: otherAccess,
                                                json: ["provider": "google", "id_token": try await provider.idToken(audience: "ss-google-ios", sub: uniqueName("x"), untrustedKey: true), "link_identity": true])
            #expect(forged.status == 400, "\(forged.json)")
        }
    }

    @Test("manual linking is off unless the app turns it on")
    func manualLinkingOff() async throws {
        try await Self.withProvider(manualLinking: false) { auth, _, _ in
            let signUp = try await auth.request(.POST, "/signup", app: .socialspot, json: ["email": "\(uniqueName("nolink"))@example.com", "password": "nolink-pass-1"])
            let access = try #require(signUp.json["access_token"] as? String)
            let link = try await auth.request(.GET, "/user/identities/authorize?provider=github&skip_http_redirect=true", app: .socialspot, bearer: access)
            #expect(link.status == 404 && link.json["code"] as? String == "manual_linking_disabled", "\(link.json)")
            let identity = try #require(((signUp.json["user"] as? [String: Any]).map(Self.identities))?.first?["identity_id"] as? String)
            let unlink = try await auth.request(.DELETE, "/user/identities/\(identity)", app: .socialspot, bearer: access)
            #expect(unlink.status == 404 && unlink.json["code"] as? String == "manual_linking_disabled")
            let byToken = try await auth.request(.POST, "/token?grant_type=id_token", app: .socialspot, bearer: access,
                                                 json: ["provider": "google", "id_token": "x.y.z", "link_identity": true])
            #expect(byToken.status == 404 && byToken.json["code"] as? String == "manual_linking_disabled", "\(byToken.json)")
        }
    }

    @Test("the official Python client: sign_in_with_oauth, exchange_code_for_session, link_identity, get_user_identities, unlink_identity")
    func supabasePythonClient() async throws {
        try await Self.withProvider { auth, provider, _ in
            try await runSupabasePythonClient("test_oauth.py", against: auth, environment: ["COLONY_OAUTH_PROVIDER_URL": provider.base])
        }
    }

    // MARK: rules without HTTP

    @Test("account linking rules")
    func linkingRules() {
        let (a, b) = (UUID(), UUID())
        let verified = [ProviderEmail(email: "x@example.com", verified: true, primary: true)]
        let unverified = [ProviderEmail(email: "x@example.com", verified: false, primary: true)]
        #expect(OAuthLinking.decide(emails: verified, found: .init(identityOwner: a, accountsWithVerifiedEmail: [b])) == .accountExists(a))
        #expect(OAuthLinking.decide(emails: unverified, found: .init(accountsWithVerifiedEmail: [], candidateTaken: true)) == .create(email: nil, emailVerified: false))
        #expect(OAuthLinking.decide(emails: unverified, found: .init()) == .create(email: "x@example.com", emailVerified: false))
        #expect(OAuthLinking.decide(emails: verified, found: .init(accountsWithVerifiedEmail: [a])) == .link(a))
        #expect(OAuthLinking.decide(emails: verified, found: .init(accountsWithVerifiedEmail: [a], accountsWithVerifiedIdentity: [b])) == .link(b))
        #expect(OAuthLinking.decide(emails: verified, found: .init(accountsWithVerifiedIdentity: [a, b])) == .multipleAccounts)
        #expect(OAuthLinking.decide(emails: verified, found: .init()) == .create(email: "x@example.com", emailVerified: true))
        #expect(OAuthLinking.decide(emails: [], found: .init()) == .create(email: nil, emailVerified: false))
        #expect(!OAuthLinking.mayProceed(accountEmailConfirmed: false, candidateVerified: false, autoconfirm: false))
        #expect(OAuthLinking.mayProceed(accountEmailConfirmed: false, candidateVerified: false, autoconfirm: true))

        func identity(_ provider: String, email: String?, verified: Bool, age: TimeInterval) -> IdentityRecord {
            var data: [String: JSONValue] = [:]
            if let email { data["email"] = .string(email); data["email_verified"] = .bool(verified) }
            return IdentityRecord(id: UUID(), userId: a, provider: provider, providerId: UUID().uuidString, identityData: data, lastSignInAt: nil, createdAt: Date(timeIntervalSinceNow: -age), updatedAt: Date())
        }
        let google = identity("google", email: "g@example.com", verified: true, age: 10)
        let github = identity("github", email: "h@example.com", verified: false, age: 100)
        #expect(IdentityEmailRule.after(unlinking: [google, github], accountEmail: "g@example.com", autoconfirm: false, takenByOthers: { _ in false }) == .keep)
        #expect(IdentityEmailRule.after(unlinking: [github, google], accountEmail: "old@example.com", autoconfirm: false, takenByOthers: { _ in false }) == .replace(email: "g@example.com", confirmed: true))
        #expect(IdentityEmailRule.after(unlinking: [github, google], accountEmail: "old@example.com", autoconfirm: false, takenByOthers: { $0 == "g@example.com" }) == .replace(email: "h@example.com", confirmed: false))
        #expect(IdentityEmailRule.after(unlinking: [github], accountEmail: "old@example.com", autoconfirm: false, takenByOthers: { _ in true }) == .conflict)
        #expect(OAuthLinking.unprovenIdentities(of: [google, github, identity("email", email: "e@example.com", verified: false, age: 1)], except: nil).map(\.id) == [github.id])
    }

    @Test("hostile input to /authorize, /callback and the identity routes never answers 5xx")
    func hostileInput() async throws {
        try await Self.withProvider { auth, _, browser in
            let key = auth.anonKeys[.socialspot]!
            let signUp = try await auth.request(.POST, "/signup", app: .socialspot, json: ["email": "\(uniqueName("hostile"))@example.com", "password": "hostile-pass-1"])
            let access = try #require(signUp.json["access_token"] as? String)
            let long = String(repeating: "a", count: 20_000)
            let gets = [
                "/authorize?provider=google&apikey=\(key)&redirect_to=\(long)", "/authorize?provider=\(long)&apikey=\(key)",
                "/authorize?provider=google&apikey=\(key)&code_challenge=\(String(repeating: "b", count: 200))&code_challenge_method=s256",
                "/authorize?provider=google&apikey=\(key)&code_challenge=\(String(repeating: "b", count: 43))&code_challenge_method=md5",
                "/authorize?provider=%00&apikey=\(key)", "/authorize?apikey=\(key)", "/authorize?provider=google&apikey=\(key)&scopes=\(long)&state=x&redirect_uri=https://evil.example.com",
                "/callback", "/callback?state=%ZZ", "/callback?state=\(long)", "/callback?state=a.b.c&code=x", "/callback?state=\(access)&code=x",
                "/callback?error=access_denied", "/user/identities/authorize", "/user/identities/authorize?provider=nope",
            ]
            for path in gets {
                let response = try await auth.request(.GET, path, app: .socialspot, bearer: path.hasPrefix("/user") ? access : nil)
                #expect(response.status < 500 && response.status != 0, "GET \(path.prefix(120)): \(response.status) \(response.json)")
            }
            for body in ["state=%ZZ&code=%", "\u{FF}\u{FE}=\u{00}", String(repeating: "x=y&", count: 10_000), "user=\(long)&state=&code="] {
                var request = HTTPClientRequest(url: "\(auth.authURL)/callback")
                request.method = .POST
                request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
                request.body = .bytes(ByteBuffer(string: body))
                let response = try await browser.client.execute(request, timeout: .seconds(15))
                #expect(response.status.code < 500, "POST /callback \(body.prefix(40)): \(response.status)")
            }
            for path in ["/user/identities/\(long)", "/user/identities/%00", "/user/identities/"] {
                let response = try await auth.request(.DELETE, path, app: .socialspot, bearer: access)
                #expect(response.status < 500, "DELETE \(path.prefix(60)): \(response.status)")
            }
        }
    }

    @Test("the apps file's oauth_providers keep their names and fields")
    func appsFileProviders() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent(uniqueName("apps") + ".json").path
        defer { try? FileManager.default.removeItem(atPath: file) }
        try #"{"socialspot": {"manual_linking": true, "oauth_providers": {"google": {"client_id": "web", "client_secret": "s", "native_client_ids": ["ios"]}, "my_idp": {"kind": "oidc", "issuer": "https://idp.example.com/", "client_id": "c", "client_secret_file": "/run/secret"}, "acme-sso": {"kind": "oidc", "issuer": "https://acme.example.com", "client_id": "a", "enabled": false}}}}"#.write(toFile: file, atomically: true, encoding: .utf8)
        let apps = try AuthSettings.loadApps(AppsFile.parse(Data(contentsOf: URL(fileURLWithPath: file))))
        let socialspot = try #require(apps[.socialspot])
        #expect(socialspot.manualLinking)
        #expect(Set(socialspot.oauthProviders.keys) == ["google", "my_idp", "acme-sso"], "\(socialspot.oauthProviders.keys)")
        #expect(socialspot.oauthProviders["google"]?.audiences == ["web", "ios"])
        #expect(socialspot.oauthProviders["my_idp"]?.resolvedIssuer(kind: .oidc) == "https://idp.example.com")
        #expect(socialspot.oauthProviders["my_idp"]?.clientSecretFile == "/run/secret")
        #expect(socialspot.oauthProviders["acme-sso"]?.isEnabled == false)
        #expect(apps[.unify]?.oauthProviders.isEmpty == true && apps[.unify]?.manualLinking == false)
    }

    @Test("nonce rules, error redirects, Apple's client secret, form fields")
    func plainRules() throws {
        let raw = "n-1"
        let hashed = hex(SHA256.hash(data: Data(raw.utf8)))
        #expect(throws: Never.self) { try OIDCVerifier.check(nonce: .exactly("abc"), token: "abc") }
        #expect(throws: OIDCError.self) { try OIDCVerifier.check(nonce: .exactly("abc"), token: nil) }
        #expect(throws: Never.self) { try OIDCVerifier.check(nonce: .hashedIfPresent(raw), token: hashed) }
        #expect(throws: Never.self) { try OIDCVerifier.check(nonce: .hashedIfPresent(nil), token: nil) }
        #expect(throws: OIDCError.self) { try OIDCVerifier.check(nonce: .hashedIfPresent(nil), token: hashed) }
        #expect(throws: OIDCError.self) { try OIDCVerifier.check(nonce: .hashedIfPresent(raw), token: nil) }
        #expect(throws: OIDCError.self) { try OIDCVerifier.check(nonce: .hashedRequired(nil), token: nil) }

        let location = Accounts.errorRedirect(to: "socialspot://cb#old", error: APIError(.unprocessableContent, code: "provider_email_needs_verification", message: "Verify it"))
        #expect(location == "socialspot://cb?error=access_denied&error_code=provider_email_needs_verification&error_description=Verify%20it#error=access_denied&error_code=provider_email_needs_verification&error_description=Verify%20it&sb=")
        #expect(Accounts.oauthErrorName(for: APIError(.badRequest, code: "x", message: "")) == "invalid_request")

        let key = P256.Signing.PrivateKey()
        let secret = try OAuthProvider.appleClientSecret(teamID: "T", keyID: "K", clientID: "com.app.web", audience: "https://appleid.apple.com", key: key, now: Date(timeIntervalSince1970: 1_700_000_000))
        let parts = secret.split(separator: ".")
        #expect(parts.count == 3)
        let header = try #require(try JSONSerialization.jsonObject(with: Data(Base64URL.decode(String(parts[0])) ?? Data())) as? [String: Any])
        let claims = try #require(try JSONSerialization.jsonObject(with: Data(Base64URL.decode(String(parts[1])) ?? Data())) as? [String: Any])
        #expect(header["alg"] as? String == "ES256" && header["kid"] as? String == "K")
        #expect(claims["iss"] as? String == "T" && claims["sub"] as? String == "com.app.web" && claims["exp"] as? Int == 1_700_000_300)
        let signature = try P256.Signing.ECDSASignature(rawRepresentation: Base64URL.decode(String(parts[2])) ?? Data())
        #expect(key.publicKey.isValidSignature(signature, for: Data("\(parts[0]).\(parts[1])".utf8)))

        #expect(OAuthRoutes.formFields("code=a%2Bb&state=x+y&user=%7B%7D&bad&=v").map { "\($0.0)=\($0.1)" } == ["code=a+b", "state=x y", "user={}", "bad="])
        #expect(OAuthProvider.appleName(#"{"name":{"firstName":"Ada","lastName":"Lovelace"},"email":"a@b.c"}"#)["full_name"] == .string("Ada Lovelace"))
        #expect(OAuthProvider.appleName("not json").isEmpty)
    }
}

