import AsyncHTTPClient
import AuthService
import ColonyModels
import ColonyPlatform
import ColonyTesting
import ConsoleService
import Crypto
import Foundation
import NIOCore

// colony-console-bench: the console's user search with a million users (issue 38: p95 under 200 ms).
// Auth and the console run in process (release) on the local Postgres; one app gets --users accounts
// (1,000,000) written in SQL, then ANALYZE; an owner signed in with password and TOTP searches through
// GET /console/users?q= (the console asks auth's admin route for each of the five apps at once) with
// texts of every kind: address prefixes of 1 to 6 digits, whole addresses, ids, phone prefixes, name
// prefixes. The baseline is the same texts asked of auth's admin route directly, in the same run.
//   colony-console-bench [--users N] [--queries Q]

let (userCount, queryCount): (Int, Int) = {
    var users = 1_000_000
    var queries = 500
    var iterator = CommandLine.arguments.dropFirst().makeIterator()
    while let argument = iterator.next() {
        switch (argument, iterator.next().flatMap { Int($0) }) {
        case ("--users", let value?) where value > 0: users = value
        case ("--queries", let value?) where value > 0: queries = value
        default:
            FileHandle.standardError.write(Data("usage: colony-console-bench [--users N] [--queries Q]\n".utf8))
            exit(2)
        }
    }
    return (users, queries)
}()

func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }
func percentile(_ sorted: [Double], _ p: Double) -> Double {
    guard !sorted.isEmpty else { return .nan }
    return sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]
}
func format(_ value: Double) -> String { String(format: "%.1f", value) }

