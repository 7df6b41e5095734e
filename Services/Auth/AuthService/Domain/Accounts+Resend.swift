import ColonyModels
import ColonyPlatform
import Foundation
import PostgresNIO

/// What `POST /resend` may re-send (GoTrue's four types).
public enum ResendType: String, Sendable, CaseIterable {
    case signup
    case emailChange = "email_change"
    case sms
    case phoneChange = "phone_change"

    init?(_ kind: AddressRequestKind) {
        switch kind {
        case .resendSignup: self = .signup
        case .resendEmailChange: self = .emailChange
        case .resendSMS: self = .sms
        case .resendPhoneChange: self = .phoneChange
        case .recovery, .magiclink, .signup: return nil
        }
    }

    var requestKind: AddressRequestKind {
        switch self {
        case .signup: .resendSignup
        case .emailChange: .resendEmailChange
        case .sms: .resendSMS
        case .phoneChange: .resendPhoneChange
        }
    }

    /// How the re-sent code travels, and so which budgets a request spends.
    var channel: MessageChannel { self == .signup || self == .emailChange ? .email : .sms }
}

/// The account a resend names, as far as the rules care.
struct ResendAccount: Sendable, Equatable {
    var email: String?
    var phone: String?
    var emailConfirmed: Bool
    var phoneConfirmed: Bool
    var newEmail: String?
    var newPhone: String?
    var banned: Bool
    /// A secure email change: 0 while both addresses must still confirm.
    var emailChangeConfirmStatus: Int
    /// The email change's codes not yet used (left in `one_time_tokens`, live or expired).
    var unusedEmailChangeCodes: Set<OneTimeTokenKind>

    init(_ user: UserRecord, unusedEmailChangeCodes: Set<OneTimeTokenKind>) {
        (email, phone, newEmail, newPhone) = (user.email, user.phone, user.newEmail, user.newPhone)
        (emailConfirmed, phoneConfirmed, banned) = (user.emailConfirmedAt != nil, user.phoneConfirmedAt != nil, user.isBanned)
        emailChangeConfirmStatus = user.emailChangeConfirmStatus
        self.unusedEmailChangeCodes = unusedEmailChangeCodes
    }

    init(email: String? = nil, phone: String? = nil, emailConfirmed: Bool = false, phoneConfirmed: Bool = false, newEmail: String? = nil, newPhone: String? = nil, banned: Bool = false, emailChangeConfirmStatus: Int = 0, unusedEmailChangeCodes: Set<OneTimeTokenKind> = []) {
        (self.email, self.phone, self.emailConfirmed, self.phoneConfirmed) = (email, phone, emailConfirmed, phoneConfirmed)
        (self.newEmail, self.newPhone, self.banned) = (newEmail, newPhone, banned)
        self.emailChangeConfirmStatus = emailChangeConfirmStatus
        self.unusedEmailChangeCodes = unusedEmailChangeCodes
    }
}

/// One code a resend sends again.
struct ResendMessage: Sendable, Equatable {
    var kind: OneTimeTokenKind
    var recipient: String
    var confirmsSignUp: Bool
}

