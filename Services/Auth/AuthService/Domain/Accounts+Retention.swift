import ColonyModels
import ColonyPlatform
import Foundation
import Metrics
import PostgresNIO

/// Accounts kept no longer than they should be (issue 40.2), per app in the apps file:
/// - `unconfirmed_signup_days` (30): an account whose address was never confirmed and that
///   never signed in is erased that many days after it was made (or imported);
/// - `inactive_account_days` (off): an account unused that long is erased, after a mail or SMS
///   `inactive_warning_days` before; signing in again (or refreshing a session) keeps it.
/// Each goes as an account deletion goes: `user_deleted`, so every service erases what the user
/// made, and an audit entry by `retention`. Counted in `colony_retention_deleted_total`
/// (`kind` unconfirmed_accounts, inactive_accounts) and `colony_retention_warned_total`.
extension Accounts {
    /// Accounts per transaction: a long backlog goes in short transactions.
    static let retentionBatch = 100

    public struct RetentionOutcome: Sendable, Equatable {
        public var unconfirmed = 0
        public var warned = 0
        public var inactive = 0
    }

    /// One run of the `auth.retention` job, with `now` the clock (tests set it).
    @discardableResult
    public func applyRetention(now: Date = Date()) async throws -> RetentionOutcome {
        var outcome = RetentionOutcome()
        for app in App.allCases {
            let rules = settings.app(app)
            if let days = rules.unconfirmedSignupDays {
                outcome.unconfirmed += try await eraseUnconfirmed(app: app, before: now.addingTimeInterval(-Double(days) * 86_400), now: now)
            }
            if let days = rules.inactiveAccountDays {
                let warning = rules.inactiveWarningDays
                outcome.warned += try await warnInactive(app: app, unusedSince: now.addingTimeInterval(-Double(days - warning) * 86_400),
                                                         eraseOn: now.addingTimeInterval(Double(warning) * 86_400), now: now)
                outcome.inactive += try await eraseInactive(app: app, unusedSince: now.addingTimeInterval(-Double(days) * 86_400),
                                                            warnedBefore: now.addingTimeInterval(-Double(warning) * 86_400 + 60), now: now)
            }
        }
        Retention.deleted(outcome.unconfirmed, kind: "unconfirmed_accounts")
        Retention.deleted(outcome.inactive, kind: "inactive_accounts")
        if outcome.warned > 0 {
            RetentionMetrics.warned.increment(by: outcome.warned)
        }
        if outcome != RetentionOutcome() {
            logger.notice("retention: accounts", metadata: ["unconfirmed_erased": "\(outcome.unconfirmed)", "warned": "\(outcome.warned)", "inactive_erased": "\(outcome.inactive)"])
        }
        return outcome
    }

    /// When an account was last used: made, signed in, or a session refreshed.
    private static let lastUsed = """
        GREATEST(u.created_at, u.last_sign_in_at, (SELECT max(coalesce(s.refreshed_at, s.created_at)) FROM sessions s WHERE s.user_id = u.id))
        """

    private func eraseUnconfirmed(app: App, before cutoff: Date, now: Date) async throws -> Int {
        try await eraseBatches(app: app, reason: "unconfirmed", now: now) { connection in
            // An imported account counts from its import: the source's created_at may be years old.
            try await connection.query("""
                SELECT u.id FROM users u
                WHERE u.app = \(app.rawValue) AND NOT u.is_anonymous AND u.email_confirmed_at IS NULL AND u.phone_confirmed_at IS NULL
                  AND u.last_sign_in_at IS NULL AND u.created_at < \(cutoff)
                  AND NOT EXISTS (SELECT 1 FROM import_ledger l WHERE l.app = u.app AND l.source_table = 'auth.users'
                                  AND l.source_id = u.id::text AND l.imported_at >= \(cutoff))
                ORDER BY u.created_at LIMIT \(Self.retentionBatch) FOR UPDATE OF u SKIP LOCKED
                """, logger: logger)
        }
    }

