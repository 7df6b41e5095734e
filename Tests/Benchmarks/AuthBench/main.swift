import AsyncHTTPClient
import AuthService
import ColonyModels
import ColonyPlatform
import ColonyTesting
import Foundation
import NIOCore
import NIOPosix
import Synchronization

// colony-auth-bench: the auth service in release mode on the local Postgres and broker.
//   sign-in/s (bcrypt-bound) against a raw bcrypt-verify loop at the same cost and thread count,
//   refresh/s, and GET /user p99 idle and during a sign-in flood. Run through scripts/bench.
//   colony-auth-bench [--seconds S] [--cost C] [--http-plan FILE]
// With --http-plan, it measures raw bcrypt, prepares the schema and keys and writes the plan for the
// out-of-process run (scripts/bench http: the colony-auth executable under wrk).

let (seconds, cost): (Int, Int) = {
    var seconds = 20
    var cost = 10
    var iterator = argumentsWithoutHTTPPlan().makeIterator()
    while let argument = iterator.next() {
        switch (argument, iterator.next().flatMap(Int.init)) {
        case ("--seconds", let value?): seconds = value
        case ("--cost", let value?): cost = value
        default:
            FileHandle.standardError.write(Data("usage: colony-auth-bench [--seconds S] [--cost C]\n".utf8))
            exit(2)
        }
    }
    return (seconds, cost)
}()

let environment = try TestEnvironment.current()
let hashingThreads = max(1, ProcessInfo.processInfo.activeProcessorCount - 1)
let concurrency = 8
func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }
func percentile(_ sorted: [Double], _ p: Double) -> Double {
    guard !sorted.isEmpty else { return .nan }
    return sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]
}
func format(_ value: Double, _ digits: Int = 1) -> String { String(format: "%.\(digits)f", value) }

final class Counter: Sendable {
    let value = Atomic<Int>(0)
}

/// Verifies in a loop on `threads` threads for the duration: bcrypt's ceiling on this machine.
func rawBcryptRate(threads: Int, duration: Double, cost: Int) throws -> Double {
    let hash = try Bcrypt.hash("benchmark-password", cost: cost)
    let count = Counter()
    let deadline = now() + UInt64(duration * 1e9)
    let pool = (0..<threads).map { _ in
        Thread {
            while now() < deadline {
                _ = Bcrypt.verify("benchmark-password", hash: hash)
                count.value.add(1, ordering: .relaxed)
            }
        }
    }
    let start = now()
    pool.forEach { $0.start() }
    while pool.contains(where: { !$0.isFinished }) { usleep(10_000) }
    return Double(count.value.load(ordering: .relaxed)) / (Double(now() - start) / 1e9)
}

struct Client: Sendable {
    let base: String
    let key: String
    /// GET /user probes use a client of their own, so they never wait behind the flood's
    /// requests for one of the load client's connections.
    var http: HTTPClient = .shared
    func post(_ path: String, _ body: [String: Any]) async throws -> (Int, [String: Any]) {
        var request = HTTPClientRequest(url: base + path)
        request.method = .POST
        request.headers.add(name: "apikey", value: key)
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(data: try JSONSerialization.data(withJSONObject: body)))
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
        let data = try await response.body.collect(upTo: 1 << 20)
        return (Int(response.status.code), (try? JSONSerialization.jsonObject(with: Data(buffer: data))) as? [String: Any] ?? [:])
    }
    /// Refreshes and picks the new refresh token out of the body without parsing all of it:
    /// the load generator shares the machine, so it should spend as little as it can.
    func refresh(_ token: String) async throws -> (Int, String?) {
        var request = HTTPClientRequest(url: base + "/token?grant_type=refresh_token")
        request.method = .POST
        request.headers.add(name: "apikey", value: key)
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(string: #"{"refresh_token":"\#(token)"}"#))
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
        let body = String(buffer: try await response.body.collect(upTo: 1 << 20))
        guard let start = body.range(of: #""refresh_token":""#)?.upperBound, let end = body[start...].firstIndex(of: "\"") else {
            return (Int(response.status.code), nil)
        }
        return (Int(response.status.code), String(body[start..<end]))
    }

    func getUser(_ token: String) async throws -> Int {
        var request = HTTPClientRequest(url: base + "/user")
        request.headers.add(name: "apikey", value: key)
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        let response = try await http.execute(request, timeout: .seconds(30))
        _ = try await response.body.collect(upTo: 1 << 20)
        return Int(response.status.code)
    }
}

