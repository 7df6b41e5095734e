import ColonyKafka
import ColonyModels
import ColonyPlatform
import Foundation
import Logging
import PostgresNIO

/// The local infrastructure tests run against, as `scripts/infra up` describes it in `.local/env`.
public struct TestEnvironment: Sendable {
    public var postgresHost: String
    public var postgresPort: Int
    public var postgresDatabase: String
    public var adminUser: String
    public var adminPassword: String
    public var kafkaBrokers: String
    /// The Tansu binary, for tests that start and stop a broker of their own.
    public var tansuBinary: String?

    public static func current() throws -> TestEnvironment {
        let environment = EnvironmentReader()
        do {
            return TestEnvironment(
                postgresHost: try environment.string("COLONY_PG_HOST"),
                postgresPort: try environment.int("COLONY_PG_PORT", default: 5432),
                postgresDatabase: environment.string("COLONY_PG_DATABASE", default: "colony"),
                adminUser: environment.string("COLONY_PG_ADMIN_USER", default: "postgres"),
                adminPassword: try environment.string("COLONY_PG_ADMIN_PASSWORD"),
                kafkaBrokers: try environment.string("COLONY_KAFKA_BROKERS"),
                tansuBinary: environment.optionalString("COLONY_TANSU_BIN")
            )
        } catch {
            throw TestSetupError("\(error). Run the tests through scripts/test, or `scripts/infra up && source .local/env` first.")
        }
    }

    public static let logger: Logger = {
        var logger = Logger(label: "colony.test")
        logger.logLevel = ProcessInfo.processInfo.environment["LOG_LEVEL"].flatMap(Logger.Level.init(rawValue:)) ?? .error
        return logger
    }()
}

public struct TestSetupError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// A short random name part for schemas, roles, topics and groups, so parallel suites never meet.
public func uniqueName(_ prefix: String) -> String {
    let suffix = UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(12).lowercased()
    return "\(prefix)_\(suffix)"
}

/// A fresh schema with its own login role (provisioned exactly as `colony-admin provision` does),
/// a running `Database` logged in as that role, platform migrations applied. Dropped afterwards.
public func withTestDatabase<Result: Sendable>(
    migrations: [Migration] = [],
    poolSize: Int = 8,
    _ body: (Database) async throws -> Result
) async throws -> Result {
    try await withTestSchema(poolSize: poolSize) { configuration in
        let database = Database(configuration: configuration, logger: TestEnvironment.logger)
        return try await withRunning(database) {
            try await MigrationRunner(database: database).migrate(migrations)
            return try await body(database)
        }
    }
}

/// A fresh schema and login role, as connection settings for a service under test (for
/// example one started with `ServiceHost`). Dropped afterwards.
public func withTestSchema<Result: Sendable>(
    poolSize: Int = 8,
    extensions: [String] = [],
    _ body: (DatabaseConfiguration) async throws -> Result
) async throws -> Result {
    let environment = try TestEnvironment.current()
    let name = uniqueName("t")
    let configuration = DatabaseConfiguration(
        host: environment.postgresHost,
        port: environment.postgresPort,
        database: environment.postgresDatabase,
        user: name,
        password: UUID().uuidString,
        schema: name,
        poolSize: poolSize
    )
    return try await withAdminClient { provisioner in
        do {
            try await provisioner.provision(schema: name, role: name, password: configuration.password, extensions: extensions)
        } catch {
            throw TestSetupError("provisioning \(name) failed: \(String(reflecting: error))")
        }
        let result: Result
        do {
            result = try await body(configuration)
        } catch {
            try? await provisioner.drop(schema: name, role: name)
            throw error
        }
        do {
            try await provisioner.drop(schema: name, role: name)
        } catch {
            throw TestSetupError("dropping \(name) failed: \(String(reflecting: error))")
        }
        return result
    }
}

/// A superuser connection pool for provisioning, running for the body's duration.
public func withAdminClient<Result: Sendable>(_ body: (DatabaseProvisioner) async throws -> Result) async throws -> Result {
    let environment = try TestEnvironment.current()
    let client = PostgresClient(
        configuration: .init(host: environment.postgresHost, port: environment.postgresPort, username: environment.adminUser, password: environment.adminPassword, database: environment.postgresDatabase, tls: .disable),
        backgroundLogger: TestEnvironment.logger
    )
    return try await client.whileRunning {
        try await body(DatabaseProvisioner(admin: client, databaseName: environment.postgresDatabase, logger: TestEnvironment.logger))
    }
}

/// Runs a database's pool for the body's duration.
public func withRunning<Result: Sendable>(_ database: Database, _ body: () async throws -> Result) async throws -> Result {
    try await database.whileRunning(body)
}

/// Test-only Kafka settings: unique topic prefixes and consumer groups.
public enum TestKafka {
    public static func topicPrefix() -> String { uniqueName("t") }

    /// The services' producer settings: a shorter message timeout would fail sends that a busy
    /// two-core machine only delays, and a resent batch can overtake the one behind it.
    public static func producer(brokers: String) -> KafkaConfiguration {
        .producer(bootstrapServers: brokers)
    }

    public static func consumer(brokers: String, group: String = uniqueName("g")) -> KafkaConfiguration {
        .consumer(bootstrapServers: brokers, groupId: group)
    }
}
