import Foundation

/// Pre-account hijacking, closed: an address is *proven* when its owner shows they received
/// something sent to it (a code or link, or Apple's verified email), which is not the same as
/// *confirmed* (an app may autoconfirm sign-ups). A password set by someone who had proven nothing
/// (a sign-up) is *unproven* until that sign-up's own confirmation code is entered. When any other
/// proof arrives for the account (a magic link, an OTP, a recovery code, Sign in with Apple), the
/// one proving the address is its owner and the password is not theirs: it is cleared and every
/// session of the account ends, so whoever signed up with someone else's address loses it.
public enum AccountProof {
    public enum Address: Sendable { case email, phone }

    /// What a proof did to the account.
    public enum Outcome: Equatable, Sendable {
        /// Nothing beyond marking the address proven.
        case proven
        /// The unproven password was cleared: end every session, cancel pending changes.
        case reclaimed
    }

    /// Applies a proof of the account's `address`. `confirmsSignUp`: the proof is the code the
    /// sign-up that set the password sent, so that password is the prover's own.
    public static func apply(_ address: Address, confirmsSignUp: Bool, to user: inout UserRecord, now: Date) -> Outcome {
        switch address {
        case .email:
            if user.emailConfirmedAt == nil { user.emailConfirmedAt = now }
            if user.emailProvenAt == nil { user.emailProvenAt = now }
        case .phone:
            if user.phoneConfirmedAt == nil { user.phoneConfirmedAt = now }
            if user.phoneProvenAt == nil { user.phoneProvenAt = now }
        }
        guard user.passwordUnproven else { return .proven }
        user.passwordUnproven = false
        if confirmsSignUp { return .proven }
        guard user.encryptedPassword != nil else { return .proven }
        user.encryptedPassword = nil
        user.newEmail = nil
        user.newPhone = nil
        user.emailChangeConfirmStatus = 0
        return .reclaimed
    }

    /// Whether Sign in with Apple may join an existing account by its email: only when that
    /// address was proven by its owner, earlier or by this very token (Apple verified it).
    public static func appleMayLink(to user: UserRecord, appleVerifiedEmail: Bool) -> Bool {
        user.emailProvenAt != nil || appleVerifiedEmail
    }
}

/// GoTrue's secure password change, and the same for deleting an account: a session that signed
/// in long ago must show a reauthentication code (`GET /reauthenticate`, then `nonce`).
public enum RecentSignIn {
    public static func needsProof(sessionCreatedAt: Date?, windowSeconds: Int, now: Date) -> Bool {
        guard let sessionCreatedAt else { return true }
        return now.timeIntervalSince(sessionCreatedAt) >= Double(windowSeconds)
    }
}