/// The id the SQL below gives account `n` (`md5('u' || n)::uuid`).
func accountID(_ n: Int) -> String {
    let hex = Insecure.MD5.hash(data: Array("u\(n)".utf8)).map { String(format: "%02x", $0) }.joined()
    let characters = Array(hex)
    return [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { String(characters[$0]) }.joined(separator: "-")
}

/// A search text of each kind in turn, over accounts 1...userCount.
func searchText(_ index: Int, userCount: Int) -> String {
    let n = Int.random(in: 1...userCount)
    switch index % 5 {
    case 0: return "user" + String(String(n).prefix(Int.random(in: 1...6)))
    case 1: return "user\(n)@example.com"
    case 2: return accountID(n)
    case 3: return "+1555" + String(String(format: "%07d", n % 10_000_000).prefix(Int.random(in: 2...7)))
    default: return "Name " + String(String(n).prefix(Int.random(in: 1...6)))
    }
}

func query(_ text: String) -> String {
    var components = URLComponents()
    components.queryItems = [URLQueryItem(name: "q", value: text)]
    return components.percentEncodedQuery ?? ""
}

/// Milliseconds of each request, in order; a status other than 200 stops the run.
func latencies(_ texts: [String], _ request: (String) -> HTTPClientRequest) async throws -> [Double] {
    var measured: [Double] = []
    for text in texts {
        let started = now()
        let response = try await HTTPClient.shared.execute(request(text), timeout: .seconds(60))
        _ = try await response.body.collect(upTo: 16 << 20)
        guard response.status == .ok else { throw TestSetupError("\(text): \(response.status)") }
        measured.append(Double(now() - started) / 1e6)
    }
    return measured
}

/// The whole run, off the main actor (the services and their databases are not the main actor's).
func benchmark(userCount: Int, queryCount: Int) async throws {
    let environment = try TestEnvironment.current()
    let key = InternalKey("console-bench-credential-0123456789abcdef")
    let authPort = try freePort()
    let prefix = TestKafka.topicPrefix()
    let mailDirectory = FileManager.default.temporaryDirectory.appendingPathComponent(uniqueName("console-bench-mail")).path
    defer { try? FileManager.default.removeItem(atPath: mailDirectory) }

    try await withTestSchema { authDatabase in
        let authSettings = AuthSettings(publicURL: "http://127.0.0.1:\(authPort)/auth/v1", rateLimits: .unlimited, phonePepper: "bench-pepper", bcryptCost: 4,
                                        hashingThreads: 1, sender: .folder(mailDirectory))
        var authConfiguration = ServiceConfiguration(
            service: .auth, app: nil, httpHost: "127.0.0.1", httpPort: authPort, maxBodyBytes: AuthSettings.defaultMaxBodyBytes, logLevel: .error,
            database: authDatabase, kafkaBrokers: environment.kafkaBrokers, topicPrefix: prefix, tokens: TestTokens().verifierConfiguration(audience: nil))
        authConfiguration.consoleKey = key
        try await ServiceHost.migrate(AuthService.migrations, configuration: authConfiguration, logger: TestEnvironment.logger)
        let authData = Database(configuration: authDatabase, logger: TestEnvironment.logger)
        let started = now()
        try await withRunning(authData) {
            let ring = KeyRing(database: authData, issuer: authSettings.issuer, retiredKeyRetentionSeconds: authSettings.retiredKeyRetentionSeconds, logger: TestEnvironment.logger)
            try await ring.ensureKeys()
            // In batches, so no single transaction holds a million rows' locks and WAL at once.
            let batch = 100_000
            for first in stride(from: 1, through: userCount, by: batch) {
                let last = min(userCount, first + batch - 1)
                try await authData.withConnection { connection in
                    try await connection.query("""
                        INSERT INTO users (id, app, email, phone, email_confirmed_at, raw_user_meta_data, created_at, updated_at)
                        SELECT md5('u' || n)::uuid, 'mycirclee', 'user' || n || '@example.com', '+1555' || lpad((n % 10000000)::text, 7, '0'), now(),
                               jsonb_build_object('display_name', 'Name ' || n), now(), now()
                        FROM generate_series(\(first), \(last)) AS n
                        """, logger: TestEnvironment.logger)
                }
            }
            try await authData.withConnection { try await $0.query("ANALYZE users", logger: TestEnvironment.logger) }
        }
        print("accounts: \(userCount) of mycirclee written and analyzed in \(format(Double(now() - started) / 1e9)) s")

        let readyAuth = authConfiguration
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await ServiceHost.run(AuthService.definition(settings: authSettings), configuration: readyAuth) }
            defer { group.cancelAll() }
            let authBase = "http://127.0.0.1:\(authPort)"
            try await waitUntil(timeout: .seconds(60)) {
                (try? await HTTPClient.shared.execute(HTTPClientRequest(url: "\(authBase)/ready"), timeout: .seconds(2)))?.status == .ok
            }
            let settings = ConsoleSettings(authURL: authBase, bcryptCost: 4)
            try await withRunningService(.console, app: .mycirclee, apiPrefix: "/console", configure: { $0.consoleKey = key }, topicPrefix: prefix,
                                         definition: { _ in ConsoleService.definition(settings: settings) }) { console in
                // An owner, signed in as the pages sign one in: invitation, password, TOTP.
                let consoleData = Database(configuration: console.database, logger: TestEnvironment.logger)
                let hasher = PasswordHasher(cost: 4, threads: 1)
                let sessionToken = try await withRunning(consoleData) {
                    let operators = Operators(database: consoleData, outbox: Outbox(schema: console.database.schema, topicPrefix: prefix), hasher: hasher,
                                              settings: settings, logger: TestEnvironment.logger)
                    let invitation = try await operators.invite(email: "bench-owner@example.com", rights: OperatorRights(role: .owner, apps: []), invitedBy: "bench")
                    let (token, _) = try await operators.acceptInvitation(token: invitation, password: "benchmark password 1", ipAddress: "127.0.0.1", userAgent: nil)
                    guard let (_, session) = try await operators.session(token: token) else { throw TestSetupError("no session") }
                    let (secret, _) = try await operators.enrolment(session: session)
                    guard let totp = TOTP(base32Secret: secret), let code = totp.code(at: Date()) else { throw TestSetupError("no TOTP") }
                    try await operators.confirmEnrolment(session: session, code: code, ipAddress: "127.0.0.1")
                    return token
                }
                try await hasher.shutdown()

                let texts = (0..<queryCount).map { searchText($0, userCount: userCount) }
                // Warm both paths (connections, caches) with texts not measured.
                let warmTexts = (0..<50).map { searchText($0, userCount: userCount) }
                func consoleRequest(_ text: String) -> HTTPClientRequest {
                    var request = HTTPClientRequest(url: "\(console.base)/console/users?\(query(text))")
                    request.headers.add(name: "Cookie", value: "\(ConsoleCookies.session)=\(sessionToken)")
                    return request
                }
                func authRequest(_ text: String) -> HTTPClientRequest {
                    var components = URLComponents()
                    components.queryItems = [URLQueryItem(name: "filter", value: text), URLQueryItem(name: "per_page", value: "20")]
                    var request = HTTPClientRequest(url: "\(authBase)/auth/v1/admin/users?\(components.percentEncodedQuery ?? "")")
                    for (name, value) in ConsoleCaller.headers(key: key, operatorEmail: "bench-owner@example.com", app: .mycirclee) { request.headers.add(name: name, value: value) }
                    return request
                }
                _ = try await latencies(warmTexts, consoleRequest)
                _ = try await latencies(warmTexts, authRequest)
                let viaConsole = try await latencies(texts, consoleRequest).sorted()
                let viaAuth = try await latencies(texts, authRequest).sorted()
                print("user search, \(queryCount) texts (address prefixes, addresses, ids, phone prefixes, name prefixes) over \(userCount) accounts:")
                print("  console page (5 apps asked at once):  p50 \(format(percentile(viaConsole, 0.5))) ms  p95 \(format(percentile(viaConsole, 0.95))) ms  p99 \(format(percentile(viaConsole, 0.99))) ms")
                print("  auth's admin route (baseline, 1 app): p50 \(format(percentile(viaAuth, 0.5))) ms  p95 \(format(percentile(viaAuth, 0.95))) ms  p99 \(format(percentile(viaAuth, 0.99))) ms")
                let p95 = percentile(viaConsole, 0.95)
                print("  target p95 < 200 ms: \(p95 < 200 ? "met" : "MISSED") (\(format(p95)) ms; \(format(p95 / max(0.001, percentile(viaAuth, 0.95))))x auth's p95)")
            }
        }
    }
}

try await benchmark(userCount: userCount, queryCount: queryCount)
