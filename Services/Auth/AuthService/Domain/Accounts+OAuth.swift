import ColonyModels
import ColonyPlatform
import Crypto
import Foundation
import JWTKit
import PostgresNIO

/// The `state` auth hands the provider: signed with auth's current key, naming the app (the
/// callback has no `apikey`) and the `oauth_states` row that makes it single-use.
struct OAuthStateClaims: JWTPayload {
    static let purpose = "oauth_state"
    var flowStateId: String
    var app: String
    var purpose: String
    var exp: ExpirationClaim

    enum CodingKeys: String, CodingKey {
        case flowStateId = "flow_state_id"
        case app, purpose, exp
    }

    func verify(using algorithm: some JWTAlgorithm) async throws {
        try exp.verifyNotExpired()
    }
}

/// What `GET /authorize` asks for.
public struct OAuthAuthorizeRequest: Sendable {
    public var provider: String
    public var redirectTo: String?
    public var scopes: String?
    public var pkce: PKCEChallenge?
    /// The request's other query parameters, passed on to the provider.
    public var extra: [(String, String)]

    public init(provider: String, redirectTo: String?, scopes: String?, pkce: PKCEChallenge?, extra: [(String, String)] = []) {
        self.provider = provider
        self.redirectTo = redirectTo
        self.scopes = scopes
        self.pkce = pkce
        self.extra = extra
    }
}

/// What the provider sent back to `/callback` (query or Apple's form POST).
public struct OAuthCallbackParameters: Sendable {
    public var state: String?
    public var code: String?
    public var error: String?
    public var errorDescription: String?
    /// Apple's `user` JSON (its only word on the user's name).
    public var appleUser: String?

    public init(state: String?, code: String?, error: String?, errorDescription: String?, appleUser: String?) {
        self.state = state
        self.code = code
        self.error = error
        self.errorDescription = errorDescription
        self.appleUser = appleUser
    }
}

extension Accounts {
    // MARK: the web flow

    /// `GET /authorize` (and manual linking with `linkingUserID`): the provider's authorization
    /// URL, with a signed single-use state and a nonce. A `redirect_to` the app does not allow
    /// becomes its site URL, as GoTrue does.
    public func oauthAuthorizationURL(app: App, request: OAuthAuthorizeRequest, linkingUserID: UUID? = nil, client: ClientInfo) async throws -> String {
        let appSettings = settings.app(app)
        let provider = try OAuthProvider.resolve(name: request.provider, app: appSettings, callbackURL: callbackURL, verifier: oidc)
        try ipLimiter.check("oauth:ip:\(client.ip)", rule: settings.rateLimits.signInPerIP)
        let providerVerifier = provider.usesPKCE ? Base64URL.encode(Secrets.randomBytes(32)) : nil
        let record = OAuthStateRecord(
            id: UUID(), app: app, provider: provider.name, redirectTo: appSettings.redirect(request.redirectTo),
            codeChallenge: request.pkce?.challenge, codeChallengeMethod: request.pkce?.method.rawValue,
            nonce: Base64URL.encode(Secrets.randomBytes(24)), providerCodeVerifier: providerVerifier, linkingUserID: linkingUserID,
            expiresAt: Date().addingTimeInterval(FlowStateStore.lifetimeSeconds)
        )
        let state = try await keyRing.sign(OAuthStateClaims(flowStateId: record.id.uuidString.lowercased(), app: app.rawValue, purpose: OAuthStateClaims.purpose, exp: .init(value: record.expiresAt)))
        let url: String
        do {
            url = try await provider.authorizationURL(state: state, nonce: record.nonce, scopes: request.scopes,
                                                      providerChallenge: providerVerifier.map { Base64URL.encode(SHA256.hash(data: Data($0.utf8))) }, extra: request.extra)
        } catch let error as OIDCError {
            throw Self.apiError(error)
        }
        try await database.withConnection { connection in
            try await FlowStateStore(logger: logger).create(record, on: connection)
        }
        return url
    }

