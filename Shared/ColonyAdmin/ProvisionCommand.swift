import ArgumentParser
import ColonyModels
import ColonyPlatform
import Foundation
import PostgresNIO

/// Creates each service's schema and login role (all services when none are named) and writes
/// each service's connection settings to `<secrets-dir>/<service>.env` (or, with
/// `--folder-per-service`, `<secrets-dir>/<service>/<service>.env`). Passwords are generated
/// once and reused on later runs. It first waits for the superuser's login, at most
/// `COLONY_PROVISION_TIMEOUT_SECONDS`, and stops at once with the settings named when the login
/// is refused.
struct ProvisionCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "provision",
        abstract: "Create each service's schema and role; write its connection settings."
    )

    @Option(name: .customLong("secrets-dir"), help: "Where the <service>.env files go.")
    var secretsDirectory = ".local/secrets"

    @Flag(name: .customLong("folder-per-service"), help: """
        Write <secrets-dir>/<service>/<service>.env instead of <secrets-dir>/<service>.env: one folder per service, \
        for a deployment that mounts each service's folder into its container only (docker-compose.yml).
        """)
    var folderPerService = false

    @Option(name: .customLong("timeout"), help: """
        Seconds to wait for Postgres to accept the superuser's login ($COLONY_PROVISION_TIMEOUT_SECONDS, else 120). \
        An unreachable server is retried until then; a refused password fails at once.
        """)
    var timeoutSeconds: Int?

    @Argument(help: "Services to provision (all when none are named).")
    var services: [ColonyService] = []

    func run() async throws {
        let services = self.services.isEmpty ? ColonyService.allCases : self.services
        let databaseName = EnvironmentReader().string("COLONY_PG_DATABASE", default: "colony")
        let timeout = try timeoutSeconds ?? EnvironmentReader().int("COLONY_PROVISION_TIMEOUT_SECONDS", default: 120, range: 1...86_400)
        guard (1...86_400).contains(timeout) else { throw AdminFailure("--timeout must be between 1 and 86400 seconds, got \(timeout)") }
        try FileManager.default.createDirectory(atPath: secretsDirectory, withIntermediateDirectories: true)
        // A pool retries a refused login forever, silently: check the login once, within the bound, first.
        do {
            try await DatabaseProvisioner.waitForLogin(
                try AdminDatabase.connectionConfiguration(), credentials: "COLONY_PG_ADMIN_USER and COLONY_PG_ADMIN_PASSWORD (or COLONY_PG_ADMIN_PASSWORD_FILE)",
                timeout: .seconds(timeout), timeoutSetting: "COLONY_PROVISION_TIMEOUT_SECONDS (or --timeout)", logger: AdminDatabase.logger)
        } catch {
            throw AdminFailure("provision: \(error)")
        }
        let client = try AdminDatabase.makeClient()
        try await client.whileRunning {
            let provisioner = DatabaseProvisioner(admin: client, databaseName: databaseName, logger: AdminDatabase.logger)
            for service in services {
                let role = DatabaseProvisioner.roleName(for: service.rawValue)
                let folder = folderPerService ? "\(secretsDirectory)/\(service.rawValue)" : secretsDirectory
                try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
                let secretsFile = "\(folder)/\(service.rawValue).env"
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
