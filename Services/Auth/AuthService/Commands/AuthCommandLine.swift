import ArgumentParser
import ColonyModels
import ColonyPlatform
import Foundation

/// `colony-auth [serve]`, `colony-auth keys [--rotate]`, `colony-auth import --app APP --file F`,
/// `colony-auth export --app APP --user ID|EMAIL|PHONE --operator NAME`.
public struct AuthCommandLine: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "colony-auth",
        abstract: "Colony's auth service (Supabase Auth's API) and its key and import commands.",
        discussion: "Settings come from the environment; `colony-admin config check --service auth` lists and checks them. Exit status: 2 usage, 78 configuration, 65 bad import data.",
        subcommands: [Serve.self, Keys.self, Import.self, Export.self],
        defaultSubcommand: Serve.self
    )

    public init() {}

    struct Serve: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Run the service (the default).")

        func run() async throws {
            try await AuthLaunch.serve()
        }
    }

    struct Keys: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create the signing key and each app's API keys when missing; print every app's keys as <app> <role> <key>."
        )
        @Flag(help: "Start signing with a new key first (the previous one stays in the JWKS for a day).")
        var rotate = false

        func run() async throws {
            let launch = try AuthLaunch.load(environment: EnvironmentReader())
            try await AuthCommands.keys(configuration: launch.configuration, settings: launch.settings.settings, rotate: rotate)
        }
    }

    struct Import: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Import a Supabase auth.users export (JSON or CSV) into one app's user pool.",
            discussion: "`colony-admin import supabase` imports a whole project; this takes an exported file. Exits 65 when the file is not a users export."
        )
        @Option(help: "The app whose users these are (\(App.allCases.map(\.rawValue).joined(separator: ", "))).")
        var app: App
        @Option(help: "The export: a JSON array or a CSV file.")
        var file: String

        func run() async throws {
            let launch = try AuthLaunch.load(environment: EnvironmentReader())
            do {
                try await AuthCommands.importUsers(configuration: launch.configuration, settings: launch.settings.settings, app: app, file: file)
            } catch let failure as UserImportParser.Failure {
                throw ImportDataFailure(description: "import failed: \(failure)")
            }
        }
    }

    struct Export: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Start a copy of a person's data (a subject access request): mailed to them as a signed link, like their own POST /user/export.",
            discussion: "Recorded in the app's audit log as user_export_requested by the operator. Exits 67 when no account matches."
        )
        @Option(help: "The app whose account it is (\(App.allCases.map(\.rawValue).joined(separator: ", "))).")
        var app: App
        @Option(help: "The account: its id, email address or phone number.")
        var user: String
        @Option(name: .customLong("operator"), help: "Who asks (your name or address), for the audit log.")
        var operatorName: String

        func run() async throws {
            let launch = try AuthLaunch.load(environment: EnvironmentReader())
            try await AuthCommands.export(configuration: launch.configuration, settings: launch.settings, app: app, user: user, operatorName: operatorName)
        }
    }

    /// The file is not a users export (EX_DATAERR).
    struct ImportDataFailure: CommandFailure {
        var description: String
        var exitStatus: Int32 { 65 }
    }
}