    /// `GET|POST /callback`: where the browser goes next. Every failure after the state names a
    /// place to return to is a redirect there with `error` and `error_description`, as GoTrue's;
    /// only a state that is missing or not auth's is answered here (thrown).
    public func oauthCallback(_ parameters: OAuthCallbackParameters, client: ClientInfo) async throws -> String {
        guard let stateText = parameters.state, !stateText.isEmpty else {
            throw APIError(.badRequest, code: "bad_oauth_callback", message: "OAuth state parameter missing")
        }
        let invalidState = APIError(.badRequest, code: "bad_oauth_state", message: "OAuth state parameter is invalid")
        let claims: OAuthStateClaims
        do {
            let keys = try await JWTKeyCollection().add(jwksJSON: keyRing.jwks())
            claims = try await keys.verify(stateText, as: OAuthStateClaims.self)
        } catch {
            throw invalidState
        }
        guard claims.purpose == OAuthStateClaims.purpose, let app = App(rawValue: claims.app), let id = UUID(uuidString: claims.flowStateId) else { throw invalidState }
        let appSettings = settings.app(app)
        let taken = try await database.withConnection { connection in
            try await FlowStateStore(logger: logger).take(id: id, app: app, on: connection)
        }
        let state: OAuthStateRecord
        switch taken {
        case .live(let live): state = live
        case .spent(let redirectTo, let used):
            // A replayed callback (the browser's back button, or someone who saw the URL).
            let error = used ? APIError(.badRequest, code: "flow_state_already_used", message: "State has already been used")
                             : APIError(.badRequest, code: "bad_oauth_state", message: "OAuth state has expired")
            return Self.errorRedirect(to: redirectTo, error: error)
        case .unknown:
            return Self.errorRedirect(to: appSettings.siteUrl, error: APIError(.badRequest, code: "bad_oauth_state", message: "OAuth state not found or expired"))
        }
        do {
            return try await completeOAuth(state: state, parameters: parameters, client: client)
        } catch let error as APIError {
            return Self.errorRedirect(to: state.redirectTo, error: error)
        } catch let error as OIDCError {
            return Self.errorRedirect(to: state.redirectTo, error: Self.apiError(error))
        } catch {
            logger.error("oauth callback failed", metadata: ["provider": "\(state.provider)", "error": "\(error)"])
            return Self.errorRedirect(to: state.redirectTo, error: APIError(.internalServerError, code: "unexpected_failure", message: "Sign-in with \(state.provider) failed; try again"))
        }
    }

    private func completeOAuth(state: OAuthStateRecord, parameters: OAuthCallbackParameters, client: ClientInfo) async throws -> String {
        if let error = parameters.error, !error.isEmpty {
            // The provider's own refusal (the user said no): passed on as GoTrue does.
            return Self.errorRedirect(to: state.redirectTo, oauthError: error, description: parameters.errorDescription ?? "", code: nil)
        }
        guard let code = parameters.code, !code.isEmpty else {
            throw APIError(.badRequest, code: "bad_oauth_callback", message: "OAuth callback with missing authorization code missing")
        }
        let provider = try OAuthProvider.resolve(name: state.provider, app: settings.app(state.app), callbackURL: callbackURL, verifier: oidc)
        let providerUser = try await provider.exchange(code: code, codeVerifier: state.providerCodeVerifier, nonce: state.nonce, appleUser: parameters.appleUser)
        let pkce = PKCEChallenge(stored: state.codeChallenge, method: state.codeChallengeMethod)
        enum Outcome: Sendable { case code(String), session(SessionResponse) }
        let outcome: Outcome = try await database.transaction { connection in
            let user: UserRecord
            if let target = state.linkingUserID {
                user = try await linkIdentity(to: target, app: state.app, provider: state.provider, providerUser: providerUser, on: connection)
            } else {
                user = try await signInWithExternalIdentity(app: state.app, provider: state.provider, providerUser: providerUser, on: connection)
            }
            if let pkce {
                let authCode = UUID().uuidString.lowercased()
                try await oneTimeTokens.createFlowState(authCodeHash: Secrets.hash(authCode), app: state.app, userID: user.id, codeChallenge: pkce.challenge,
                                                        method: pkce.method.rawValue, authenticationMethod: "oauth", on: connection)
                return .code(authCode)
            }
            return .session(try await issueSession(userID: user.id, app: state.app, method: "oauth", client: client, provider: state.provider, on: connection))
        }
        switch outcome {
        case .code(let authCode):
            return Self.appending(query: [("code", authCode)], to: state.redirectTo)
        case .session(let session):
            var items: [(String, String)] = [
                ("access_token", session.accessToken), ("expires_at", String(session.expiresAt)), ("expires_in", String(session.expiresIn)),
            ]
            if let token = providerUser.providerAccessToken { items.append(("provider_token", token)) }
            if let token = providerUser.providerRefreshToken { items.append(("provider_refresh_token", token)) }
            // `sb`: GoTrue's mark that tells clients the redirect is Supabase Auth's.
            items += [("refresh_token", session.refreshToken), ("sb", ""), ("token_type", "bearer")]
            return Self.appending(fragment: items, to: Self.withoutFragment(state.redirectTo))
        }
    }

