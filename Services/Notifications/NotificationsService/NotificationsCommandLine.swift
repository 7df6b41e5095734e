import ArgumentParser
import ColonyModels
import ColonyPlatform
import Foundation
import Logging

/// `colony-notifications [serve]`, `colony-notifications deliveries USER_ID [--app APP] [--limit N]`.
public struct NotificationsCommandLine: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "colony-notifications",
        abstract: "Colony's notifications service (device tokens, preferences, APNs pushes) and its support command.",
        discussion: "Settings come from the environment; `colony-admin config check --service notifications` lists and checks them. Exit status: 2 usage, 78 configuration.",
        subcommands: [Serve.self, Deliveries.self],
        defaultSubcommand: Serve.self
    )

    public init() {}

    struct Serve: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Run the service (the default).")

        func run() async throws {
            try await NotificationsLaunch.serve()
        }
    }

    struct Deliveries: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print a user's delivery log (JSON), newest first, for support.")

        @Argument(help: "The user's id.")
        var user: UUID
        @Option(help: "Only this app's deliveries (\(App.allCases.map(\.rawValue).joined(separator: ", "))).")
        var app: App?
        @Option(help: "At most this many entries.")
        var limit = 100

        func validate() throws {
            guard (1...10_000).contains(limit) else { throw ValidationError("--limit must be between 1 and 10000") }
        }

        func run() async throws {
            // The database settings are all it needs: a push setting that is wrong does not stand in support's way.
            let configuration = try ServiceConfiguration.load(service: .notifications, app: nil, environment: EnvironmentReader())
            var logger = Logger(label: "colony.notifications.command")
            logger.logLevel = .warning
            let database = Database(configuration: configuration.database, logger: logger)
            let entries = try await database.whileRunning {
                try await NotificationsService.deliveryLog(user: user, app: app, limit: limit, database: database)
            }
            let encoder = ColonyJSON.encoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            print(String(decoding: try encoder.encode(entries), as: UTF8.self))
        }
    }
}