enum ResendRules {
    /// What a queued resend sends (nothing for an unknown recipient or a banned account, as for
    /// every address request):
    /// - signup / sms: the sign-up's confirmation again while the address (number) is unconfirmed.
    ///   It is the sign-up's own confirmation, so it proves the stored password as the first one
    ///   did (`confirmsSignUp`; a code a repeated sign-up re-issued keeps saying no: the store
    ///   ANDs the flag when it re-sends a live code).
    /// - email_change: the pending change's codes not yet used. A code already entered is never
    ///   sent again: in a secure change that would let the side that confirmed confirm twice and
    ///   skip the other address. Once expired codes were swept, a change nobody confirmed yet
    ///   gets both again; a plain change (no secure change, or no current address) its one code.
    /// - phone_change: the pending number's code.
    static func plan(_ type: ResendType, account: ResendAccount?, secureEmailChange: Bool) -> [ResendMessage] {
        guard let account, !account.banned else { return [] }
        switch type {
        case .signup:
            guard let email = account.email, !account.emailConfirmed else { return [] }
            return [ResendMessage(kind: .signup, recipient: email, confirmsSignUp: true)]
        case .sms:
            guard let phone = account.phone, !account.phoneConfirmed else { return [] }
            return [ResendMessage(kind: .sms, recipient: phone, confirmsSignUp: true)]
        case .emailChange:
            guard let newEmail = account.newEmail else { return [] }
            let new = ResendMessage(kind: .emailChange, recipient: newEmail, confirmsSignUp: false)
            guard secureEmailChange, let current = account.email else { return [new] }
            let both = [new, ResendMessage(kind: .emailChangeCurrent, recipient: current, confirmsSignUp: false)]
            let unused = account.unusedEmailChangeCodes.intersection([.emailChange, .emailChangeCurrent])
            if unused.isEmpty { return account.emailChangeConfirmStatus == 0 ? both : [] }
            return both.filter { unused.contains($0.kind) }
        case .phoneChange:
            guard let newPhone = account.newPhone else { return [] }
            return [ResendMessage(kind: .phoneChange, recipient: newPhone, confirmsSignUp: false)]
        }
    }
}

extension Accounts {
    /// `POST /resend`: queued like `/recover` (`AddressRequestRules`), so the status, the body and
    /// the time of the answer are the same whether or not the address or number has an account,
    /// and the recipient's budgets (for SMS also the number's, the app's and the deployment's)
    /// count alike. What the account gets is decided by `ResendRules` off the request path. The
    /// message id for the SMS types, as `/otp` answers (a fresh one either way).
    public func resend(app: App, type rawType: String?, email rawEmail: String?, phone rawPhone: String?, pkce: PKCEChallenge?, redirectTo: String?, client: ClientInfo) async throws -> String? {
        guard let type = rawType.flatMap(ResendType.init(rawValue:)) else {
            throw AuthErrors.badRequest("Missing one of these types: signup, email_change, sms, phone_change")
        }
        let hasEmail = !(rawEmail ?? "").isEmpty
        let hasPhone = !(rawPhone ?? "").isEmpty
        if type == .signup, !hasEmail { throw AuthErrors.badRequest("Type provided requires an email address") }
        if type == .sms, !hasPhone { throw AuthErrors.badRequest("Type provided requires a phone number") }
        if hasEmail, hasPhone { throw AuthErrors.badRequest("Only an email address or phone number should be provided.") }
        let appSettings = settings.app(app)
        let recipient: String
        if hasEmail {
            guard appSettings.emailEnabled || appSettings.magicLinkEnabled else { throw AuthErrors.emailProviderDisabled }
            guard let email = try Credentials.email(rawEmail) else { throw AuthErrors.badRequest("Missing email address or phone number") }
            recipient = email
        } else if hasPhone {
            guard appSettings.phoneEnabled else { throw AuthErrors.phoneProviderDisabled }
            guard let phone = try Credentials.phone(rawPhone) else { throw AuthErrors.badRequest("Missing email address or phone number") }
            recipient = phone
        } else {
            throw AuthErrors.badRequest("Missing email address or phone number")
        }
        try ipLimiter.check("otp:ip:\(client.ip)", rule: settings.rateLimits.otpPerIP)
        try await spend(channel: type.channel, app: app, recipient: recipient)
        // PKCE applies to the mailed links only, as in GoTrue.
        let linked = type.channel == .email ? pkce : nil
        let details = AddressRequestDetails(redirectTo: redirectTo, codeChallenge: linked?.challenge, codeChallengeMethod: linked?.method.rawValue, acceptLanguage: client.acceptLanguage)
        try await database.query(try AddressRequestStore.enqueue(id: UUID.timeOrdered(), app: app, kind: type.requestKind, email: recipient, details: details))
        addressRequestQueued.wake()
        return type.channel == .sms ? UUID().uuidString.lowercased() : nil
    }

