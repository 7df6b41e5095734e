import ColonyModels
import ColonyPlatform
import Foundation
import Hummingbird
import PostgresNIO

/// `POST /admin/generate_link`'s types (GoTrue's).
public enum GenerateLinkType: String, Sendable, CaseIterable {
    case signup, invite, magiclink, recovery
    case emailChangeCurrent = "email_change_current"
    case emailChangeNew = "email_change_new"
}

/// GoTrue's answer to `generate_link`: the user's fields with the link's beside them (the
/// clients split them into `user` and `properties`).
public struct GeneratedLink: ResponseEncodable, Sendable {
    public var user: UserResource
    public var actionLink: String
    public var emailOtp: String
    public var hashedToken: String
    public var verificationType: String
    public var redirectTo: String

    enum Keys: String, CodingKey {
        case actionLink = "action_link", emailOtp = "email_otp", hashedToken = "hashed_token", verificationType = "verification_type", redirectTo = "redirect_to"
    }

    public func encode(to encoder: any Encoder) throws {
        try user.encode(to: encoder)
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(actionLink, forKey: .actionLink)
        try container.encode(emailOtp, forKey: .emailOtp)
        try container.encode(hashedToken, forKey: .hashedToken)
        try container.encode(verificationType, forKey: .verificationType)
        try container.encode(redirectTo, forKey: .redirectTo)
    }
}

/// Operators' calls with the service-role key: invitations and links they send themselves.
extension Accounts {
    static let emailAppMetadata: [String: JSONValue] = ["provider": .string("email"), "providers": .array([.string("email")])]

    /// `POST /invite`: a new account for the address, unconfirmed and without a password, and an
    /// `invite` mail; verifying it confirms the address and signs in, and the invitee then sets a
    /// password (`PUT /user`). An unconfirmed account is invited again; a confirmed one is 422
    /// `email_exists`, as in GoTrue. The invitation proves the address, not a password an
    /// earlier sign-up stored (that one is cleared when it is verified: `AccountProof`).
    /// `actor`: who the audit log names (the service-role key, or the console's operator).
    public func invite(app: App, email rawEmail: String?, data: [String: JSONValue], redirectTo: String?, acceptLanguage: String?, actor: AuditActor = .serviceRole) async throws -> UserResource {
        guard let email = try Credentials.email(rawEmail) else { throw AuthErrors.validation("An email address is required") }
        try MetadataLimits.check(user: data, app: Self.emailAppMetadata)
        let (resource, message): (UserResource, OutgoingMessage) = try await database.transaction { connection in
            var user = try await invitee(app: app, email: email, data: data, on: connection).user
            user.invitedAt = Date()
            try await audit(.userInvited, actor: actor, traits: auditTraits(of: user), app: app, on: connection)
            let message = try await prepareMessage(user: &user, kind: .invite, recipient: email, redirectTo: redirectTo, pkce: nil, acceptLanguage: acceptLanguage, on: connection)
            try await users.update(user, on: connection)
            user.identities = try await users.identities(of: user.id, on: connection)
            return (UserResource(user), message)
        }
        try await deliver(message)
        return resource
    }

