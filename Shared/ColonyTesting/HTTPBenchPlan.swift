import ColonyPlatform
import JWTKit
import Foundation

// The out-of-process HTTP benchmark (`scripts/bench http`, scripts/bench-http.py): each service
// benchmark, started with `--http-plan FILE`, seeds its data exactly as its in-process run does,
// writes what the driver needs into FILE (how to start the service executable on that schema,
// the requests wrk sends, the SQL pgbench runs as the baseline) and keeps the schema until its
// standard input closes. The driver starts the release executable, runs pgbench and wrk beside it
// and reads the CPU of each process.

/// One request wrk sends: the bearer token travels in `Authorization`, a body as JSON.
public struct PlannedRequest: Codable, Sendable {
    public var method: String
    public var path: String
    public var token: String?
    public var body: String?

    public init(method: String = "GET", path: String, token: String?, body: String? = nil) {
        self.method = method
        self.path = path
        self.token = token
        self.body = body
    }
}

/// A baseline measured by the benchmark itself rather than by pgbench (raw bcrypt for sign-in).
public struct PlannedBaseline: Codable, Sendable {
    public var label: String
    public var rate: Double

    public init(label: String, rate: Double) {
        self.label = label
        self.rate = rate
    }
}

/// Requests that each send what the answer before carried (auth's refresh: every answer's
/// `refresh_token` is the next request's). Each wrk connection keeps a chain of its own, begun
/// from an answer to `seed`; `{{chain}}` in a request's body is the chain's current value.
public struct PlannedChain: Codable, Sendable {
    public var seed: PlannedRequest
    /// The answer's JSON string field that carries the next value.
    public var field: String

    public init(seed: PlannedRequest, field: String) {
        self.seed = seed
        self.field = field
    }
}

/// A rate the scenario must reach as a multiple of another scenario's in the same run
/// (refresh: 50 times sign-in's).
public struct PlannedRateComparison: Codable, Sendable {
    public var scenario: String
    public var factor: Double

    public init(scenario: String, factor: Double) {
        self.scenario = scenario
        self.factor = factor
    }
}

/// One row of the table: the requests (wrk cycles through them, each connection from its own
/// offset), the status they must answer, and the same SQL for pgbench (or a measured baseline).
public struct PlannedScenario: Codable, Sendable {
    public var name: String
    public var kind: String
    public var requests: [PlannedRequest]
    public var expectStatus: Int
    public var connections: Int
    public var pgbenchScript: String?
    public var baseline: PlannedBaseline?
    /// Statements the driver runs (each on its own) after pgbench and the warm-up, before the
    /// measured run: writes that must be new again (projects' follows).
    public var resetSQL: [String]
    /// Another scenario of the plan run alongside this one (auth's sign-in flood under GET /user).
    public var during: String?
    /// Whose p99 this one's is compared with (GET /user in a flood against GET /user idle).
    public var compareP99To: String?
    /// Requests chained through their answers (refresh), one chain per connection.
    public var chain: PlannedChain?
    /// Whose rate this one's must be a multiple of (refresh against sign-in).
    public var rateAtLeast: PlannedRateComparison?

    public init(name: String, kind: String, requests: [PlannedRequest], expectStatus: Int, connections: Int = 32,
                pgbenchScript: String? = nil, baseline: PlannedBaseline? = nil, resetSQL: [String] = [], during: String? = nil, compareP99To: String? = nil,
                chain: PlannedChain? = nil, rateAtLeast: PlannedRateComparison? = nil) {
        self.name = name
        self.kind = kind
        self.requests = requests
        self.expectStatus = expectStatus
        self.connections = connections
        self.pgbenchScript = pgbenchScript
        self.baseline = baseline
        self.resetSQL = resetSQL
        self.during = during
        self.compareP99To = compareP99To
        self.chain = chain
        self.rateAtLeast = rateAtLeast
    }
}

/// A request the driver sends once the service is up, before the scenarios, whose JSON answer
/// holds a token (auth's sign-up: its access token replaces `{{session}}` in the requests).
public struct PlannedSession: Codable, Sendable {
    public var request: PlannedRequest
    public var headers: [String: String]
    public var tokenField: String

