import ColonyModels
import ColonyPlatform
import Crypto
import Foundation
import JWTKit
import Logging
import PostgresNIO

/// Who is asking, for rate limits and the session record.
public struct ClientInfo: Sendable {
    public var ip: String
    public var userAgent: String?
    public init(ip: String, userAgent: String? = nil) {
        self.ip = ip
        self.userAgent = userAgent
    }
}

/// A verified caller of auth's own endpoints: their access token's claims, checked against a
/// live session.
public struct AuthenticatedCaller: Sendable {
    public var userID: UUID
    public var sessionID: UUID?
    public var claims: AccessTokenClaims
}

/// PKCE parameters a client sends with requests that end in a redirect.
public struct PKCEChallenge: Sendable {
    public var challenge: String
    public var method: String  // "s256" or "plain"

    init?(challenge: String?, method: String?) {
        guard let challenge, !challenge.isEmpty else { return nil }
        self.challenge = challenge
        self.method = (method ?? "plain").lowercased()
    }

    func matches(verifier: String) -> Bool {
        switch method {
        case "s256":
            let digest = Base64URL.encode(SHA256.hash(data: Data(verifier.utf8)))
            return digest == challenge
        default:
            return verifier == challenge
        }
    }
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
    let logger: Logger
    let users: UserStore
    let sessions: SessionStore
    let oneTimeTokens: OneTimeTokenStore
    let limiter: RateLimiter
    let ipLimiter: LocalRateLimiter

    public init(settings: AuthSettings, database: Database, outbox: Outbox, keyRing: KeyRing, hasher: PasswordHasher, sender: any MessageSender, apple: AppleIdentityVerifier, logger: Logger) {
        self.settings = settings
        self.database = database
        self.outbox = outbox
        self.keyRing = keyRing
        self.hasher = hasher
        self.sender = sender
        self.apple = apple
        self.logger = logger
        self.users = UserStore(logger: logger)
        self.sessions = SessionStore(logger: logger)
        self.oneTimeTokens = OneTimeTokenStore(logger: logger)
        self.limiter = RateLimiter(database: database, logger: logger)
        self.ipLimiter = LocalRateLimiter()
    }

    // MARK: sign-up and password sign-in

    public func signUp(app: App, email rawEmail: String?, phone rawPhone: String?, password: String, data: [String: JSONValue], pkce: PKCEChallenge?, redirectTo: String?, client: ClientInfo) async throws -> SignUpResult {
        let appSettings = settings.app(app)
        guard !appSettings.disableSignup else { throw AuthErrors.signupDisabled }
        let (email, phone) = try identifier(email: rawEmail, phone: rawPhone, app: appSettings)
        try validateNewPassword(password)
        try ipLimiter.check("signup:ip:\(client.ip)", rule: settings.rateLimits.signUpPerIP)
        let hash = try await hasher.hash(password)
        let now = Date()
        // Email sign-ups wait for the mailed confirmation unless the app autoconfirms; phone
        // sign-ups with a password are confirmed by a texted code.
        let confirmed = email != nil ? appSettings.emailAutoconfirm : false
        let provider = email != nil ? "email" : "phone"
        var user = UserRecord(
            id: UUID(), app: app, email: email, phone: phone, encryptedPassword: hash,
            emailConfirmedAt: email != nil && confirmed ? now : nil, phoneConfirmedAt: nil,
            appMetadata: ["provider": .string(provider), "providers": .array([.string(provider)])],
            userMetadata: data, createdAt: now, updatedAt: now
        )
        var pending: (message: OutgoingMessage, rule: RateLimitRule?)?
        let result: SignUpResult = try await database.transaction { connection in
            try await users.insert(user, on: connection)
            try await addIdentity(for: user, provider: provider, on: connection)
            try await publishRegistered(user, on: connection)
            if confirmed {
                return .session(try await issueSession(userID: user.id, app: app, method: "password", client: client, on: connection))
            }
            let kind: OneTimeTokenKind = email != nil ? .signup : .sms
            pending = try await prepareMessage(user: &user, kind: kind, recipient: email ?? phone!, redirectTo: redirectTo, pkce: pkce, on: connection)
            try await users.update(user, on: connection)
            user.identities = try await users.identities(of: user.id, on: connection)
            return .user(UserResource(user))
        }
        if let pending { try await deliver(pending.message) }
        return result
    }

