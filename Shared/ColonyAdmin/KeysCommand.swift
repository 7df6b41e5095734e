import ArgumentParser
import AuthService
import ColonyModels
import ColonyPlatform
import Foundation

/// `colony-admin keys list|rotate|revoke`: auth's signing keys (ES256, published in its JWKS)
/// and the apps' API keys, changed through auth's own key ring so its rules hold.
struct KeysCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keys",
        abstract: "Auth's signing keys and the apps' API keys.",
        subcommands: [List.self, Rotate.self, Revoke.self]
    )

    /// Auth's key ring on the superuser's connection to auth's schema (auth's issuer,
    /// `COLONY_JWT_ISSUER`, signs the API keys it issues).
    static func withKeyRing<Result: Sendable>(schema: String, _ body: (KeyRing) async throws -> Result) async throws -> Result {
        let issuer = EnvironmentReader().string("COLONY_JWT_ISSUER", default: "colony-auth")
        return try await AdminDatabase.withDatabase(schema: schema) { database in
            try await body(KeyRing(database: database, issuer: issuer, retiredKeyRetentionSeconds: AuthSettings.retiredKeyRetention, logger: AdminDatabase.logger))
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "The signing keys (never their private parts) and the active API keys.")
        @Option(help: "Auth's schema.") var schema = "auth"
        @Flag(help: "Print the API keys whole (they are shortened otherwise).") var showAPIKeys = false

        func run() async throws {
            let (signing, api) = try await KeysCommand.withKeyRing(schema: schema) { (try await $0.signingKeyStates(), try await $0.apiKeys()) }
            printTable(["KID", "CREATED", "STATE"], signing.map { key in
                [key.kid, ISO8601.format(key.createdAt), key.retiredAt.map { "retired \(ISO8601.format($0))" } ?? "current"]
            })
            print("")
            printTable(["APP", "ROLE", "KEY"], api.map { key in
                [key.app.rawValue, key.role.rawValue, showAPIKeys ? key.key : String(key.key.prefix(12)) + "…" + String(key.key.suffix(6))]
            })
        }
    }

    struct Rotate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Start signing with a new key (the old one stays published for a day), or replace an app's API key.",
            discussion: "Without --app: a new signing key; sessions signed by the previous key keep working until it leaves the JWKS. With --app and --role: that API key is revoked at once and a new one printed; ship it in the app first."
        )
        @Option(help: "Auth's schema.") var schema = "auth"
        @Option(help: "Replace this app's API key instead.") var app: App?
        @Option(help: "anon or service_role (with --app).") var role: String?

        func validate() throws {
            if app != nil, role.flatMap(APIKeyRecord.Role.init(rawValue:)) == nil { throw ValidationError("--app needs --role anon or --role service_role") }
            if app == nil, role != nil { throw ValidationError("--role goes with --app") }
        }

        func run() async throws {
            if let app, let role = role.flatMap(APIKeyRecord.Role.init(rawValue:)) {
                let key = try await KeysCommand.withKeyRing(schema: schema) { try await $0.rotateAPIKey(app: app, role: role) }
                print("new \(app.rawValue) \(role.rawValue) key (the previous one no longer works):")
                print(key.key)
            } else {
                let kid = try await KeysCommand.withKeyRing(schema: schema) { try await $0.rotate() }
                print("signing with new key \(kid); the previous key stays in the JWKS until its retention ends")
            }
        }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Take a leaked key out of service at once.",
            discussion: "--kid: a retired signing key leaves the JWKS (auth forgets it within 30 s, other services within their 10-minute JWKS cache); tokens it signed stop verifying. Rotate first to retire the current key. --api-key: that API key stops working."
        )
        @Option(help: "Auth's schema.") var schema = "auth"
        @Option(help: "A retired signing key's id.") var kid: String?
        @Option(name: .customLong("api-key"), help: "An API key.") var apiKey: String?

        func validate() throws {
            guard (kid == nil) != (apiKey == nil) else { throw ValidationError("name one key: --kid or --api-key") }
        }

        func run() async throws {
            let revoked = try await KeysCommand.withKeyRing(schema: schema) { ring in
                if let kid { return try await ring.revokeSigningKey(kid: kid) }
                return try await ring.revokeAPIKey(apiKey ?? "")
            }
            guard revoked else {
                throw AdminFailure(kid != nil ? "no retired signing key \(kid!) (the current key cannot be revoked: rotate first)" : "no active API key like that")
            }
            print(kid.map { "signing key \($0) revoked" } ?? "API key revoked")
        }
    }
}
