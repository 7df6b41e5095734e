import ColonyModels
import ColonyPlatform
import Foundation
import JWTKit
import PostgresNIO

/// The signed-in user's own account (`/user`, `/logout`) and the service role's admin endpoints.
extension Accounts {
    // MARK: the signed-in user

    /// Verifies a bearer token issued for `app` and checks that its session still exists.
    public func authenticate(app: App, bearer: String?) async throws -> AuthenticatedCaller {
        let (claims, user) = try await verifiedBearer(app: app, bearer: bearer)
        let sessionID = claims.sessionId.flatMap(UUID.init(uuidString:))
        if let sessionID {
            let live = try await database.withConnection { connection in
                try await sessions.exists(id: sessionID, userID: user.id, on: connection)
            }
            guard live else { throw AuthErrors.sessionNotFound }
        }
        return AuthenticatedCaller(userID: user.id, sessionID: sessionID, claims: claims)
    }

    /// `GET /user`: `authenticate` and the account's read as one statement, the session's check
    /// inside it (every app calls this on launch and on every foreground).
    public func currentUser(app: App, bearer: String?) async throws -> UserRecord {
        let (claims, caller) = try await verifiedBearer(app: app, bearer: bearer)
        guard let sessionID = claims.sessionId.flatMap(UUID.init(uuidString:)) else { return try await user(app: app, id: caller.id) }
        let found = try await database.withConnection { connection in
            try await users.find(id: caller.id, app: app, session: sessionID, on: connection)
        }
        // No account means no session either: sessions go with their user.
        guard let (user, sessionLive) = found, sessionLive else { throw AuthErrors.sessionNotFound }
        return user
    }

    /// The claims of a bearer token that auth signed for `app`, or the 401 saying why not.
    private func verifiedBearer(app: App, bearer: String?) async throws -> (AccessTokenClaims, AuthenticatedUser) {
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
        return (claims, user)
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

    /// `PUT /user`: metadata at once; a new password at once (other sessions end), but from a
    /// session that signed in long ago only with a reauthentication `nonce`; a new email once
    /// both the current and the new address confirmed (GoTrue's secure email change), a new
    /// phone once the code sent to it is verified.
    public func updateUser(app: App, caller: AuthenticatedCaller, changes: UserChanges, pkce: PKCEChallenge?, redirectTo: String?, acceptLanguage: String? = nil) async throws -> UserResource {
        let appSettings = settings.app(app)
        let newEmail = try Credentials.email(changes.email)
        let newPhone = try Credentials.phone(changes.phone)
        var newHash: String?
        if let password = changes.password {
            try validateNewPassword(password)
            // An anonymous account's password comes with the address that makes it permanent, and
            // needs no reauthentication code: there is no address to send one to.
            let anonymous = try await isAnonymous(app: app, userID: caller.userID)
            if anonymous, newEmail == nil, newPhone == nil { throw Self.anonymousPasswordWithoutAddress }
            if !anonymous, appSettings.securePasswordChange, try await needsReauthentication(app: app, caller: caller) {
                try await consumeReauthentication(app: app, userID: caller.userID, nonce: changes.nonce)
            }
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
                try MetadataLimits.check(user: user.userMetadata, app: user.appMetadata)
                changed = true
            }
            if let newHash, let password = changes.password {
                if let old = user.encryptedPassword, try await hasher.verify(password, hash: old) { throw AuthErrors.samePassword }
                user.encryptedPassword = newHash
                // A new password ends every other session, as Supabase Auth does.
                try await sessions.deleteAll(userID: user.id, except: caller.sessionID, on: connection)
            }
            if let newEmail, user.isAnonymous, appSettings.emailAutoconfirm, appSettings.emailEnabled, newEmail != user.email {
                try await adoptAutoconfirmedEmail(newEmail, for: &user, on: connection)
                changed = true
            }
            if let newEmail, newEmail != user.email {
                guard appSettings.emailEnabled || appSettings.magicLinkEnabled else { throw AuthErrors.emailProviderDisabled }
                if try await users.find(email: newEmail, app: app, on: connection) != nil { throw AuthErrors.emailOrPhoneTaken }
                // Another new address: fresh codes, so a code mailed for the first cannot confirm it.
                if user.newEmail != newEmail { try await oneTimeTokens.delete(userID: user.id, kinds: [.emailChange, .emailChangeCurrent], on: connection) }
                user.newEmail = newEmail
                messages.append(try await prepareMessage(user: &user, kind: .emailChange, recipient: newEmail, redirectTo: redirectTo, pkce: pkce, acceptLanguage: acceptLanguage, on: connection))
                // Secure: the current address must agree too (whoever holds a session may not
                // move the account away from its owner's mailbox).
                if appSettings.secureEmailChange, let current = user.email {
                    user.emailChangeConfirmStatus = 0
                    messages.append(try await prepareMessage(user: &user, kind: .emailChangeCurrent, recipient: current, redirectTo: redirectTo, pkce: pkce, acceptLanguage: acceptLanguage, on: connection))
                } else {
                    user.emailChangeConfirmStatus = 1
                    try await oneTimeTokens.delete(userID: user.id, kinds: [.emailChangeCurrent], on: connection)
                }
            }
            if let newPhone, newPhone != user.phone {
                guard appSettings.phoneEnabled else { throw AuthErrors.phoneProviderDisabled }
                if try await users.find(phone: newPhone, app: app, on: connection) != nil { throw AuthErrors.emailOrPhoneTaken }
                user.newPhone = newPhone
                messages.append(try await prepareMessage(user: &user, kind: .phoneChange, recipient: newPhone, redirectTo: nil, pkce: nil, acceptLanguage: acceptLanguage, on: connection))
            }
            try await users.update(user, on: connection)
            if changed { try await publishUpdated(user, on: connection) }
            if newHash != nil { try await audit(.userUpdatedPassword, actor: .user(user), app: app, on: connection) }
            try await audit(.userModified, actor: .user(user), app: app, on: connection)
            return UserResource(try await users.find(id: user.id, app: app, on: connection) ?? user)
        }
        for message in messages { try await deliver(message) }
        return resource
    }

