import ColonyModels
import Foundation
import Logging
import NIOCore
import ServiceLifecycle
import Synchronization

/// The accounts auth lists as suspended (`SuspendedAccountsRoute`), as this replica last read
/// them: `TokenVerifier` refuses their access tokens (403 `user_banned`) and realtime closes their
/// sockets. A ban ends the account's sessions in auth at once; the tokens it had issued would
/// otherwise work everywhere else until they expire (an hour by default).
public final class SuspendedAccounts: Sendable {
    private struct State {
        var untilByUser: [UUID: Date] = [:]
        var readAt: ContinuousClock.Instant?
    }

    private let state = Mutex(State())

    public init() {}

    /// Whether `user`'s suspension is in force at `now`.
    public func isSuspended(_ user: UUID, now: Date = Date()) -> Bool {
        state.withLock { state in state.untilByUser[user].map { $0 > now } ?? false }
    }

    /// The last list auth answered, in place of the one before (a lifted ban is gone from it).
    public func replace(with accounts: [SuspendedAccountsRoute.Account]) {
        let untilByUser = Dictionary(accounts.map { ($0.userId, $0.until) }) { first, second in max(first, second) }
        state.withLock { state in
            state.untilByUser = untilByUser
            state.readAt = .now
        }
    }

    /// How long ago the list was last read from auth; nil before the first read.
    public var age: Duration? {
        state.withLock { state in state.readAt.map { ContinuousClock.now - $0 } }
    }
}

/// Where and how often a service reads auth's suspended accounts.
public struct SuspensionSource: Sendable {
    /// Auth's internal root URL (`COLONY_AUTH_URL`).
    public var authURL: String
    /// How often the list is read: a suspension reaches this replica within this time.
    public var interval: Duration

    public init(authURL: String, interval: Duration) {
        self.authURL = authURL
        self.interval = interval
    }
}

/// Reads auth's suspended accounts every `source.interval` into `accounts`, from the service's start
/// to its shutdown. When auth cannot be reached the last list stays (a suspension it held still
/// counts) and the next round tries again; `colony_suspension_list_age_seconds` shows how stale it is.
public struct SuspensionWatcher: Service {
    let accounts: SuspendedAccounts
    let source: SuspensionSource
    let client: InternalMembershipClient
    let logger: Logger

    public init(accounts: SuspendedAccounts, source: SuspensionSource, key: InternalKey, logger: Logger) {
        self.accounts = accounts
        self.source = source
        self.client = InternalMembershipClient(key: key, timeout: .seconds(5))
        self.logger = logger
    }

    public func run() async throws {
        var failing = false
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            do {
                let answer = try await client.get(SuspendedAccountsRoute.path, base: source.authURL, as: SuspendedAccountsRoute.Answer.self,
                                                  limit: 16 << 20, decoder: ColonyJSON.decoder())
                accounts.replace(with: answer.accounts)
                if failing { logger.info("suspended accounts read again from auth") }
                failing = false
            } catch {
                // Once per outage, not every round.
                if !failing { logger.warning("cannot read suspended accounts from auth, keeping the last list", metadata: ["error": "\(error)"]) }
                failing = true
            }
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: source.interval) }
        }
    }
}
