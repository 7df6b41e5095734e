import ArgumentParser
import ColonyModels
import ColonyPlatform
import Crypto
import Foundation

/// `colony-admin config reference`: docs/configuration.md, made from what each service reads.
struct ConfigReference: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reference",
        abstract: "Write the configuration reference (docs/configuration.md) from the code.",
        discussion: """
            Loads each service's configuration as the service would, from a few environments that reach every \
            setting it reads (TLS, SASL, S3, SMTP, Twilio, APNs set or not), and records each read: its name, \
            default and what it takes, beside the one-line descriptions of SettingsCatalog. With --check, \
            exits 1 when the file differs from what the code makes (scripts/test runs it).
            """
    )

    @Option(help: "The file to write or check.")
    var output = "docs/configuration.md"

    @Flag(help: "Do not write: fail when the file is not what the code makes.")
    var check = false

    func run() throws {
        let text = try Self.markdown()
        if check {
            let current = try? String(contentsOfFile: output, encoding: .utf8)
            guard current == text else {
                FileHandle.standardError.write(Data("colony-admin: \(output) is not what the code makes; run `swift run colony-admin config reference`\n".utf8))
                throw ExitCode(1)
            }
            print("\(output) is up to date")
        } else {
            try text.write(toFile: output, atomically: true, encoding: .utf8)
            print("wrote \(output)")
        }
    }

    /// The reference the code makes now.
    static func markdown() throws -> String {
        try SettingsReference.markdown(services: ColonyService.allCases.map { ($0, try reads(of: $0)) })
    }

    /// A complete, valid environment, then the same with each optional branch switched on (TLS,
    /// SASL, S3, SMTP, Twilio, APNs; a webhook and a PEM key), so that every read is reached.
    /// Paths name nothing (a recording load goes on past a file it cannot read) except the APNs
    /// key, which is read before the settings after it: a throwaway one is made for the run.
    static func variants(apnsKey: String) -> [[String: String]] {
        let secret = "Qm7vT2xK9pL4wR8zN3cH6jY1aB5dE0fG"
        let base = [
            "COLONY_PG_HOST": "postgres", "COLONY_PG_PASSWORD": secret, "COLONY_KAFKA_BROKERS": "kafka:9092",
            "COLONY_JWKS_URL": "http://auth:8080/auth/v1/.well-known/jwks.json", "COLONY_STORAGE_SIGNING_KEY": secret,
            "COLONY_AUTH_PHONE_PEPPER": secret, "COLONY_HABITS_PHONE_PEPPER": secret, "COLONY_AUTH_MAIL_DIR": "/tmp/mail",
        ]
        let branches: [[String: String]] = [
            ["COLONY_PG_SSLMODE": "verify-full", "COLONY_KAFKA_SECURITY_PROTOCOL": "sasl_ssl", "COLONY_KAFKA_SASL_USERNAME": "colony",
             "COLONY_KAFKA_SASL_PASSWORD": secret, "COLONY_STORAGE_BACKEND": "s3", "COLONY_STORAGE_S3_ENDPOINT": "https://s3.example.com",
             "COLONY_STORAGE_S3_BUCKET": "colony", "COLONY_STORAGE_S3_ACCESS_KEY_ID": "colony", "COLONY_STORAGE_S3_SECRET_ACCESS_KEY": secret,
             "COLONY_AUTH_MAIL_DIR": "", "COLONY_AUTH_SMTP_HOST": "smtp.example.com", "COLONY_AUTH_SMTP_FROM": "Colony <no-reply@example.com>",
             "COLONY_AUTH_SMTP_USER": "colony", "COLONY_AUTH_SMTP_PASSWORD": secret,
             "COLONY_AUTH_TWILIO_ACCOUNT_SID": "AC0", "COLONY_AUTH_TWILIO_FROM": "+15550000000", "COLONY_AUTH_TWILIO_AUTH_TOKEN": secret,
             "COLONY_APNS_TEAM_ID": "TEAM", "COLONY_APNS_KEY_ID": "KEY", "COLONY_APNS_PRIVATE_KEY_FILE": apnsKey,
             "COLONY_TRUSTED_PROXY_COUNT": "1"],
            ["COLONY_AUTH_MAIL_DIR": "", "COLONY_AUTH_WEBHOOK_URL": "https://hooks.example.com",
             "COLONY_AUTH_WEBHOOK_SECRET": "whsec_" + Data((0..<32).map { UInt8($0 * 7 + 3) }).base64EncodedString(),
             "COLONY_JWKS_URL": "", "COLONY_JWT_PUBLIC_KEY": "-----BEGIN PUBLIC KEY-----"],
        ]
        return [base] + branches.map { base.merging($0) { $1 } }
    }

    /// Every setting `service` reads in any variant, in the order first read; a setting's
    /// default and what it takes come from the first environment that reads it.
    static func reads(of service: ColonyService) throws -> [SettingsReference.Row] {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("colony-reference-\(UUID().uuidString.lowercased())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let apnsKey = folder.appendingPathComponent("apns.p8").path
        try Data(P256.Signing.PrivateKey().pemRepresentation.utf8).write(to: URL(fileURLWithPath: apnsKey))
        var rows: [SettingsReference.Row] = []
        for values in variants(apnsKey: apnsKey) {
            let record = EnvironmentRecord()
            _ = try? launchType(of: service).load(environment: EnvironmentReader(values, recordingInto: record))
            for read in record.reads where !rows.contains(where: { $0.name == read.name }) {
                rows.append(SettingsReference.Row(read))
            }
        }
        return rows
    }
}