    public func signInWithPassword(app: App, email rawEmail: String?, phone rawPhone: String?, password: String, client: ClientInfo) async throws -> SessionResponse {
        let email = rawEmail.flatMap { $0.isEmpty ? nil : Credentials.normalizedEmail($0) }
        let phone = rawPhone.flatMap { $0.isEmpty ? nil : Credentials.normalizedPhone($0) }
        guard email != nil || phone != nil else {
            if rawEmail?.isEmpty == false || rawPhone?.isEmpty == false { throw AuthErrors.invalidCredentials }
            throw AuthErrors.validation("An email address or phone number is required")
        }
        try ipLimiter.check("signin:ip:\(client.ip)", rule: settings.rateLimits.signInPerIP)
        try await limiter.check("signin:account:\(app.rawValue):\(email ?? phone!)", rule: settings.rateLimits.signInPerAccount)
        let found = try await database.withConnection { connection in
            if let email { return try await users.find(email: email, app: app, on: connection) }
            return try await users.find(phone: phone!, app: app, on: connection)
        }
        guard let user = found, let hash = user.encryptedPassword else {
            try await hasher.dummyVerify(password)
            throw AuthErrors.invalidCredentials
        }
        guard try await hasher.verify(password, hash: hash) else { throw AuthErrors.invalidCredentials }
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
            try await sessions.rotateIfActive(presentedHash: presentedHash, app: app, inactivityTimeoutSeconds: appSettings.sessionInactivityTimeoutSeconds, childHash: Secrets.hash(child), salt: salt, on: connection)
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
        guard provider == "apple" else { throw APIError(.badRequest, code: "validation_failed", message: "Custom OIDC provider \"\(provider)\" not allowed") }
        guard appSettings.appleEnabled else { throw AuthErrors.providerDisabled }
        try ipLimiter.check("signin:ip:\(client.ip)", rule: settings.rateLimits.signInPerIP)
        let identity = try await apple.verify(idToken: idToken, bundleIDs: appSettings.appleBundleIds, nonce: nonce)
        var identityData: [String: JSONValue] = [
            "sub": .string(identity.subject), "iss": .string(AppleIdentityVerifier.issuer),
            "email_verified": .bool(identity.emailVerified), "is_private_email": .bool(identity.isPrivateEmail),
            "provider_id": .string(identity.subject),
        ]
        if let email = identity.email { identityData["email"] = .string(email) }
        // Apple sends the name only on the first sign-in; the app passes it along as metadata.
        for key in ["full_name", "name", "given_name", "family_name"] { if let value = data[key] { identityData[key] = value } }

        return try await database.transaction { connection in
            var user: UserRecord
            if let userID = try await users.findIdentity(provider: "apple", providerID: identity.subject, app: app, on: connection),
               let existing = try await users.find(id: userID, app: app, on: connection, forUpdate: true) {
                user = existing
            } else if let email = identity.email, identity.emailVerified,
                      let existing = try await users.find(email: email, app: app, on: connection, forUpdate: true) {
                user = existing  // link to the account with the same verified address
                if user.emailConfirmedAt == nil { user.emailConfirmedAt = Date() }
            } else {
                guard !appSettings.disableSignup else { throw AuthErrors.signupDisabled }
                let now = Date()
                user = UserRecord(id: UUID(), app: app, email: identity.email, phone: nil, encryptedPassword: nil,
                                  emailConfirmedAt: identity.emailVerified ? now : nil, phoneConfirmedAt: nil,
                                  appMetadata: ["provider": .string("apple"), "providers": .array([.string("apple")])],
                                  userMetadata: [:], createdAt: now, updatedAt: now)
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
            try await users.update(user, on: connection)
            try await users.upsertIdentity(userID: user.id, app: app, provider: "apple", providerID: identity.subject, data: identityData, signedIn: true, on: connection)
            if changed { try await publishUpdated(user, on: connection) }
            return try await issueSession(userID: user.id, app: app, method: "oauth", client: client, on: connection)
        }
    }

    // MARK: PKCE

    public func exchangeAuthCode(app: App, authCode: String, codeVerifier: String, client: ClientInfo) async throws -> SessionResponse {
        try await database.transaction { connection in
            guard let flow = try await oneTimeTokens.takeFlowState(authCodeHash: Secrets.hash(authCode), app: app, on: connection) else {
                throw AuthErrors.flowStateNotFound
            }
            guard let pkce = PKCEChallenge(challenge: flow.challenge, method: flow.method), pkce.matches(verifier: codeVerifier) else {
                throw AuthErrors.badCodeVerifier
            }
            return try await issueSession(userID: flow.userID, app: app, method: flow.authenticationMethod, client: client, on: connection)
        }
    }

    // MARK: passwordless: OTP, magic links, recovery

    /// `POST /otp`: a magic link and code by mail, or a code by SMS.
    public func sendOTP(app: App, email rawEmail: String?, phone rawPhone: String?, createUser: Bool, data: [String: JSONValue], pkce: PKCEChallenge?, redirectTo: String?, client: ClientInfo) async throws -> String? {
        let appSettings = settings.app(app)
        let email: String?
        let phone: String?
        if let normalized = try Credentials.email(rawEmail) {
            guard appSettings.magicLinkEnabled else { throw AuthErrors.emailProviderDisabled }
            (email, phone) = (normalized, nil)
        } else if let normalized = try Credentials.phone(rawPhone) {
            guard appSettings.phoneEnabled else { throw AuthErrors.phoneProviderDisabled }
            (email, phone) = (nil, normalized)
        } else {
            throw AuthErrors.validation("An email address or phone number is required")
        }
        try ipLimiter.check("otp:ip:\(client.ip)", rule: settings.rateLimits.otpPerIP)
        let recipient = email ?? phone!
        let kind: OneTimeTokenKind = email != nil ? .magiclink : .sms
        let pending: (message: OutgoingMessage, rule: RateLimitRule?) = try await database.transaction { connection in
            var user: UserRecord
            if let existing = try await (email != nil ? users.find(email: recipient, app: app, on: connection, forUpdate: true) : users.find(phone: recipient, app: app, on: connection, forUpdate: true)) {
                user = existing
            } else {
                guard createUser, !appSettings.disableSignup else { throw AuthErrors.otpSignupDisabled }
                let now = Date()
                let provider = email != nil ? "email" : "phone"
                user = UserRecord(id: UUID(), app: app, email: email, phone: phone, encryptedPassword: nil, emailConfirmedAt: nil, phoneConfirmedAt: nil,
                                  appMetadata: ["provider": .string(provider), "providers": .array([.string(provider)])],
                                  userMetadata: data, createdAt: now, updatedAt: now)
                try await users.insert(user, on: connection)
                try await addIdentity(for: user, provider: provider, on: connection)
                try await publishRegistered(user, on: connection)
            }
            guard !user.isBanned else { throw AuthErrors.userBanned }
            let prepared = try await prepareMessage(user: &user, kind: kind, recipient: recipient, redirectTo: redirectTo, pkce: pkce, on: connection)
            try await users.update(user, on: connection)
            return prepared
        }
        try await deliver(pending.message)
        return phone != nil ? UUID().uuidString.lowercased() : nil
    }

    /// `POST /recover`: a reset link and code, answered the same whether or not the account exists.
    public func recover(app: App, email rawEmail: String, pkce: PKCEChallenge?, redirectTo: String?, client: ClientInfo) async throws {
        guard let email = try Credentials.email(rawEmail) else { throw AuthErrors.validation("An email address is required") }
        try ipLimiter.check("otp:ip:\(client.ip)", rule: settings.rateLimits.otpPerIP)
        let pending: (message: OutgoingMessage, rule: RateLimitRule?)? = try await database.transaction { connection in
            guard var user = try await users.find(email: email, app: app, on: connection, forUpdate: true) else { return nil }
            let prepared = try await prepareMessage(user: &user, kind: .recovery, recipient: email, redirectTo: redirectTo, pkce: pkce, on: connection)
            try await users.update(user, on: connection)
            return prepared
        }
        if let pending { try await deliver(pending.message) }
    }

    public enum VerifyType: String, Sendable {
        case signup, invite, magiclink, recovery, email, sms
        case emailChange = "email_change"
        case phoneChange = "phone_change"

        var kinds: [OneTimeTokenKind] {
            switch self {
            case .signup, .invite, .magiclink, .email: [.signup, .magiclink]
            case .recovery: [.recovery]
            case .emailChange: [.emailChange]
            case .sms: [.sms]
            case .phoneChange: [.phoneChange]
            }
        }
    }

    /// `POST /verify` with the code and its recipient, or with the link's token hash.
    public func verify(app: App, type: VerifyType, code: String?, email rawEmail: String?, phone rawPhone: String?, tokenHash: String?, client: ClientInfo) async throws -> SessionResponse {
        try ipLimiter.check("verify:ip:\(client.ip)", rule: settings.rateLimits.verifyPerIP)
        // A wrong code returns nil rather than throwing, so its counted attempt commits.
        let session: SessionResponse? = try await database.transaction { connection in
            let token: OneTimeTokenRecord
            if let tokenHash, !tokenHash.isEmpty {
                guard let found = try await oneTimeTokens.findByLink(app: app, linkHash: Secrets.hash(tokenHash), on: connection), type.kinds.contains(found.kind) else {
                    throw AuthErrors.otpExpired
                }
                token = found
            } else {
                guard let code, !code.isEmpty else { throw AuthErrors.validation("Verify requires a token or a token hash") }
                let recipient: String
                if let rawEmail, !rawEmail.isEmpty, let email = Credentials.normalizedEmail(rawEmail) {
                    recipient = email
                } else if let rawPhone, !rawPhone.isEmpty, let phone = Credentials.normalizedPhone(rawPhone) {
                    recipient = phone
                } else {
                    throw AuthErrors.validation("Verify requires an email address or a phone number")
                }
                guard let found = try await oneTimeTokens.findLive(app: app, recipient: recipient, kinds: type.kinds, on: connection) else {
                    throw AuthErrors.otpExpired
                }
                guard Secrets.codeHash(code.trimmingCharacters(in: .whitespaces), recipient: recipient) == found.codeHash else {
                    try await oneTimeTokens.recordFailedAttempt(id: found.id, limit: settings.maxCodeAttempts, on: connection)
                    return nil
                }
                token = found
            }
            return try await completeVerification(app: app, token: token, client: client, on: connection)
        }
        guard let session else { throw AuthErrors.otpExpired }
        return session
    }

    /// `GET /verify` (the mailed link): the redirect, with the session in the fragment, a PKCE
    /// auth code in the query, or the error in the fragment.
    /// Links carry no API key (they are opened from a mail): the token names the app.
    public func verifyLink(type: VerifyType, token linkToken: String, redirectTo requested: String?, client: ClientInfo) async throws -> (app: App?, location: String) {
        var linkApp: App?
        do {
            try ipLimiter.check("verify:ip:\(client.ip)", rule: settings.rateLimits.verifyPerIP)
            let location: String = try await database.transaction { connection in
                guard let token = try await oneTimeTokens.findByLink(app: nil, linkHash: Secrets.hash(linkToken), on: connection), type.kinds.contains(token.kind) else {
                    throw AuthErrors.otpExpired
                }
                let app = token.app
                linkApp = app
                let appSettings = settings.app(app)
                let redirect = appSettings.redirect(requested ?? token.redirectTo)
                if let pkce = PKCEChallenge(challenge: token.codeChallenge, method: token.codeChallengeMethod) {
                    // PKCE: confirm now, hand the app an auth code to exchange with its verifier.
                    let user = try await applyVerification(app: app, token: token, on: connection)
                    let authCode = UUID().uuidString.lowercased()
                    try await oneTimeTokens.createFlowState(authCodeHash: Secrets.hash(authCode), app: app, userID: user.id, codeChallenge: pkce.challenge, method: pkce.method, authenticationMethod: Self.amrMethod(for: token.kind), on: connection)
                    return Self.appending(query: [("code", authCode)], to: redirect)
                }
                let session = try await completeVerification(app: app, token: token, client: client, on: connection)
                return Self.appending(fragment: [
                    ("access_token", session.accessToken), ("expires_at", "\(session.expiresAt)"), ("expires_in", "\(session.expiresIn)"),
                    ("refresh_token", session.refreshToken), ("token_type", "bearer"), ("type", token.kind.rawValue),
                ], to: redirect)
            }
            return (linkApp, location)
        } catch let error as APIError {
            // The error goes to the app when the link named one of its redirects.
            let fallback = linkApp.map { settings.app($0).redirect(requested) }
                ?? settings.apps.values.first { requested.map($0.allowsRedirect(to:)) ?? false }.map { $0.redirect(requested) }
            guard let fallback else { throw error }
            return (linkApp, Self.appending(fragment: [("error", error.status == .tooManyRequests ? "too_many_requests" : "access_denied"), ("error_code", error.code), ("error_description", error.message)], to: fallback))
        }
    }

    private func completeVerification(app: App, token: OneTimeTokenRecord, client: ClientInfo, on connection: PostgresConnection) async throws -> SessionResponse {
        let user = try await applyVerification(app: app, token: token, on: connection)
        return try await issueSession(userID: user.id, app: app, method: Self.amrMethod(for: token.kind), client: client, on: connection)
    }

    /// Consumes the token and applies what it confirms: the address, a new address, a phone.
    private func applyVerification(app: App, token: OneTimeTokenRecord, on connection: PostgresConnection) async throws -> UserRecord {
        try await oneTimeTokens.consume(id: token.id, on: connection)
        guard var user = try await users.find(id: token.userId, app: app, on: connection, forUpdate: true) else { throw AuthErrors.otpExpired }
        guard !user.isBanned else { throw AuthErrors.userBanned }
        let now = Date()
        switch token.kind {
        case .signup, .magiclink, .recovery:
            if user.emailConfirmedAt == nil { user.emailConfirmedAt = now }
        case .sms:
            if user.phoneConfirmedAt == nil { user.phoneConfirmedAt = now }
        case .emailChange:
            guard let newEmail = user.newEmail, newEmail == token.recipient else { throw AuthErrors.otpExpired }
            (user.email, user.newEmail, user.emailChangeSentAt, user.emailConfirmedAt) = (newEmail, nil, nil, now)
            return try await saveChangedAddress(&user, provider: "email", on: connection)
        case .phoneChange:
            guard let newPhone = user.newPhone, newPhone == token.recipient else { throw AuthErrors.otpExpired }
            (user.phone, user.newPhone, user.phoneChangeSentAt, user.phoneConfirmedAt) = (newPhone, nil, nil, now)
            return try await saveChangedAddress(&user, provider: "phone", on: connection)
        }
        try await users.update(user, on: connection)
        return user
    }

    /// A confirmed new email or phone: saved, its identity added, announced.
    private func saveChangedAddress(_ user: inout UserRecord, provider: String, on connection: PostgresConnection) async throws -> UserRecord {
        addProvider(provider, to: &user)
        try await users.update(user, on: connection)
        try await addIdentity(for: user, provider: provider, on: connection)
        try await publishUpdated(user, on: connection)
        return user
    }

    // MARK: the signed-in user

    /// Verifies a bearer token issued for `app` and checks that its session still exists.
    public func authenticate(app: App, bearer: String?) async throws -> AuthenticatedCaller {
        guard let bearer, !bearer.isEmpty else { throw AuthErrors.noAuthorization }
        let claims: AccessTokenClaims
        do {
            claims = try await keyRing.verify(bearer)
        } catch let error as JWTError {
            let mapped = TokenVerifier.apiError(for: error)
            throw APIError(.unauthorized, code: "bad_jwt", message: "invalid JWT: \(mapped.message)", headers: [.wwwAuthenticate: "Bearer"])
        } catch {
            throw AuthErrors.badJWT
        }
        let user: AuthenticatedUser
        do {
            user = try TokenVerifier.user(from: claims, issuer: settings.issuer, audience: app)
        } catch {
            throw APIError(.unauthorized, code: "bad_jwt", message: "invalid JWT: \(error.message)", headers: [.wwwAuthenticate: "Bearer"])
        }
        let sessionID = claims.sessionId.flatMap(UUID.init(uuidString:))
        if let sessionID {
            let live = try await database.withConnection { connection in
                try await sessions.exists(id: sessionID, userID: user.id, on: connection)
            }
            guard live else { throw AuthErrors.sessionNotFound }
        }
        return AuthenticatedCaller(userID: user.id, sessionID: sessionID, claims: claims)
    }

    public func user(app: App, id: UUID) async throws -> UserRecord {
        let found = try await database.withConnection { connection in try await users.find(id: id, app: app, on: connection) }
        guard let found else { throw AuthErrors.userNotFound }
        return found
    }

    public struct UserChanges: Sendable {
        public var email: String?
        public var phone: String?
        public var password: String?
        public var data: [String: JSONValue]?
        public var nonce: String?
        public init(email: String? = nil, phone: String? = nil, password: String? = nil, data: [String: JSONValue]? = nil, nonce: String? = nil) {
            self.email = email
            self.phone = phone
            self.password = password
            self.data = data
            self.nonce = nonce
        }
    }

    /// `PUT /user`: metadata at once; a new password at once (other sessions end); a new email
    /// or phone once the code sent to it is verified.
    public func updateUser(app: App, caller: AuthenticatedCaller, changes: UserChanges, pkce: PKCEChallenge?, redirectTo: String?) async throws -> UserResource {
        let appSettings = settings.app(app)
        let newEmail = try Credentials.email(changes.email)
        let newPhone = try Credentials.phone(changes.phone)
        var newHash: String?
        if let password = changes.password {
            try validateNewPassword(password)
            newHash = try await hasher.hash(password)
        }
        var messages: [OutgoingMessage] = []
        let resource: UserResource = try await database.transaction { connection in
            guard var user = try await users.find(id: caller.userID, app: app, on: connection, forUpdate: true) else { throw AuthErrors.userNotFound }
            var changed = false
            if let data = changes.data {
                for (key, value) in data {
                    if case .null = value { user.userMetadata[key] = nil } else { user.userMetadata[key] = value }
                }
                changed = true
            }
            if let newHash, let password = changes.password {
                if let old = user.encryptedPassword, try await hasher.verify(password, hash: old) { throw AuthErrors.samePassword }
                user.encryptedPassword = newHash
                // A new password ends every other session, as Supabase Auth does.
                try await sessions.deleteAll(userID: user.id, except: caller.sessionID, on: connection)
            }
            if let newEmail, newEmail != user.email {
                guard appSettings.emailEnabled || appSettings.magicLinkEnabled else { throw AuthErrors.emailProviderDisabled }
                if try await users.find(email: newEmail, app: app, on: connection) != nil { throw AuthErrors.emailOrPhoneTaken }
                user.newEmail = newEmail
                let prepared = try await prepareMessage(user: &user, kind: .emailChange, recipient: newEmail, redirectTo: redirectTo, pkce: pkce, on: connection)
                messages.append(prepared.message)
            }
            if let newPhone, newPhone != user.phone {
                guard appSettings.phoneEnabled else { throw AuthErrors.phoneProviderDisabled }
                if try await users.find(phone: newPhone, app: app, on: connection) != nil { throw AuthErrors.emailOrPhoneTaken }
                user.newPhone = newPhone
                let prepared = try await prepareMessage(user: &user, kind: .phoneChange, recipient: newPhone, redirectTo: nil, pkce: nil, on: connection)
                messages.append(prepared.message)
            }
            try await users.update(user, on: connection)
            if changed { try await publishUpdated(user, on: connection) }
            return UserResource(try await users.find(id: user.id, app: app, on: connection) ?? user)
        }
        for message in messages { try await deliver(message) }
        return resource
    }

    /// The seeds' `delete_user_account`: the account and its sessions go; every service hears
    /// `user_deleted` and erases the user's data.
    public func deleteUser(app: App, id: UUID) async throws {
        try await database.transaction { connection in
            guard try await users.find(id: id, app: app, on: connection, forUpdate: true) != nil else { throw AuthErrors.userNotFound }
            try await users.delete(id: id, on: connection)
            try await outbox.publish(EventEnvelope(app: app, aggregateId: id.uuidString.lowercased(), actor: id, payload: UserDeleted(userId: id, app: app, deletedAt: Date())), on: connection, logger: logger)
        }
    }

    public enum LogoutScope: String, Sendable { case global, local, others }

    public func logout(app: App, caller: AuthenticatedCaller, scope: LogoutScope) async throws {
        try await database.transaction { connection in
            switch scope {
            case .local:
                if let sessionID = caller.sessionID { try await sessions.delete(id: sessionID, on: connection) }
            case .others:
                try await sessions.deleteAll(userID: caller.userID, except: caller.sessionID, on: connection)
            case .global:
                try await sessions.deleteAll(userID: caller.userID, on: connection)
            }
        }
    }

    // MARK: admin

    public struct AdminUserAttributes: Sendable {
        public var email: String?
        public var phone: String?
        public var password: String?
        public var emailConfirm: Bool?
        public var phoneConfirm: Bool?
        public var userMetadata: [String: JSONValue]?
        public var appMetadata: [String: JSONValue]?
        public var banDuration: String?
        public init() {}
    }

    public func adminList(app: App, page: Int, perPage: Int) async throws -> (users: [UserResource], total: Int) {
        let (records, total) = try await database.withConnection { connection in
            try await users.list(app: app, page: page, perPage: perPage, on: connection)
        }
        return (records.map(UserResource.init), total)
    }

    public func adminCreate(app: App, attributes: AdminUserAttributes) async throws -> UserResource {
        let email = try Credentials.email(attributes.email)
        let phone = try Credentials.phone(attributes.phone)
        guard email != nil || phone != nil else { throw AuthErrors.validation("An email address or phone number is required") }
        var hash: String?
        if let password = attributes.password {
            try validateNewPassword(password)
            hash = try await hasher.hash(password)
        }
        let now = Date()
        let provider = email != nil ? "email" : "phone"
        var appMetadata = attributes.appMetadata ?? [:]
        appMetadata["provider"] = .string(provider)
        appMetadata["providers"] = .array([.string(provider)])
        let user = UserRecord(id: UUID(), app: app, email: email, phone: phone, encryptedPassword: hash,
                              emailConfirmedAt: attributes.emailConfirm == true && email != nil ? now : nil,
                              phoneConfirmedAt: attributes.phoneConfirm == true && phone != nil ? now : nil,
                              appMetadata: appMetadata, userMetadata: attributes.userMetadata ?? [:],
                              bannedUntil: try banUntil(attributes.banDuration), createdAt: now, updatedAt: now)
        return try await database.transaction { connection in
            try await users.insert(user, on: connection)
            try await addIdentity(for: user, provider: provider, on: connection)
            try await publishRegistered(user, on: connection)
            return UserResource(try await users.find(id: user.id, app: app, on: connection) ?? user)
        }
    }

    public func adminUpdate(app: App, id: UUID, attributes: AdminUserAttributes) async throws -> UserResource {
        var hash: String?
        if let password = attributes.password {
            try validateNewPassword(password)
            hash = try await hasher.hash(password)
        }
        return try await database.transaction { connection in
            guard var user = try await users.find(id: id, app: app, on: connection, forUpdate: true) else { throw AuthErrors.userNotFound }
            var announce = false
            if let email = try Credentials.email(attributes.email), email != user.email {
                user.email = email
                announce = true
                addProvider("email", to: &user)
            }
            if let phone = try Credentials.phone(attributes.phone), phone != user.phone {
                user.phone = phone
                announce = true
                addProvider("phone", to: &user)
            }
            if let hash { user.encryptedPassword = hash }
            if attributes.emailConfirm == true, user.emailConfirmedAt == nil { user.emailConfirmedAt = Date() }
            if attributes.phoneConfirm == true, user.phoneConfirmedAt == nil { user.phoneConfirmedAt = Date() }
            if let metadata = attributes.userMetadata { user.userMetadata.merge(metadata) { _, new in new }; announce = true }
            if let metadata = attributes.appMetadata { user.appMetadata.merge(metadata) { _, new in new } }
            if let duration = attributes.banDuration {
                user.bannedUntil = try banUntil(duration)
                if user.bannedUntil != nil { try await sessions.deleteAll(userID: user.id, on: connection) }
            }
            try await users.update(user, on: connection)
            if announce { try await publishUpdated(user, on: connection) }
            return UserResource(try await users.find(id: user.id, app: app, on: connection) ?? user)
        }
    }

    /// `ban_duration`: "none" lifts a ban; otherwise a Go-style duration like "24h" or "30m".
    func banUntil(_ duration: String?) throws -> Date? {
        guard let duration, duration != "none" else { return nil }
        let units: [Character: Double] = ["s": 1, "m": 60, "h": 3600]
        guard let unit = duration.last, let factor = units[unit], let value = Double(duration.dropLast()), value > 0 else {
            throw AuthErrors.badRequest("invalid format for ban duration: \(duration)")
        }
        return Date().addingTimeInterval(value * factor)
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

    private func validateNewPassword(_ password: String) throws {
        let reasons = Credentials.passwordProblems(password, minimumLength: settings.minimumPasswordLength)
        if !reasons.isEmpty { throw AuthErrors.weakPassword(reasons: reasons, minimumLength: settings.minimumPasswordLength) }
        if password.utf8.count > Credentials.maximumPasswordBytes { throw AuthErrors.validation("Password cannot be longer than 72 characters") }
    }

    /// Creates a code (and link) for the recipient after checking the per-recipient limits,
    /// and records when it was sent. Delivery happens after commit.
    private func prepareMessage(user: inout UserRecord, kind: OneTimeTokenKind, recipient: String, redirectTo: String?, pkce: PKCEChallenge?, on connection: PostgresConnection) async throws -> (message: OutgoingMessage, rule: RateLimitRule?) {
        let channel: MessageChannel = (kind == .sms || kind == .phoneChange) ? .sms : .email
        if let retryAfter = try await limiter.hit("send:\(user.app.rawValue):\(recipient)", rule: settings.rateLimits.sendPerRecipient) {
            throw AuthErrors.overSendRateLimit(channel: channel, retryAfter: retryAfter)
        }
        if channel == .sms, let retryAfter = try await limiter.hit("sms:\(recipient)", rule: settings.rateLimits.smsPerNumber) {
            throw AuthErrors.overSendRateLimit(channel: .sms, retryAfter: retryAfter)
        }
        let code = Secrets.numericCode()
        let linkToken = channel == .email ? Secrets.opaqueToken() : nil
        let appSettings = settings.app(user.app)
        let redirect = appSettings.redirect(redirectTo)
        try await oneTimeTokens.issue(
            app: user.app, userID: user.id, kind: kind, recipient: recipient,
            codeHash: Secrets.codeHash(code, recipient: recipient), linkHash: linkToken.map(Secrets.hash),
            redirectTo: redirect, codeChallenge: pkce?.challenge, codeChallengeMethod: pkce?.method,
            lifetime: TimeInterval(channel == .sms ? settings.smsCodeLifetimeSeconds : settings.emailCodeLifetimeSeconds), on: connection
        )
        let now = Date()
        switch kind {
        case .signup, .magiclink, .sms: user.confirmationSentAt = now
        case .recovery: user.recoverySentAt = now
        case .emailChange: user.emailChangeSentAt = now
        case .phoneChange: user.phoneChangeSentAt = now
        }
        let message: OutgoingMessage
        if let linkToken {
            var components = URLComponents(string: "\(settings.publicURL)/verify")!
            components.queryItems = [URLQueryItem(name: "token", value: linkToken), URLQueryItem(name: "type", value: kind.rawValue), URLQueryItem(name: "redirect_to", value: redirect)]
            let link = components.string!
            let (subject, text) = MessageTemplates.email(kind: kind, app: user.app, code: code, link: link)
            message = OutgoingMessage(app: user.app, channel: .email, to: recipient, kind: kind.rawValue, subject: subject, text: text, code: code, link: link, sentAt: now)
        } else {
            message = OutgoingMessage(app: user.app, channel: .sms, to: "+" + recipient, kind: kind.rawValue, subject: "", text: MessageTemplates.sms(code: code), code: code, link: nil, sentAt: now)
        }
        return (message, nil)
    }

    private func deliver(_ message: OutgoingMessage) async throws {
        do {
            try await sender.send(message)
        } catch {
            logger.error("could not send \(message.channel.rawValue)", metadata: ["kind": "\(message.kind)", "error": "\(error)"])
            throw AuthErrors.senderFailed
        }
    }

    /// Creates a session with its first refresh token and answers with both tokens.
    func issueSession(userID: UUID, app: App, method: String, client: ClientInfo, on connection: PostgresConnection) async throws -> SessionResponse {
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
        return try await sessionResponse(user: user, session: session, refreshToken: refreshToken)
    }

    private func sessionResponse(user: UserRecord, session: SessionRecord, refreshToken: String) async throws -> SessionResponse {
        let lifetime = settings.app(user.app).accessTokenLifetimeSeconds
        // Whole seconds: clients parse `iat` and `exp` as integers.
        let issuedAt = Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down))
        let expiresAt = issuedAt.addingTimeInterval(TimeInterval(lifetime))
        let claims = AccessTokenClaims(
            sub: user.id.uuidString.lowercased(), aud: user.app.rawValue, iss: settings.issuer, exp: expiresAt, iat: issuedAt,
            role: "authenticated", sessionId: session.id.uuidString.lowercased(), email: user.email ?? "", phone: user.phone ?? "",
            appMetadata: user.appMetadata, userMetadata: user.userMetadata, aal: session.aal, amr: session.amr, isAnonymous: false
        )
        let (kid, key) = try await keyRing.signingKey()
        let accessToken = try CompactJWS.sign(claims, kid: kid, key: key)
        return SessionResponse(accessToken: accessToken, expiresIn: lifetime, expiresAt: Int(expiresAt.timeIntervalSince1970), refreshToken: refreshToken, user: UserResource(user))
    }

