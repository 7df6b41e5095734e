import Foundation
import Prometheus
import Synchronization

/// How many of a service's database requests hold a pooled connection, and how many wait for
/// one (`Database` counts them; `/metrics` reads them).
public final class DatabasePoolUsage: Sendable {
    private let inUse = Atomic<Int>(0)
    private let waiting = Atomic<Int>(0)

    public init() {}

    /// Runs `body` counted as waiting until `leased` is called, and in use from then until it ends.
    func measure<Result>(_ body: (_ leased: () -> Void) async throws -> Result) async rethrows -> Result {
        waiting.add(1, ordering: .relaxed)
        let granted = Atomic<Bool>(false)
        func leased() {
            if !granted.exchange(true, ordering: .relaxed) {
                waiting.subtract(1, ordering: .relaxed)
                inUse.add(1, ordering: .relaxed)
            }
        }
        defer {
            if granted.load(ordering: .relaxed) {
                inUse.subtract(1, ordering: .relaxed)
            } else {
                waiting.subtract(1, ordering: .relaxed)
            }
        }
        return try await body(leased)
    }

    var snapshot: (inUse: Int, waiting: Int) { (inUse.load(ordering: .relaxed), waiting.load(ordering: .relaxed)) }
}

/// The platform's own gauges besides the pipeline's: the database pool, the periodic jobs and the
/// process (CPU, memory, file descriptors, the names Prometheus' own clients use).
public final class ServiceMetrics: Sendable {
    let registry: PrometheusCollectorRegistry
    private let cpu = Mutex<Double>(0)

    public init(registry: PrometheusCollectorRegistry) {
        self.registry = registry
    }

    private func gauge(_ name: String, _ help: String, _ labels: [(String, String)] = []) -> Gauge {
        registry.makeGauge(descriptor: MetricNameDescriptor(metricName: name, unitName: "", helpText: help), labels: labels)
    }

    func databaseUp(_ up: Bool) {
        gauge("colony_database_up", "1 when the service's database answered at the last scrape (what /ready checks)").set(up ? 1.0 : 0.0)
    }

    /// -1 before the first read: an alert on a large age covers both.
    func suspensionList(age: Duration?) {
        gauge("colony_suspension_list_age_seconds", "Seconds since this replica last read auth's suspended accounts (-1: not yet); their tokens are refused as of that read")
            .set(age.map { Double($0.components.seconds) } ?? -1)
    }

    func reports(oldestOpenAge: Double, open: Int) {
        gauge("colony_reports_oldest_open_age_seconds", "Seconds the oldest open report of users' content has waited for a moderator (0: none open)").set(oldestOpenAge)
        gauge("colony_reports_open", "Reports of users' content waiting for a moderator").set(Double(open))
    }

    func databasePool(_ database: Database) {
        let usage = database.poolUsage.snapshot
        gauge("colony_db_pool_connections_in_use", "Pooled database connections lent out").set(Double(usage.inUse))
        gauge("colony_db_pool_requests_waiting", "Database requests waiting for a pooled connection").set(Double(usage.waiting))
        gauge("colony_db_pool_max_connections", "The pool's connection limit (COLONY_PG_POOL_SIZE)").set(Double(database.configuration.poolSize))
    }

    func jobRun(_ job: String, succeeded: Bool) {
        jobRuns(job, succeeded: succeeded).increment()
    }

    func registerJob(_ job: String) {
        _ = jobRuns(job, succeeded: true)
        _ = jobRuns(job, succeeded: false)
    }

    private func jobRuns(_ job: String, succeeded: Bool) -> Counter {
        registry.makeCounter(descriptor: MetricNameDescriptor(metricName: "colony_job_runs_total", unitName: "", helpText: "Periodic job runs on this replica, by outcome"),
                             labels: [("job_name", job), ("result", succeeded ? "success" : "failure")])
    }

    /// The jobs' last runs as recorded in `job_runs` (any replica's), and their intervals.
    func jobs(_ runs: [(job: String, lastSuccess: Date?, lastFinished: Date?, failed: Bool)], intervals: [String: Duration]) {
        for (job, interval) in intervals {
            gauge("colony_job_interval_seconds", "How often the job is meant to run", [("job_name", job)]).set(Double(interval.components.seconds))
        }
        for run in runs {
            if let success = run.lastSuccess {
                gauge("colony_job_last_success_timestamp_seconds", "When the job last finished without an error (any replica)", [("job_name", run.job)])
                    .set(success.timeIntervalSince1970)
            }
            gauge("colony_job_last_run_failed", "1 when the job's last run failed", [("job_name", run.job)]).set(run.failed ? 1.0 : 0.0)
        }
    }

    /// CPU seconds, resident memory, open file descriptors and start time from /proc (Linux).
    func process() {
        if let stat = try? String(contentsOfFile: "/proc/self/stat", encoding: .utf8), let end = stat.lastIndex(of: ")") {
            let fields = stat[stat.index(after: end)...].split(separator: " ")
            // utime and stime are fields 14 and 15 of the whole line (12 and 13 after the name).
            let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
            if fields.count > 19, let user = Double(fields[11]), let system = Double(fields[12]), let start = Double(fields[19]), ticks > 0 {
                let seconds = (user + system) / ticks
                let counter = registry.makeCounter(descriptor: MetricNameDescriptor(metricName: "process_cpu_seconds_total", unitName: "", helpText: "CPU time the process used, user and system"))
                let delta = cpu.withLock { last -> Double in
                    defer { last = max(last, seconds) }
                    return max(0, seconds - last)
                }
                if delta > 0 { counter.increment(by: delta) }
                if let uptime = try? String(contentsOfFile: "/proc/uptime", encoding: .utf8), let up = Double(uptime.split(separator: " ").first ?? "") {
                    gauge("process_start_time_seconds", "When the process started, in seconds since the epoch")
                        .set(Date().timeIntervalSince1970 - up + start / ticks)
                }
            }
        }
        if let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
           let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
           let kilobytes = Double(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") {
            gauge("process_resident_memory_bytes", "Resident memory of the process").set(kilobytes * 1024)
        }
        if let descriptors = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") {
            gauge("process_open_fds", "Open file descriptors of the process").set(Double(descriptors.count))
        }
        let limit = rlimit()
        var value = limit
        if getrlimit(Int32(RLIMIT_NOFILE.rawValue), &value) == 0 {
            gauge("process_max_fds", "The process's file descriptor limit").set(Double(value.rlim_cur))
        }
    }
}
