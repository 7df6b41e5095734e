import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// Support for the service benchmarks (Tests/Benchmarks/*Bench): a service under HTTP load beside
// pgbench running the service's SQL on the same database, latency percentiles, and where the
// time goes (the service's own /metrics, CPU shares).

/// A monotonic clock in nanoseconds.
public func monotonicNanoseconds() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

/// The value at fraction `p` (0…1) of an ascending array; NaN when empty.
public func percentile(_ sorted: [Double], _ p: Double) -> Double {
    guard !sorted.isEmpty else { return .nan }
    return sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]
}

/// `value` with `digits` decimals.
public func format(_ value: Double, _ digits: Int = 1) -> String { String(format: "%.\(digits)f", value) }

/// One load run: operations per second and latencies in milliseconds.
public struct LoadResult: Sendable {
    public var rate: Double
    public var mean: Double
    public var p50: Double
    public var p95: Double
    public var p99: Double
    public var errors: Int

    public init(rate: Double, mean: Double = .nan, p50: Double, p95: Double = .nan, p99: Double, errors: Int) {
        self.rate = rate
        self.mean = mean
        self.p50 = p50
        self.p95 = p95
        self.p99 = p99
        self.errors = errors
    }

    /// The result of latencies (milliseconds) taken over `seconds`.
    public init(latencies: [Double], seconds: Double, errors: Int) {
        let sorted = latencies.sorted()
        self.init(rate: Double(sorted.count) / seconds, mean: sorted.reduce(0, +) / Double(max(1, sorted.count)),
                  p50: percentile(sorted, 0.5), p95: percentile(sorted, 0.95), p99: percentile(sorted, 0.99), errors: errors)
    }
}

/// A counter shared by the load's connections.
public final class ErrorCount: Sendable {
    public let value = Atomic<Int>(0)
    public init() {}
}

// MARK: - pgbench

/// A service's prepared statement as one pgbench command: `$1`, `$2`, … replaced by the pgbench
/// expressions in `values` (in order), on one line, ended with `;`. The benchmarks run the
/// service's own SQL text this way, so the baseline cannot drift from what the service sends.
public func pgbenchCommand(_ sql: String, _ values: [String]) -> String {
    var text = sql
    // Highest first, so `$1` does not eat the start of `$10`.
    for (index, value) in values.enumerated().reversed() { text = text.replacingOccurrences(of: "$\(index + 1)", with: value) }
    return text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: " ") + ";"
}

/// pgbench running `script` with `connections` clients (two threads) for about `seconds`, on the
/// schema's tables (as the admin user, the schema first on the search path); p50/p99 and the mean
/// come from its per-transaction log. `mode` is `-M`: `prepared` plans each statement once per
/// connection, `extended` parses and plans every time as PostgresNIO's unnamed statements do.
public func runPgbench(script: String, schema: String, environment: TestEnvironment, connections: Int, seconds: Int, mode: String = "prepared") async throws -> LoadResult {
    // pgbench's -T relies on SIGALRM, which a child of this process does not get (signals are
    // blocked in Swift's threads), so it runs a transaction count sized from a short first run.
    let probe = try await runPgbench(script: script, schema: schema, environment: environment, connections: connections, transactionsPerClient: 30, mode: mode)
    let perClient = max(30, Int(probe.rate * Double(seconds) / Double(connections)))
    return try await runPgbench(script: script, schema: schema, environment: environment, connections: connections, transactionsPerClient: perClient, mode: mode)
}

/// pgbench running `script` `transactionsPerClient` times on each of `connections` clients.
public func runPgbench(script: String, schema: String, environment: TestEnvironment, connections: Int, transactionsPerClient: Int, mode: String = "prepared") async throws -> LoadResult {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent(uniqueName("pgbench"))
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let scriptFile = directory.appendingPathComponent("bench.sql")
    try script.write(to: scriptFile, atomically: true, encoding: .utf8)
    let (status, text) = try await ChildProcess.run("/usr/bin/env", [
        "pgbench", "-n", "-M", mode, "-c", "\(connections)", "-j", "2", "-t", "\(transactionsPerClient)", "-f", scriptFile.path,
        "-h", environment.postgresHost, "-p", "\(environment.postgresPort)", "-U", environment.adminUser, "--log", "--log-prefix", directory.appendingPathComponent("tx").path,
        environment.postgresDatabase,
    ], environment: ["PGPASSWORD": environment.adminPassword, "PGOPTIONS": "-c search_path=\(schema),public"])
    guard status == 0 else { throw TestSetupError("pgbench failed:\n\(text)") }
    var latencies: [Double] = []
    var failed = 0
    for file in try FileManager.default.contentsOfDirectory(atPath: directory.path) where file.hasPrefix("tx") {
        for line in try String(contentsOfFile: directory.appendingPathComponent(file).path, encoding: .utf8).split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count > 2, let micros = Double(fields[2]) else { failed += 1; continue }
            latencies.append(micros / 1000)
        }
    }
    latencies.sort()
    let tps = text.split(separator: "\n").first { $0.hasPrefix("tps") }.flatMap { line in
        line.split(separator: " ").dropFirst(2).first.flatMap { Double($0) }
    } ?? 0
    return LoadResult(rate: tps, mean: latencies.reduce(0, +) / Double(max(1, latencies.count)),
                      p50: percentile(latencies, 0.5), p95: percentile(latencies, 0.95), p99: percentile(latencies, 0.99), errors: failed)
}

