import AsyncHTTPClient
import AuthService
import ColonyModels
import ColonyPlatform
import ColonyStorage
import ColonyTesting
import ConsoleService
import Foundation
import NIOCore
import NIOHTTP1
import Testing

/// Auth and the console running as a deployment runs them, sharing the console's credential: the
/// console on its own schema, auth on another, each with its own role.
struct RunningConsole: Sendable {
    let console: String
    let auth: String
    let authDatabase: DatabaseConfiguration
    let consoleDatabase: DatabaseConfiguration
    let topicPrefix: String
    let anonKeys: [App: String]
    let serviceKeys: [App: String]
    let settings: ConsoleSettings
    let service: RunningService
    let key: InternalKey

    /// Another replica of the console on the same schema (as a deployment runs two or more):
    /// `body` gets its base URL.
    func withSecondReplica(_ body: @Sendable (String) async throws -> Void) async throws {
        let settings = self.settings
        let key = self.key
        try await withRunningTwin(of: service, .console, configure: { $0.consoleKey = key },
                                  definition: { _ in ConsoleService.definition(settings: settings) }) { twin in try await body(twin.base) }
    }

    /// An operator as `colony-admin operators add` makes them: invited, then through the welcome
    /// page and the second factor's enrolment in `browser`, signed in.
    func operatorSignedIn(_ email: String, role: OperatorRole, apps: [App] = [], password: String = "correct horse battery") async throws -> (Browser, TOTP) {
        let invitation = try await invite(email, role: role, apps: apps)
        let browser = Browser(base: console)
        return (browser, try await browser.acceptInvitation("/console/welcome?token=\(invitation)", password: password))
    }

    /// An invitation as `colony-admin operators add` makes it: the token of its link.
    func invite(_ email: String, role: OperatorRole, apps: [App] = []) async throws -> String {
        let hasher = PasswordHasher(cost: 4, threads: 1)
        do {
            let token = try await withConsoleDatabase { database in
                try await Operators(database: database, outbox: Outbox(schema: consoleDatabase.schema, topicPrefix: topicPrefix), hasher: hasher,
                                    settings: settings, logger: TestEnvironment.logger).invite(email: email, rights: OperatorRights(role: role, apps: apps), invitedBy: "test")
            }
            try await hasher.shutdown()
            return token
        } catch {
            try? await hasher.shutdown()
            throw error
        }
    }

    /// A confirmed user of `app` made through auth's admin API; returns the user's id.
    func user(_ email: String, app: App, password: String = "user password 1") async throws -> UUID {
        let reply = try await authRequest(.POST, "/admin/users", key: serviceKeys[app], json: ["email": email, "password": password, "email_confirm": true])
        #expect(reply.status == 200, "\(reply)")
        return try #require(UUID(uuidString: reply.json["id"] as? String ?? ""))
    }

    /// A password sign-in of a user of `app`: the status auth answers.
    func userSignIn(_ email: String, app: App, password: String = "user password 1") async throws -> (status: Int, json: [String: Any]) {
        try await authRequest(.POST, "/token?grant_type=password", key: anonKeys[app], json: ["email": email, "password": password])
    }

    func authRequest(_ method: HTTPMethod, _ path: String, key: String?, bearer: String? = nil, json: [String: Any]? = nil) async throws -> (status: Int, json: [String: Any]) {
        var request = HTTPClientRequest(url: "\(auth)/auth/v1\(path)")
        request.method = method
        if let key { request.headers.add(name: "apikey", value: key) }
        request.headers.add(name: "Authorization", value: "Bearer \(bearer ?? key ?? "")")
        if let json {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(data: try JSONSerialization.data(withJSONObject: json)))
        }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(60))
        let bytes = try await response.body.collect(upTo: 1 << 20)
        return (Int(response.status.code), (try? JSONSerialization.jsonObject(with: Data(buffer: bytes))) as? [String: Any] ?? [:])
    }

    func withConsoleDatabase<Result: Sendable>(_ body: (Database) async throws -> Result) async throws -> Result {
        let database = Database(configuration: consoleDatabase, logger: TestEnvironment.logger)
        return try await withRunning(database) { try await body(database) }
    }
}

