import AsyncHTTPClient
import AuthService
import ColonyKafka
import ColonyModels
import ColonyPlatform
import ColonyStorage
import ColonyTesting
import Foundation
import NIOCore
import NIOHTTP1
import Testing

/// A running auth service on a fresh schema and topic prefix, as `ServiceHost` runs it.
struct RunningAuth: Sendable {
    let base: String
    let port: Int
    let topicPrefix: String
    let mailDirectory: String
    let database: DatabaseConfiguration
    let anonKeys: [App: String]
    let serviceKeys: [App: String]
    /// Where data exports are written (a filesystem backend), and the storage serving their links.
    let storage: Storage
    /// The console's credential the service was started with (`service: { $0.consoleKey = … }`).
    var consoleKey: InternalKey? = nil

    var authURL: String { "\(base)/auth/v1" }

    /// Sends a JSON request the way supabase clients do: `apikey` of the app, optional bearer;
    /// to the service, or through a gateway at `through` (its base URL).
    func request(_ method: HTTPMethod, _ path: String, app: App = .mycirclee, bearer: String? = nil, apiKey: String? = nil, json body: [String: Any]? = nil, headers: [(String, String)] = [], through gateway: String? = nil) async throws -> (status: Int, json: [String: Any], headers: HTTPHeaders) {
        var request = HTTPClientRequest(url: "\(gateway ?? base)/auth/v1\(path)")
        request.method = method
        request.headers.add(name: "apikey", value: apiKey ?? anonKeys[app]!)
        request.headers.add(name: "Content-Type", value: "application/json;charset=UTF-8")
        if let bearer { request.headers.add(name: "Authorization", value: "Bearer \(bearer)") }
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let body { request.body = .bytes(ByteBuffer(data: try JSONSerialization.data(withJSONObject: body))) }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(60))
        let bytes = try await response.body.collect(upTo: 1 << 20)
        let object = (try? JSONSerialization.jsonObject(with: Data(buffer: bytes))) as? [String: Any] ?? [:]
        return (Int(response.status.code), object, response.headers)
    }

    /// `POST /token?grant_type=password`.
    func signIn(app: App = .mycirclee, email: String? = nil, phone: String? = nil, password: String, headers: [(String, String)] = []) async throws -> (status: Int, json: [String: Any], headers: HTTPHeaders) {
        var body: [String: Any] = ["password": password]
        if let email { body["email"] = email }
        if let phone { body["phone"] = phone }
        return try await request(.POST, "/token?grant_type=password", app: app, json: body, headers: headers)
    }

    /// `POST /token?grant_type=refresh_token`.
    func refresh(_ token: String, app: App = .mycirclee) async throws -> (status: Int, json: [String: Any], headers: HTTPHeaders) {
        try await request(.POST, "/token?grant_type=refresh_token", app: app, json: ["refresh_token": token])
    }

    /// Auth's domain over `database` as the jobs run it (export assembly, retention), for tests that
    /// set the clock; `configure` changes its settings (not the running service's).
    func accounts(_ database: Database, configure: (inout AuthSettings) -> Void = { _ in }) -> Accounts {
        let settings = testAuthSettings(port: port, mailDirectory: mailDirectory, configure: configure)
        return Accounts(
            settings: settings, database: database, outbox: Outbox(schema: self.database.schema, topicPrefix: topicPrefix),
            keyRing: KeyRing(database: database, issuer: settings.issuer, retiredKeyRetentionSeconds: 3600, logger: TestEnvironment.logger),
            hasher: PasswordHasher(cost: 4, threads: 1), sender: FolderMessageSender(folder: mailDirectory, logger: TestEnvironment.logger),
            apple: AppleIdentityVerifier(keysURL: settings.appleKeysURL), logger: TestEnvironment.logger, exports: storage
        )
    }

    /// Runs `body` with a connection pool on auth's schema (to look behind the API).
    func withDatabase<T: Sendable>(_ body: (Database) async throws -> T) async throws -> T {
        let database = Database(configuration: database, logger: TestEnvironment.logger)
        return try await withRunning(database) { try await body(database) }
    }

    /// Every message the development sender wrote to `recipient`, oldest first.
    func messages(to recipient: String) throws -> [OutgoingMessage] {
        let files = (try? FileManager.default.contentsOfDirectory(atPath: mailDirectory)) ?? []
        return try files.filter { $0.hasSuffix(".json") && !$0.hasPrefix(".") }.sorted().compactMap { name in
            let data = try Data(contentsOf: URL(fileURLWithPath: mailDirectory).appendingPathComponent(name))
            let message = try ColonyJSON.decoder().decode(OutgoingMessage.self, from: data)
            return message.to == recipient ? message : nil
        }
    }

    /// The newest message the development sender wrote to `recipient`.
    func lastMessage(to recipient: String) throws -> OutgoingMessage? {
        let files = (try? FileManager.default.contentsOfDirectory(atPath: mailDirectory)) ?? []
        for name in files.filter({ $0.hasSuffix(".json") && !$0.hasPrefix(".") }).sorted().reversed() {
            let data = try Data(contentsOf: URL(fileURLWithPath: mailDirectory).appendingPathComponent(name))
            let message = try ColonyJSON.decoder().decode(OutgoingMessage.self, from: data)
            if message.to == recipient { return message }
        }
        return nil
    }
}

