import ColonyModels
import Foundation

/// A request about an email address whose answer must not tell whether the address has an
/// account: `POST /recover`, a magic link or code (`POST /otp` with an email), and a sign-up in
/// an app that confirms addresses. The request path checks only what does not depend on the
/// account, counts the address's budget (known or not) and queues the request; what the account
/// (or its absence) gets is decided off the request path by `AddressRequestRules.plan`. So the
/// status, the body and the time of the answer are the same for every address.
public enum AddressRequestKind: String, Codable, Sendable, CaseIterable {
    case recovery, magiclink, signup
    /// `POST /resend` (`ResendRules`); the SMS kinds carry a number where the others carry an address.
    case resendSignup = "resend_signup"
    case resendEmailChange = "resend_email_change"
    case resendSMS = "resend_sms"
    case resendPhoneChange = "resend_phone_change"
}

/// What a queued request carries besides its address.
struct AddressRequestDetails: Codable, Sendable, Equatable {
    var redirectTo: String?
    var codeChallenge: String?
    var codeChallengeMethod: String?
    /// The request's `Accept-Language` (the mail's language when the metadata names none).
    var acceptLanguage: String?
    /// magiclink: whether the client lets the code create an account (the app decides first).
    var createUser: Bool?
    /// signup and magiclink: the new account's metadata.
    var data: [String: JSONValue]?
    /// signup: the account the answer described, created with these ids should the address have none.
    var userId: UUID?
    var identityId: UUID?
    var encryptedPassword: String?
    var requestedAt: Date?
}

/// The account an address has, as far as a queued request cares.
struct AddressAccount: Sendable, Equatable {
    var emailConfirmed: Bool
    var banned: Bool
}

/// What a queued request does.
enum AddressRequestAction: Sendable, Equatable {
    /// Nothing is sent (and nothing tells the requester so).
    case nothing
    /// A new account for the address, then the code of `kind`.
    case create(OneTimeTokenKind, confirmsSignUp: Bool)
    /// The code of `kind` to the account's address.
    case send(OneTimeTokenKind, confirmsSignUp: Bool)
}

enum AddressRequestRules {
    /// What the address's account, or its absence, gets:
    /// - recovery: a reset code and link to an account; nothing to an unknown address.
    /// - magiclink: a sign-in code and link to an account; for an unknown address a new account
    ///   and its code when the app and the client allow creating one, else nothing.
    /// - signup (apps that confirm addresses): a new account and its confirmation for an unknown
    ///   address; a new confirmation for an unconfirmed account, which proves the address but not
    ///   the password stored by the earlier sign-up (whoever enters it takes the account back, as
    ///   with any other proof); nothing for a confirmed account, as Supabase Auth does: its owner
    ///   signs in or recovers the password as usual.
    /// A banned account gets nothing.
    static func plan(_ kind: AddressRequestKind, account: AddressAccount?, createUser: Bool, app: AppAuthSettings) -> AddressRequestAction {
        if let account, account.banned { return .nothing }
        switch kind {
        case .recovery:
            return account == nil ? .nothing : .send(.recovery, confirmsSignUp: false)
        case .magiclink:
            guard account == nil else { return .send(.magiclink, confirmsSignUp: false) }
            return createUser && app.otpCreateUser && !app.disableSignup ? .create(.magiclink, confirmsSignUp: false) : .nothing
        case .signup:
            guard let account else { return app.disableSignup ? .nothing : .create(.signup, confirmsSignUp: true) }
            return account.emailConfirmed ? .nothing : .send(.signup, confirmsSignUp: false)
        case .resendSignup, .resendEmailChange, .resendSMS, .resendPhoneChange:
            // Planned by `ResendRules`, which sees more of the account (Accounts+Resend.swift).
            return .nothing
        }
    }

    /// The account a confirming sign-up answers with: the one created should the address have
    /// none, and, field for field, the shape of the answer when it has one (fresh ids, nothing of
    /// the real account), as Supabase Auth answers a repeated sign-up.
    static func signUpUser(app: App, email: String, userID: UUID, identityID: UUID, encryptedPassword: String?, data: [String: JSONValue], now: Date) -> UserRecord {
        var user = UserRecord(
            id: userID, app: app, email: email, phone: nil, encryptedPassword: encryptedPassword,
            emailConfirmedAt: nil, phoneConfirmedAt: nil,
            appMetadata: ["provider": .string("email"), "providers": .array([.string("email")])], userMetadata: data,
            createdAt: now, updatedAt: now,
            // Whoever signs up has proven nothing: the password is theirs, the address may not be.
            passwordUnproven: true
        )
        user.confirmationSentAt = now
        user.identities = [IdentityRecord(
            id: identityID, userId: userID, provider: "email", providerId: userID.uuidString.lowercased(),
            identityData: UserStore.ownIdentityData(for: user, provider: "email"), lastSignInAt: nil, createdAt: now, updatedAt: now
        )]
        return user
    }

    /// The account a magic link creates for an unknown address (no password, unconfirmed).
    static func magicLinkUser(app: App, email: String, data: [String: JSONValue], now: Date) -> UserRecord {
        UserRecord(id: UUID(), app: app, email: email, phone: nil, encryptedPassword: nil, emailConfirmedAt: nil, phoneConfirmedAt: nil,
                   appMetadata: ["provider": .string("email"), "providers": .array([.string("email")])], userMetadata: data, createdAt: now, updatedAt: now)
    }
}
