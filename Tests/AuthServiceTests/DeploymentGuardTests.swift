import ColonyPlatform
import ColonyTesting
import Foundation
import Testing
@testable import AuthService

/// What a deployment refuses at start (issue 37, item 7): auth with mail left to a local folder
/// when production says no (`COLONY_AUTH_MAIL_DIR_ALLOWED=off`), and `colony-admin provision`
/// with a superuser password Postgres refuses, which stops within its bound with the setting named
/// instead of retrying forever.
@Suite("Deployment guards: auth's mail folder in production, provision's bounded login")
struct DeploymentGuardTests {
    /// The settings `colony-auth serve` reads, valid but for `changes`.
    func environment(_ changes: [String: String]) -> EnvironmentReader {
        let pepper = Data((0..<32).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
        var values = ["COLONY_AUTH_PHONE_PEPPER": pepper, "COLONY_AUTH_MAIL_DIR": FileManager.default.temporaryDirectory.path]
        values.merge(changes) { _, new in new }
        return EnvironmentReader(values)
    }

    func loadError(_ changes: [String: String]) -> ConfigurationError? {
        do {
            _ = try AuthSettings.load(environment: environment(changes), port: 9999, issuer: "colony-auth")
            return nil
        } catch {
            return error as? ConfigurationError
        }
    }

    @Test("COLONY_AUTH_MAIL_DIR_ALLOWED=off refuses mail or SMS left to the folder, and allows them carried by SMTP, Twilio or the webhook")
    func mailFolderRefusedInProduction() throws {
        // Development (the default): the folder takes both channels.
        #expect(loadError([:]) == nil)
        #expect(loadError(["COLONY_AUTH_MAIL_DIR_ALLOWED": "on"]) == nil)

        // Production with nothing but the folder: mail is refused first, its fix named.
        let folderOnly = try #require(loadError(["COLONY_AUTH_MAIL_DIR_ALLOWED": "off"]))
        #expect(folderOnly.variable == "COLONY_AUTH_MAIL_DIR_ALLOWED")
        #expect(folderOnly.problem.contains("mails would go to the folder") && folderOnly.problem.contains("COLONY_AUTH_SMTP_HOST"), "\(folderOnly)")

        // SMTP for mail, SMS still to the folder: refused, naming Twilio.
        let smtp = ["COLONY_AUTH_SMTP_HOST": "smtp.example.com", "COLONY_AUTH_SMTP_FROM": "Colony <no-reply@example.com>"]
        let smsToFolder = try #require(loadError(smtp.merging(["COLONY_AUTH_MAIL_DIR_ALLOWED": "off"]) { $1 }))
        #expect(smsToFolder.problem.contains("SMS would go to the folder") && smsToFolder.problem.contains("COLONY_AUTH_TWILIO_ACCOUNT_SID"), "\(smsToFolder)")

        // Both channels carried: SMTP and Twilio, or the webhook for both.
        let twilio = ["COLONY_AUTH_TWILIO_ACCOUNT_SID": "AC0123456789abcdef0123456789abcdef", "COLONY_AUTH_TWILIO_AUTH_TOKEN": "token-0123456789abcdef",
                      "COLONY_AUTH_TWILIO_FROM": "+15550100"]
        #expect(loadError(smtp.merging(twilio) { $1 }.merging(["COLONY_AUTH_MAIL_DIR_ALLOWED": "off"]) { $1 }) == nil)
        let secret = "whsec_" + Data((0..<32).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
        #expect(loadError(["COLONY_AUTH_WEBHOOK_URL": "https://bridge.example.com/colony", "COLONY_AUTH_WEBHOOK_SECRET": secret,
                           "COLONY_AUTH_MAIL_DIR_ALLOWED": "off"]) == nil)

