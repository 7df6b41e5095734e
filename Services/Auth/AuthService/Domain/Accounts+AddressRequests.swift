import ColonyModels
import ColonyPlatform
import Foundation
import PostgresNIO

/// Queued address requests (`AddressRequestRules`): the request path's part, the same for every
/// address, and the dispatcher's, which depends on the account.
extension Accounts {
    /// How many times a request is tried (a failing database, say) before it is dropped.
    static let addressRequestAttempts = 5

    /// Counts the address's budget (known or not: 429 alike) and queues the request.
    func enqueue(_ kind: AddressRequestKind, app: App, email: String, details: AddressRequestDetails) async throws {
        try await spend(channel: .email, app: app, recipient: email)
        try await database.query(try AddressRequestStore.enqueue(id: UUID.timeOrdered(), app: app, kind: kind, email: email, details: details))
        addressRequestQueued.wake()
    }

    /// Leases due requests and handles each in a transaction of its own, then sends what it made
    /// (a failed send is logged: the code stays valid and asking again re-sends it). The number
    /// leased.
    public func handleDueAddressRequests(limit: Int = 16) async throws -> Int {
        let leased = try await database.withConnection { connection in
            try await addressRequests.lease(limit: limit, leaseSeconds: 60, on: connection)
        }
        for request in leased {
            let messages: [OutgoingMessage]
            do {
                messages = try await database.transaction { connection in
                    // Taken first: a replica that leased it again after this lease ran out finds it gone.
                    guard try await addressRequests.take(id: request.id, on: connection) else { return [] }
                    if let resend = ResendType(request.kind) { return try await handleResend(resend, request, on: connection) }
                    return try await handle(request, on: connection).map { [$0] } ?? []
                }
            } catch {
                // Left leased: tried again once the lease ends, up to the limit.
                logger.warning("address request failed", metadata: ["kind": "\(request.kind.rawValue)", "attempt": "\(request.attempts)", "error": "\(error)"])
                if request.attempts >= Self.addressRequestAttempts {
                    logger.error("address request dropped after \(request.attempts) attempts", metadata: ["kind": "\(request.kind.rawValue)"])
                    try await database.withConnection { try await addressRequests.delete(id: request.id, on: $0) }
                }
                continue
            }
            for message in messages {
                do { try await sender.send(message) } catch {
                    logger.error("could not send \(message.channel.rawValue)", metadata: ["kind": "\(message.kind)", "error": "\(error)"])
                }
            }
        }
        return leased.count
    }

    /// What the request does to the address's account (see `AddressRequestRules.plan`): the
    /// message to send after commit, if any.
    private func handle(_ request: QueuedAddressRequest, on connection: PostgresConnection) async throws -> OutgoingMessage? {
        let details = request.details
        let existing = try await users.find(email: request.email, app: request.app, on: connection, forUpdate: true)
        let action = AddressRequestRules.plan(
            request.kind, account: existing.map { AddressAccount(emailConfirmed: $0.emailConfirmedAt != nil, banned: $0.isBanned) },
            createUser: details.createUser ?? true, app: settings.app(request.app)
        )
        var user: UserRecord
        let kind: OneTimeTokenKind
        let confirmsSignUp: Bool
        switch action {
        case .nothing:
            return nil
        case .send(let sent, let confirms):
            guard let existing else { return nil }
            (user, kind, confirmsSignUp) = (existing, sent, confirms)
        case .create(let sent, let confirms):
            let now = details.requestedAt ?? Date()
            let data = details.data ?? [:]
            if request.kind == .signup {
                user = AddressRequestRules.signUpUser(app: request.app, email: request.email, userID: details.userId ?? UUID(), identityID: details.identityId ?? UUID.timeOrdered(),
                                                      encryptedPassword: details.encryptedPassword, data: data, now: now)
                user.confirmationSentAt = nil
            } else {
                user = AddressRequestRules.magicLinkUser(app: request.app, email: request.email, data: data, now: now)
            }
            // A concurrent request that created the account first makes this insert fail: the
            // request is tried again and then finds the account.
            try await users.insert(user, on: connection)
            try await users.addOwnIdentity(for: user, provider: "email", id: request.kind == .signup ? user.identities.first?.id : nil, on: connection)
            try await publishRegistered(user, on: connection)
            (kind, confirmsSignUp) = (sent, confirms)
        }
        let pkce = PKCEChallenge(stored: details.codeChallenge, method: details.codeChallengeMethod)
        let message = try await prepareMessage(user: &user, kind: kind, recipient: request.email, redirectTo: details.redirectTo, pkce: pkce,
                                               confirmsSignUp: confirmsSignUp, acceptLanguage: details.acceptLanguage, spend: false, on: connection)
        try await users.update(user, on: connection)
        // Recorded here, where the account is known, never on the request path (which answers
        // alike for every address).
        let recorded: AuditAction = switch kind {
        case .recovery, .magiclink: .userRecoveryRequested
        default: existing != nil && request.kind == .signup ? .userRepeatedSignUp : .userConfirmationRequested
        }
        try await audit(recorded, actor: .user(user), app: request.app, on: connection)
        return message
    }
}