    private func eraseInactive(app: App, unusedSince cutoff: Date, warnedBefore: Date, now: Date) async throws -> Int {
        try await eraseBatches(app: app, reason: "inactive", now: now) { connection in
            // Only after a warning given since its last use, and at least the warning's days ago.
            try await connection.query(PostgresQuery(unsafeSQL: """
                SELECT u.id FROM users u
                WHERE u.app = $1 AND NOT u.is_anonymous AND u.inactivity_warned_at IS NOT NULL AND u.inactivity_warned_at <= $2
                  AND \(Self.lastUsed) < $3 AND u.inactivity_warned_at >= \(Self.lastUsed)
                ORDER BY u.created_at LIMIT \(Self.retentionBatch) FOR UPDATE OF u SKIP LOCKED
                """, binds: Self.binds(app.rawValue, warnedBefore, cutoff)), logger: logger)
        }
    }

    /// Warns each account unused since `unusedSince` and not warned since its last use, by mail
    /// (or SMS to an account with only a phone); one with no confirmed address cannot be told and
    /// is marked warned all the same (it is erased when the warning's days are up).
    private func warnInactive(app: App, unusedSince cutoff: Date, eraseOn: Date, now: Date) async throws -> Int {
        var warned = 0
        while true {
            let batch: Int = try await database.transaction { connection in
                let rows = try await connection.query(PostgresQuery(unsafeSQL: """
                    SELECT u.id FROM users u
                    WHERE u.app = $1 AND NOT u.is_anonymous AND \(Self.lastUsed) < $2
                      AND (u.inactivity_warned_at IS NULL OR u.inactivity_warned_at < \(Self.lastUsed))
                    ORDER BY u.created_at LIMIT \(Self.retentionBatch) FOR UPDATE OF u SKIP LOCKED
                    """, binds: Self.binds(app.rawValue, cutoff)), logger: logger)
                let ids = try await rows.values(UUID.self)
                for id in ids {
                    guard let user = try await users.find(id: id, app: app, on: connection) else { continue }
                    if let (channel, recipient) = Self.noticeRecipient(user) {
                        let message = try compose(.inactiveAccount, channel: channel, user: user, to: recipient, kind: "inactive_account", code: nil, link: nil,
                                                  extra: ["erase_on": Self.mailTime(eraseOn)], acceptLanguage: nil, now: now)
                        // A failed send leaves the account unwarned: it is tried again next run.
                        try await deliver(message)
                    }
                    try await connection.query("UPDATE users SET inactivity_warned_at = \(now) WHERE id = \(id)", logger: logger)
                }
                return ids.count
            }
            warned += batch
            if batch < Self.retentionBatch { return warned }
        }
    }

    /// Deletes the accounts `select` locks (a batch at a time), each with `user_deleted` and an
    /// audit entry, as `deleteUser` does.
    private func eraseBatches(app: App, reason: String, now: Date, _ select: @escaping @Sendable (PostgresConnection) async throws -> PostgresRowSequence) async throws -> Int {
        var erased = 0
        while true {
            let batch: Int = try await database.transaction { connection in
                let ids = try await select(connection).values(UUID.self)
                for id in ids {
                    guard let user = try await users.find(id: id, app: app, on: connection) else { continue }
                    try await users.delete(id: id, on: connection)
                    var traits = auditTraits(of: user)
                    traits["reason"] = .string(reason)
                    try await audit(.userDeleted, actor: .operator("retention"), traits: traits, app: app, on: connection)
                    try await outbox.publish(EventEnvelope(app: app, aggregateId: id.lowercased, actor: nil, payload: UserDeleted(userId: id, app: app, deletedAt: now)),
                                             on: connection, logger: logger)
                }
                return ids.count
            }
            erased += batch
            if batch < Self.retentionBatch { return erased }
        }
    }

    private static func binds(_ app: String, _ first: Date, _ second: Date? = nil) -> PostgresBindings {
        var binds = PostgresBindings()
        binds.append(app)
        binds.append(first)
        if let second { binds.append(second) }
        return binds
    }
}

enum RetentionMetrics {
    static let warned = Counter(label: "colony_retention_warned_total")
}