/// Runs `work` on `workers` concurrent loops until the deadline; returns completed operations/s.
func loadRate(workers: Int, duration: Double, _ work: @escaping @Sendable (Int) async throws -> Void) async throws -> Double {
    let done = Counter()
    let deadline = now() + UInt64(duration * 1e9)
    let start = now()
    try await withThrowingTaskGroup(of: Void.self) { group in
        for worker in 0..<workers {
            group.addTask {
                while now() < deadline {
                    try await work(worker)
                    done.value.add(1, ordering: .relaxed)
                }
            }
        }
        try await group.waitForAll()
    }
    return Double(done.value.load(ordering: .relaxed)) / (Double(now() - start) / 1e9)
}

/// GET /user at a steady 100 requests/s; returns the sorted latencies in ms.
func userLatencies(_ client: Client, token: String, duration: Double) async throws -> [Double] {
    let total = Int(duration * 100)
    let start = now()
    let latencies = try await withThrowingTaskGroup(of: Double.self) { group in
        for index in 0..<total {
            let due = start + UInt64(index) * 10_000_000
            let current = now()
            if due > current { try await Task.sleep(nanoseconds: due - current) }
            group.addTask {
                let sent = now()
                let status = try await client.getUser(token)
                precondition(status == 200, "GET /user answered \(status)")
                return Double(now() - sent) / 1e6
            }
        }
        var values: [Double] = []
        for try await value in group { values.append(value) }
        return values
    }
    return latencies.sorted()
}

print("colony-auth-bench: bcrypt cost \(cost), \(hashingThreads) hashing thread(s), \(concurrency) concurrent clients, \(seconds) s per phase")
let rawRate = try rawBcryptRate(threads: hashingThreads, duration: Double(seconds), cost: cost)

if let planFile = httpPlanFile() {
    try await serveAuthPlan(rawRate: rawRate, cost: cost, file: planFile)
} else {
    try await benchmarkService(rawRate: rawRate, seconds: seconds, cost: cost)
}

/// Auth's migrations and keys on the benchmark's schema; MyCirclee's anon API key.
func prepareSchema(configuration: ServiceConfiguration, settings: AuthSettings) async throws -> String {
    try await ServiceHost.migrate(AuthService.migrations, configuration: configuration, logger: TestEnvironment.logger)
    let database = Database(configuration: configuration.database, logger: TestEnvironment.logger)
    return try await withRunning(database) {
        let ring = KeyRing(database: database, issuer: settings.issuer, retiredKeyRetentionSeconds: 60, logger: TestEnvironment.logger)
        try await ring.ensureKeys()
        return try await ring.apiKeys().first { $0.app == .mycirclee && $0.role == .anon }!.key
    }
}