/// Settings for tests: open rate limits unless a test sets its own, a short reuse interval.
func testAuthSettings(port: Int, mailDirectory: String, appleKeysURL: URL? = nil, configure: (inout AuthSettings) -> Void = { _ in }) -> AuthSettings {
    var settings = AuthSettings(publicURL: "http://127.0.0.1:\(port)/auth/v1", rateLimits: .unlimited, phonePepper: "test-pepper", bcryptCost: 4, hashingThreads: 2, sender: .folder(mailDirectory))
    if let appleKeysURL { settings.appleKeysURL = appleKeysURL }
    for app in App.allCases { settings.apps[app]?.refreshTokenReuseIntervalSeconds = 2 }
    configure(&settings)
    return settings
}

/// Starts the auth service (migrations, keys, HTTP, outbox relay) and runs `body` against it.
func withRunningAuth(configure: @escaping @Sendable (inout AuthSettings) -> Void = { _ in }, appleKeysURL: URL? = nil,
                     service configureService: @Sendable (inout ServiceConfiguration) -> Void = { _ in }, _ body: @Sendable (RunningAuth) async throws -> Void) async throws {
    let environment = try TestEnvironment.current()
    let port = try freePort()
    let prefix = TestKafka.topicPrefix()
    let mailDirectory = FileManager.default.temporaryDirectory.appendingPathComponent(uniqueName("mail")).path
    let storageRoot = FileManager.default.temporaryDirectory.appendingPathComponent(uniqueName("auth-storage")).path
    defer {
        try? FileManager.default.removeItem(atPath: mailDirectory)
        try? FileManager.default.removeItem(atPath: storageRoot)
    }
    let storage = Storage(backend: FileSystemStorageBackend(root: storageRoot), publicBaseURL: "http://127.0.0.1:\(port)", signingKey: Array("auth-tests-signing-key-0123456789abcdef".utf8))
    try await withTestSchema { databaseConfiguration in
        let settings = testAuthSettings(port: port, mailDirectory: mailDirectory, appleKeysURL: appleKeysURL, configure: configure)
        var configuring = ServiceConfiguration(
            service: .auth, app: nil, httpHost: "127.0.0.1", httpPort: port, maxBodyBytes: AuthSettings.defaultMaxBodyBytes, logLevel: .error,
            database: databaseConfiguration, kafkaBrokers: environment.kafkaBrokers, topicPrefix: prefix,
            tokens: TestTokens().verifierConfiguration(audience: nil)
        )
        configureService(&configuring)
        let configuration = configuring
        // The keys exist before the first request, as `colony-auth keys` leaves them.
        try await ServiceHost.migrate(AuthService.migrations, configuration: configuration, logger: TestEnvironment.logger)
        let database = Database(configuration: databaseConfiguration, logger: TestEnvironment.logger)
        let keys = try await withRunning(database) {
            let ring = KeyRing(database: database, issuer: settings.issuer, retiredKeyRetentionSeconds: settings.retiredKeyRetentionSeconds, logger: TestEnvironment.logger)
            try await ring.ensureKeys()
            return try await ring.apiKeys()
        }
        let running = RunningAuth(
            base: "http://127.0.0.1:\(port)", port: port, topicPrefix: prefix, mailDirectory: mailDirectory, database: databaseConfiguration,
            anonKeys: Dictionary(uniqueKeysWithValues: keys.filter { $0.role == .anon }.map { ($0.app, $0.key) }),
            serviceKeys: Dictionary(uniqueKeysWithValues: keys.filter { $0.role == .serviceRole }.map { ($0.app, $0.key) }),
            storage: storage, consoleKey: configuration.consoleKey
        )
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await ServiceHost.run(AuthService.definition(settings: settings, exports: storage), configuration: configuration) }
            defer { group.cancelAll() }
            try await waitUntil(timeout: .seconds(30)) {
                let response = try? await HTTPClient.shared.execute(HTTPClientRequest(url: "\(running.base)/ready"), timeout: .seconds(2))
                return response?.status == .ok
            }
            try await body(running)
        }
    }
}