    // MARK: grant_type=id_token for Google and OIDC providers

    /// A native sign-in with a provider's id_token (Google's SDK, an operator's OIDC issuer):
    /// audience one of the provider's client ids, GoTrue's nonce rule (the app's raw nonce and its
    /// SHA-256 in the token, or neither).
    func signInWithProviderIDToken(app: App, provider name: String, idToken: String, nonce: String?, client: ClientInfo) async throws -> SessionResponse {
        try ipLimiter.check("signin:ip:\(client.ip)", rule: settings.rateLimits.signInPerIP)
        let (provider, providerUser) = try await verifiedIDToken(app: app, provider: name, idToken: idToken, nonce: nonce)
        return try await database.transaction { connection in
            let user = try await signInWithExternalIdentity(app: app, provider: provider, providerUser: providerUser, on: connection)
            return try await issueSession(userID: user.id, app: app, method: "oauth", client: client, provider: provider, on: connection)
        }
    }

    /// `POST /token?grant_type=id_token` with `link_identity: true` (supabase-swift's
    /// `linkIdentityWithIdToken`): the identity a provider's token proves joins the signed-in
    /// caller's account under the rules of manual linking (`manual_linking` on, an identity linked
    /// to nobody else); a new session of that account. Apple's native tokens are checked as at
    /// sign-in (bundle ids, the hashed nonce).
    func linkIdentityWithIDToken(app: App, caller: AuthenticatedCaller, provider name: String, idToken: String, nonce: String?, data: [String: JSONValue], client: ClientInfo) async throws -> SessionResponse {
        let appSettings = settings.app(app)
        guard appSettings.manualLinking else { throw Self.manualLinkingDisabled }
        try ipLimiter.check("signin:ip:\(client.ip)", rule: settings.rateLimits.signInPerIP)
        let provider: String
        let providerUser: ProviderUser
        if name == "apple" {
            guard appSettings.appleEnabled || appSettings.oauthProviders["apple"] != nil else { throw AuthErrors.providerDisabled }
            let identity = try await apple.verify(idToken: idToken, bundleIDs: appSettings.appleBundleIds + (appSettings.oauthProviders["apple"]?.audiences ?? []), nonce: nonce)
            (provider, providerUser) = ("apple", ProviderUser(apple: identity, names: data))
        } else {
            (provider, providerUser) = try await verifiedIDToken(app: app, provider: name, idToken: idToken, nonce: nonce)
        }
        return try await database.transaction { connection in
            let user = try await linkIdentity(to: caller.userID, app: app, provider: provider, providerUser: providerUser, on: connection)
            return try await issueSession(userID: user.id, app: app, method: "oauth", client: client, provider: provider, on: connection)
        }
    }

    /// A Google or OIDC provider's id_token checked against the app's settings for it: the
    /// provider's name and what the token proves.
    private func verifiedIDToken(app: App, provider name: String, idToken: String, nonce: String?) async throws -> (String, ProviderUser) {
        let provider: OAuthProvider
        do {
            provider = try OAuthProvider.resolve(name: name, app: settings.app(app), callbackURL: callbackURL, verifier: oidc)
        } catch let error as APIError where error.code == "validation_failed" {
            throw APIError(.badRequest, code: "validation_failed", message: "Custom OIDC provider \"\(name)\" not allowed")
        }
        guard provider.kind != .github else { throw APIError(.badRequest, code: "validation_failed", message: "Provider \(provider.name) issues no id_token") }
        do {
            let endpoints = try await provider.endpoints()
            guard let issuer = endpoints.issuer, let jwks = endpoints.jwks else { throw OIDCError.unavailable("provider \(provider.name) has no key set") }
            let identity = try await oidc.verify(idToken: idToken, issuer: issuer, jwksURL: jwks, audiences: provider.settings.audiences, nonce: .hashedIfPresent(nonce))
            return (provider.name, ProviderUser(identity))
        } catch let error as OIDCError {
            throw Self.apiError(error)
        }
    }

    // MARK: accounts from identities