/// The out-of-process run's plan: the executable on a migrated schema with its keys, rate limits
/// lifted; the driver signs up one user (the session) and then measures GET /user at 32
/// connections, sign-ins at 8 against raw bcrypt, refreshes at 8 (each connection a chain of
/// its own session's refresh tokens) against sign-in, and GET /user from one connection idle
/// and during the sign-in flood.
func serveAuthPlan(rawRate: Double, cost: Int, file: String) async throws {
    let mailDirectory = FileManager.default.temporaryDirectory.appendingPathComponent(uniqueName("mail")).path
    defer { try? FileManager.default.removeItem(atPath: mailDirectory) }
    try await withTestSchema(poolSize: 8) { databaseConfiguration in
        let settings = AuthSettings(publicURL: "http://127.0.0.1/auth/v1", rateLimits: .unlimited, phonePepper: "bench", bcryptCost: cost, hashingThreads: hashingThreads, sender: .folder(mailDirectory))
        let configuration = ServiceConfiguration(
            service: .auth, app: nil, database: databaseConfiguration, kafkaBrokers: environment.kafkaBrokers, topicPrefix: TestKafka.topicPrefix(),
            tokens: TestTokens().verifierConfiguration(audience: nil)
        )
        let anonKey = try await prepareSchema(configuration: configuration, settings: settings)
        // Storage: where auth would assemble data exports (its settings require it).
        var serviceEnvironment = HTTPBenchPlan.serviceEnvironment(database: databaseConfiguration, environment: environment, tokens: TestTokens(),
                                                                 topicPrefix: configuration.topicPrefix, storage: true)
        // Auth verifies the tokens it signs with its own published keys.
        serviceEnvironment["COLONY_JWT_PUBLIC_KEY"] = nil
        serviceEnvironment.merge([
            "COLONY_AUTH_PHONE_PEPPER": "bench-phone-pepper-0123456789abcdef", "COLONY_AUTH_MAIL_DIR": mailDirectory,
            "COLONY_AUTH_BCRYPT_COST": "\(cost)", "COLONY_AUTH_HASH_THREADS": "\(hashingThreads)",
        ]) { $1 }
        for rule in ["SIGNUP_IP", "OTP_IP", "SIGNIN_IP", "SIGNIN_ACCOUNT", "REFRESH_IP", "VERIFY_IP"] {
            serviceEnvironment["COLONY_AUTH_RATE_\(rule)"] = "1000000000/1"
        }
        let credentials = #"{"email":"bench@example.com","password":"benchmark-password"}"#
        let getUser = [PlannedRequest(path: "/auth/v1/user", token: "{{session}}")]
        let signIn = [PlannedRequest(method: "POST", path: "/auth/v1/token?grant_type=password", token: nil, body: credentials)]
        try await serveHTTPPlan(HTTPBenchPlan(
            executable: "colony-auth", environment: serviceEnvironment, headers: ["apikey": anonKey],
            session: PlannedSession(request: PlannedRequest(method: "POST", path: "/auth/v1/signup", token: nil, body: credentials),
                                    headers: ["apikey": anonKey], tokenField: "access_token"),
            schema: databaseConfiguration.schema,
            scenarios: [
                PlannedScenario(name: "auth: GET /user", kind: "read", requests: getUser, expectStatus: 200, connections: 32),
                PlannedScenario(name: "auth: sign-in (password)", kind: "write", requests: signIn, expectStatus: 200, connections: concurrency,
                                baseline: PlannedBaseline(label: "raw bcrypt, \(hashingThreads) thread(s)", rate: rawRate)),
                PlannedScenario(name: "auth: refresh", kind: "write",
                                requests: [PlannedRequest(method: "POST", path: "/auth/v1/token?grant_type=refresh_token", token: nil, body: #"{"refresh_token":"{{chain}}"}"#)],
                                expectStatus: 200, connections: concurrency,
                                chain: PlannedChain(seed: signIn[0], field: "refresh_token"),
                                rateAtLeast: PlannedRateComparison(scenario: "auth: sign-in (password)", factor: 50)),
                PlannedScenario(name: "auth: GET /user, 1 connection, idle", kind: "read", requests: getUser, expectStatus: 200, connections: 1),
                PlannedScenario(name: "auth: GET /user, 1 connection, sign-in flood", kind: "read", requests: getUser, expectStatus: 200, connections: 1,
                                during: "auth: sign-in (password)", compareP99To: "auth: GET /user, 1 connection, idle"),
            ]), to: file)
    }
}

func benchmarkService(rawRate: Double, seconds: Int, cost: Int) async throws {
let port = try freePort()
let mailDirectory = FileManager.default.temporaryDirectory.appendingPathComponent(uniqueName("mail")).path
defer { try? FileManager.default.removeItem(atPath: mailDirectory) }
try await withTestSchema(poolSize: 8) { databaseConfiguration in
    let settings = AuthSettings(publicURL: "http://127.0.0.1:\(port)/auth/v1", rateLimits: .unlimited, phonePepper: "bench", bcryptCost: cost, hashingThreads: hashingThreads, sender: .folder(mailDirectory))
    let configuration = ServiceConfiguration(
        service: .auth, app: nil, httpHost: "127.0.0.1", httpPort: port, logLevel: .error,
        database: databaseConfiguration, kafkaBrokers: environment.kafkaBrokers, topicPrefix: TestKafka.topicPrefix(),
        tokens: TestTokens().verifierConfiguration(audience: nil)
    )
    let anonKey = try await prepareSchema(configuration: configuration, settings: settings)
    try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { try await ServiceHost.run(AuthService.definition(settings: settings), configuration: configuration) }
        defer { group.cancelAll() }
        let client = Client(base: "http://127.0.0.1:\(port)/auth/v1", key: anonKey)
        let probeHTTP = HTTPClient(eventLoopGroupProvider: .singleton)
        defer { _ = probeHTTP.shutdown() as EventLoopFuture<Void> }
        var probe = client
        probe.http = probeHTTP
        while (try? await HTTPClient.shared.execute(HTTPClientRequest(url: "http://127.0.0.1:\(port)/ready"), timeout: .seconds(2)).status) != .ok {
            try await Task.sleep(for: .milliseconds(100))
        }
        let email = "bench@example.com"
        let (status, session) = try await client.post("/signup", ["email": email, "password": "benchmark-password"])
        precondition(status == 200, "sign-up failed: \(session)")
        let token = session["access_token"] as! String

        // Warm up, then GET /user idle.
        _ = try await userLatencies(probe, token: token, duration: 1)
        let idle = try await userLatencies(probe, token: token, duration: Double(seconds))

        // Sign-in flood alone, then again with GET /user alongside.
        let signInRate = try await loadRate(workers: concurrency, duration: Double(seconds)) { _ in
            let (status, _) = try await client.post("/token?grant_type=password", ["email": email, "password": "benchmark-password"])
            precondition(status == 200, "sign-in answered \(status)")
        }
        async let flood = loadRate(workers: concurrency, duration: Double(seconds) + 1) { _ in
            _ = try await client.post("/token?grant_type=password", ["email": email, "password": "benchmark-password"])
        }
        try await Task.sleep(for: .milliseconds(500))
        let busy = try await userLatencies(probe, token: token, duration: Double(seconds))
        _ = try await flood

        // Refresh: each client follows its own session's rotation chain.
        var chains: [String] = []
        for _ in 0..<concurrency {
            let (_, fresh) = try await client.post("/token?grant_type=password", ["email": email, "password": "benchmark-password"])
            chains.append(fresh["refresh_token"] as! String)
        }
        let tokens = Mutex(chains)
        let refreshRate = try await loadRate(workers: concurrency, duration: Double(seconds)) { worker in
            let current = tokens.withLock { $0[worker] }
            let (status, next) = try await client.refresh(current)
            guard status == 200, let next else { preconditionFailure("refresh answered \(status)") }
            tokens.withLock { $0[worker] = next }
        }

        let signInRatio = signInRate / rawRate
        let refreshRatio = refreshRate / signInRate
        let idleP99 = percentile(idle, 0.99)
        let busyP99 = percentile(busy, 0.99)
        let latencyRatio = busyP99 / idleP99
        print("")
        print("raw bcrypt verify (cost \(cost), \(hashingThreads) thread(s))   \(format(rawRate)) /s")
        print("sign-in (POST /token?grant_type=password)   \(format(signInRate)) /s   ratio \(format(signInRatio, 2)) (target ≥ 0.85: \(signInRatio >= 0.85 ? "met" : "MISSED"))")
        print("refresh (POST /token?grant_type=refresh)    \(format(refreshRate)) /s   \(format(refreshRatio))× sign-in (target ≥ 50×: \(refreshRatio >= 50 ? "met" : "MISSED"))")
        print("GET /user at 100/s, idle                    p50 \(format(percentile(idle, 0.5), 2)) ms  p99 \(format(idleP99, 2)) ms")
        print("GET /user at 100/s, during sign-in flood    p50 \(format(percentile(busy, 0.5), 2)) ms  p99 \(format(busyP99, 2)) ms   ratio \(format(latencyRatio, 2)) (target ≤ 1.5: \(latencyRatio <= 1.5 ? "met" : "MISSED"))")
    }
}
}
