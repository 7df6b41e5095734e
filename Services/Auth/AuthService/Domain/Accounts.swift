import ColonyModels
import ColonyPlatform
import ColonyStorage
import Crypto
import Foundation
import JWTKit
import Logging
import PostgresNIO

/// Who is asking, for rate limits and the session record.
public struct ClientInfo: Sendable {
    public var ip: String
    public var userAgent: String?
    /// The request's `Accept-Language`: the language of a mail or SMS when the user's metadata names none.
    public var acceptLanguage: String?
    public init(ip: String, userAgent: String? = nil, acceptLanguage: String? = nil) {
        self.ip = ip
        self.userAgent = userAgent
        self.acceptLanguage = acceptLanguage
    }
}

/// A verified caller of auth's own endpoints: their access token's claims, checked against a
/// live session.
public struct AuthenticatedCaller: Sendable {
    public var userID: UUID
    public var sessionID: UUID?
    public var claims: AccessTokenClaims
}

/// Every account operation of the auth service, each one transaction (events through the
/// outbox in the same transaction). Routes decode and call these.
public struct Accounts: Sendable {
    let settings: AuthSettings
    let database: Database
    let outbox: Outbox
    let keyRing: KeyRing
    let hasher: PasswordHasher
    let sender: any MessageSender
    let apple: AppleIdentityVerifier
    /// OAuth/OIDC providers' discovery documents and key sets (web flow, `grant_type=id_token`).
    let oidc: OIDCVerifier
    let logger: Logger
    let users: UserStore
    let sessions: SessionStore
    let oneTimeTokens: OneTimeTokenStore
    let limiter: RateLimiter
    let ipLimiter: LocalRateLimiter
    let addressRequests: AddressRequestStore
    /// Wakes this replica's `AddressRequestDispatcher` when a request is queued.
    let addressRequestQueued: WakeSignal
    /// Where data exports are written and served from (nil: exports are not offered).
    let exports: Storage?

    public init(settings: AuthSettings, database: Database, outbox: Outbox, keyRing: KeyRing, hasher: PasswordHasher, sender: any MessageSender, apple: AppleIdentityVerifier, logger: Logger, addressRequestQueued: WakeSignal = WakeSignal(), oidc: OIDCVerifier = OIDCVerifier(), exports: Storage? = nil) {
        self.settings = settings
        self.database = database
        self.outbox = outbox
        self.keyRing = keyRing
        self.hasher = hasher
        self.sender = sender
        self.apple = apple
        self.oidc = oidc
        self.logger = logger
        self.users = UserStore(logger: logger)
        self.sessions = SessionStore(logger: logger)
        self.oneTimeTokens = OneTimeTokenStore(logger: logger)
        self.limiter = RateLimiter(database: database, logger: logger)
        self.ipLimiter = LocalRateLimiter()
        self.addressRequests = AddressRequestStore(logger: logger)
        self.addressRequestQueued = addressRequestQueued
        self.exports = exports
    }

    // MARK: sign-up and password sign-in

