import ColonyModels
import ColonyPlatform
import ColonyStorage
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

    /// A subject access request: starts a data export for the account named by `user` (its id,
    /// email or phone), recorded in the audit log under the operator's name; the person gets the
    /// same mail as for their own request. Prints the export's id.
    public static func export(configuration: ServiceConfiguration, settings: WithStorage<AuthSettings>, app: App, user: String, operatorName: String) async throws {
        try await withDatabase(configuration) { database, logger in
            let auth = settings.settings
            let accounts = Accounts(
                settings: auth, database: database, outbox: Outbox(schema: database.schema, topicPrefix: configuration.topicPrefix),
                keyRing: KeyRing(database: database, issuer: auth.issuer, retiredKeyRetentionSeconds: auth.retiredKeyRetentionSeconds, logger: logger),
                hasher: PasswordHasher(cost: auth.bcryptCost, threads: 1), sender: AuthService.makeSender(auth.sender, apps: auth.apps, logger: logger),
                apple: AppleIdentityVerifier(keysURL: auth.appleKeysURL), logger: logger, exports: settings.storage
            )
            guard let id = try await accounts.findUserID(app: app, identifier: user) else {
                throw NoSuchAccount(description: "no \(app.rawValue) account has the id, email or phone \(user)")
            }
            let export = try await accounts.requestExport(app: app, userID: id, requestedBy: operatorName, client: nil)
            print("export \(export.id) started for \(id.lowercased); the person gets a mail with the link when every service's part is in")
        }
    }

    /// EX_NOUSER: the operator named nobody.
    struct NoSuchAccount: CommandFailure {
        var description: String
        var exitStatus: Int32 { 67 }
    }

    private static func withDatabase(_ configuration: ServiceConfiguration, _ body: (Database, Logger) async throws -> Void) async throws {
        var logger = Logger(label: "colony.auth.command")
        logger.logLevel = .warning
        try await ServiceHost.migrate(AuthMigrations.all, configuration: configuration, logger: logger)
        let database = Database(configuration: configuration.database, logger: logger)
        try await database.whileRunning { try await body(database, logger) }
    }
}
