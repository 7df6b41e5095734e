import Foundation
import Logging
import PostgresNIO
import ServiceLifecycle

/// A periodic job (expiry sweeps, hourly advancement, nightly work).
public struct ScheduledJob: Sendable {
    public var name: String
    public var interval: Duration
    public var body: @Sendable (Database, Logger) async throws -> Void

    public init(name: String, interval: Duration, body: @escaping @Sendable (Database, Logger) async throws -> Void) {
        self.name = name
        self.interval = interval
        self.body = body
    }
}

/// Runs each job every `interval` on exactly one replica at a time: a run holds a Postgres
/// session advisory lock named after the job, and a replica that cannot take it skips the run.
/// Outcomes are recorded in the schema's `job_runs` table.
public struct JobScheduler: Service, Sendable {
    private let database: Database
    private let jobs: [ScheduledJob]
    private let logger: Logger
    private let metrics: ServiceMetrics?

    public init(database: Database, jobs: [ScheduledJob], logger: Logger, metrics: ServiceMetrics? = nil) {
        self.database = database
        self.jobs = jobs
        self.logger = logger
        self.metrics = metrics
    }

    public func run() async throws {
        // Each job's run counters exist from the start (at zero), before its first run.
        for job in jobs { metrics?.registerJob(job.name) }
        await cancelWhenGracefulShutdown {
            await withDiscardingTaskGroup { group in
                for job in jobs {
                    group.addTask {
                        while !Task.isCancelled {
                            try? await Task.sleep(for: job.interval)
                            if Task.isCancelled { return }
                            _ = await runOnce(job)
                        }
                    }
                }
            }
        }
    }

    /// Runs the job now if no other replica is running it. Returns whether it ran.
    @discardableResult
    public func runOnce(_ job: ScheduledJob) async -> Bool {
        let lockName = "\(database.schema).job.\(job.name)"
        var logger = self.logger
        logger[metadataKey: "job"] = .string(job.name)
        do {
            return try await database.client.withConnection { connection in
                let locked = try await connection.query("SELECT pg_try_advisory_lock(hashtext(\(lockName)))", logger: logger)
                    .firstValue(Bool.self) ?? false
                guard locked else { return false }
                // Whatever happens below, the lock is released on the same session before the
                // connection goes back to the pool.
                do {
                    try await connection.query("""
                        INSERT INTO job_runs (job, last_started_at) VALUES (\(job.name), now())
                        ON CONFLICT (job) DO UPDATE SET last_started_at = now()
                        """, logger: logger)
                    var failure: String? = nil
                    do {
                        try await job.body(database, logger)
                    } catch {
                        failure = "\(error)"
                        logger.error("job failed", metadata: ["error": "\(error)"])
                    }
                    try await connection.query("""
                        UPDATE job_runs SET last_finished_at = now(), last_error = \(failure),
                            last_succeeded_at = CASE WHEN \(failure)::text IS NULL THEN now() ELSE last_succeeded_at END
                        WHERE job = \(job.name)
                        """, logger: logger)
                    metrics?.jobRun(job.name, succeeded: failure == nil)
                } catch {
                    _ = try? await connection.query("SELECT pg_advisory_unlock(hashtext(\(lockName)))", logger: logger)
                    throw error
                }
                try await connection.query("SELECT pg_advisory_unlock(hashtext(\(lockName)))", logger: logger)
                return true
            }
        } catch {
            logger.error("job could not run", metadata: ["error": "\(error)"])
            return false
        }
    }
}
