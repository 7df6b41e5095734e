import ColonyModels
import ColonyPlatform
import Foundation
import PostgresNIO

/// Passwordless sign-in, recovery, and every code and link: sending them, verifying them, and
/// what a verified one proves.
extension Accounts {
    // MARK: sending

    /// `POST /otp`: a magic link and code by mail, or a code by SMS. Mail is queued and answered
    /// alike for every address (`AddressRequestRules`); an unknown number that may not get an
    /// account is answered as if texted (its budgets count) and gets nothing.
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
        let provider = email != nil ? "email" : "phone"
        let appMetadata: [String: JSONValue] = ["provider": .string(provider), "providers": .array([.string(provider)])]
        try MetadataLimits.check(user: data, app: appMetadata)
        try ipLimiter.check("otp:ip:\(client.ip)", rule: settings.rateLimits.otpPerIP)
        if let email {
            try await enqueue(.magiclink, app: app, email: email, details: AddressRequestDetails(
                redirectTo: redirectTo, codeChallenge: pkce?.challenge, codeChallengeMethod: pkce?.method.rawValue, acceptLanguage: client.acceptLanguage,
                createUser: createUser, data: data
            ))
            return nil
        }
        guard let recipient = phone else { return nil }
        let message: OutgoingMessage? = try await database.transaction { connection in
            var user: UserRecord
            if let existing = try await users.find(phone: recipient, app: app, on: connection, forUpdate: true) {
                user = existing
            } else {
                // The app decides whether a code may create an account; the client can only say no.
                guard createUser, appSettings.otpCreateUser, !appSettings.disableSignup else {
                    try await spend(channel: .sms, app: app, recipient: recipient)
                    return nil
                }
                let now = Date()
                user = UserRecord(id: UUID(), app: app, email: nil, phone: recipient, encryptedPassword: nil, emailConfirmedAt: nil, phoneConfirmedAt: nil,
                                  appMetadata: appMetadata, userMetadata: data, createdAt: now, updatedAt: now)
                try await users.insert(user, on: connection)
                try await addIdentity(for: user, provider: provider, on: connection)
                try await publishRegistered(user, on: connection)
            }
            guard !user.isBanned else { throw AuthErrors.userBanned }
            let prepared = try await prepareMessage(user: &user, kind: .sms, recipient: recipient, redirectTo: redirectTo, pkce: pkce, acceptLanguage: client.acceptLanguage, on: connection)
            try await users.update(user, on: connection)
            return prepared
        }
        if let message { try await deliver(message) }
        return UUID().uuidString.lowercased()
    }

    /// `POST /recover`: a reset link and code, queued and answered alike whether or not the
    /// account exists (`AddressRequestRules`).
    public func recover(app: App, email rawEmail: String, pkce: PKCEChallenge?, redirectTo: String?, client: ClientInfo) async throws {
        guard let email = try Credentials.email(rawEmail) else { throw AuthErrors.validation("An email address is required") }
        try ipLimiter.check("otp:ip:\(client.ip)", rule: settings.rateLimits.otpPerIP)
        try await enqueue(.recovery, app: app, email: email, details: AddressRequestDetails(
            redirectTo: redirectTo, codeChallenge: pkce?.challenge, codeChallengeMethod: pkce?.method.rawValue, acceptLanguage: client.acceptLanguage
        ))
    }

    /// `GET /reauthenticate`: a code to the user's email (or, without one, phone), to be sent as
    /// `nonce` with a change that needs proof. The message id for SMS.
    public func reauthenticate(app: App, caller: AuthenticatedCaller, acceptLanguage: String? = nil) async throws -> String? {
        let message: OutgoingMessage = try await database.transaction { connection in
            guard var user = try await users.find(id: caller.userID, app: app, on: connection, forUpdate: true) else { throw AuthErrors.userNotFound }
            let recipient: String
            if let email = user.email {
                guard user.emailConfirmedAt != nil else { throw AuthErrors.reauthenticationEmailNotConfirmed }
                recipient = email
            } else if let phone = user.phone {
                guard user.phoneConfirmedAt != nil else { throw AuthErrors.reauthenticationPhoneNotConfirmed }
                recipient = phone
            } else {
                throw AuthErrors.badRequest("Reauthentication requires the user to have an email or a phone number")
            }
            try await audit(.userReauthenticateRequested, actor: .user(user), app: app, on: connection)
            return try await prepareMessage(user: &user, kind: .reauthentication, recipient: recipient, redirectTo: nil, pkce: nil, acceptLanguage: acceptLanguage, on: connection)
        }
        try await deliver(message)
        return message.channel == .sms ? UUID().uuidString.lowercased() : nil
    }

    /// Creates (or re-sends) a code, with a link for mail, after the per-recipient and SMS
    /// budgets, and records when it was sent; worded in the user's language (`acceptLanguage`:
    /// the request's). Delivery happens after commit.
    /// `spend: false` when the request path counted the recipient's budget already (a queued request).
    func prepareMessage(user: inout UserRecord, kind: OneTimeTokenKind, recipient: String, redirectTo: String?, pkce: PKCEChallenge?, confirmsSignUp: Bool = false, acceptLanguage: String? = nil, spend spending: Bool = true, on connection: PostgresConnection) async throws -> OutgoingMessage {
        let channel: MessageChannel = recipient.contains("@") ? .email : .sms
        if spending { try await spend(channel: channel, app: user.app, recipient: recipient) }
        let appSettings = settings.app(user.app)
        let redirect = appSettings.redirect(redirectTo)
        let issued = try await oneTimeTokens.issue(
            app: user.app, userID: user.id, kind: kind, recipient: recipient, withLink: channel == .email && kind != .reauthentication,
            redirectTo: redirect, pkce: pkce, confirmsSignUp: confirmsSignUp,
            lifetime: TimeInterval(channel == .sms ? settings.smsCodeLifetimeSeconds : settings.emailCodeLifetimeSeconds),
            maxAttempts: settings.maxCodeAttempts, on: connection
        )
        let now = Date()
        switch kind {
        case .signup, .invite, .magiclink, .sms: user.confirmationSentAt = now
        case .recovery: user.recoverySentAt = now
        case .emailChange, .emailChangeCurrent: user.emailChangeSentAt = now
        case .phoneChange: user.phoneChangeSentAt = now
        case .reauthentication: break
        }
        guard channel == .email else {
            return try compose(.init(kind: kind), channel: .sms, user: user, to: "+" + recipient, kind: kind.messageKind, code: issued.code, link: nil, acceptLanguage: acceptLanguage, now: now)
        }
        let link = issued.linkToken.map { verificationLink(linkToken: $0, type: kind.messageKind, redirect: redirect) }
        return try compose(.init(kind: kind), channel: .email, user: user, to: recipient, kind: kind.messageKind, code: issued.code, link: link, acceptLanguage: acceptLanguage, now: now)
    }

    /// A message in the words of the app's template for `name`, in the first language of the
    /// user's metadata, the request, the app's default and English that has it.
    func compose(_ name: MessageTemplateName, channel: MessageChannel, user: UserRecord, to recipient: String, kind: String, code: String?, link: String?, newEmail: String? = nil, extra: [String: String] = [:], acceptLanguage: String?, now: Date) throws -> OutgoingMessage {
        let appSettings = settings.app(user.app)
        let lifetime = channel == .sms ? settings.smsCodeLifetimeSeconds : settings.emailCodeLifetimeSeconds
        var values = ["app_name": appSettings.displayName, "site_url": appSettings.siteUrl, "lifetime_minutes": "\(max(1, lifetime / 60))"]
        if channel == .email { values["email"] = recipient }
        if let newEmail = newEmail ?? user.newEmail { values["new_email"] = newEmail }
        if let code { values["code"] = code }
        if let link { values["link"] = link }
        values.merge(extra) { _, new in new }
        let locales = MessageLocale.candidates(userMetadata: user.userMetadata, acceptLanguage: acceptLanguage, appDefault: appSettings.defaultLocale)
        guard let rendered = settings.templates.render(name, channel: channel, app: user.app, locales: locales, values: values) else {
            logger.error("no template for a message", metadata: ["template": "\(name.rawValue)", "channel": "\(channel.rawValue)", "locales": "\(locales)"])
            throw AuthErrors.senderFailed
        }
        return OutgoingMessage(app: user.app, channel: channel, to: recipient, kind: kind, subject: rendered.subject, text: rendered.text, html: rendered.html, locale: rendered.locale, code: code, link: link, sentAt: now)
    }

    /// Counts one message against the recipient's limits and, for SMS, the number's, the app's
    /// and the deployment's hourly budgets (the operator pays for every text): 429 with
    /// `Retry-After` when any is spent.
    func spend(channel: MessageChannel, app: App, recipient: String) async throws {
        let limits = settings.rateLimits
        var buckets = [("send:\(app.rawValue):\(recipient)", limits.sendPerRecipient)]
        if channel == .sms {
            buckets += [("sms:\(recipient)", limits.smsPerNumber), ("sms-app:\(app.rawValue)", limits.smsPerApp), ("sms-global", limits.smsGlobal)]
        }
        for (bucket, rule) in buckets {
            if let retryAfter = try await limiter.hit(bucket, rule: rule) {
                throw AuthErrors.overSendRateLimit(channel: channel, retryAfter: retryAfter)
            }
        }
    }

    func deliver(_ message: OutgoingMessage) async throws {
        do {
            try await sender.send(message)
        } catch {
            logger.error("could not send \(message.channel.rawValue)", metadata: ["kind": "\(message.kind)", "error": "\(error)"])
            throw AuthErrors.senderFailed
        }
    }

    // MARK: verifying

    public enum VerifyType: String, Sendable {
        case signup, invite, magiclink, recovery, email, sms
        case emailChange = "email_change"
        case phoneChange = "phone_change"

        var kinds: [OneTimeTokenKind] {
            switch self {
            case .signup, .invite, .magiclink, .email: [.signup, .invite, .magiclink]
            case .recovery: [.recovery]
            case .emailChange: [.emailChange, .emailChangeCurrent]
            case .sms: [.sms]
            case .phoneChange: [.phoneChange]
            }
        }
    }

    /// What a verified code gave.
    public enum VerifyResult: Sendable {
        case session(SessionResponse)
        /// The first of a secure email change's two confirmations: no session yet.
        case emailChangePending(UserResource)
    }

    /// `POST /verify` with the code and its recipient, or with the link's token hash.
    public func verify(app: App, type: VerifyType, code: String?, email rawEmail: String?, phone rawPhone: String?, tokenHash: String?, client: ClientInfo) async throws -> VerifyResult {
        try ipLimiter.check("verify:ip:\(client.ip)", rule: settings.rateLimits.verifyPerIP)
        enum Outcome: Sendable { case verified(VerifyResult, notice: OutgoingMessage?), wrongCode }
        let byLink = !(tokenHash?.isEmpty ?? true)
        var recipient = ""
        if !byLink {
            guard let code, !code.isEmpty else { throw AuthErrors.validation("Verify requires a token or a token hash") }
            if let rawEmail, !rawEmail.isEmpty, let email = Credentials.normalizedEmail(rawEmail) {
                recipient = email
            } else if let rawPhone, !rawPhone.isEmpty, let phone = Credentials.normalizedPhone(rawPhone) {
                recipient = phone
            } else {
                throw AuthErrors.validation("Verify requires an email address or a phone number")
            }
        }
        // Wrong codes are budgeted per recipient across all their codes: a new code every minute
        // must not buy new guesses. Over the budget even the right code waits. The attempt takes
        // its hit first (concurrent guesses cannot all slip under) and a right code gives it back.
        // (Links carry 256 random bits: nothing to budget.)
        let budget = "verify-fail:\(app.rawValue):\(recipient)"
        if !byLink, let retryAfter = try await limiter.hit(budget, rule: settings.rateLimits.verifyFailuresPerRecipient) {
            throw AuthErrors.overVerifyBudget(retryAfter: retryAfter)
        }
        // A wrong code returns rather than throws, so its counted attempt commits.
        let outcome: Outcome = try await database.transaction { connection in
            let token: OneTimeTokenRecord
            if byLink, let tokenHash {
                guard let found = try await oneTimeTokens.findByLink(app: app, linkHash: Secrets.hash(tokenHash), on: connection), type.kinds.contains(found.kind) else {
                    throw AuthErrors.otpExpired
                }
                token = found
            } else {
                guard let found = try await oneTimeTokens.findLive(app: app, recipient: recipient, kinds: type.kinds, on: connection) else {
                    return .wrongCode
                }
                guard Secrets.codeHash((code ?? "").trimmingCharacters(in: .whitespaces), recipient: recipient) == found.codeHash else {
                    try await oneTimeTokens.recordFailedAttempt(id: found.id, limit: settings.maxCodeAttempts, on: connection)
                    return .wrongCode
                }
                token = found
            }
            let (result, notice) = try await completeVerification(app: app, token: token, client: client, on: connection)
            return .verified(result, notice: notice)
        }
        switch outcome {
        case .wrongCode:
            throw AuthErrors.otpExpired
        case .verified(let result, let notice):
            if !byLink { try await limiter.release(budget, rule: settings.rateLimits.verifyFailuresPerRecipient) }
            if let notice { await deliverNotice(notice) }
            return result
        }
    }

    /// `GET /verify` (the mailed link): the redirect, with the session in the fragment, a PKCE
    /// auth code in the query, or the error in the fragment.
    /// Links carry no API key (they are opened from a mail): the token names the app.
    public func verifyLink(type: VerifyType, token linkToken: String, redirectTo requested: String?, client: ClientInfo) async throws -> (app: App?, location: String) {
        var linkApp: App?
        do {
            try ipLimiter.check("verify:ip:\(client.ip)", rule: settings.rateLimits.verifyPerIP)
            let (location, notice): (String, OutgoingMessage?) = try await database.transaction { connection in
                guard let token = try await oneTimeTokens.findByLink(app: nil, linkHash: Secrets.hash(linkToken), on: connection), type.kinds.contains(token.kind) else {
                    throw AuthErrors.otpExpired
                }
                let app = token.app
                linkApp = app
                let appSettings = settings.app(app)
                let redirect = appSettings.redirect(requested ?? token.redirectTo)
                let pkce = PKCEChallenge(stored: token.codeChallenge, method: token.codeChallengeMethod)
                let applied = try await applyVerification(app: app, token: token, on: connection)
                guard case .done(let user, let notice) = applied else {
                    let message = [("message", Self.singleConfirmationMessage)]
                    return (pkce != nil ? Self.appending(query: message, to: redirect) : Self.appending(fragment: message, to: redirect), nil)
                }
                if let pkce {
                    // PKCE: confirmed now; the app gets an auth code to exchange with its verifier.
                    let authCode = UUID().uuidString.lowercased()
                    try await oneTimeTokens.createFlowState(authCodeHash: Secrets.hash(authCode), app: app, userID: user.id, codeChallenge: pkce.challenge, method: pkce.method.rawValue, authenticationMethod: Self.amrMethod(for: token.kind), on: connection)
                    return (Self.appending(query: [("code", authCode)], to: redirect), notice)
                }
                let session = try await issueSession(userID: user.id, app: app, method: Self.amrMethod(for: token.kind), client: client, on: connection)
                return (Self.appending(fragment: [
                    ("access_token", session.accessToken), ("expires_at", "\(session.expiresAt)"), ("expires_in", "\(session.expiresIn)"),
                    ("refresh_token", session.refreshToken), ("token_type", "bearer"), ("type", token.kind.messageKind),
                ], to: redirect), notice)
            }
            if let notice { await deliverNotice(notice) }
            return (linkApp, location)
        } catch let error as APIError {
            // The error goes to the app when the link named one of its redirects.
            let fallback = linkApp.map { settings.app($0).redirect(requested) }
                ?? settings.apps.values.first { requested.map($0.allowsRedirect(to:)) ?? false }.map { $0.redirect(requested) }
            guard let fallback else { throw error }
            return (linkApp, Self.appending(fragment: [("error", error.status == .tooManyRequests ? "too_many_requests" : "access_denied"), ("error_code", error.code), ("error_description", error.message)], to: fallback))
        }
    }

    /// GoTrue's answer to the first of a secure email change's confirmations.
    static let singleConfirmationMessage = "Confirmation link accepted. Please proceed to confirm link sent to the other email"

    private func completeVerification(app: App, token: OneTimeTokenRecord, client: ClientInfo, on connection: PostgresConnection) async throws -> (VerifyResult, OutgoingMessage?) {
        switch try await applyVerification(app: app, token: token, on: connection) {
        case .emailChangePending(let user):
            return (.emailChangePending(UserResource(user)), nil)
        case .done(let user, let notice):
            return (.session(try await issueSession(userID: user.id, app: app, method: Self.amrMethod(for: token.kind), client: client, on: connection)), notice)
        }
    }

    enum Applied: Sendable {
        /// Verified; `notice` goes out after commit (the old address, once an email changed).
        case done(UserRecord, notice: OutgoingMessage?)
        case emailChangePending(UserRecord)
    }

    /// Consumes the token and applies what it proves: the address (see `AccountProof`), a new
    /// address, a phone.
    private func applyVerification(app: App, token: OneTimeTokenRecord, on connection: PostgresConnection) async throws -> Applied {
        try await oneTimeTokens.consume(id: token.id, on: connection)
        guard var user = try await users.find(id: token.userId, app: app, on: connection, forUpdate: true) else { throw AuthErrors.otpExpired }
        guard !user.isBanned else { throw AuthErrors.userBanned }
        let now = Date()
        switch token.kind {
        case .signup, .invite, .magiclink, .recovery, .sms:
            let address: AccountProof.Address = token.kind == .sms ? .phone : .email
            if AccountProof.apply(address, confirmsSignUp: token.confirmsSignUp, to: &user, now: now) == .reclaimed {
                try await reclaim(user, on: connection)
            }
            try await users.update(user, on: connection)
            if token.kind == .invite { try await audit(.inviteAccepted, actor: .user(user), app: app, on: connection) }
            return .done(user, notice: nil)
        case .emailChange, .emailChangeCurrent:
            guard let newEmail = user.newEmail, token.recipient == (token.kind == .emailChange ? newEmail : user.email) else { throw AuthErrors.otpExpired }
            if user.emailChangeConfirmStatus == 0 {
                // A secure change: this address confirmed, the other one still must.
                user.emailChangeConfirmStatus = 1
                try await users.update(user, on: connection)
                return .emailChangePending(user)
            }
            let oldEmail = user.email
            (user.email, user.newEmail, user.emailChangeSentAt, user.emailConfirmedAt, user.emailProvenAt, user.emailChangeConfirmStatus) = (newEmail, nil, nil, now, now, 0)
            try await oneTimeTokens.delete(userID: user.id, kinds: [.emailChange, .emailChangeCurrent], on: connection)
            let changed = try await saveChangedAddress(&user, provider: "email", on: connection)
            let notice = try oldEmail.map { old in
                try compose(.emailChanged, channel: .email, user: changed, to: old, kind: "email_changed", code: nil, link: nil, newEmail: newEmail, acceptLanguage: nil, now: now)
            }
            return .done(changed, notice: notice)
        case .phoneChange:
            guard let newPhone = user.newPhone, newPhone == token.recipient else { throw AuthErrors.otpExpired }
            (user.phone, user.newPhone, user.phoneChangeSentAt, user.phoneConfirmedAt, user.phoneProvenAt) = (newPhone, nil, nil, now, now)
            return .done(try await saveChangedAddress(&user, provider: "phone", on: connection), notice: nil)
        case .reauthentication:
            throw AuthErrors.otpExpired
        }
    }

    /// The account was taken back by its address's owner: whoever held the cleared password is
    /// signed out everywhere, and changes they had started are dropped.
    func reclaim(_ user: UserRecord, on connection: PostgresConnection) async throws {
        logger.notice("unproven password cleared by the address owner's proof; sessions ended", metadata: ["user_id": "\(user.id)"])
        try await sessions.deleteAll(userID: user.id, on: connection)
        try await oneTimeTokens.delete(userID: user.id, kinds: [.emailChange, .emailChangeCurrent, .phoneChange, .reauthentication], on: connection)
    }

    /// A confirmed new email or phone: saved, its identity added, announced.
    private func saveChangedAddress(_ user: inout UserRecord, provider: String, on connection: PostgresConnection) async throws -> UserRecord {
        addProvider(provider, to: &user)
        Self.markPermanent(&user)
        try await users.update(user, on: connection)
        try await addIdentity(for: user, provider: provider, on: connection)
        try await publishUpdated(user, on: connection)
        return user
    }

    /// A notice's failure does not undo what it reports; it is logged.
    private func deliverNotice(_ message: OutgoingMessage) async {
        do {
            try await sender.send(message)
        } catch {
            logger.error("could not send notice", metadata: ["kind": "\(message.kind)", "error": "\(error)"])
        }
    }

    // MARK: reauthentication

    /// Consumes the user's reauthentication code `nonce` (400 without one, 422 when wrong or
    /// expired). Wrong ones count against the code's tries and the recipient's budget, and commit.
    func consumeReauthentication(app: App, userID: UUID, nonce: String?) async throws {
        guard let nonce, !nonce.isEmpty else { throw AuthErrors.reauthenticationNeeded }
        enum Outcome: Sendable { case consumed(budget: String), wrong }
        let rule = settings.rateLimits.verifyFailuresPerRecipient
        let outcome: Outcome = try await database.transaction { connection in
            guard let token = try await oneTimeTokens.findLive(userID: userID, kind: .reauthentication, on: connection), token.app == app else {
                return .wrong
            }
            // The recipient's budget of wrong codes, as for POST /verify.
            let budget = "verify-fail:\(app.rawValue):\(token.recipient)"
            if let retryAfter = try await limiter.hit(budget, rule: rule) {
                throw AuthErrors.overVerifyBudget(retryAfter: retryAfter)
            }
            guard Secrets.codeHash(nonce.trimmingCharacters(in: .whitespaces), recipient: token.recipient) == token.codeHash else {
                try await oneTimeTokens.recordFailedAttempt(id: token.id, limit: settings.maxCodeAttempts, on: connection)
                return .wrong
            }
            try await oneTimeTokens.consume(id: token.id, on: connection)
            return .consumed(budget: budget)
        }
        switch outcome {
        case .wrong: throw AuthErrors.reauthenticationNotValid
        case .consumed(let budget): try await limiter.release(budget, rule: rule)
        }
    }

    /// Whether the caller's session signed in too long ago for `app`'s sensitive changes.
    func needsReauthentication(app: App, caller: AuthenticatedCaller) async throws -> Bool {
        var created: Date?
        if let id = caller.sessionID {
            created = try await database.withConnection { connection in try await sessions.find(id: id, on: connection)?.createdAt }
        }
        return RecentSignIn.needsProof(sessionCreatedAt: created, windowSeconds: settings.app(app).reauthenticationWindowSeconds, now: Date())
    }
}