    /// `POST /admin/generate_link`: the link and code GoTrue would mail, returned instead of
    /// sent. The account is created where GoTrue creates it: signup (with the password) and
    /// invite for a new address, and magiclink for a new address becomes a signup link for a new
    /// passwordless account; recovery and the email changes need an existing account (404).
    public func generateLink(app: App, type rawType: String?, email rawEmail: String?, newEmail rawNewEmail: String?, password: String?, data: [String: JSONValue]?, redirectTo: String?, actor: AuditActor = .serviceRole) async throws -> GeneratedLink {
        guard let email = try Credentials.email(rawEmail) else { throw AuthErrors.validation("An email address is required") }
        guard let type = rawType.flatMap(GenerateLinkType.init(rawValue:)) else {
            throw AuthErrors.badRequest("Invalid email action link type requested: \(rawType ?? "")")
        }
        let appSettings = settings.app(app)
        let redirect = appSettings.redirect(redirectTo)
        try MetadataLimits.check(user: data ?? [:], app: Self.emailAppMetadata)
        var newEmail: String?
        var hash: String?
        switch type {
        case .signup:
            // Hashed before the transaction (bcrypt is slow); a new account needs it, an
            // unconfirmed one keeps its own (as in GoTrue).
            if let password, !password.isEmpty {
                try validateNewPassword(password)
                hash = try await hasher.hash(password)
            }
        case .emailChangeCurrent, .emailChangeNew:
            if type == .emailChangeCurrent, !appSettings.secureEmailChange {
                throw AuthErrors.badRequest("Enable secure email change to generate link for current email")
            }
            guard let normalized = try Credentials.email(rawNewEmail) else { throw AuthErrors.validation("An email address is required") }
            newEmail = normalized
        case .invite, .magiclink, .recovery:
            break
        }
        return try await database.transaction { connection in
            let existing = try await users.find(email: email, app: app, on: connection, forUpdate: true)
            var user: UserRecord
            var kind: OneTimeTokenKind
            var recipient = email
            var confirmsSignUp = false
            switch type {
            case .signup:
                if var existing {
                    guard existing.emailConfirmedAt == nil else { throw AuthErrors.emailOrPhoneTaken }
                    // As a repeated sign-up: the link proves the address, not the stored password.
                    if let data, !data.isEmpty {
                        for (key, value) in data {
                            if case .null = value { existing.userMetadata[key] = nil } else { existing.userMetadata[key] = value }
                        }
                        try MetadataLimits.check(user: existing.userMetadata, app: existing.appMetadata)
                        try await publishUpdated(existing, on: connection)
                    }
                    user = existing
                } else {
                    guard let hash else { throw AuthErrors.validation("Signup requires a valid password") }
                    user = try await createEmailAccount(app: app, email: email, encryptedPassword: hash, data: data ?? [:], actor: actor, on: connection)
                    confirmsSignUp = true
                }
                kind = .signup
            case .invite:
                user = try await invitee(app: app, email: email, data: data ?? [:], existing: existing, on: connection).user
                user.invitedAt = Date()
                try await audit(.userInvited, actor: actor, traits: auditTraits(of: user), app: app, on: connection)
                kind = .invite
            case .magiclink:
                if let existing {
                    (user, kind) = (existing, .magiclink)
                } else {
                    (user, kind) = (try await createEmailAccount(app: app, email: email, encryptedPassword: nil, data: data ?? [:], actor: actor, on: connection), .signup)
                }
            case .recovery:
                guard let existing else { throw AuthErrors.userNotFound }
                (user, kind) = (existing, .recovery)
            case .emailChangeCurrent, .emailChangeNew:
                guard var existing, let newEmail else { throw AuthErrors.userNotFound }
                let taken = try await users.find(email: newEmail, app: app, on: connection)
                if newEmail == existing.email || taken != nil { throw AuthErrors.emailOrPhoneTaken }
                // Another new address: fresh codes, so a code made for the first cannot confirm it.
                if existing.newEmail != newEmail {
                    try await oneTimeTokens.delete(userID: existing.id, kinds: [.emailChange, .emailChangeCurrent], on: connection)
                }
                existing.newEmail = newEmail
                existing.emailChangeConfirmStatus = appSettings.secureEmailChange ? 0 : 1
                user = existing
                if type == .emailChangeNew {
                    (kind, recipient) = (.emailChange, newEmail)
                } else {
                    kind = .emailChangeCurrent
                }
            }
            let issued = try await oneTimeTokens.issue(
                app: app, userID: user.id, kind: kind, recipient: recipient, withLink: true, redirectTo: redirect, pkce: nil, confirmsSignUp: confirmsSignUp,
                lifetime: TimeInterval(settings.emailCodeLifetimeSeconds), maxAttempts: settings.maxCodeAttempts, on: connection
            )
            let now = Date()
            switch kind {
            case .recovery: user.recoverySentAt = now
            case .emailChange, .emailChangeCurrent: user.emailChangeSentAt = now
            default: user.confirmationSentAt = now
            }
            try await users.update(user, on: connection)
            user.identities = try await users.identities(of: user.id, on: connection)
            let linkToken = issued.linkToken ?? ""
            return GeneratedLink(
                user: UserResource(user), actionLink: verificationLink(linkToken: linkToken, type: kind.messageKind, redirect: redirect),
                emailOtp: issued.code, hashedToken: linkToken,
                // GoTrue names the type asked for, but a magic link that made the account is a signup.
                verificationType: type == .magiclink && kind == .signup ? GenerateLinkType.signup.rawValue : type.rawValue,
                redirectTo: redirect
            )
        }
    }

    /// `GET /verify`'s URL for a link token: what mails link to and `generate_link` returns.
    func verificationLink(linkToken: String, type: String, redirect: String) -> String {
        var components = URLComponents(string: "\(settings.publicURL)/verify")
        components?.queryItems = [URLQueryItem(name: "token", value: linkToken), URLQueryItem(name: "type", value: type), URLQueryItem(name: "redirect_to", value: redirect)]
        return components?.string ?? "\(settings.publicURL)/verify"
    }

    /// The account an invitation goes to: the address's unconfirmed one, or a new one.
    private func invitee(app: App, email: String, data: [String: JSONValue], existing: UserRecord?? = nil, on connection: PostgresConnection) async throws -> (user: UserRecord, created: Bool) {
        let found: UserRecord?
        if let existing { found = existing } else { found = try await users.find(email: email, app: app, on: connection, forUpdate: true) }
        if let found {
            guard found.emailConfirmedAt == nil else { throw AuthErrors.emailOrPhoneTaken }
            return (found, false)
        }
        return (try await createEmailAccount(app: app, email: email, encryptedPassword: nil, data: data, recordedAs: nil, on: connection), true)
    }

    /// A new, unconfirmed email account made by an operator (its password, if any, is the
    /// operator's, not an unproven sign-up's), with its identity, announced.
    /// `recordedAs`: the audit entry of its creation (nil when the caller records the invitation).
    private func createEmailAccount(app: App, email: String, encryptedPassword: String?, data: [String: JSONValue], recordedAs action: AuditAction? = .userSignedUp, actor: AuditActor = .serviceRole, on connection: PostgresConnection) async throws -> UserRecord {
        let now = Date()
        let user = UserRecord(id: UUID(), app: app, email: email, phone: nil, encryptedPassword: encryptedPassword, emailConfirmedAt: nil, phoneConfirmedAt: nil,
                              appMetadata: Self.emailAppMetadata, userMetadata: data, createdAt: now, updatedAt: now)
        try await users.insert(user, on: connection)
        try await addIdentity(for: user, provider: "email", on: connection)
        try await outbox.publish(Self.registered(user, phonePepper: settings.phonePepper, nameFrom: data), on: connection, logger: logger)
        if let action { try await audit(action, actor: actor, traits: auditTraits(of: user), app: app, on: connection) }
        return user
    }
}