    public func signUp(app: App, email rawEmail: String?, phone rawPhone: String?, password: String, data: [String: JSONValue], pkce: PKCEChallenge?, redirectTo: String?, client: ClientInfo) async throws -> SignUpResult {
        let appSettings = settings.app(app)
        guard !appSettings.disableSignup else { throw AuthErrors.signupDisabled }
        let (email, phone) = try identifier(email: rawEmail, phone: rawPhone, app: appSettings)
        // A phone sign-up with a password would be waiting, password set, for whoever owns the
        // number to sign in by SMS: only apps that offer phone + password take it.
        if phone != nil, !appSettings.phonePasswordEnabled { throw AuthErrors.phoneSignupDisabled }
        try validateNewPassword(password)
        let provider = email != nil ? "email" : "phone"
        let appMetadata: [String: JSONValue] = ["provider": .string(provider), "providers": .array([.string(provider)])]
        try MetadataLimits.check(user: data, app: appMetadata)
        try ipLimiter.check("signup:ip:\(client.ip)", rule: settings.rateLimits.signUpPerIP)
        let hash = try await hasher.hash(password)
        let now = Date()
        // Email sign-ups wait for the mailed confirmation unless the app autoconfirms; phone
        // sign-ups with a password are confirmed by a texted code.
        let confirmed = email != nil ? appSettings.emailAutoconfirm : false
        if let email, !confirmed {
            // An app that confirms addresses answers every email sign-up alike, the address's
            // account or not (see `AddressRequestRules`): the account the answer describes is made,
            // or not, off the request path. (Apps that autoconfirm answer an existing address
            // 422 `user_already_exists`, as Supabase Auth does: their sign-up signs in.)
            let answered = AddressRequestRules.signUpUser(app: app, email: email, userID: UUID(), identityID: UUID.timeOrdered(), encryptedPassword: hash, data: data, now: now)
            try await enqueue(.signup, app: app, email: email, details: AddressRequestDetails(
                redirectTo: redirectTo, codeChallenge: pkce?.challenge, codeChallengeMethod: pkce?.method.rawValue, acceptLanguage: client.acceptLanguage,
                data: data, userId: answered.id, identityId: answered.identities.first?.id, encryptedPassword: hash, requestedAt: now
            ))
            return .user(UserResource(answered))
        }
        var user = UserRecord(
            id: UUID(), app: app, email: email, phone: phone, encryptedPassword: hash,
            emailConfirmedAt: email != nil && confirmed ? now : nil, phoneConfirmedAt: nil,
            appMetadata: appMetadata, userMetadata: data, createdAt: now, updatedAt: now,
            // Whoever signs up has proven nothing: the password is theirs, the address may not be.
            passwordUnproven: true
        )
        var pending: OutgoingMessage?
        let result: SignUpResult = try await database.transaction { connection in
            try await users.insert(user, on: connection)
            try await addIdentity(for: user, provider: provider, on: connection)
            try await publishRegistered(user, on: connection)
            if confirmed {
                return .session(try await issueSession(userID: user.id, app: app, method: "password", client: client, on: connection))
            }
            let kind: OneTimeTokenKind = email != nil ? .signup : .sms
            pending = try await prepareMessage(user: &user, kind: kind, recipient: email ?? phone!, redirectTo: redirectTo, pkce: pkce, confirmsSignUp: true, acceptLanguage: client.acceptLanguage, on: connection)
            try await users.update(user, on: connection)
            user.identities = try await users.identities(of: user.id, on: connection)
            return .user(UserResource(user))
        }
        if let pending { try await deliver(pending) }
        return result
    }

    public func signInWithPassword(app: App, email rawEmail: String?, phone rawPhone: String?, password: String, client: ClientInfo) async throws -> SessionResponse {
        let email = rawEmail.flatMap { $0.isEmpty ? nil : Credentials.normalizedEmail($0) }
        let phone = rawPhone.flatMap { $0.isEmpty ? nil : Credentials.normalizedPhone($0) }
        guard email != nil || phone != nil else {
            if rawEmail?.isEmpty == false || rawPhone?.isEmpty == false { throw AuthErrors.invalidCredentials }
            throw AuthErrors.validation("An email address or phone number is required")
        }
        if email == nil, !settings.app(app).phonePasswordEnabled { throw AuthErrors.phoneSignupDisabled }
        try ipLimiter.check("signin:ip:\(client.ip)", rule: settings.rateLimits.signInPerIP)
        let found = try await database.withConnection { connection in
            if let email { return try await users.find(email: email, app: app, on: connection) }
            return try await users.find(phone: phone!, app: app, on: connection)
        }
        // Failures only, per account and address: a stranger guessing from elsewhere never locks
        // the owner out, and the owner's own sign-ins never count (their hit is given back).
        let failures = "signin-fail:\(app.rawValue):\(found.map { $0.id.uuidString.lowercased() } ?? email ?? phone!):\(client.ip)"
        try await limiter.check(failures, rule: settings.rateLimits.signInPerAccount)
        guard let user = found, let hash = user.encryptedPassword else {
            try await hasher.dummyVerify(password)
            throw AuthErrors.invalidCredentials
        }
        guard try await hasher.verify(password, hash: hash) else { throw AuthErrors.invalidCredentials }
        try await limiter.release(failures, rule: settings.rateLimits.signInPerAccount)
        if email != nil, user.emailConfirmedAt == nil { throw AuthErrors.emailNotConfirmed }
        if email == nil, user.phoneConfirmedAt == nil { throw AuthErrors.phoneNotConfirmed }
        guard !user.isBanned else { throw AuthErrors.userBanned }
        return try await database.transaction { connection in
            try await issueSession(userID: user.id, app: app, method: "password", client: client, on: connection)
        }
    }