        let unknown = try #require(loadError(["COLONY_AUTH_MAIL_DIR_ALLOWED": "no"]))
        #expect(unknown.variable == "COLONY_AUTH_MAIL_DIR_ALLOWED")
    }

    @Test("colony-auth serve with COLONY_AUTH_MAIL_DIR_ALLOWED=off and only a mail folder exits 78, naming the setting")
    func authExitsOnMailFolder() async throws {
        let result = try await ChildProcess.run(try builtExecutable("colony-auth"), ["serve"], environment: [
            "COLONY_PG_HOST": "127.0.0.1", "COLONY_PG_PASSWORD": "Qm7vT2xK9pL4wR8zN3cH6jY1eF5u",
            "COLONY_AUTH_PHONE_PEPPER": "pP4r9Lw2Qz7Xc1Vb8Nm3Kj6Hg5Fd0Sa", "COLONY_AUTH_MAIL_DIR": "/tmp/colony-mail",
            "COLONY_AUTH_SMTP_HOST": "", "COLONY_AUTH_WEBHOOK_URL": "", "COLONY_AUTH_TWILIO_ACCOUNT_SID": "",
            "COLONY_AUTH_MAIL_DIR_ALLOWED": "off",
        ])
        #expect(result.status == 78, "\(result.output)")
        #expect(result.output.contains("COLONY_AUTH_MAIL_DIR_ALLOWED") && result.output.contains("COLONY_AUTH_SMTP_HOST"), "\(result.output)")
    }

    /// Runs `colony-admin provision` against the local Postgres with `changes` to the admin settings.
    func provision(_ arguments: [String], _ changes: [String: String]) async throws -> (status: Int32, output: String, seconds: Double) {
        let environment = try TestEnvironment.current()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("colony-provision-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var settings = [
            "COLONY_PG_HOST": environment.postgresHost, "COLONY_PG_PORT": String(environment.postgresPort),
            "COLONY_PG_DATABASE": environment.postgresDatabase, "COLONY_PG_ADMIN_USER": environment.adminUser,
            "COLONY_PG_ADMIN_PASSWORD_FILE": "", "COLONY_PG_SSLMODE": "disable", "COLONY_PROVISION_TIMEOUT_SECONDS": "",
        ]
        settings.merge(changes) { $1 }
        let started = ContinuousClock.now
        let result = try await ChildProcess.run(try builtExecutable("colony-admin"), ["provision", "--secrets-dir", folder, "--folder-per-service"] + arguments, environment: settings)
        let elapsed = started.duration(to: .now)
        let written = (try? FileManager.default.subpathsOfDirectory(atPath: folder)) ?? []
        #expect(!written.contains { $0.hasSuffix(".env") }, "a failed provision wrote \(written)")
        return (result.status, result.output, Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
    }

    @Test("provision with a wrong superuser password exits non-zero within its bound, naming COLONY_PG_ADMIN_PASSWORD")
    func provisionWrongPassword() async throws {
        let bound = 30
        let result = try await provision([], ["COLONY_PG_ADMIN_PASSWORD": "wrong-\(UUID().uuidString)", "COLONY_PROVISION_TIMEOUT_SECONDS": String(bound)])
        #expect(result.status != 0, "\(result.output)")
        #expect(result.output.contains("refused the login") && result.output.contains("28P01"), "\(result.output)")
        #expect(result.output.contains("COLONY_PG_ADMIN_PASSWORD"), "\(result.output)")
        // A refused password fails at once rather than waiting the bound out; the bound is the limit.
        #expect(result.seconds < Double(bound), "took \(result.seconds) s, bound \(bound) s")
    }

    @Test("provision against a port nothing listens on retries until its bound (--timeout), then exits non-zero naming the setting")
    func provisionUnreachable() async throws {
        let port = try freePort()  // bound and closed again: nothing listens there
        let bound = 5
        let result = try await provision(["--timeout", String(bound)], ["COLONY_PG_HOST": "127.0.0.1", "COLONY_PG_PORT": String(port),
                                                                         "COLONY_PG_ADMIN_PASSWORD": "unused-\(UUID().uuidString)"])
        #expect(result.status != 0, "\(result.output)")
        #expect(result.output.contains("could not be reached within") && result.output.contains("COLONY_PROVISION_TIMEOUT_SECONDS"), "\(result.output)")
        // Tried more than once (every 2 s), and gave up: the process ended.
        let attempts = result.output.firstMatch(of: /\((\d+) attempts/).flatMap { Int($0.1) } ?? 0
        #expect(attempts >= 2, "\(result.output)")
    }
}