/// A browser of the console's pages: keeps its cookies, follows no redirects (tests look at them).
final class Browser: @unchecked Sendable {
    // @unchecked: one test drives one browser, one request at a time.
    let base: String
    var cookies: [String: String] = [:]
    var userAgent = "ConsoleTests"
    static let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: HTTPClient.Configuration(redirectConfiguration: .disallow))

    init(base: String) {
        self.base = base
    }

    struct Page: CustomStringConvertible {
        var status: Int
        var headers: HTTPHeaders
        var body: String
        var location: String? { headers.first(name: "Location") }
        var description: String { "\(status) \(location ?? "") \(body.prefix(600))" }

        /// The first capture of `pattern` in the page.
        func find(_ pattern: String) -> String? {
            guard let regex = try? NSRegularExpression(pattern: pattern),
                  let match = regex.firstMatch(in: body, range: NSRange(body.startIndex..., in: body)), match.numberOfRanges > 1,
                  let range = Range(match.range(at: 1), in: body)
            else { return nil }
            return String(body[range])
        }

        var csrf: String? { find(#"name="csrf" value="([^"]+)""#) }
        var formToken: String? { find(#"name="form_token" value="([^"]+)""#) }
    }

    func get(_ path: String) async throws -> Page {
        try await send(.GET, path, form: nil, headers: [])
    }

    func post(_ path: String, _ form: [String: String], headers: [(String, String)] = []) async throws -> Page {
        try await send(.POST, path, form: form, headers: headers)
    }

    /// A form of the page at `from` (its CSRF token added), posted to `path`.
    func submit(_ path: String, from page: Page, _ fields: [String: String] = [:]) async throws -> Page {
        var form = fields
        if let csrf = page.csrf, form["csrf"] == nil { form["csrf"] = csrf }
        return try await post(path, form)
    }

    func send(_ method: HTTPMethod, _ path: String, form: [String: String]?, headers: [(String, String)]) async throws -> Page {
        var request = HTTPClientRequest(url: base + path)
        request.method = method
        request.headers.add(name: "User-Agent", value: userAgent)
        if !cookies.isEmpty { request.headers.add(name: "Cookie", value: cookies.map { "\($0.key)=\($0.value)" }.sorted().joined(separator: "; ")) }
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let form {
            var components = URLComponents()
            components.queryItems = form.map { URLQueryItem(name: $0.key, value: $0.value) }
            let body = (components.percentEncodedQuery ?? "").replacingOccurrences(of: "+", with: "%2B")
            request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
            request.body = .bytes(ByteBuffer(string: body))
        }
        let response = try await Self.client.execute(request, timeout: .seconds(60))
        let bytes = try await response.body.collect(upTo: 8 << 20)
        for header in response.headers[canonicalForm: "Set-Cookie"] {
            let pair = header.split(separator: ";").first?.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false) ?? []
            guard pair.count == 2 else { continue }
            let name = pair[0].trimmingCharacters(in: .whitespaces)
            if header.contains("Max-Age=0") { cookies[name] = nil } else { cookies[name] = String(pair[1]) }
        }
        return Page(status: Int(response.status.code), headers: response.headers, body: String(buffer: bytes))
    }

    /// The welcome page's password, then the enrolment: returns the operator's authenticator.
    func acceptInvitation(_ link: String, password: String) async throws -> TOTP {
        let welcome = try await get(link)
        #expect(welcome.status == 200, "\(welcome)")
        let invitation = try #require(link.split(separator: "=", maxSplits: 1).last.map(String.init))
        let accepted = try await post("/console/welcome", ["form_token": try #require(welcome.formToken), "invitation": invitation, "password": password, "repeat": password])
        #expect(accepted.status == 303 && accepted.location == "/console/enroll", "\(accepted)")
        let enroll = try await get("/console/enroll")
        let secret = try #require(enroll.find(#"id="totp-secret">([A-Z2-7]+)<"#), "\(enroll)")
        let totp = try #require(TOTP(base32Secret: secret))
        let confirmed = try await submit("/console/enroll", from: enroll, ["code": try #require(totp.code(at: Date()))])
        #expect(confirmed.status == 303 && confirmed.location == "/console/", "\(confirmed)")
        return totp
    }

    /// Signs in with address, password and a code from `totp` at `at` (a step not used before).
    func signIn(_ email: String, password: String, totp: TOTP, at: Date = Date().addingTimeInterval(30)) async throws -> Page {
        let form = try await get("/console/sign-in")
        let first = try await post("/console/sign-in", ["form_token": try #require(form.formToken), "email": email, "password": password])
        guard first.status == 303, first.location == "/console/sign-in/code" else { return first }
        let codePage = try await get("/console/sign-in/code")
        return try await submit("/console/sign-in/code", from: codePage, ["code": try #require(totp.code(at: at))])
    }
}

/// The console's credential in these tests: services a test starts beside the console take it too.
let consoleTestKey = InternalKey("console-tests-credential-0123456789abcdef")

/// Starts auth and the console with one console credential and runs `body`.
func withRunningConsole(configure: @escaping @Sendable (inout ConsoleSettings) -> Void = { _ in }, _ body: @Sendable (RunningConsole) async throws -> Void) async throws {
    let environment = try TestEnvironment.current()
    let key = consoleTestKey
    let authPort = try freePort()
    let prefix = TestKafka.topicPrefix()
    let mailDirectory = FileManager.default.temporaryDirectory.appendingPathComponent(uniqueName("console-mail")).path
    let storageRoot = FileManager.default.temporaryDirectory.appendingPathComponent(uniqueName("console-exports")).path
    defer {
        try? FileManager.default.removeItem(atPath: mailDirectory)
        try? FileManager.default.removeItem(atPath: storageRoot)
    }
    // Auth's data exports (a subject access request from the console starts one).
    let exports = Storage(backend: FileSystemStorageBackend(root: storageRoot), publicBaseURL: "http://127.0.0.1:\(authPort)",
                          signingKey: Array("console-tests-signing-key-0123456789abcdef".utf8))
    try await withTestSchema { authDatabase in
        var authSettings = AuthSettings(publicURL: "http://127.0.0.1:\(authPort)/auth/v1", rateLimits: .unlimited, phonePepper: "test-pepper", bcryptCost: 4,
                                        hashingThreads: 1, sender: .folder(mailDirectory))
        authSettings.apps[.mycirclee]?.emailAutoconfirm = true
        var authConfiguration = ServiceConfiguration(
            service: .auth, app: nil, httpHost: "127.0.0.1", httpPort: authPort, maxBodyBytes: AuthSettings.defaultMaxBodyBytes, logLevel: .error,
            database: authDatabase, kafkaBrokers: environment.kafkaBrokers, topicPrefix: prefix, tokens: TestTokens().verifierConfiguration(audience: nil)
        )
        authConfiguration.consoleKey = key
        try await ServiceHost.migrate(AuthService.migrations, configuration: authConfiguration, logger: TestEnvironment.logger)
        let authData = Database(configuration: authDatabase, logger: TestEnvironment.logger)
        let keys = try await withRunning(authData) {
            let database = authData
            let ring = KeyRing(database: database, issuer: authSettings.issuer, retiredKeyRetentionSeconds: authSettings.retiredKeyRetentionSeconds, logger: TestEnvironment.logger)
            try await ring.ensureKeys()
            return try await ring.apiKeys()
        }
        let authBase = "http://127.0.0.1:\(authPort)"
        let settingsForAuth = authSettings
        let readyAuth = authConfiguration
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await ServiceHost.run(AuthService.definition(settings: settingsForAuth, exports: exports), configuration: readyAuth) }
            defer { group.cancelAll() }
            try await waitUntil(timeout: .seconds(30)) {
                (try? await HTTPClient.shared.execute(HTTPClientRequest(url: "\(authBase)/ready"), timeout: .seconds(2)))?.status == .ok
            }
            var settings = ConsoleSettings(authURL: authBase, bcryptCost: 4)
            configure(&settings)
            let consoleSettings = settings
            try await withRunningService(.console, app: .mycirclee, apiPrefix: "/console", configure: { $0.consoleKey = key }, topicPrefix: prefix,
                                         definition: { _ in ConsoleService.definition(settings: consoleSettings) }) { service in
                let consoleDatabase = service.database
                let running = RunningConsole(
                    console: service.base, auth: authBase, authDatabase: authDatabase, consoleDatabase: consoleDatabase, topicPrefix: prefix,
                    anonKeys: Dictionary(uniqueKeysWithValues: keys.filter { $0.role == .anon }.map { ($0.app, $0.key) }),
                    serviceKeys: Dictionary(uniqueKeysWithValues: keys.filter { $0.role == .serviceRole }.map { ($0.app, $0.key) }),
                    settings: consoleSettings, service: service, key: key
                )
                try await body(running)
            }
        }
    }
}