    // MARK: refresh

    public func refresh(app: App, refreshToken: String, client: ClientInfo) async throws -> SessionResponse {
        try ipLimiter.check("refresh:ip:\(client.ip)", rule: settings.rateLimits.refreshPerIP)
        let appSettings = settings.app(app)
        let presentedHash = Secrets.hash(refreshToken)
        // Most refreshes present the active token of a live session: one statement does it.
        let salt = RefreshTokenRules.newSalt()
        let child = RefreshTokenRules.childToken(parent: refreshToken, salt: salt)
        let rotated = try await database.withConnection { connection in
            // The statement records `token_refreshed` too (GoTrue's entry), in the same statement.
            try await sessions.rotateIfActive(presentedHash: presentedHash, app: app, inactivityTimeoutSeconds: appSettings.sessionInactivityTimeoutSeconds, childHash: Secrets.hash(child), salt: salt, ip: client.ip, on: connection)
        }
        if let (session, user) = rotated {
            return try await sessionResponse(user: user, session: session, refreshToken: child)
        }
        enum Outcome: Sendable { case session(SessionResponse), failure(APIError) }
        // Failures that revoke (reuse, expiry) must commit, so they are returned, not thrown.
        let outcome: Outcome = try await database.transaction { connection in
            guard let (token, session) = try await sessions.findTokenAndSession(hash: presentedHash, on: connection), session.app == app else {
                return .failure(AuthErrors.refreshTokenNotFound)
            }
            // The active token matters only when a revoked token comes back.
            let active = token.revokedAt == nil ? nil : try await sessions.activeToken(sessionID: session.id, on: connection)
            let decision = RefreshTokenRules.decide(
                token: .init(revokedAt: token.revokedAt, isParentOfActive: active?.parentHash == presentedHash),
                session: .init(createdAt: session.createdAt, refreshedAt: session.refreshedAt, notAfter: session.notAfter),
                settings: appSettings, now: Date()
            )
            guard let user = try await users.find(id: session.userId, app: app, on: connection), !user.isBanned else {
                return .failure(AuthErrors.refreshTokenNotFound)
            }
            let newToken: String
            switch decision {
            case .sessionExpired:
                try await sessions.delete(id: session.id, on: connection)
                return .failure(AuthErrors.sessionExpired)
            case .reuseDetected:
                logger.warning("refresh token reused outside the reuse interval; session revoked", metadata: ["session_id": "\(session.id)"])
                try await sessions.delete(id: session.id, on: connection)
                try await audit(.tokenRevoked, actor: .user(user), traits: ["reason": .string("refresh_token_reused")], ip: client.ip, app: app, on: connection)
                return .failure(AuthErrors.refreshTokenAlreadyUsed)
            case .returnActive:
                guard let active, let salt = active.salt else { return .failure(AuthErrors.refreshTokenNotFound) }
                newToken = RefreshTokenRules.childToken(parent: refreshToken, salt: salt)
                guard Secrets.hash(newToken) == active.tokenHash else { return .failure(AuthErrors.refreshTokenNotFound) }
                try await sessions.markRefreshed(id: session.id, on: connection)
            case .rotate, .rotateWithinReuseInterval:
                let salt = RefreshTokenRules.newSalt()
                newToken = RefreshTokenRules.childToken(parent: refreshToken, salt: salt)
                try await sessions.rotate(tokenID: token.id, sessionID: session.id, childHash: Secrets.hash(newToken), parentHash: presentedHash, salt: salt, on: connection)
            }
            try await audit(.tokenRefreshed, actor: .user(user), ip: client.ip, app: app, on: connection)
            return .session(try await sessionResponse(user: user, session: session, refreshToken: newToken))
        }
        switch outcome {
        case .session(let response): return response
        case .failure(let error): throw error
        }
    }

    // MARK: Sign in with Apple

