import ColonyModels
import ColonyPlatform
import Foundation
import Logging

/// The operator commands of `colony-auth`: signing and API keys, and importing users.
public enum AuthCommands {
    /// Creates the signing key and each app's API keys when missing (or rotates the signing
    /// key), then prints every app's anon and service-role key as `<app> <role> <key>`.
    public static func keys(configuration: ServiceConfiguration, settings: AuthSettings, rotate: Bool) async throws {
        try await withDatabase(configuration) { database, logger in
            let keyRing = KeyRing(database: database, issuer: settings.issuer, retiredKeyRetentionSeconds: settings.retiredKeyRetentionSeconds, logger: logger)
            try await keyRing.ensureKeys()
            if rotate {
                let kid = try await keyRing.rotate()
                FileHandle.standardError.write(Data("signing key rotated: new kid \(kid); the previous key stays in the JWKS for \(settings.retiredKeyRetentionSeconds) s\n".utf8))
            }
            for key in try await keyRing.apiKeys() {
                print("\(key.app.rawValue) \(key.role.rawValue) \(key.key)")
            }
        }
    }

    /// Imports a Supabase `auth.users` export (JSON or CSV) into one app's user pool.
    public static func importUsers(configuration: ServiceConfiguration, settings: AuthSettings, app: App, file: String) async throws {
        let text = try String(contentsOfFile: file, encoding: .utf8)
        let records = try UserImportParser.parse(text)
        try await withDatabase(configuration) { database, logger in
            let keyRing = KeyRing(database: database, issuer: settings.issuer, retiredKeyRetentionSeconds: settings.retiredKeyRetentionSeconds, logger: logger)
            let hasher = PasswordHasher(cost: settings.bcryptCost, threads: 1)
            let accounts = Accounts(
                settings: settings, database: database, outbox: Outbox(schema: database.schema, topicPrefix: configuration.topicPrefix),
                keyRing: keyRing, hasher: hasher, sender: AuthService.makeSender(settings.sender, apps: settings.apps, logger: logger),
                apple: AppleIdentityVerifier(keysURL: settings.appleKeysURL), logger: logger
            )
            let (imported, skipped) = try await accounts.importUsers(records, into: app)
            print("imported \(imported) of \(records.count) users into \(app.rawValue)")
            for line in skipped { print("skipped \(line)") }
            // Their user_registered events wait in the outbox; the running service relays them.
        }
    }

    private static func withDatabase(_ configuration: ServiceConfiguration, _ body: (Database, Logger) async throws -> Void) async throws {
        var logger = Logger(label: "colony.auth.command")
        logger.logLevel = .warning
        try await ServiceHost.migrate(AuthMigrations.all, configuration: configuration, logger: logger)
        let database = Database(configuration: configuration.database, logger: logger)
        try await database.whileRunning { try await body(database, logger) }
    }
}