    public init(request: PlannedRequest, headers: [String: String], tokenField: String) {
        self.request = request
        self.headers = headers
        self.tokenField = tokenField
    }
}

public struct HTTPBenchPlan: Codable, Sendable {
    /// The executable, e.g. `colony-chat`.
    public var executable: String
    /// Its environment, on top of nothing but PATH (the driver adds the port).
    public var environment: [String: String]
    /// Headers every request carries besides its token (auth's `apikey`).
    public var headers: [String: String]
    public var session: PlannedSession?
    public var schema: String
    public var scenarios: [PlannedScenario]

    public init(executable: String, environment: [String: String], headers: [String: String] = [:], session: PlannedSession? = nil,
                schema: String, scenarios: [PlannedScenario]) {
        self.executable = executable
        self.environment = environment
        self.headers = headers
        self.session = session
        self.schema = schema
        self.scenarios = scenarios
    }

    /// The settings a service executable reads (as `scripts/run` gives them) for a benchmark's
    /// schema: its role, the broker, tokens verified with the test key's public half; for the
    /// services with uploads (`storage`), a fresh storage folder and a signing key. The pool is
    /// the service's own default (`COLONY_PG_POOL_SIZE`, 8), as operators run it, not one
    /// connection per load generator connection: 32 backends on two cores measured the
    /// contention (circles' feed p99 69 ms against 26 ms with the default), not the service.
    public static func serviceEnvironment(database: DatabaseConfiguration, environment: TestEnvironment, tokens: TestTokens,
                                          topicPrefix: String, storage: Bool = false) -> [String: String] {
        var settings = [
            "COLONY_PG_HOST": environment.postgresHost, "COLONY_PG_PORT": "\(environment.postgresPort)",
            "COLONY_PG_DATABASE": environment.postgresDatabase, "COLONY_PG_USER": database.user,
            "COLONY_PG_PASSWORD": database.password, "COLONY_PG_SCHEMA": database.schema,
            "COLONY_KAFKA_BROKERS": environment.kafkaBrokers, "COLONY_TOPIC_PREFIX": topicPrefix,
            "COLONY_JWT_PUBLIC_KEY": tokens.privateKey.publicKey.pemRepresentation, "COLONY_JWT_ISSUER": tokens.issuer,
            "LOG_LEVEL": "error",
        ]
        if storage {
            settings["COLONY_STORAGE_PATH"] = FileManager.default.temporaryDirectory.appendingPathComponent(uniqueName("colony-bench-storage")).path
            settings["COLONY_STORAGE_SIGNING_KEY"] = "bench-signing-key-0123456789abcdef"
        }
        return settings
    }
}

/// The file named by `--http-plan FILE` on the command line, if any.
public func httpPlanFile() -> String? {
    let arguments = CommandLine.arguments
    guard let index = arguments.firstIndex(of: "--http-plan"), index + 1 < arguments.count else { return nil }
    return arguments[index + 1]
}

/// The command line without `--http-plan FILE`, for a benchmark's own argument parsing.
public func argumentsWithoutHTTPPlan() -> [String] {
    var arguments = Array(CommandLine.arguments.dropFirst())
    if let index = arguments.firstIndex(of: "--http-plan") {
        arguments.removeSubrange(index..<min(arguments.count, index + 2))
    }
    return arguments
}

/// Writes `plan` to `file` (atomically: the driver polls for it) and waits until standard input
/// closes, the driver's sign that it is done with the schema.
public func serveHTTPPlan(_ plan: HTTPBenchPlan, to file: String) async throws {
    let encoder = JSONEncoder()
    encoder.keyEncodingStrategy = .convertToSnakeCase
    try encoder.encode(plan).write(to: URL(fileURLWithPath: file), options: .atomic)
    print("http plan written to \(file); waiting for standard input to close")
    await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
        Thread.detachNewThread {
            _ = FileHandle.standardInput.readDataToEndOfFile()
            done.resume()
        }
    }
}