    public func signInWithIDToken(app: App, provider: String, idToken: String, nonce: String?, data: [String: JSONValue], client: ClientInfo) async throws -> SessionResponse {
        let appSettings = settings.app(app)
        // Google and the app's other OIDC providers: `Accounts+OAuth.swift`.
        guard provider == "apple" else { return try await signInWithProviderIDToken(app: app, provider: provider, idToken: idToken, nonce: nonce, client: client) }
        guard appSettings.appleEnabled else { throw AuthErrors.providerDisabled }
        try MetadataLimits.check(user: data, app: [:])
        try ipLimiter.check("signin:ip:\(client.ip)", rule: settings.rateLimits.signInPerIP)
        // GoTrue accepts the web flow's Services ID too (an app signing in with Apple's JS SDK).
        let identity = try await apple.verify(idToken: idToken, bundleIDs: appSettings.appleBundleIds + (appSettings.oauthProviders["apple"]?.audiences ?? []), nonce: nonce)
        let identityData = ProviderUser(apple: identity, names: data).identityData

        return try await database.transaction { connection in
            var user: UserRecord
            if let userID = try await users.findIdentity(provider: "apple", providerID: identity.subject, app: app, on: connection),
               let existing = try await users.find(id: userID, app: app, on: connection, forUpdate: true) {
                user = existing
            } else if let email = identity.email,
                      let existing = try await users.find(email: email, app: app, on: connection, forUpdate: true),
                      AccountProof.appleMayLink(to: existing, appleVerifiedEmail: identity.emailVerified) {
                // The account with this address. Apple's verified email is its owner's proof: a
                // password someone else set by signing up with it is cleared, their sessions end.
                user = existing
                if identity.emailVerified, AccountProof.apply(.email, confirmsSignUp: false, to: &user, now: Date()) == .reclaimed {
                    try await reclaim(user, on: connection)
                }
            } else {
                guard !appSettings.disableSignup else { throw AuthErrors.signupDisabled }
                let now = Date()
                // An unverified address that another account holds is left out, not taken.
                var email = identity.email
                if let taken = email, try await users.find(email: taken, app: app, on: connection) != nil { email = nil }
                user = UserRecord(id: UUID(), app: app, email: email, phone: nil, encryptedPassword: nil,
                                  emailConfirmedAt: identity.emailVerified && email != nil ? now : nil, phoneConfirmedAt: nil,
                                  appMetadata: ["provider": .string("apple"), "providers": .array([.string("apple")])],
                                  userMetadata: [:], createdAt: now, updatedAt: now,
                                  emailProvenAt: identity.emailVerified && email != nil ? now : nil)
                try await users.insert(user, on: connection)
                try await publishRegistered(user, nameFrom: data, on: connection)
            }
            guard !user.isBanned else { throw AuthErrors.userBanned }
            // Keep the name from the first sign-in: later ones carry none and must not erase it.
            var changed = false
            for (key, value) in data where user.userMetadata[key] == nil {
                user.userMetadata[key] = value
                changed = true
            }
            for (key, value) in identityData where ["email", "email_verified", "sub", "iss", "provider_id", "full_name", "name"].contains(key) && user.userMetadata[key] == nil {
                user.userMetadata[key] = value
            }
            addProvider("apple", to: &user)
            try MetadataLimits.check(user: user.userMetadata, app: user.appMetadata)
            try await users.update(user, on: connection)
            try await users.upsertIdentity(userID: user.id, app: app, provider: "apple", providerID: identity.subject, data: identityData, signedIn: true, on: connection)
            if changed { try await publishUpdated(user, on: connection) }
            return try await issueSession(userID: user.id, app: app, method: "oauth", client: client, provider: "apple", on: connection)
        }
    }

    // MARK: PKCE

    public func exchangeAuthCode(app: App, authCode: String, codeVerifier: String, client: ClientInfo) async throws -> SessionResponse {
        try await database.transaction { connection in
            guard let flow = try await oneTimeTokens.takeFlowState(authCodeHash: Secrets.hash(authCode), app: app, on: connection) else {
                throw AuthErrors.flowStateNotFound
            }
            guard let pkce = PKCEChallenge(stored: flow.challenge, method: flow.method), pkce.matches(verifier: codeVerifier) else {
                throw AuthErrors.badCodeVerifier
            }
            return try await issueSession(userID: flow.userID, app: app, method: flow.authenticationMethod, client: client, on: connection)
        }
    }

