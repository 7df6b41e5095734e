import ArgumentParser
import AsyncHTTPClient
import AuthService
import ColonyKafka
import ColonyModels
import ColonyPlatform
import Foundation
import NIOCore
import NIOPosix
import PostgresNIO

/// `colony-admin doctor`: whether what the services need answers, with their own settings.
struct DoctorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "doctor",
        abstract: "Check that what the services need is reachable with their settings: database, broker, JWKS, SMTP.",
        discussion: """
            Loads each service's configuration as `config check` does, then: connects to Postgres as the service's role with its \
            TLS settings (its schema present, migrations current), asks the broker for its metadata (the topics the services \
            publish and consume present), fetches the JWKS the services verify tokens with (at least one key), and talks to \
            auth's SMTP server when it has one (greeting, EHLO, STARTTLS and AUTH as configured; no mail is sent). Prints ok or \
            FAIL with the reason and the time each check took; exits 1 when any failed.
            """
    )

    @Option(name: .customLong("service"), help: "Only these services (repeatable; all by default).")
    var services: [ColonyService] = []

    @Option(name: .customLong("secrets-dir"), help: "Where provision wrote the services' <service>.env files ($COLONY_SECRETS_DIR, else .local/secrets).")
    var secretsDirectory: String?

    @Option(help: "Seconds each check may take.")
    var timeout = 30

    func validate() throws {
        guard (1...600).contains(timeout) else { throw ValidationError("--timeout must be between 1 and 600 seconds") }
    }

    func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        let directory = secretsDirectory ?? environment["COLONY_SECRETS_DIR"] ?? ".local/secrets"
        let deadline = Duration.seconds(timeout)
        var checks: [DoctorCheck] = []
        var brokers: [String: (configuration: KafkaConfiguration, topics: Set<String>, services: [String])] = [:]
        var jwks: [URL: [String]] = [:]
        for service in services.isEmpty ? ColonyService.allCases : services {
            let prepared = ServiceEnvironment(service: service, base: environment, secretsDirectory: directory)
            let check = ConfigurationCheck(service: service, values: prepared.values)
            guard let launch = check.launch else {
                let problems = check.problems.map(\.variable).joined(separator: ", ")
                checks.append(DoctorCheck(service: service.rawValue, name: "configuration", target: "-") {
                    throw AdminFailure("invalid (\(problems)): see colony-admin config check --service \(service.rawValue)")
                })
                continue
            }
            let configuration = launch.configuration
            checks.append(DoctorCheck(service: service.rawValue, name: "database", target: Self.describe(configuration.database)) {
                try await Self.checkDatabase(service: service, configuration: configuration.database)
            })
            let key = configuration.kafkaBrokers + " " + configuration.kafkaSecurity.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ",")
            var expected = Set(EventCatalogue.subscriptions(of: service).map { EventTopics.topic(for: $0, prefix: configuration.topicPrefix) })
            if EventCatalogue.types[service] != nil { expected.insert(EventTopics.topic(for: service, prefix: configuration.topicPrefix)) }
            brokers[key, default: (configuration.kafka, [], [])].topics.formUnion(expected)
            brokers[key]?.services.append(service.rawValue)
            if case .jwks(let url) = configuration.tokens.keySource { jwks[url, default: []].append(service.rawValue) }
            if let auth = launch as? AuthLaunch, case .smtp(let smtp) = auth.settings.settings.sender.mail {
                checks.append(DoctorCheck(service: service.rawValue, name: "smtp", target: "\(smtp.host):\(smtp.port) (\(smtp.security.rawValue))") {
                    let offered = try await SMTPClient(settings: smtp, logger: AdminDatabase.logger).check()
                    return "greeted, EHLO\(smtp.security == .startTLS ? ", STARTTLS" : "")\(smtp.username != nil ? ", AUTH accepted" : ""); offers \(offered.joined(separator: " "))"
                })
            }
        }
        let selected = services.isEmpty ? ColonyService.allCases.count : Set(services).count
        func who(_ names: [String]) -> String { names.count == selected && selected > 1 ? "all" : names.joined(separator: ",") }
        for (_, broker) in brokers.sorted(by: { $0.key < $1.key }) {
            checks.append(DoctorCheck(service: who(broker.services), name: "broker", target: broker.configuration.properties["bootstrap.servers"] ?? "-") {
                try await Self.checkBroker(broker.configuration, topics: broker.topics, timeout: deadline)
            })
        }
        for (url, services) in jwks.sorted(by: { $0.key.absoluteString < $1.key.absoluteString }) {
            checks.append(DoctorCheck(service: who(services), name: "jwks", target: url.absoluteString) {
                try await Self.checkJWKS(url, timeout: deadline)
            })
        }

        var failed = 0
        var rows: [[String]] = []
        for check in checks {
            let start = ContinuousClock.now
            let outcome: (ok: Bool, detail: String)
            do {
                outcome = (true, try await withDeadline(deadline, check.run))
            } catch {
                outcome = (false, "\(error)")
            }
            let elapsed = ContinuousClock.now - start
            let milliseconds = elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000
            if !outcome.ok { failed += 1 }
            rows.append([outcome.ok ? "ok" : "FAIL", check.service, check.name, check.target, "\(milliseconds) ms", outcome.detail])
        }
        printTable(["RESULT", "SERVICE", "CHECK", "TARGET", "TIME", "DETAIL"], rows)
        print(failed == 0 ? "\nevery check passed" : "\n\(failed) of \(checks.count) checks failed")
        if failed > 0 { throw ExitCode(1) }
    }

    static func describe(_ database: DatabaseConfiguration) -> String {
        let tls = switch database.tls {
        case .disable: "disable"
        case .require: "require"
        case .verifyFull: "verify-full"
        }
        return "\(database.user)@\(database.host):\(database.port)/\(database.database) (sslmode \(tls))"
    }

    /// Logs in as the service's role, with its TLS settings, and reads its schema's migrations.
    static func checkDatabase(service: ColonyService, configuration: DatabaseConfiguration) async throws -> String {
        let database = Database(configuration: configuration, logger: AdminDatabase.logger)
        return try await database.withDedicatedConnection { connection in
            let logger = AdminDatabase.logger
            guard let (user, encrypted) = try await connection.query(
                "SELECT current_user::text, coalesce((SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()), false)", logger: logger
            ).read({ c in (try c.next(String.self), try c.next(Bool.self)) }).first else { throw AdminFailure("the server answered no row for who is logged in") }
            let schemaExists = try await connection.query("SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = \(configuration.schema))", logger: logger)
                .firstValue(Bool.self) ?? false
            guard schemaExists else { throw AdminFailure("logged in as \(user), but schema \(configuration.schema) does not exist (run colony-admin provision)") }
            guard let states = try await MigrationState.read(service: service, schema: configuration.schema, on: connection) else {
                throw AdminFailure("schema \(configuration.schema) has no migrations yet (the service applies them when it starts)")
            }
            if let behind = states.first(where: { !$0.pending.isEmpty || !$0.unknown.isEmpty }) {
                throw AdminFailure("schema \(configuration.schema), \(behind.component) migrations: \(behind.summary)")
            }
            let counts = states.map { "\($0.component) \($0.applied.count)/\($0.known.count)" }.joined(separator: ", ")
            return "logged in as \(user)\(encrypted ? " over TLS" : ""); schema \(configuration.schema), migrations current (\(counts))"
        }
    }

    /// A TCP connection to a bootstrap server first (a closed port says so at once), then the
    /// cluster's metadata and the topics.
    static func checkBroker(_ configuration: KafkaConfiguration, topics expected: Set<String>, timeout: Duration) async throws -> String {
        var refusals: [String] = []
        let servers = (configuration.properties["bootstrap.servers"] ?? "").split(separator: ",").map { String($0).trimmingCharacters(in: .whitespaces) }
        for server in servers {
            guard let colon = server.lastIndex(of: ":"), let port = Int(server[server.index(after: colon)...]) else {
                refusals.append("\(server): not host:port")
                continue
            }
            let host = String(server[..<colon]).trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
            do {
                let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                    .connectTimeout(.seconds(10)).connect(host: host, port: port).get()
                try? await channel.close().get()
                refusals = []
                break
            } catch {
                refusals.append("\(server): \(error)")
            }
        }
        if !refusals.isEmpty { throw AdminFailure("no bootstrap server accepts connections: \(refusals.joined(separator: "; "))") }
        let (brokerCount, present) = try await KafkaAdmin(configuration: configuration).clusterTopics(timeout: timeout)
        let missing = expected.subtracting(present).sorted()
        guard missing.isEmpty else {
            throw AdminFailure("\(brokerCount) broker\(brokerCount == 1 ? "" : "s") answered, but topics are missing: \(missing.joined(separator: ", ")) (each is created when a service that consumes it starts)")
        }
        return "\(brokerCount) broker\(brokerCount == 1 ? "" : "s") answered; \(expected.count) topics present"
    }

    /// Fetches the JWKS and counts its keys.
    static func checkJWKS(_ url: URL, timeout: Duration) async throws -> String {
        let response = try await HTTPClient.shared.execute(HTTPClientRequest(url: url.absoluteString), timeout: .seconds(timeout.components.seconds))
        let body = try await response.body.collect(upTo: 1 << 20)
        guard response.status == .ok else { throw AdminFailure("answered \(response.status.code)") }
        guard let document = try? JSONSerialization.jsonObject(with: Data(body.readableBytesView)) as? [String: Any], let keys = document["keys"] as? [[String: Any]] else {
            throw AdminFailure("answered something that is not a JWKS document")
        }
        guard !keys.isEmpty else { throw AdminFailure("the JWKS has no keys (has auth made its signing key? colony-auth keys)") }
        let kids = keys.compactMap { $0["kid"] as? String }
        return "\(keys.count) key\(keys.count == 1 ? "" : "s") (\(kids.joined(separator: ", ")))"
    }
}

/// One check: what it talks to, and what it found (or why it failed).
struct DoctorCheck: Sendable {
    var service: String
    var name: String
    var target: String
    var run: @Sendable () async throws -> String
}

/// `body`'s result, or a failure once `duration` passed.
func withDeadline<Value: Sendable>(_ duration: Duration, _ body: @escaping @Sendable () async throws -> Value) async throws -> Value {
    try await withThrowingTaskGroup(of: Value?.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: duration)
            return nil
        }
        defer { group.cancelAll() }
        guard let first = try await group.next(), let value = first else {
            throw AdminFailure("no answer within \(duration.components.seconds) s")
        }
        return value
    }
}
