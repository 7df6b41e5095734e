import ColonyModels
import ColonyPlatform
import Foundation
import Logging
import PostgresNIO

// colony-admin: operator commands.
//   colony-admin provision [--secrets-dir DIR] [SERVICE ...]
//     Creates each service's schema and login role (all services when none are named) using the
//     superuser in COLONY_PG_HOST/PORT/DATABASE and COLONY_PG_ADMIN_USER/PASSWORD, and writes
//     each service's connection settings to DIR/<service>.env (passwords are generated once and
//     reused on later runs).

let usage = """
    usage: colony-admin provision [--secrets-dir DIR] [SERVICE ...]
    services: \(ColonyService.allCases.map(\.rawValue).joined(separator: ", "))
    """

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data((message + "\n").utf8))
    exit(2)
}

func provision(arguments: [String]) async throws {
    var secretsDirectory = ".local/secrets"
    var services: [ColonyService] = []
    var remaining = arguments[...]
    while let argument = remaining.popFirst() {
        if argument == "--secrets-dir" {
            guard let value = remaining.popFirst() else { fail(usage) }
            secretsDirectory = value
        } else if let service = ColonyService(rawValue: argument) {
            services.append(service)
        } else {
            fail("unknown service \(argument)\n\(usage)")
        }
    }
    if services.isEmpty { services = ColonyService.allCases }

    let environment = EnvironmentReader()
    let host = try environment.string("COLONY_PG_HOST")
    let port = try environment.int("COLONY_PG_PORT", default: 5432, range: 1...65535)
    let databaseName = environment.string("COLONY_PG_DATABASE", default: "colony")
    let adminUser = environment.string("COLONY_PG_ADMIN_USER", default: "postgres")
    let adminPassword = try environment.string("COLONY_PG_ADMIN_PASSWORD")

    var logger = Logger(label: "colony.admin")
    logger.logLevel = .info
    let client = PostgresClient(
        configuration: .init(host: host, port: port, username: adminUser, password: adminPassword, database: databaseName, tls: .disable),
        backgroundLogger: logger
    )
    try FileManager.default.createDirectory(atPath: secretsDirectory, withIntermediateDirectories: true)
    try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { await client.run() }
        defer { group.cancelAll() }
        let provisioner = DatabaseProvisioner(admin: client, databaseName: databaseName, logger: logger)
        for service in services {
            let role = DatabaseProvisioner.roleName(for: service.rawValue)
            let secretsFile = "\(secretsDirectory)/\(service.rawValue).env"
            let password = existingPassword(in: secretsFile) ?? randomPassword()
            try await provisioner.provision(schema: service.rawValue, role: role, password: password, extensions: service == .nearby ? ["postgis"] : [])
            let contents = """
                COLONY_PG_USER=\(role)
                COLONY_PG_PASSWORD=\(password)
                COLONY_PG_SCHEMA=\(service.rawValue)

                """
            _ = FileManager.default.createFile(atPath: secretsFile, contents: Data(contents.utf8), attributes: [.posixPermissions: 0o600])
            print("provisioned \(service.rawValue): schema \(service.rawValue), role \(role), settings in \(secretsFile)")
        }
    }
}

func existingPassword(in file: String) -> String? {
    guard let text = try? String(contentsOfFile: file, encoding: .utf8) else { return nil }
    return text.split(separator: "\n").first { $0.hasPrefix("COLONY_PG_PASSWORD=") }.map { String($0.dropFirst("COLONY_PG_PASSWORD=".count)) }
}

func randomPassword() -> String {
    let alphabet = Array("abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789")
    var generator = SystemRandomNumberGenerator()
    return String((0..<32).map { _ in alphabet.randomElement(using: &generator)! })
}

let arguments = Array(CommandLine.arguments.dropFirst())
switch arguments.first {
case "provision":
    do {
        try await provision(arguments: Array(arguments.dropFirst()))
    } catch let error as ConfigurationError {
        fail(error.description)
    } catch {
        fail("provisioning failed: \(String(reflecting: error))")
    }
default:
    fail(usage)
}