    /// `DELETE /user`, the seeds' `delete_user_account`: from a session that signed in long ago
    /// only with a reauthentication `nonce` (a stolen session must not erase the account).
    public func deleteOwnAccount(app: App, caller: AuthenticatedCaller, nonce: String?) async throws {
        // An anonymous account has no address to get a code at: its session is all it has.
        if try await needsReauthentication(app: app, caller: caller), try await !isAnonymous(app: app, userID: caller.userID) {
            try await consumeReauthentication(app: app, userID: caller.userID, nonce: nonce)
        }
        try await deleteUser(app: app, id: caller.userID, byOwner: true)
    }

    /// The account and its sessions go; every service hears `user_deleted` and erases the
    /// user's data.
    /// Recorded as `user_deleted` by the owner or (`byOwner` false) `actor`: the app's
    /// service-role key, or the console's operator.
    public func deleteUser(app: App, id: UUID, byOwner: Bool = false, actor: AuditActor = .serviceRole) async throws {
        try await database.transaction { connection in
            guard let user = try await users.find(id: id, app: app, on: connection, forUpdate: true) else { throw AuthErrors.userNotFound }
            try await users.delete(id: id, on: connection)
            try await audit(.userDeleted, actor: byOwner ? .user(user) : actor, traits: auditTraits(of: user), app: app, on: connection)
            try await outbox.publish(EventEnvelope(app: app, aggregateId: id.uuidString.lowercased(), actor: id, payload: UserDeleted(userId: id, app: app, deletedAt: Date())), on: connection, logger: logger)
        }
    }

    public enum LogoutScope: String, Sendable { case global, local, others }

