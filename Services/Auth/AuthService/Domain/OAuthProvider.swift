import AsyncHTTPClient
import ColonyModels
import ColonyPlatform
import Crypto
import Foundation
import NIOCore

/// An address a provider gave for its user.
public struct ProviderEmail: Sendable, Equatable {
    public var email: String
    public var verified: Bool
    public var primary: Bool

    public init(email: String, verified: Bool, primary: Bool) {
        self.email = email
        self.verified = verified
        self.primary = primary
    }
}

/// What a provider said about the user who authorized: who they are there (`subject`), their
/// addresses, and the identity's data as GoTrue stores it (`identity_data`).
public struct ProviderUser: Sendable, Equatable {
    public var subject: String
    public var emails: [ProviderEmail]
    public var identityData: [String: JSONValue]
    public var providerAccessToken: String?
    public var providerRefreshToken: String?

    public init(subject: String, emails: [ProviderEmail], identityData: [String: JSONValue], providerAccessToken: String? = nil, providerRefreshToken: String? = nil) {
        self.subject = subject
        self.emails = emails
        self.identityData = identityData
        self.providerAccessToken = providerAccessToken
        self.providerRefreshToken = providerRefreshToken
    }

    /// The address that becomes the account's (GoTrue: the primary one, else the last given).
    public var candidateEmail: ProviderEmail? { emails.first(where: \.primary) ?? emails.last }

    /// A verified OIDC identity as a provider user (`email_verified` from the token).
    init(_ identity: OIDCIdentity, extra: [String: JSONValue] = [:]) {
        var data: [String: JSONValue] = ["iss": .string(identity.issuer), "sub": .string(identity.subject), "provider_id": .string(identity.subject)]
        if let email = identity.email {
            data["email"] = .string(email)
            data["email_verified"] = .bool(identity.emailVerified)
        }
        if identity.isPrivateEmail { data["is_private_email"] = .bool(true) }
        if let name = identity.name { data["name"] = .string(name); data["full_name"] = .string(name) }
        if let given = identity.givenName { data["given_name"] = .string(given) }
        if let family = identity.familyName { data["family_name"] = .string(family) }
        if let picture = identity.picture { data["picture"] = .string(picture); data["avatar_url"] = .string(picture) }
        if let phone = identity.phone { data["phone"] = .string(phone); data["phone_verified"] = .bool(identity.phoneVerified) }
        for (key, value) in extra where data[key] == nil { data[key] = value }
        self.init(subject: identity.subject, emails: identity.email.map { [ProviderEmail(email: $0, verified: identity.emailVerified, primary: true)] } ?? [], identityData: data)
    }
}

/// One configured provider of an app, resolved: builds its authorization URL and turns the code
/// its callback brings into a `ProviderUser` (token endpoint, then the id_token or GitHub's API).
struct OAuthProvider: Sendable {
    let name: String
    let kind: OAuthProviderSettings.Kind
    let settings: OAuthProviderSettings
    /// Auth's own `…/auth/v1/callback`, registered with the provider.
    let callbackURL: String
    let verifier: OIDCVerifier
    var httpClient: HTTPClient = .shared

    struct Endpoints: Sendable {
        var authorize: String
        var token: String
        var jwks: String?
        var issuer: String?
        var api: String?
    }

    /// The app's provider `name`, or why it cannot be used (GoTrue's answers).
    static func resolve(name rawName: String, app: AppAuthSettings, callbackURL: String, verifier: OIDCVerifier) throws -> OAuthProvider {
        let name = rawName.lowercased()
        guard !name.isEmpty else { throw APIError(.badRequest, code: "validation_failed", message: "Unsupported provider: missing provider") }
        guard let settings = app.oauthProviders[name], let kind = settings.resolvedKind(name: name) else {
            throw APIError(.badRequest, code: "validation_failed", message: "Unsupported provider: Provider \(name) could not be found")
        }
        guard settings.isEnabled else { throw APIError(.badRequest, code: "provider_disabled", message: "Unsupported provider: Provider \(name) is not enabled") }
        return OAuthProvider(name: name, kind: kind, settings: settings, callbackURL: callbackURL, verifier: verifier)
    }

