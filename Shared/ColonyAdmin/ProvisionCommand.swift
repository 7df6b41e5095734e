import ArgumentParser
import ColonyModels
import ColonyPlatform
import Foundation
import PostgresNIO

/// Creates each service's schema and login role (all services when none are named) and writes
/// each service's connection settings to `<secrets-dir>/<service>.env`. Passwords are generated
/// once and reused on later runs.
struct ProvisionCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "provision",
        abstract: "Create each service's schema and role; write its connection settings."
    )

    @Option(name: .customLong("secrets-dir"), help: "Where the <service>.env files go.")
    var secretsDirectory = ".local/secrets"

    @Argument(help: "Services to provision (all when none are named).")
    var services: [ColonyService] = []

    func run() async throws {
        let services = self.services.isEmpty ? ColonyService.allCases : self.services
        let databaseName = EnvironmentReader().string("COLONY_PG_DATABASE", default: "colony")
        try FileManager.default.createDirectory(atPath: secretsDirectory, withIntermediateDirectories: true)
        let client = try AdminDatabase.makeClient()
        try await client.whileRunning {
            let provisioner = DatabaseProvisioner(admin: client, databaseName: databaseName, logger: AdminDatabase.logger)
            for service in services {
                let role = DatabaseProvisioner.roleName(for: service.rawValue)
                let secretsFile = "\(secretsDirectory)/\(service.rawValue).env"
                let password = Self.existingPassword(in: secretsFile) ?? Self.randomPassword()
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

    static func existingPassword(in file: String) -> String? {
        guard let text = try? String(contentsOfFile: file, encoding: .utf8) else { return nil }
        return text.split(separator: "\n").first { $0.hasPrefix("COLONY_PG_PASSWORD=") }.map { String($0.dropFirst("COLONY_PG_PASSWORD=".count)) }
    }

    static func randomPassword() -> String {
        let alphabet = Array("abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789")
        var generator = SystemRandomNumberGenerator()
        return String((0..<32).map { _ in alphabet.randomElement(using: &generator)! })
    }
}
