import Foundation

/// Which account a provider's identity signs in to: GoTrue's `DetermineAccountLinking`, with
/// Colony's pre-hijack rules on top. Plain data in, a decision out; the caller reads the rows.
///
/// GoTrue's rules: a known identity signs in to its account; an identity whose provider
/// verified none of its addresses makes a new account (without the address when another account
/// holds it); otherwise it joins the one account that holds a verified address (as its email, or
/// through another identity), or makes a new one. Colony differs in two ways, both closing doors
/// GoTrue leaves open: an app's autoconfirm never counts as the provider's verification (GoTrue
/// treats every address as verified then, so any provider's unverified claim to an address would
/// join its account), and only identities whose own provider verified the address lead to their
/// account (an unverified identity that kept someone's address in its data leads nowhere).
public enum OAuthLinking {
    public enum Decision: Equatable, Sendable {
        /// The identity is known: sign in to its account.
        case accountExists(UUID)
        /// Add the identity to this account.
        case link(UUID)
        /// A new account, with this address (nil: none) as its email.
        case create(email: String?, emailVerified: Bool)
        /// The verified addresses lead to more than one account: refused.
        case multipleAccounts
    }

    /// What the database holds for the identity's addresses.
    public struct Found: Equatable, Sendable {
        /// The account of the identity (provider, subject), if it exists.
        public var identityOwner: UUID?
        /// Accounts whose email is one of the verified addresses.
        public var accountsWithVerifiedEmail: [UUID]
        /// Accounts holding another provider's identity that verified one of the addresses.
        public var accountsWithVerifiedIdentity: [UUID]
        /// Whether an account already holds the candidate address as its email.
        public var candidateTaken: Bool

        public init(identityOwner: UUID? = nil, accountsWithVerifiedEmail: [UUID] = [], accountsWithVerifiedIdentity: [UUID] = [], candidateTaken: Bool = false) {
            self.identityOwner = identityOwner
            self.accountsWithVerifiedEmail = accountsWithVerifiedEmail
            self.accountsWithVerifiedIdentity = accountsWithVerifiedIdentity
            self.candidateTaken = candidateTaken
        }
    }

    /// The addresses the provider verified, lower-cased: the ones that may join accounts.
    public static func verifiedEmails(_ emails: [ProviderEmail]) -> [String] {
        var seen: [String] = []
        for email in emails where email.verified && !seen.contains(email.email.lowercased()) { seen.append(email.email.lowercased()) }
        return seen
    }

    public static func decide(emails: [ProviderEmail], found: Found) -> Decision {
        if let owner = found.identityOwner { return .accountExists(owner) }
        let candidate = emails.first(where: \.primary) ?? emails.last
        if verifiedEmails(emails).isEmpty {
            // Nothing proven: never another account's. The address only if nobody holds it.
            return .create(email: found.candidateTaken ? nil : candidate?.email.lowercased(), emailVerified: false)
        }
        let byIdentity = unique(found.accountsWithVerifiedIdentity)
        if !byIdentity.isEmpty {
            return byIdentity.count == 1 ? .link(byIdentity[0]) : .multipleAccounts
        }
        let byEmail = unique(found.accountsWithVerifiedEmail)
        switch byEmail.count {
        case 1: return .link(byEmail[0])
        case 0: return .create(email: found.candidateTaken ? nil : candidate?.email.lowercased(), emailVerified: candidate?.verified ?? false)
        default: return .multipleAccounts
        }
    }

    /// Whether a sign-in through the identity may go on (GoTrue: an account not confirmed, met
    /// through an address its provider did not verify, waits for the address to be verified;
    /// `autoconfirm` apps confirm it at once).
    public static func mayProceed(accountEmailConfirmed: Bool, candidateVerified: Bool, autoconfirm: Bool) -> Bool {
        accountEmailConfirmed || candidateVerified || autoconfirm
    }

    /// The identities that lose their place when a provider's verified address proves an account
    /// whose email nobody had proven: identities of other providers that proved nothing (their
    /// provider did not verify their address). They may be whoever claimed the address first.
    public static func unprovenIdentities(of identities: [IdentityRecord], except keep: UUID?) -> [IdentityRecord] {
        identities.filter { identity in
            guard identity.id != keep, identity.provider != "email", identity.provider != "phone" else { return false }
            if case .bool(true)? = identity.identityData["email_verified"] { return false }
            if case .string("true")? = identity.identityData["email_verified"] { return false }
            return true
        }
    }

    private static func unique(_ ids: [UUID]) -> [UUID] {
        var seen: [UUID] = []
        for id in ids where !seen.contains(id) { seen.append(id) }
        return seen
    }
}