    /// Apple answers the web flow by a form POST to the callback; it takes no PKCE.
    var usesFormPost: Bool { kind == .apple }
    var usesPKCE: Bool { kind != .apple }

    func endpoints() async throws -> Endpoints {
        switch kind {
        case .github:
            return Endpoints(authorize: settings.authorizeUrl ?? "https://github.com/login/oauth/authorize",
                             token: settings.tokenUrl ?? "https://github.com/login/oauth/access_token",
                             jwks: nil, issuer: nil, api: Self.trimmed(settings.apiUrl ?? "https://api.github.com"))
        case .google, .apple, .oidc:
            guard let issuer = settings.resolvedIssuer(kind: kind) else {
                throw OIDCError.unavailable("provider \(name) names no issuer")
            }
            if let authorize = settings.authorizeUrl, let token = settings.tokenUrl, let jwks = settings.jwksUrl {
                return Endpoints(authorize: authorize, token: token, jwks: jwks, issuer: issuer, api: nil)
            }
            let document = try await verifier.discovery(issuer: issuer)
            return Endpoints(authorize: settings.authorizeUrl ?? document.authorizationEndpoint, token: settings.tokenUrl ?? document.tokenEndpoint,
                             jwks: settings.jwksUrl ?? document.jwksUri, issuer: issuer, api: nil)
        }
    }

    /// Scopes: the request's (space separated) added to the provider's defaults, as GoTrue does.
    func scopes(requested: String?) -> String {
        let defaults: [String]
        switch kind {
        case .google, .oidc: defaults = settings.scopes ?? ["openid", "email", "profile"]
        case .apple: defaults = settings.scopes ?? ["name", "email"]
        case .github: defaults = settings.scopes ?? ["user:email"]
        }
        var all = defaults
        if kind == .google || kind == .oidc, !all.contains("openid") { all.insert("openid", at: 0) }
        for scope in (requested ?? "").split(whereSeparator: { $0 == " " || $0 == "," }).map(String.init) where !all.contains(scope) {
            all.append(scope)
        }
        return all.joined(separator: " ")
    }

    /// The URL the browser is sent to. `extra`: the request's other query parameters, passed on
    /// (GoTrue passes e.g. `access_type`, `prompt`, `login_hint`), never ones auth controls.
    func authorizationURL(state: String, nonce: String, scopes requested: String?, providerChallenge: String?, extra: [(String, String)]) async throws -> String {
        let endpoints = try await endpoints()
        var items: [(String, String)] = [
            ("client_id", settings.clientId), ("redirect_uri", callbackURL), ("response_type", "code"),
            ("scope", scopes(requested: requested)), ("state", state),
        ]
        if kind != .github { items.append(("nonce", nonce)) }
        if usesFormPost { items.append(("response_mode", "form_post")) }
        if let providerChallenge {
            items.append(("code_challenge", providerChallenge))
            items.append(("code_challenge_method", "S256"))
        }
        let reserved = Set(items.map(\.0)).union(["response_mode", "code_challenge", "code_challenge_method", "client_secret", "nonce", "grant_type"])
        for (key, value) in extra where !reserved.contains(key.lowercased()) { items.append((key, value)) }
        return Accounts.appending(query: items, to: endpoints.authorize)
    }

