import ColonyModels
import Foundation
import Logging
import PostgresNIO
import ServiceLifecycle

/// Applies the consume dead letters an operator asked to retry (`colony-admin dead-letters
/// retry`), one at a time, each in one transaction with the inbox and the service's handler: on
/// success the dead letter is deleted with the change; on failure it stays, with the new error
/// and one more attempt, and is not retried again until asked. Woken by the retry request's
/// NOTIFY, and it also looks every `sweepInterval` in case a notification was missed.
public struct DeadLetterRetrier: Service {
    let database: Database
    let deadLetters: DeadLetters
    let inbox: Inbox
    let handler: EventHandler
    let metrics: PipelineMetrics?
    let logger: Logger
    let sweepInterval: Duration

    public init(database: Database, handler: @escaping EventHandler, metrics: PipelineMetrics?, logger: Logger, sweepInterval: Duration = .seconds(30)) {
        self.database = database
        self.deadLetters = DeadLetters(schema: database.schema)
        self.inbox = Inbox(database: database)
        self.handler = handler
        self.metrics = metrics
        self.logger = logger
        self.sweepInterval = sweepInterval
    }

    public func run() async throws {
        let signal = WakeSignal()
        await withDiscardingTaskGroup { group in
            group.addTask { await listen(signal: signal) }
            while !Task.isCancelled && !Task.isShuttingDownGracefully {
                await retryRequested()
                await cancelWhenGracefulShutdown { await signal.wait(timeout: sweepInterval) }
            }
            group.cancelAll()
        }
    }

    private func listen(signal: WakeSignal) async {
        while !Task.isCancelled {
            do {
                try await database.withDedicatedConnection { connection in
                    try await connection.listen(on: deadLetters.retryChannel) { notifications in
                        signal.wake()  // anything requested before LISTEN
                        for try await _ in notifications { signal.wake() }
                    }
                }
            } catch {
                if Task.isCancelled { return }
                logger.debug("dead-letter retrier lost its session, reconnecting", metadata: ["error": "\(error)"])
            }
            try? await Task.sleep(for: .seconds(1))
        }
    }

    /// Retries every requested dead letter once.
    func retryRequested() async {
        while !Task.isCancelled {
            do {
                guard let outcome = try await retryNext() else { return }
                switch outcome {
                case .applied(let id, let type):
                    logger.info("dead letter applied on retry", metadata: ["dead_letter_id": "\(id)", "event_type": "\(type)"])
                case .failed(let id, let error):
                    logger.error("dead letter failed again on retry", metadata: ["dead_letter_id": "\(id)", "error": "\(error)"])
                }
            } catch {
                logger.warning("could not retry dead letters", metadata: ["error": "\(String(reflecting: error))"])
                return
            }
        }
    }

    enum Outcome {
        case applied(id: Int64, type: String)
        case failed(id: Int64, error: String)
    }

    /// Takes one requested dead letter (skipping any another replica is working on) and applies
    /// it. Nil when none is waiting.
    func retryNext() async throws -> Outcome? {
        let table = deadLetters.table
        var failure: (id: Int64, error: String)?
        do {
            let applied = try await database.transaction { connection -> (Int64, String)? in
                let rows = try await connection.query("""
                    SELECT id, payload FROM \(unescaped: table)
                    WHERE stage = 'consume' AND retry_requested_at IS NOT NULL
                    ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED
                    """, logger: logger)
                var next: (Int64, ByteBuffer)?
                for try await row in rows { next = try row.read { c in (try c.next(Int64.self), try c.next(ByteBuffer.self)) } }
                guard let (id, payload) = next else { return nil }
                do {
                    let event = try ReceivedEvent(bytes: Array(buffer: payload))
                    if try await inbox.record(event, on: connection) {
                        try await handler(event, connection)
                    }
                    try await connection.query("DELETE FROM \(unescaped: table) WHERE id = \(id)", logger: logger)
                    return (id, event.type.rawValue)
                } catch {
                    failure = (id, String(describing: error))
                    throw error
                }
            }
            return applied.map { .applied(id: $0.0, type: $0.1) }
        } catch {
            guard let failure else { throw error }
            // The transaction rolled back; record the failure outside it.
            try await database.query("""
                UPDATE \(unescaped: table) SET attempts = attempts + 1, error = \(failure.error), last_failed_at = now(), retry_requested_at = NULL
                WHERE id = \(failure.id)
                """)
            metrics?.handlerFailed()
            return .failed(id: failure.id, error: failure.error)
        }
    }
}
