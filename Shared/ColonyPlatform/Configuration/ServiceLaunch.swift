import ArgumentParser
import ColonyModels
import Foundation

/// How a service starts: everything it reads from its environment, loaded one way by its
/// executable and by `colony-admin config check` (which loads it without starting it).
public protocol ServiceLaunch: Sendable {
    static var service: ColonyService { get }
    /// Reads every setting the service runs with; the first problem is thrown (a reader that
    /// records, as the check's does, notes them all instead).
    static func load(environment: EnvironmentReader) throws(ConfigurationError) -> Self
    var configuration: ServiceConfiguration { get }
    /// What runs: routes, consumers, jobs.
    func definition() throws -> ServiceDefinition
}

extension ServiceLaunch {
    /// Sets up logs, traces and metrics (before anything logs), loads the service and runs it
    /// until it is stopped. A settings or secret file that cannot be read stops it first.
    public static func serve(environment: EnvironmentReader = EnvironmentReader()) async throws {
        try environment.checkSources()
        let traceExporter = try ColonyObservability.bootstrap(service: service.rawValue, environment: environment)
        let launch = try load(environment: environment)
        try await ServiceHost.run(try launch.definition(), configuration: launch.configuration, traceExporter: traceExporter)
    }
}

/// What one service adds to the launch every service shares (`PlatformLaunch`): which service it
/// is, whose tokens it takes, its own settings (read after the platform's, which it may adjust,
/// e.g. the upload limit), and what runs with them.
public protocol ServicePlan: Sendable {
    associatedtype Settings: Sendable
    static var service: ColonyService { get }
    /// The app whose tokens the service accepts (nil: every app's).
    static var app: App? { get }
    /// The environment as the service reads it: its own defaults for platform settings.
    static func prepare(_ environment: EnvironmentReader) -> EnvironmentReader
    static func settings(_ environment: EnvironmentReader, _ configuration: inout ServiceConfiguration) throws(ConfigurationError) -> Settings
    static func definition(_ settings: Settings) throws -> ServiceDefinition
}

extension ServicePlan {
    public static func prepare(_ environment: EnvironmentReader) -> EnvironmentReader { environment }
}

/// How every service starts: the platform's settings (`ServiceConfiguration`, which checks the
/// sources first), then the service's own (`Plan`). `colony-admin config check` loads the same.
public struct PlatformLaunch<Plan: ServicePlan>: ServiceLaunch {
    public static var service: ColonyService { Plan.service }
    public var configuration: ServiceConfiguration
    public var settings: Plan.Settings

    public static func load(environment: EnvironmentReader) throws(ConfigurationError) -> Self {
        let environment = Plan.prepare(environment)
        var configuration = try ServiceConfiguration.load(service: Plan.service, app: Plan.app, environment: environment)
        let settings = try Plan.settings(environment, &configuration)
        return Self(configuration: configuration, settings: settings)
    }

    public func definition() throws -> ServiceDefinition {
        try Plan.definition(settings)
    }
}

extension ServiceConfiguration {
    /// Files arrive as request bodies on upload routes: those routes (and only those) read up to `bytes`.
    public mutating func allowUploads(upTo bytes: Int) {
        maxUploadBytes = max(maxBodyBytes, bytes)
    }
}

// Apps and services as command-line values, for every Colony command line.
extension App: ExpressibleByArgument {}
extension ColonyService: ExpressibleByArgument {}
extension UUID: @retroactive ExpressibleByArgument {
    public init?(argument: String) {
        self.init(uuidString: argument)
    }
}

/// An error that ends a command with a status of its own (auth's import: 65, bad data).
public protocol CommandFailure: Error, CustomStringConvertible {
    var exitStatus: Int32 { get }
}

/// The command line of every service executable: `--help`, a usage error exits 2 (as the
/// executables always did, not ArgumentParser's 64), a configuration error 78 with the variable
/// named, a `CommandFailure` its own status, anything else 1.
public enum ServiceCommandLine {
    public static let usageStatus: Int32 = 2
    public static let configurationStatus: Int32 = 78

    public static func main<Command: ParsableCommand>(_ command: Command.Type, arguments: [String]? = nil) async -> Never {
        EventLoopSizing.fitToAllowedCPUs()
        let name = Command.configuration.commandName ?? "colony"
        var parsed: any ParsableCommand
        do {
            parsed = try Command.parseAsRoot(arguments)
        } catch {
            parserFailure(Command.self, error)
        }
        do {
            if var asynchronous = parsed as? any AsyncParsableCommand {
                try await asynchronous.run()
            } else {
                try parsed.run()
            }
            exit(0)
        } catch let error as ConfigurationError {
            fail(name, "\(error)", status: configurationStatus)
        } catch let error as any CommandFailure {
            fail(name, error.description, status: error.exitStatus)
        } catch let error as ExitCode {
            exit(error.rawValue)
        } catch {
            // ArgumentParser's own (`--help` is a command whose run throws) go the parser's way.
            if Command.exitCode(for: error) == .success || error is ValidationError || "\(type(of: error))" == "CommandError" {
                parserFailure(Command.self, error)
            }
            fail(name, "\(error)", status: 1)
        }
    }

    /// `--help` prints and exits 0 as ArgumentParser does; anything else is a usage error.
    static func parserFailure<Command: ParsableCommand>(_ command: Command.Type, _ error: any Error) -> Never {
        if Command.exitCode(for: error) == .success { Command.exit(withError: error) }
        FileHandle.standardError.write(Data((Command.fullMessage(for: error) + "\n").utf8))
        exit(usageStatus)
    }

    static func fail(_ name: String, _ message: String, status: Int32) -> Never {
        FileHandle.standardError.write(Data("\(name): \(message)\n".utf8))
        exit(status)
    }
}

/// The command line of a service that only serves: `colony-<service>` (with `--help`).
public struct ServeCommand<Launch: ServiceLaunch>: AsyncParsableCommand {
    public static var configuration: CommandConfiguration {
        CommandConfiguration(
            commandName: "colony-\(Launch.service.rawValue)",
            abstract: "Run the \(Launch.service.rawValue) service.",
            discussion: "Settings come from the environment; `colony-admin config check --service \(Launch.service.rawValue)` lists and checks them."
        )
    }

    /// `serve` may be named, as with colony-auth and colony-notifications (one way to start any of them).
    @Argument(help: ArgumentHelp("serve (the default, the only command)", valueName: "command"))
    var command: String?

    public init() {}

    public func validate() throws {
        if let command, command != "serve" { throw ValidationError("unknown command \(command); colony-\(Launch.service.rawValue) only serves") }
    }

    public func run() async throws {
        try await Launch.serve()
    }
}