    public func logout(app: App, caller: AuthenticatedCaller, scope: LogoutScope) async throws {
        try await database.transaction { connection in
            if let user = try await users.find(id: caller.userID, app: app, on: connection) {
                try await audit(.logout, actor: .user(user), app: app, on: connection)
            }
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

    /// `actor`: who the audit log names (the service-role key, or the console's operator).
    public func adminCreate(app: App, attributes: AdminUserAttributes, actor: AuditActor = .serviceRole) async throws -> UserResource {
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
        try MetadataLimits.check(user: attributes.userMetadata ?? [:], app: appMetadata)
        let user = UserRecord(id: UUID(), app: app, email: email, phone: phone, encryptedPassword: hash,
                              emailConfirmedAt: attributes.emailConfirm == true && email != nil ? now : nil,
                              phoneConfirmedAt: attributes.phoneConfirm == true && phone != nil ? now : nil,
                              appMetadata: appMetadata, userMetadata: attributes.userMetadata ?? [:],
                              bannedUntil: try banUntil(attributes.banDuration), createdAt: now, updatedAt: now)
        return try await database.transaction { connection in
            try await users.insert(user, on: connection)
            try await addIdentity(for: user, provider: provider, on: connection)
            try await publishRegistered(user, operatorAction: .userSignedUp, by: actor, on: connection)
            return UserResource(try await users.find(id: user.id, app: app, on: connection) ?? user)
        }
    }

    /// A ban (`ban_duration`) ends every session at once. `actor`: who the audit log names.
    public func adminUpdate(app: App, id: UUID, attributes: AdminUserAttributes, actor: AuditActor = .serviceRole) async throws -> UserResource {
        var hash: String?
        if let password = attributes.password {
            try validateNewPassword(password)
            hash = try await hasher.hash(password)
        }
        return try await database.transaction { connection in
            guard var user = try await users.find(id: id, app: app, on: connection, forUpdate: true) else { throw AuthErrors.userNotFound }
            var announce = false
            // The operator may set an address; only its owner can prove it.
            if let email = try Credentials.email(attributes.email), email != user.email {
                (user.email, user.emailProvenAt) = (email, nil)
                announce = true
                addProvider("email", to: &user)
            }
            if let phone = try Credentials.phone(attributes.phone), phone != user.phone {
                (user.phone, user.phoneProvenAt) = (phone, nil)
                announce = true
                addProvider("phone", to: &user)
            }
            if let hash { (user.encryptedPassword, user.passwordUnproven) = (hash, false) }
            if attributes.emailConfirm == true, user.emailConfirmedAt == nil { user.emailConfirmedAt = Date() }
            if attributes.phoneConfirm == true, user.phoneConfirmedAt == nil { user.phoneConfirmedAt = Date() }
            // An operator's confirmation of an address makes an anonymous account permanent (GoTrue).
            if (attributes.emailConfirm == true && user.email != nil) || (attributes.phoneConfirm == true && user.phone != nil) { Self.markPermanent(&user) }
            if let metadata = attributes.userMetadata { user.userMetadata.merge(metadata) { _, new in new }; announce = true }
            if let metadata = attributes.appMetadata { user.appMetadata.merge(metadata) { _, new in new } }
            try MetadataLimits.check(user: user.userMetadata, app: user.appMetadata)
            let wasBanned = user.isBanned
            if let duration = attributes.banDuration {
                user.bannedUntil = try banUntil(duration)
                if user.bannedUntil != nil { try await sessions.deleteAll(userID: user.id, on: connection) }
            }
            try await users.update(user, on: connection)
            if attributes.banDuration != nil { try await announceSuspension(of: user, wasBanned: wasBanned, on: connection) }
            if announce { try await publishUpdated(user, on: connection) }
            try await audit(.userModified, actor: actor, traits: auditTraits(of: user), app: app, on: connection)
            return UserResource(try await users.find(id: user.id, app: app, on: connection) ?? user)
        }
    }

    /// A ban set (or set again) starts now for every service: `banned_at` puts it on the list they
    /// read (`SuspendedAccountsRoute`) and `user_suspended` stops notifications' pushes; a ban lifted
    /// leaves the list and says `user_reinstated`.
    func announceSuspension(of user: UserRecord, wasBanned: Bool, on connection: PostgresConnection) async throws {
        let now = Date()
        if let until = user.bannedUntil {
            try await connection.query("UPDATE users SET banned_at = \(now) WHERE id = \(user.id)", logger: logger)
            let payload = UserSuspended(userId: user.id, app: user.app, until: until, suspendedAt: now)
            try await outbox.publish(EventEnvelope(app: user.app, aggregateId: user.id.uuidString.lowercased(), actor: nil, payload: payload), on: connection, logger: logger)
        } else {
            try await connection.query("UPDATE users SET banned_at = NULL WHERE id = \(user.id)", logger: logger)
            guard wasBanned else { return }
            let payload = UserReinstated(userId: user.id, app: user.app, reinstatedAt: now)
            try await outbox.publish(EventEnvelope(app: user.app, aggregateId: user.id.uuidString.lowercased(), actor: nil, payload: payload), on: connection, logger: logger)
        }
    }

    /// `ban_duration`: "none" lifts a ban; otherwise a Go-style duration like "24h" or "30m".
    func banUntil(_ duration: String?) throws -> Date? {
        guard let duration, duration != "none" else { return nil }
        let units: [Character: Double] = ["s": 1, "m": 60, "h": 3600]
        // At most what Go's time.ParseDuration reads (2^63 ns, about 292 years), as Supabase Auth:
        // `1e300h` or `infh` would make a date that traps when bound to Postgres.
        guard let unit = duration.last, let factor = units[unit], let value = Double(duration.dropLast()), value > 0,
              value * factor <= 9_223_372_036.854775807 else {
            throw AuthErrors.badRequest("invalid format for ban duration: \(duration)")
        }
        return Date().addingTimeInterval(value * factor)
    }

}