    /// GoTrue's `createAccountFromExternalIdentity` under `OAuthLinking`'s rules: the account
    /// the identity signs in to, made or joined, saved. The caller issues the session.
    func signInWithExternalIdentity(app: App, provider: String, providerUser: ProviderUser, on connection: PostgresConnection) async throws -> UserRecord {
        let appSettings = settings.app(app)
        let identities = IdentityStore(logger: logger)
        let emails = providerUser.emails.compactMap { email in Credentials.normalizedEmail(email.email).map { ProviderEmail(email: $0, verified: email.verified, primary: email.primary) } }
        let candidate = emails.first(where: \.primary) ?? emails.last
        let owner = try await identities.owner(provider: provider, subject: providerUser.subject, app: app, on: connection)
        var found = OAuthLinking.Found(identityOwner: owner?.userID)
        if owner == nil {
            let verified = OAuthLinking.verifiedEmails(emails)
            found.accountsWithVerifiedEmail = try await identities.accounts(withEmails: verified, app: app, on: connection)
            found.accountsWithVerifiedIdentity = try await identities.accounts(withVerifiedIdentityEmails: verified, app: app, on: connection)
            if let candidate { found.candidateTaken = try await users.find(email: candidate.email, app: app, on: connection) != nil }
        }
        let now = Date()
        var user: UserRecord
        var reclaimed = false
        switch OAuthLinking.decide(emails: emails, found: found) {
        case .accountExists(let userID):
            guard let existing = try await users.find(id: userID, app: app, on: connection, forUpdate: true) else { throw AuthErrors.userNotFound }
            user = existing
            if let owner { try await identities.signedIn(identityID: owner.identityID, data: providerUser.identityData, on: connection) }
        case .link(let userID):
            guard let existing = try await users.find(id: userID, app: app, on: connection, forUpdate: true) else { throw AuthErrors.userNotFound }
            user = existing
            guard try await identities.insert(userID: user.id, app: app, provider: provider, subject: providerUser.subject, data: providerUser.identityData, signedIn: true, on: connection) else {
                throw APIError(.unprocessableContent, code: "identity_already_exists", message: "Identity is already linked to another user")
            }
            // The provider verified the account's own address: its owner is here. What someone
            // else set up with that address before it was proven goes (`AccountProof`).
            if let email = user.email, emails.contains(where: { $0.verified && $0.email == email }) {
                let wasProven = user.emailProvenAt != nil
                if AccountProof.apply(.email, confirmsSignUp: false, to: &user, now: now) == .reclaimed { reclaimed = true }
                if !wasProven {
                    let unproven = OAuthLinking.unprovenIdentities(of: user.identities, except: nil)
                    try await identities.delete(identityIDs: unproven.map(\.id), userID: user.id, on: connection)
                    if !unproven.isEmpty { reclaimed = true }
                    user.identities.removeAll { identity in unproven.contains { $0.id == identity.id } }
                }
            }
        case .create(let email, let verified):
            guard !appSettings.disableSignup else { throw AuthErrors.signupDisabled }
            guard OAuthLinking.mayProceed(accountEmailConfirmed: false, candidateVerified: verified, autoconfirm: appSettings.emailAutoconfirm) else {
                throw Self.emailNeedsVerification(provider)
            }
            let metadata = providerUser.identityData.filter { key, _ in !["iss", "provider_id"].contains(key) }
            user = UserRecord(id: UUID(), app: app, email: email, phone: nil, encryptedPassword: nil,
                              emailConfirmedAt: email != nil ? now : nil, phoneConfirmedAt: nil,
                              appMetadata: ["provider": .string(provider), "providers": .array([.string(provider)])],
                              userMetadata: metadata, createdAt: now, updatedAt: now,
                              emailProvenAt: verified && email != nil ? now : nil)
            try MetadataLimits.check(user: user.userMetadata, app: user.appMetadata)
            try await users.insert(user, on: connection)
            guard try await identities.insert(userID: user.id, app: app, provider: provider, subject: providerUser.subject, data: providerUser.identityData, signedIn: true, on: connection) else {
                throw APIError(.unprocessableContent, code: "identity_already_exists", message: "Identity is already linked to another user")
            }
            try await publishRegistered(user, on: connection)
        case .multipleAccounts:
            throw APIError(.conflict, code: "conflict", message: "Multiple accounts with the same email address were found for this identity")
        }
        guard !user.isBanned else { throw AuthErrors.userBanned }
        // An account whose address is still unconfirmed is not entered through an identity that
        // did not verify it (GoTrue's rule; apps that autoconfirm let it in).
        if user.email != nil, user.emailConfirmedAt == nil,
           !OAuthLinking.mayProceed(accountEmailConfirmed: false, candidateVerified: candidate.map { $0.verified && $0.email == user.email } ?? false, autoconfirm: appSettings.emailAutoconfirm) {
            throw Self.emailNeedsVerification(provider)
        }
        if reclaimed { try await reclaim(user, on: connection) }
        // Keep what the account has: a provider's name never overwrites the user's own.
        for (key, value) in providerUser.identityData where ["name", "full_name", "avatar_url", "picture", "given_name", "family_name"].contains(key) && user.userMetadata[key] == nil {
            user.userMetadata[key] = value
        }
        addProvider(provider, to: &user)
        try MetadataLimits.check(user: user.userMetadata, app: user.appMetadata)
        try await users.update(user, on: connection)
        return user
    }

