import ColonyModels
import ColonyPlatform
import Foundation
import PostgresNIO

/// Which address an account keeps when an identity goes: GoTrue's
/// `UpdateUserEmailFromIdentities`, as plain data.
public enum IdentityEmailRule {
    public enum Outcome: Equatable, Sendable {
        /// The account's email stays as it is.
        case keep
        /// The account's email becomes this one (nil: none), confirmed or not.
        case replace(email: String?, confirmed: Bool)
        /// Every candidate address is another account's.
        case conflict
    }

    /// `remaining`: the identities left; `takenByOthers`: whether another account of the app holds
    /// an address.
    public static func after(unlinking remaining: [IdentityRecord], accountEmail: String?, autoconfirm: Bool, takenByOthers: (String) -> Bool) -> Outcome {
        let emails = remaining.map { email(of: $0) }
        if let accountEmail, emails.contains(accountEmail) { return .keep }
        if accountEmail == nil, emails.allSatisfy({ $0 == nil }) { return .keep }
        // Verified addresses first, then unverified ones, then identities without one; oldest first.
        func rank(_ identity: IdentityRecord) -> Int {
            guard email(of: identity) != nil else { return 2 }
            return verified(identity) ? 0 : 1
        }
        let ordered = remaining.enumerated().sorted { a, b in
            let (ra, rb) = (rank(a.element), rank(b.element))
            if ra != rb { return ra < rb }
            if a.element.createdAt != b.element.createdAt { return a.element.createdAt < b.element.createdAt }
            return a.element.id.uuidString < b.element.id.uuidString
        }.map(\.element)
        for identity in ordered {
            guard let address = email(of: identity) else { return .replace(email: nil, confirmed: false) }
            if takenByOthers(address) { continue }
            return .replace(email: address, confirmed: verified(identity) || autoconfirm)
        }
        return .conflict
    }

    static func email(of identity: IdentityRecord) -> String? {
        guard case .string(let address)? = identity.identityData["email"], !address.isEmpty else { return nil }
        return address.lowercased()
    }

    static func verified(_ identity: IdentityRecord) -> Bool {
        switch identity.identityData["email_verified"] {
        case .bool(true)?, .string("true")?: true
        default: false
        }
    }
}

extension Accounts {
    /// `GET /user/identities/authorize`: manual linking's start, for the signed-in caller.
    public func identityLinkURL(app: App, caller: AuthenticatedCaller, request: OAuthAuthorizeRequest, client: ClientInfo) async throws -> String {
        guard settings.app(app).manualLinking else { throw Self.manualLinkingDisabled }
        return try await oauthAuthorizationURL(app: app, request: request, linkingUserID: caller.userID, client: client)
    }

    /// `DELETE /user/identities/{identity_id}`: never the last identity. An address or phone
    /// that came with the identity goes with it (GoTrue's rules: the phone is cleared, the email
    /// becomes another identity's).
    public func unlinkIdentity(app: App, caller: AuthenticatedCaller, identityID: UUID) async throws {
        let appSettings = settings.app(app)
        guard appSettings.manualLinking else { throw Self.manualLinkingDisabled }
        try await database.transaction { connection in
            guard var user = try await users.find(id: caller.userID, app: app, on: connection, forUpdate: true) else { throw AuthErrors.userNotFound }
            guard user.identities.count > 1 else {
                throw APIError(.unprocessableContent, code: "single_identity_not_deletable", message: "User must have at least 1 identity after unlinking")
            }
            guard let identity = user.identities.first(where: { $0.id == identityID }) else {
                throw APIError(.unprocessableContent, code: "identity_not_found", message: "Identity doesn't exist")
            }
            try await IdentityStore(logger: logger).delete(identityIDs: [identity.id], userID: user.id, on: connection)
            user.identities.removeAll { $0.id == identity.id }
            let before = (user.email, user.phone)
            if identity.provider == "phone" {
                (user.phone, user.phoneConfirmedAt, user.phoneProvenAt, user.newPhone) = (nil, nil, nil, nil)
            } else {
                var taken: [String: Bool] = [:]
                for address in user.identities.compactMap(IdentityEmailRule.email(of:)) where address != user.email {
                    taken[address] = try await users.find(email: address, app: app, on: connection).map { $0.id != user.id } ?? false
                }
                switch IdentityEmailRule.after(unlinking: user.identities, accountEmail: user.email, autoconfirm: appSettings.emailAutoconfirm, takenByOthers: { taken[$0] ?? false }) {
                case .keep: break
                case .replace(let email, let confirmed):
                    // Codes and changes asked for under the old address are not the new one's.
                    let now = Date()
                    (user.email, user.newEmail, user.emailChangeConfirmStatus) = (email, nil, 0)
                    user.emailConfirmedAt = confirmed ? (user.emailConfirmedAt ?? now) : nil
                    user.emailProvenAt = email != nil && confirmed ? user.emailProvenAt ?? now : nil
                    try await oneTimeTokens.delete(userID: user.id, kinds: [.signup, .magiclink, .recovery, .emailChange, .emailChangeCurrent, .reauthentication], on: connection)
                case .conflict:
                    throw APIError(.unprocessableContent, code: "email_conflict_identity_not_deletable", message: "Unable to unlink identity due to email conflict")
                }
            }
            var providers: [JSONValue] = []
            for remaining in user.identities where !providers.contains(.string(remaining.provider)) { providers.append(.string(remaining.provider)) }
            user.appMetadata["providers"] = .array(providers)
            if case .string(let current)? = user.appMetadata["provider"], !providers.contains(.string(current)), let first = providers.first {
                user.appMetadata["provider"] = first
            }
            try await users.update(user, on: connection)
            if before != (user.email, user.phone) { try await publishUpdated(user, on: connection) }
            try await audit(.identityUnlinked, actor: .user(user), traits: [
                "identity_id": .string(identity.id.uuidString.lowercased()), "provider": .string(identity.provider), "provider_id": .string(identity.providerId),
            ], app: app, on: connection)
        }
    }

    static let manualLinkingDisabled = APIError(.notFound, code: "manual_linking_disabled", message: "Manual linking is disabled")
}