    /// `POST /admin/users/{id}/resend`: the sign-up's confirmation again, as `POST /resend` type
    /// `signup` (or `sms`, for an account with a phone only) sends it (`ResendRules`, the same
    /// code while it lives, the recipient's budgets spent), sent now: the operator knows the
    /// account. 422 `already_confirmed` when the address is confirmed; 400 `user_banned` for a
    /// banned account. Recorded as `user_confirmation_requested` by `actor`.
    public func adminResend(app: App, userID: UUID, actor: AuditActor, redirectTo: String?) async throws {
        let appSettings = settings.app(app)
        let message: OutgoingMessage = try await database.transaction { connection in
            guard var user = try await users.find(id: userID, app: app, on: connection, forUpdate: true) else { throw AuthErrors.userNotFound }
            guard !user.isBanned else { throw AuthErrors.userBanned }
            let type: ResendType
            if user.email != nil {
                guard appSettings.emailEnabled || appSettings.magicLinkEnabled else { throw AuthErrors.emailProviderDisabled }
                type = .signup
            } else if user.phone != nil {
                guard appSettings.phoneEnabled else { throw AuthErrors.phoneProviderDisabled }
                type = .sms
            } else {
                throw Self.noAddress
            }
            let planned = ResendRules.plan(type, account: ResendAccount(user, unusedEmailChangeCodes: []), secureEmailChange: appSettings.secureEmailChange)
            guard let item = planned.first else { throw Self.alreadyConfirmed }
            let message = try await prepareMessage(user: &user, kind: item.kind, recipient: item.recipient, redirectTo: type == .signup ? redirectTo : nil, pkce: nil,
                                                   confirmsSignUp: item.confirmsSignUp, on: connection)
            try await users.update(user, on: connection)
            try await audit(.userConfirmationRequested, actor: actor, traits: auditTraits(of: user), app: app, on: connection)
            return message
        }
        try await deliver(message)
    }

    static let alreadyConfirmed = APIError(.unprocessableContent, code: "already_confirmed", message: "The account's address is already confirmed")

    /// The dispatcher's part of a resend: the codes `ResendRules` plans, composed (the request
    /// path spent the budgets), the account's sent-at times recorded.
    func handleResend(_ type: ResendType, _ request: QueuedAddressRequest, on connection: PostgresConnection) async throws -> [OutgoingMessage] {
        let identifier = request.email
        let found = identifier.contains("@")
            ? try await users.find(email: identifier, app: request.app, on: connection, forUpdate: true)
            : try await users.find(phone: identifier, app: request.app, on: connection, forUpdate: true)
        guard var user = found else { return [] }
        let unused = try await oneTimeTokens.unusedKinds(userID: user.id, among: [.emailChange, .emailChangeCurrent], on: connection)
        let planned = ResendRules.plan(type, account: ResendAccount(user, unusedEmailChangeCodes: unused), secureEmailChange: settings.app(request.app).secureEmailChange)
        guard !planned.isEmpty else { return [] }
        let details = request.details
        let pkce = PKCEChallenge(stored: details.codeChallenge, method: details.codeChallengeMethod)
        var messages: [OutgoingMessage] = []
        for item in planned {
            messages.append(try await prepareMessage(user: &user, kind: item.kind, recipient: item.recipient, redirectTo: details.redirectTo, pkce: item.recipient.contains("@") ? pkce : nil,
                                                     confirmsSignUp: item.confirmsSignUp, acceptLanguage: details.acceptLanguage, spend: false, on: connection))
        }
        try await users.update(user, on: connection)
        return messages
    }
}

extension OneTimeTokenStore {
    /// Which of `kinds` the user still has a code of (live or expired, not yet swept).
    func unusedKinds(userID: UUID, among kinds: [OneTimeTokenKind], on connection: PostgresConnection) async throws -> Set<OneTimeTokenKind> {
        var found: Set<OneTimeTokenKind> = []
        let rows = try await connection.query("SELECT DISTINCT kind FROM one_time_tokens WHERE user_id = \(userID) AND kind = ANY(\(kinds.map(\.rawValue)))", logger: logger)
        for kind in try await rows.values(String.self) {
            if let kind = OneTimeTokenKind(rawValue: kind) { found.insert(kind) }
        }
        return found
    }
}