    // MARK: building blocks

    /// The one identifier a sign-up uses, normalized, with the app's method switched on.
    private func identifier(email rawEmail: String?, phone rawPhone: String?, app: AppAuthSettings) throws -> (String?, String?) {
        if let email = try Credentials.email(rawEmail) {
            guard app.emailEnabled else { throw AuthErrors.emailProviderDisabled }
            return (email, nil)
        }
        if let phone = try Credentials.phone(rawPhone) {
            guard app.phoneEnabled else { throw AuthErrors.phoneProviderDisabled }
            return (nil, phone)
        }
        throw AuthErrors.validation("To signup, please provide your email or phone number")
    }

    func validateNewPassword(_ password: String) throws {
        let reasons = Credentials.passwordProblems(password, minimumLength: settings.minimumPasswordLength)
        if !reasons.isEmpty { throw AuthErrors.weakPassword(reasons: reasons, minimumLength: settings.minimumPasswordLength) }
        if password.utf8.count > Credentials.maximumPasswordBytes { throw AuthErrors.validation("Password cannot be longer than 72 characters") }
    }

    /// Creates a session with its first refresh token and answers with both tokens.
    func issueSession(userID: UUID, app: App, method: String, client: ClientInfo, provider: String? = nil, on connection: PostgresConnection) async throws -> SessionResponse {
        guard var user = try await users.find(id: userID, app: app, on: connection) else { throw AuthErrors.userNotFound }
        guard !user.isBanned else { throw AuthErrors.userBanned }
        let now = Date()
        let appSettings = settings.app(app)
        let session = SessionRecord(
            id: UUID(), userId: userID, app: app, aal: "aal1",
            amr: [.object(["method": .string(method), "timestamp": .number(now.timeIntervalSince1970.rounded(.down))])],
            notAfter: appSettings.sessionTimeboxSeconds.map { now.addingTimeInterval(TimeInterval($0)) },
            refreshedAt: nil, createdAt: now
        )
        let refreshToken = Secrets.opaqueToken()
        try await sessions.create(session, firstTokenHash: Secrets.hash(refreshToken), userAgent: client.userAgent, ip: client.ip, on: connection)
        user.lastSignInAt = try await users.touchSignIn(id: userID, on: connection)
        try await audit(.login, actor: .user(user), traits: ["provider": .string(provider ?? Self.loginProvider(method: method, user: user))], ip: client.ip, app: app, on: connection)
        return try await sessionResponse(user: user, session: session, refreshToken: refreshToken)
    }

