import Logging
import NIOCore
import PostgresNIO
import Synchronization

/// Watches one lease of a pooled connection, so that a session whose peer went silent is closed
/// rather than waited on, and a healthy one is never closed under its user.
///
/// Why a probe and not a plain timer: PostgresNIO 1.x drops a query written to a channel already
/// closed without ever answering it (its fix, postgres-nio#487, was reverted). Closing a connection
/// whose holder is between two statements would leave the next one waiting forever (a hung request
/// and a pool slot gone). So when the lease is cancelled or outlasts `lease`, the watch sends
/// `SELECT 1` on the connection: it runs at once on an idle session (the holder is between
/// statements: nothing is closed) and queues behind a statement in flight. Only a probe unanswered
/// for `probe` closes the connection, which fails the statement in flight: its holder sees the error.
/// (What stays: a session whose peer went silent while its holder was between statements; its next
/// statement waits, as it would have without the watch.)
final class LeaseWatch: Sendable {
    private struct State {
        var leaseTimer: Scheduled<Void>?
        var closeTimer: Scheduled<Void>?
        var probing = false
        var stopped = false
        var closed = false
    }

    private let state = Mutex(State())
    private let connection: PostgresConnection
    private let lease: Duration?
    private let probeWait: Duration
    private let logger: Logger

    init(connection: PostgresConnection, lease: Duration?, probe: Duration, logger: Logger) {
        self.connection = connection
        self.lease = lease
        self.probeWait = probe
        self.logger = logger
        armLeaseTimer()
    }

    /// Whether the watch closed the connection (its holder's error is then the database's silence).
    var closedConnection: Bool { state.withLock { $0.closed } }

    /// Probes the connection (a cancelled lease); from any thread.
    func probe() {
        connection.eventLoop.execute { self.probeOnLoop() }
    }

    /// The lease ended: no more probes, and a close not yet made is not made.
    func stop() {
        let timers = state.withLock { state in
            state.stopped = true
            return (state.leaseTimer, state.closeTimer)
        }
        timers.0?.cancel()
        timers.1?.cancel()
    }

    private func armLeaseTimer() {
        guard let lease else { return }
        let timer = connection.eventLoop.scheduleTask(in: TimeAmount(lease)) { self.probeOnLoop() }
        let stopped = state.withLock { state in
            state.leaseTimer = timer
            return state.stopped
        }
        if stopped { timer.cancel() }
    }

    /// On the connection's event loop, where closes happen too, so "closed" cannot change between
    /// the check and the probe's write.
    private func probeOnLoop() {
        let start = state.withLock { state in
            guard !state.stopped, !state.closed, !state.probing else { return false }
            state.probing = true
            return true
        }
        guard start, !connection.isClosed else { return }
        let answered = connection.query("SELECT 1", logger: logger)
        let closeTimer = connection.eventLoop.scheduleTask(in: TimeAmount(probeWait)) { self.closeOnLoop() }
        state.withLock { $0.closeTimer = closeTimer }
        answered.whenComplete { _ in
            // Answered (or failed: the session is alive or already gone): not the watch's to close.
            closeTimer.cancel()
            let again = self.state.withLock { state in
                state.probing = false
                return !state.stopped && !state.closed
            }
            if again { self.armLeaseTimer() }
        }
    }

    private func closeOnLoop() {
        let close = state.withLock { state in
            guard !state.stopped, !state.closed else { return false }
            state.closed = true
            return true
        }
        guard close else { return }
        logger.warning("a leased database connection did not answer its probe; closing it", metadata: ["after": "\(probeWait)"])
        let _: EventLoopFuture<Void> = connection.close()
    }
}

extension PostgresConnection {
    /// Runs one statement of the platform's own (BEGIN, COMMIT, ROLLBACK) unless the connection is
    /// closed, checked and written on its event loop (see `LeaseWatch` for why a statement must
    /// never be written to a closed connection).
    func statementUnlessClosed(_ sql: String, logger: Logger) async throws {
        try await eventLoop.flatSubmit { () -> EventLoopFuture<Void> in
            guard !self.isClosed else {
                return self.eventLoop.makeFailedFuture(APIError(.serviceUnavailable, code: "database_unavailable", message: "the database connection was closed; try again"))
            }
            return self.query(PostgresQuery(unsafeSQL: sql), logger: logger).map { _ in }
        }.get()
    }
}
