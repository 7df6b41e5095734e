import ArgumentParser
import ColonyModels
import ColonyPlatform
import Foundation
import Logging
import NIOSSL
import PostgresNIO

/// Which service's schema a command works on: `--service` names it (its schema has the
/// service's name), `--schema` overrides the schema for a deployment that renamed it.
struct ServiceSchemaOptions: ParsableArguments {
    @Option(help: "The service (\(ColonyService.allCases.map(\.rawValue).joined(separator: ", "))).")
    var service: ColonyService

    @Option(help: "Its schema, when not the service's name (COLONY_PG_SCHEMA of the service).")
    var schema: String?

    var schemaName: String { schema ?? service.rawValue }
}

/// The superuser connection the commands use, from the environment.
enum AdminDatabase {
    static var logger: Logger {
        var logger = Logger(label: "colony.admin")
        logger.logLevel = .error  // the commands print what they did; PostgresNIO's chatter stays out
        return logger
    }

    /// Runs `body` with one connection as the superuser.
    static func withConnection<Result: Sendable>(_ body: (PostgresConnection) async throws -> Result) async throws -> Result {
        let client = try makeClient()
        return try await client.whileRunning {
            try await client.withConnection { try await body($0) }
        }
    }

    /// Runs `body` with a `Database` on one schema as the superuser (a service's own code, such as
    /// auth's key ring, working on the service's tables).
    static func withDatabase<Result: Sendable>(schema: String, _ body: (Database) async throws -> Result) async throws -> Result {
        let environment = EnvironmentReader()
        let configuration = DatabaseConfiguration(
            host: try environment.string("COLONY_PG_HOST"), port: try environment.int("COLONY_PG_PORT", default: 5432, range: 1...65535),
            database: environment.string("COLONY_PG_DATABASE", default: "colony"), user: environment.string("COLONY_PG_ADMIN_USER", default: "postgres"),
            password: try environment.secret("COLONY_PG_ADMIN_PASSWORD"), schema: schema, poolSize: 2, tls: try DatabaseTLS.load(environment: environment))
        let database = Database(configuration: configuration, logger: logger)
        return try await database.whileRunning { try await body(database) }
    }

    static func makeClient() throws -> PostgresClient {
        let settings = try Settings()
        return PostgresClient(configuration: .init(host: settings.host, port: settings.port, username: settings.user, password: settings.password,
                                                   database: settings.database, tls: settings.tls.map { .require($0) } ?? .disable),
                              backgroundLogger: logger)
    }

    /// One connection's configuration with the same settings (provision's bounded login check).
    static func connectionConfiguration() throws -> PostgresConnection.Configuration {
        let settings = try Settings()
        return PostgresConnection.Configuration(host: settings.host, port: settings.port, username: settings.user, password: settings.password,
                                                database: settings.database, tls: try settings.tls.map { .require(try NIOSSLContext(configuration: $0)) } ?? .disable)
    }

    /// The superuser's connection settings.
    private struct Settings {
        var host: String, port: Int, database: String, user: String, password: String
        var tls: TLSConfiguration?

        init() throws {
            let environment = EnvironmentReader()
            host = try environment.string("COLONY_PG_HOST")
            port = try environment.int("COLONY_PG_PORT", default: 5432, range: 1...65535)
            database = environment.string("COLONY_PG_DATABASE", default: "colony")
            user = environment.string("COLONY_PG_ADMIN_USER", default: "postgres")
            password = try environment.secret("COLONY_PG_ADMIN_PASSWORD")
            tls = try DatabaseTLS.load(environment: environment).tlsConfiguration()
        }
    }
}

/// Prints a table with aligned columns.
func printTable(_ header: [String], _ rows: [[String]]) {
    for line in table(header, rows) { print(line) }
}

/// A configuration problem or a failed command, printed without a stack.
struct AdminFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