    func sessionResponse(user: UserRecord, session: SessionRecord, refreshToken: String) async throws -> SessionResponse {
        let lifetime = settings.app(user.app).accessTokenLifetimeSeconds
        // Whole seconds: clients parse `iat` and `exp` as integers.
        let issuedAt = Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down))
        let expiresAt = issuedAt.addingTimeInterval(TimeInterval(lifetime))
        let claims = AccessTokenClaims(
            sub: user.id.uuidString.lowercased(), aud: user.app.rawValue, iss: settings.issuer, exp: expiresAt, iat: issuedAt,
            role: "authenticated", sessionId: session.id.uuidString.lowercased(), email: user.email ?? "", phone: user.phone ?? "",
            appMetadata: user.appMetadata, userMetadata: user.userMetadata, aal: session.aal, amr: session.amr, isAnonymous: user.isAnonymous,
            colonyMfaEnrolled: user.factors.contains(where: \.isVerified)
        )
        let (kid, key) = try await keyRing.signingKey()
        let accessToken = try CompactJWS.sign(claims, kid: kid, key: key)
        return SessionResponse(accessToken: accessToken, expiresIn: lifetime, expiresAt: Int(expiresAt.timeIntervalSince1970), refreshToken: refreshToken, user: UserResource(user))
    }

    func addIdentity(for user: UserRecord, provider: String, on connection: PostgresConnection) async throws {
        try await users.addOwnIdentity(for: user, provider: provider, on: connection)
    }

    func addProvider(_ provider: String, to user: inout UserRecord) {
        var providers: [JSONValue] = []
        if case .array(let existing)? = user.appMetadata["providers"] { providers = existing }
        if !providers.contains(.string(provider)) { providers.append(.string(provider)) }
        user.appMetadata["providers"] = .array(providers)
        if user.appMetadata["provider"] == nil { user.appMetadata["provider"] = .string(provider) }
    }

    static func amrMethod(for kind: OneTimeTokenKind) -> String {
        switch kind {
        case .signup, .magiclink, .sms: "otp"
        case .invite: "invite"
        case .recovery: "recovery"
        case .emailChange, .emailChangeCurrent: "email_change"
        case .phoneChange: "phone_change"
        case .reauthentication: "reauthentication"
        }
    }

    private func phoneHash(_ user: UserRecord) -> String? {
        user.phone.map { Credentials.phoneHash(digits: $0, pepper: settings.phonePepper) }
    }

    /// Announces a new account and records it: `user_signedup` by the user itself, or
    /// `operatorAction` (`user_signedup`, `user_invited`) by `actor` (the app's service-role key,
    /// or the console's operator).
    func publishRegistered(_ user: UserRecord, nameFrom data: [String: JSONValue] = [:], operatorAction: AuditAction? = nil, by actor: AuditActor = .serviceRole, on connection: PostgresConnection) async throws {
        try await outbox.publish(Self.registered(user, phonePepper: settings.phonePepper, nameFrom: data), on: connection, logger: logger)
        if let operatorAction {
            try await audit(operatorAction, actor: actor, traits: auditTraits(of: user), app: user.app, on: connection)
        } else {
            let provider = user.isAnonymous ? "anonymous" : Self.loginProvider(method: "", user: user)
            try await audit(.userSignedUp, actor: .user(user), traits: ["provider": .string(provider)], app: user.app, on: connection)
        }
    }

    /// The provider a login entry names (GoTrue's `provider` trait) when the caller gave none.
    static func loginProvider(method: String, user: UserRecord) -> String {
        if method == "anonymous" || user.isAnonymous { return "anonymous" }
        if method == "oauth", case .string(let provider)? = user.appMetadata["provider"] { return provider }
        return user.email == nil && user.phone != nil ? "phone" : "email"
    }

    /// `user_registered` for an account: its addresses, the phone's hash for contact matching,
    /// and its metadata (with `data`'s keys where the metadata has none).
    static func registered(_ user: UserRecord, phonePepper: String, nameFrom data: [String: JSONValue] = [:]) -> EventEnvelope<UserRegistered> {
        var metadata = user.userMetadata
        for (key, value) in data where metadata[key] == nil { metadata[key] = value }
        let payload = UserRegistered(userId: user.id, app: user.app, email: user.email, phone: user.phone.map { "+" + $0 },
                                     phoneHash: user.phone.map { Credentials.phoneHash(digits: $0, pepper: phonePepper) }, userMetadata: metadata, createdAt: user.createdAt)
        return EventEnvelope(app: user.app, aggregateId: user.id.uuidString.lowercased(), actor: user.id, payload: payload)
    }

    func publishUpdated(_ user: UserRecord, on connection: PostgresConnection) async throws {
        let payload = UserUpdated(userId: user.id, app: user.app, email: user.email, phone: user.phone.map { "+" + $0 }, phoneHash: phoneHash(user), userMetadata: user.userMetadata, updatedAt: Date())
        try await outbox.publish(EventEnvelope(app: user.app, aggregateId: user.id.uuidString.lowercased(), actor: user.id, payload: payload), on: connection, logger: logger)
    }

    // MARK: helpers for redirects

    static func appending(fragment items: [(String, String)], to url: String) -> String {
        let encoded = items.map { "\($0.0)=\(percentEncoded($0.1))" }.joined(separator: "&")
        return url + "#" + encoded
    }

    static func appending(query items: [(String, String)], to url: String) -> String {
        let encoded = items.map { "\($0.0)=\(percentEncoded($0.1))" }.joined(separator: "&")
        return url + (url.contains("?") ? "&" : "?") + encoded
    }

    static func percentEncoded(_ value: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return value.addingPercentEncoding(withAllowedCharacters: allowed) ?? value
    }
}