    /// Exchanges the callback's code at the token endpoint and learns who the user is.
    /// `appleUser`: the `user` JSON Apple posts on a first authorization (the name it gives once).
    func exchange(code: String, codeVerifier: String?, nonce: String, appleUser: String?) async throws -> ProviderUser {
        let endpoints = try await endpoints()
        var form: [(String, String)] = [
            ("grant_type", "authorization_code"), ("code", code), ("redirect_uri", callbackURL),
            ("client_id", settings.clientId), ("client_secret", try clientSecret()),
        ]
        if let codeVerifier { form.append(("code_verifier", codeVerifier)) }
        let token = try await postForm(endpoints.token, form)
        switch kind {
        case .github:
            guard let accessToken = token.accessToken else { throw OIDCError.invalid("the provider answered no access token") }
            var user = try await gitHubUser(api: endpoints.api ?? "https://api.github.com", accessToken: accessToken)
            user.providerAccessToken = accessToken
            user.providerRefreshToken = token.refreshToken
            return user
        case .google, .apple, .oidc:
            guard let idToken = token.idToken, let jwks = endpoints.jwks, let issuer = endpoints.issuer else {
                throw OIDCError.invalid("the provider answered no id_token")
            }
            let identity = try await verifier.verify(idToken: idToken, issuer: issuer, jwksURL: jwks, audiences: [settings.clientId], nonce: .exactly(nonce))
            var user = ProviderUser(identity, extra: kind == .apple ? Self.appleName(appleUser) : [:])
            user.providerAccessToken = token.accessToken
            user.providerRefreshToken = token.refreshToken
            return user
        }
    }

    /// The name Apple posts once, as `full_name` (Apple puts none in its id_token).
    static func appleName(_ json: String?) -> [String: JSONValue] {
        struct AppleUser: Decodable {
            struct Name: Decodable { var firstName: String?; var lastName: String? }
            var name: Name?
        }
        guard let json, let user = try? JSONDecoder().decode(AppleUser.self, from: Data(json.utf8)), let name = user.name else { return [:] }
        let full = [name.firstName, name.lastName].compactMap { $0 }.filter { !$0.isEmpty }.joined(separator: " ")
        guard !full.isEmpty, full.count <= 200 else { return [:] }
        var data: [String: JSONValue] = ["full_name": .string(full), "name": .string(full)]
        if let first = name.firstName, !first.isEmpty { data["given_name"] = .string(first) }
        if let last = name.lastName, !last.isEmpty { data["family_name"] = .string(last) }
        return data
    }

    // MARK: client authentication