    /// Manual linking's callback: the identity joins the signed-in user who asked; one that is
    /// already someone's is refused. An account without an email takes the provider's verified
    /// one, and an anonymous account becomes permanent.
    func linkIdentity(to userID: UUID, app: App, provider: String, providerUser: ProviderUser, on connection: PostgresConnection) async throws -> UserRecord {
        let identities = IdentityStore(logger: logger)
        guard var user = try await users.find(id: userID, app: app, on: connection, forUpdate: true) else {
            throw APIError(.unprocessableContent, code: "user_not_found", message: "Linking target user not found")
        }
        guard !user.isBanned else { throw AuthErrors.userBanned }
        if let owner = try await identities.owner(provider: provider, subject: providerUser.subject, app: app, on: connection) {
            throw APIError(.unprocessableContent, code: "identity_already_exists", message: owner.userID == user.id ? "Identity is already linked" : "Identity is already linked to another user")
        }
        var emailAdopted = false
        if user.email == nil, let candidate = providerUser.candidateEmail, let email = Credentials.normalizedEmail(candidate.email) {
            guard candidate.verified else {
                throw APIError(.unprocessableContent, code: "email_not_confirmed", message: "Unverified email with \(provider). Verify the email with \(provider) in order to link it")
            }
            if try await users.find(email: email, app: app, on: connection) != nil {
                throw APIError(.unprocessableContent, code: "email_exists", message: "A user with this email address has already been registered")
            }
            let now = Date()
            (user.email, user.emailConfirmedAt, user.emailProvenAt) = (email, now, now)
            emailAdopted = true
        }
        guard try await identities.insert(userID: user.id, app: app, provider: provider, subject: providerUser.subject, data: providerUser.identityData, signedIn: true, on: connection) else {
            throw APIError(.unprocessableContent, code: "identity_already_exists", message: "Identity is already linked to another user")
        }
        addProvider(provider, to: &user)
        try MetadataLimits.check(user: user.userMetadata, app: user.appMetadata)
        try await audit(.identityLinked, actor: .user(user), traits: ["provider": .string(provider)], app: app, on: connection)
        if try await convertAnonymousByLinking(&user, on: connection) { return user }
        try await users.update(user, on: connection)
        if emailAdopted { try await publishUpdated(user, on: connection) }
        return user
    }

    // MARK: helpers

    /// Auth's callback, registered with every provider.
    var callbackURL: String { "\(settings.publicURL)/callback" }

    static func emailNeedsVerification(_ provider: String) -> APIError {
        APIError(.unprocessableContent, code: "provider_email_needs_verification", message: "Unverified email with \(provider). Verify the email with \(provider) in order to sign in")
    }

    static func apiError(_ error: OIDCError) -> APIError {
        switch error {
        case .invalid(let message): APIError(.badRequest, code: "bad_oauth_callback", message: message)
        case .unavailable: APIError(.badGateway, code: "unexpected_failure", message: "The provider could not be asked; try again later")
        }
    }

    /// GoTrue's error redirect: `error`, `error_code` and `error_description` in the query and
    /// again in the fragment (with `sb`, which tells clients it is Supabase Auth's).
    static func errorRedirect(to url: String, error: APIError) -> String {
        errorRedirect(to: url, oauthError: oauthErrorName(for: error), description: error.message, code: error.code)
    }

    static func errorRedirect(to url: String, oauthError: String, description: String, code: String?) -> String {
        var items: [(String, String)] = [("error", oauthError)]
        if let code { items.append(("error_code", code)) }
        items.append(("error_description", description))
        let withQuery = appending(query: items, to: withoutFragment(url))
        return withQuery + "#" + (items + [("sb", "")]).map { "\($0.0)=\(percentEncoded($0.1))" }.joined(separator: "&")
    }

    /// GoTrue's `oauthErrorMap`, with its three refusals that read `access_denied`.
    static func oauthErrorName(for error: APIError) -> String {
        if ["signup_disabled", "user_banned", "provider_email_needs_verification"].contains(error.code) { return "access_denied" }
        switch error.status.code {
        case 400: return "invalid_request"
        case 401: return "unauthorized_client"
        case 403: return "access_denied"
        case 503: return "temporarily_unavailable"
        default: return "server_error"
        }
    }

    static func withoutFragment(_ url: String) -> String {
        guard let hash = url.firstIndex(of: "#") else { return url }
        return String(url[..<hash])
    }
}