/// The events auth published, read from its topic.
func authEvents(brokers: String, prefix: String, until done: @escaping @Sendable ([ReceivedEvent]) -> Bool) async throws -> [ReceivedEvent] {
    try await collectEvents(brokers: brokers, topic: EventTopics.topic(for: .auth, prefix: prefix), until: done)
}

/// Runs one file of `Tests/AuthClientTests` (the official Supabase Python client) against `auth`;
/// each area's suite configures its own service and passes what else its tests read.
func runSupabasePythonClient(_ file: String, against auth: RunningAuth, environment extra: [String: String?] = [:], sourceLocation: SourceLocation = #_sourceLocation) async throws {
    var environment: [String: String?] = [
        "COLONY_AUTH_URL": auth.authURL,
        "COLONY_ANON_KEY": auth.anonKeys[.mycirclee],
        "COLONY_ANON_KEY_HABITHIVE": auth.anonKeys[.habithive],
        "COLONY_ANON_KEY_UNIFY": auth.anonKeys[.unify],
        "COLONY_ANON_KEY_IBELIEVEINYOU": auth.anonKeys[.ibelieveinyou],
        "COLONY_ANON_KEY_SOCIALSPOT": auth.anonKeys[.socialspot],
        "COLONY_DEV_MAIL_DIR": auth.mailDirectory,
    ]
    environment.merge(extra) { _, new in new }
    let (status, output) = try await PythonClient.run(["-m", "pytest", "-q", "-p", "no:cacheprovider", PythonClient.path("Tests/AuthClientTests/\(file)")], environment: environment)
    #expect(status == 0, "pytest \(file) failed:\n\(output)", sourceLocation: sourceLocation)
}

/// The claims of an access token: its payload, unverified (the service under test signed it).
func unverifiedClaims(_ token: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> [String: Any] {
    let parts = token.split(separator: ".")
    try #require(parts.count == 3, sourceLocation: sourceLocation)
    let payload = try #require(Base64URL.decode(parts[1]), sourceLocation: sourceLocation)
    return try #require(try JSONSerialization.jsonObject(with: payload) as? [String: Any], sourceLocation: sourceLocation)
}

extension RateLimitRule {
    /// `count` hits in a window no test run straddles. Auth's windows are fixed, aligned to multiples
    /// of their length: a one-minute window's boundary fell inside a slow test (its two requests
    /// counted in two windows) often enough to fail CI.
    static func perRun(_ count: Int) -> RateLimitRule { RateLimitRule(count, per: 366 * 86_400) }
}
