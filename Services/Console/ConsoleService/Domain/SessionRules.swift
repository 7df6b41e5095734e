import Foundation

/// When an operator's session still counts: not ended, used within the idle timeout and
/// younger than the absolute one. Checked on every request, against the stored times (no state
/// in memory: any replica answers any request).
public struct SessionRules: Sendable {
    public var idleTimeout: Duration
    public var absoluteTimeout: Duration

    public init(idleTimeout: Duration, absoluteTimeout: Duration) {
        self.idleTimeout = idleTimeout
        self.absoluteTimeout = absoluteTimeout
    }

    public func isLive(createdAt: Date, lastSeenAt: Date, endedAt: Date?, now: Date) -> Bool {
        guard endedAt == nil else { return false }
        return now.timeIntervalSince(lastSeenAt) < seconds(idleTimeout) && now.timeIntervalSince(createdAt) < seconds(absoluteTimeout)
    }

    /// The cookie's Max-Age: a browser forgets it when the server would refuse it anyway.
    public var cookieMaxAge: Int { Int(absoluteTimeout.components.seconds) }

    func seconds(_ duration: Duration) -> TimeInterval { TimeInterval(duration.components.seconds) }
}

/// Wrong passwords and codes in a row lock an operator for a while; a right one resets the count.
public struct LockoutRules: Sendable {
    public var attempts: Int
    public var lockout: Duration

    public init(attempts: Int, lockout: Duration) {
        self.attempts = attempts
        self.lockout = lockout
    }

    /// After a failure that brings the count to `failures`: the time the operator is locked until, if any.
    public func lockedUntil(failures: Int, now: Date) -> Date? {
        failures >= attempts ? now.addingTimeInterval(TimeInterval(lockout.components.seconds)) : nil
    }

    public func isLocked(until: Date?, now: Date) -> Bool {
        guard let until else { return false }
        return until > now
    }
}

/// An operator's new password: long enough to resist guessing without a rule of character classes.
public enum PasswordRules {
    public static let minimumLength = 12
    public static let maximumBytes = 72  // bcrypt reads no further

    public static func problem(_ password: String) -> String? {
        if password.count < minimumLength { return "The password needs at least \(minimumLength) characters." }
        if password.utf8.count > maximumBytes { return "The password may have at most \(maximumBytes) bytes." }
        return nil
    }
}