    func addIdentity(for user: UserRecord, provider: String, on connection: PostgresConnection) async throws {
        var data: [String: JSONValue] = ["sub": .string(user.id.uuidString.lowercased()), "email_verified": .bool(user.emailConfirmedAt != nil), "phone_verified": .bool(user.phoneConfirmedAt != nil)]
        if provider == "email", let email = user.email { data["email"] = .string(email) }
        if provider == "phone", let phone = user.phone { data["phone"] = .string(phone) }
        try await users.upsertIdentity(userID: user.id, app: user.app, provider: provider, providerID: user.id.uuidString.lowercased(), data: data, signedIn: false, on: connection)
    }

    private func addProvider(_ provider: String, to user: inout UserRecord) {
        var providers: [JSONValue] = []
        if case .array(let existing)? = user.appMetadata["providers"] { providers = existing }
        if !providers.contains(.string(provider)) { providers.append(.string(provider)) }
        user.appMetadata["providers"] = .array(providers)
        if user.appMetadata["provider"] == nil { user.appMetadata["provider"] = .string(provider) }
    }

    static func amrMethod(for kind: OneTimeTokenKind) -> String {
        switch kind {
        case .signup, .magiclink, .sms: "otp"
        case .recovery: "recovery"
        case .emailChange: "email_change"
        case .phoneChange: "phone_change"
        }
    }

    private func phoneHash(_ user: UserRecord) -> String? {
        user.phone.map { Credentials.phoneHash(digits: $0, pepper: settings.phonePepper) }
    }

    func publishRegistered(_ user: UserRecord, nameFrom data: [String: JSONValue] = [:], on connection: PostgresConnection) async throws {
        var metadata = user.userMetadata
        for (key, value) in data where metadata[key] == nil { metadata[key] = value }
        let payload = UserRegistered(userId: user.id, app: user.app, email: user.email, phone: user.phone.map { "+" + $0 }, phoneHash: phoneHash(user), userMetadata: metadata, createdAt: user.createdAt)
        try await outbox.publish(EventEnvelope(app: user.app, aggregateId: user.id.uuidString.lowercased(), actor: user.id, payload: payload), on: connection, logger: logger)
    }

    private func publishUpdated(_ user: UserRecord, on connection: PostgresConnection) async throws {
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
