import ArgumentParser
import ColonyModels
import ColonyPlatform
import ConsoleService
import Foundation

extension OperatorRole: ExpressibleByArgument {}

/// `colony-admin operators add|list|reinvite|disable`: the console's operators, for the first
/// owner (who then manages the others in the console) and for an owner locked out.
struct OperatorsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "operators",
        abstract: "Add and manage the Colony Console's operators.",
        subcommands: [Add.self, List.self, Reinvite.self, Disable.self]
    )

    struct Options: ParsableArguments {
        @Option(help: "The console's schema, when not `console` (COLONY_PG_SCHEMA of colony-console).")
        var schema = "console"
        @Option(help: "The console's address as operators reach it (e.g. https://ops.example.com), to print whole links.")
        var consoleURL: String?

        func link(_ token: String) -> String {
            let base = (consoleURL ?? "").hasSuffix("/") ? String((consoleURL ?? "").dropLast()) : consoleURL ?? ""
            return "\(base)/console/welcome?token=\(token)"
        }
    }

    /// Runs `body` with the console's domain on its schema, its events in its outbox: as the
    /// superuser where its password is set, else as the console's own role (inside the console's
    /// container or pod, whose `COLONY_PG_USER`/`COLONY_PG_PASSWORD` own the schema: no superuser needed).
    static func withOperators<Result: Sendable>(_ options: Options, _ body: (Operators) async throws -> Result) async throws -> Result {
        let hasher = PasswordHasher(cost: 12, threads: 1)
        let environment = EnvironmentReader()
        let outbox = Outbox(schema: options.schema, topicPrefix: environment.string("COLONY_TOPIC_PREFIX", default: EventTopics.defaultPrefix))
        do {
            func run(_ database: Database) async throws -> Result {
                try await body(Operators(database: database, outbox: outbox, hasher: hasher, settings: ConsoleSettings(authURL: ""), logger: AdminDatabase.logger))
            }
            let result: Result
            if environment.isSet("COLONY_PG_ADMIN_PASSWORD") {
                result = try await AdminDatabase.withDatabase(schema: options.schema, run)
            } else {
                var configuration = try DatabaseConfiguration.load(service: .console, environment: environment)
                configuration.schema = options.schema
                let database = Database(configuration: configuration, logger: AdminDatabase.logger)
                result = try await database.whileRunning { try await run(database) }
            }
            try await hasher.shutdown()
            return result
        } catch {
            try? await hasher.shutdown()
            throw error
        }
    }

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Invite an operator: prints the link where they set a password and their second factor (open 72 hours).")

        @Argument(help: "The operator's email address.")
        var email: String
        @Option(help: "owner, admin, support, moderator or viewer.")
        var role: OperatorRole
        @Option(help: "The apps they work on, comma-separated (default: every app; owners always have every app).")
        var apps: String?
        @OptionGroup var options: Options

        func run() async throws {
            var chosen: [App] = []
            for name in (apps ?? "").split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) where !name.isEmpty {
                guard let app = App(rawValue: name) else { throw ValidationError("no app named \(name)") }
                chosen.append(app)
            }
            let rights = OperatorRights(role: role, apps: chosen)
            let token = try await OperatorsCommand.withOperators(options) { operators in
                let token = try await operators.invite(email: email, rights: rights, invitedBy: "colony-admin")
                try await operators.record(nil, email: "colony-admin", action: "add_operator", target: email.lowercased(), outcome: .ok,
                                           detail: "\(role.rawValue) \(rights.apps.map(\.rawValue))", ipAddress: nil)
                return token
            }
            print("\(email.lowercased()) is invited as \(role.rawValue) (\(rights.apps.isEmpty ? "every app" : rights.apps.map(\.rawValue).joined(separator: ", "))).")
            print("Send them this link yourself; it is shown once:")
            print(options.link(token))
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the operators.")
        @OptionGroup var options: Options

        func run() async throws {
            let all = try await OperatorsCommand.withOperators(options) { try await $0.all() }
            printTable(["EMAIL", "ROLE", "APPS", "STATE", "LAST SIGN-IN"], all.map { record in
                [record.email, record.role.rawValue, record.rights.apps.isEmpty ? "all" : record.rights.apps.map(\.rawValue).joined(separator: ","),
                 record.disabledAt != nil ? "disabled" : record.passwordHash == nil ? "invited" : record.totpConfirmedAt == nil ? "setting up" : "active",
                 record.lastSignInAt.map(ISO8601.format) ?? "-"]
            })
        }
    }

    struct Reinvite: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "A new invitation for an operator who lost their password or device (both are set up again; their sessions end).")
        @Argument var email: String
        @OptionGroup var options: Options

        func run() async throws {
            let token = try await OperatorsCommand.withOperators(options) { operators in
                guard let record = try await operators.all().first(where: { $0.email == email.lowercased() }) else { throw ValidationError("no operator \(email)") }
                let token = try await operators.reinvite(id: record.id)
                try await operators.record(nil, email: "colony-admin", action: "reinvite_operator", target: record.email, outcome: .ok, ipAddress: nil)
                return token
            }
            print(options.link(token))
        }
    }

    struct Disable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Disable an operator: their sessions end and they cannot sign in.")
        @Argument var email: String
        @OptionGroup var options: Options

        func run() async throws {
            try await OperatorsCommand.withOperators(options) { operators in
                guard let record = try await operators.all().first(where: { $0.email == email.lowercased() }) else { throw ValidationError("no operator \(email)") }
                try await operators.setDisabled(id: record.id, true)
                try await operators.record(nil, email: "colony-admin", action: "disable_operator", target: record.email, outcome: .ok, ipAddress: nil)
            }
            print("\(email.lowercased()) is disabled.")
        }
    }
}