// MARK: - HTTP load

/// `connections` concurrent HTTP/1.1 connections, each sending `makeRequest(connection, iteration)`
/// one after another for `seconds`; a response other than `expect` counts as an error. Latency is
/// from sending the request to having read the whole body.
public func runHTTPLoad(connections: Int, seconds: Int, makeRequest: @escaping @Sendable (_ connection: Int, _ iteration: Int) -> HTTPClientRequest,
                        expect: HTTPResponseStatus) async throws -> LoadResult {
    let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(connectionPool: .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: connections)))
    let errors = ErrorCount()
    let deadline = monotonicNanoseconds() + UInt64(seconds) * 1_000_000_000
    let start = monotonicNanoseconds()
    let latencies: [Double]
    do {
        latencies = try await withThrowingTaskGroup(of: [Double].self) { group in
            for connection in 0..<connections {
                group.addTask {
                    var samples: [Double] = []
                    var iteration = 0
                    while monotonicNanoseconds() < deadline {
                        let request = makeRequest(connection, iteration)
                        iteration += 1
                        let began = monotonicNanoseconds()
                        let response = try await client.execute(request, timeout: .seconds(30))
                        _ = try await response.body.collect(upTo: 1 << 24)
                        if response.status != expect { errors.value.add(1, ordering: .relaxed) }
                        samples.append(Double(monotonicNanoseconds() - began) / 1e6)
                    }
                    return samples
                }
            }
            return try await group.reduce(into: [Double]()) { $0 += $1 }
        }
    } catch {
        try? await client.shutdown()
        throw error
    }
    let elapsed = Double(monotonicNanoseconds() - start) / 1e9
    try await client.shutdown()
    return LoadResult(latencies: latencies, seconds: elapsed, errors: errors.value.load(ordering: .relaxed))
}

/// The mean request duration in milliseconds that a service recorded itself (handler and
/// database, without HTTP parsing on the client's side) since it started, from the
/// `http_request_duration_seconds` histograms on its `/metrics` whose lines mention `method`
/// and contain `pathContains`.
public func serverMean(metricsURL: String, method: String, pathContains: String) async throws -> Double {
    let response = try await HTTPClient.shared.execute(HTTPClientRequest(url: metricsURL), timeout: .seconds(5))
    let exposition = String(buffer: try await response.body.collect(upTo: 1 << 22))
    func metric(_ suffix: String) -> Double {
        exposition.split(separator: "\n").filter { $0.hasPrefix("http_request_duration_seconds_\(suffix)") && $0.contains("method=\"\(method)\"") && $0.contains(pathContains) }
            .compactMap { $0.split(separator: " ").last.flatMap { Double($0) } }.reduce(0, +)
    }
    return metric("sum") / max(1, metric("count")) * 1000
}

// MARK: - CPU

/// CPU time of this process and of the whole machine at one moment, to tell how the cores were
/// shared during a run (this process holds both the service and the load generator).
public struct CPUSnapshot: Sendable {
    /// Monotonic nanoseconds.
    public var wall: UInt64
    /// User and system seconds of this process.
    public var process: Double
    /// Busy and total seconds of all cores, from /proc/stat (zero where it is unavailable).
    public var machineBusy: Double
    public var machineTotal: Double

    public static func now() -> CPUSnapshot {
        var usage = rusage()
        #if canImport(Glibc)
        getrusage(RUSAGE_SELF.rawValue, &usage)
        #else
        getrusage(RUSAGE_SELF, &usage)
        #endif
        let process = Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6 + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
        var busy = 0.0, total = 0.0
        if let stat = try? String(contentsOfFile: "/proc/stat", encoding: .utf8), let line = stat.split(separator: "\n").first, line.hasPrefix("cpu ") {
            // user nice system idle iowait irq softirq steal …, in clock ticks (100 per second).
            let ticks = line.split(separator: " ").dropFirst().compactMap { Double($0) }
            if ticks.count >= 5 {
                total = ticks.prefix(8).reduce(0, +) / 100
                busy = total - (ticks[3] + ticks[4]) / 100
            }
        }
        return CPUSnapshot(wall: monotonicNanoseconds(), process: process, machineBusy: busy, machineTotal: total)
    }

    /// Cores in use on average between `start` and this snapshot.
    public func usage(since start: CPUSnapshot) -> CPUUsage {
        let seconds = max(1e-9, Double(wall - start.wall) / 1e9)
        return CPUUsage(cores: ProcessInfo.processInfo.activeProcessorCount,
                        process: (process - start.process) / seconds,
                        machine: (machineBusy - start.machineBusy) / seconds)
    }
}

/// Average cores busy over a run: this process, and the whole machine.
public struct CPUUsage: Sendable, CustomStringConvertible {
    public var cores: Int
    public var process: Double
    public var machine: Double

    /// "this process 1.20 cores, other processes 0.75, machine 1.95 of 2".
    public var description: String {
        "this process \(format(process, 2)) cores, other processes \(format(max(0, machine - process), 2)), machine \(format(machine, 2)) of \(cores)"
    }
}