    /// The client secret: given, read from a file, or (Apple) an ES256 JWT signed with the
    /// team's key, valid for five minutes.
    func clientSecret() throws -> String {
        if let secret = settings.clientSecret, !secret.isEmpty { return secret }
        if let file = settings.clientSecretFile {
            guard let text = try? String(contentsOfFile: file, encoding: .utf8) else { throw OIDCError.unavailable("client_secret_file of \(name) cannot be read") }
            return text.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        if kind == .apple, let teamID = settings.teamId, let keyID = settings.keyId, let keyFile = settings.privateKeyFile {
            guard let pem = try? String(contentsOfFile: keyFile, encoding: .utf8), let key = try? P256.Signing.PrivateKey(pemRepresentation: pem) else {
                throw OIDCError.unavailable("private_key_file of \(name) is not a P-256 private key in PEM")
            }
            return try Self.appleClientSecret(teamID: teamID, keyID: keyID, clientID: settings.clientId, audience: settings.resolvedIssuer(kind: .apple) ?? "https://appleid.apple.com", key: key, now: Date())
        }
        throw OIDCError.unavailable("provider \(name) has no client secret")
    }

    struct AppleClientSecretClaims: Encodable {
        var iss: String
        var iat: Int
        var exp: Int
        var aud: String
        var sub: String
    }

    static func appleClientSecret(teamID: String, keyID: String, clientID: String, audience: String, key: P256.Signing.PrivateKey, now: Date) throws -> String {
        let issuedAt = Int(now.timeIntervalSince1970.rounded(.down))
        return try CompactJWS.sign(AppleClientSecretClaims(iss: teamID, iat: issuedAt, exp: issuedAt + 300, aud: audience, sub: clientID), kid: keyID, key: key)
    }

    // MARK: HTTP

    struct TokenAnswer: Decodable {
        var accessToken: String?
        var refreshToken: String?
        var idToken: String?
        var error: String?
        var errorDescription: String?
    }

    private func postForm(_ url: String, _ form: [(String, String)]) async throws -> TokenAnswer {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
        request.headers.add(name: "Accept", value: "application/json")
        request.body = .bytes(ByteBuffer(string: form.map { "\($0.0)=\(Accounts.percentEncoded($0.1))" }.joined(separator: "&")))
        let (status, body) = try await send(request)
        let answer = try? ColonyJSON.decoder().decode(TokenAnswer.self, from: body)
        if let error = answer?.error {
            throw OIDCError.invalid("the provider refused the code: \(error)\(answer?.errorDescription.map { ": \($0)" } ?? "")")
        }
        guard (200..<300).contains(status), let answer else { throw OIDCError.unavailable("the token endpoint of \(name) answered \(status)") }
        return answer
    }

    private func getJSON(_ url: String, bearer: String) async throws -> Data {
        var request = HTTPClientRequest(url: url)
        request.headers.add(name: "Authorization", value: "Bearer \(bearer)")
        request.headers.add(name: "Accept", value: "application/vnd.github+json")
        request.headers.add(name: "User-Agent", value: "colony-auth")
        let (status, body) = try await send(request)
        guard status == 200 else { throw OIDCError.unavailable("\(url) answered \(status)") }
        return body
    }

    private func send(_ request: HTTPClientRequest) async throws -> (Int, Data) {
        do {
            let response = try await httpClient.execute(request, timeout: .seconds(10))
            let body = try await response.body.collect(upTo: 1 << 20)
            return (Int(response.status.code), Data(buffer: body))
        } catch {
            throw OIDCError.unavailable("the provider \(name) could not be reached: \(error)")
        }
    }

    // MARK: GitHub

    struct GitHubAccount: Decodable {
        var id: FlexibleID
        var login: String?
        var name: String?
        var email: String?
        var avatarUrl: String?
    }

    struct GitHubEmail: Decodable {
        var email: String
        var primary: Bool?
        var verified: Bool?
    }

    /// GitHub's numeric ids arrive as numbers; some proxies write them as strings.
    struct FlexibleID: Decodable {
        var value: String
        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let number = try? container.decode(Int64.self) { value = String(number) } else { value = try container.decode(String.self) }
        }
    }

    private func gitHubUser(api: String, accessToken: String) async throws -> ProviderUser {
        guard let account = try? ColonyJSON.decoder().decode(GitHubAccount.self, from: try await getJSON("\(api)/user", bearer: accessToken)) else {
            throw OIDCError.invalid("GitHub's user could not be read")
        }
        let listed = (try? ColonyJSON.decoder().decode([GitHubEmail].self, from: try await getJSON("\(api)/user/emails", bearer: accessToken))) ?? []
        let emails = listed.compactMap { entry -> ProviderEmail? in
            guard let email = try? Credentials.email(entry.email) else { return nil }
            return ProviderEmail(email: email, verified: entry.verified ?? false, primary: entry.primary ?? false)
        }
        return ProviderUser(gitHub: account, emails: emails, issuer: api)
    }

    static func trimmed(_ url: String) -> String { url.hasSuffix("/") ? String(url.dropLast()) : url }
}

extension ProviderUser {
    /// GoTrue's GitHub identity: the numeric id as subject, the login as user name.
    init(gitHub account: OAuthProvider.GitHubAccount, emails: [ProviderEmail], issuer: String) {
        var data: [String: JSONValue] = ["iss": .string(issuer), "sub": .string(account.id.value), "provider_id": .string(account.id.value)]
        if let login = account.login { data["user_name"] = .string(login); data["preferred_username"] = .string(login) }
        if let name = account.name { data["name"] = .string(name); data["full_name"] = .string(name) }
        if let avatar = account.avatarUrl { data["avatar_url"] = .string(avatar) }
        let candidate = emails.first(where: \.primary) ?? emails.last
        if let candidate {
            data["email"] = .string(candidate.email)
            data["email_verified"] = .bool(candidate.verified)
        }
        self.init(subject: account.id.value, emails: emails, identityData: data)
    }
}
