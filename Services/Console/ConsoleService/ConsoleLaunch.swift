import ColonyModels
import ColonyPlatform

/// What colony-console reads at start (`colony-admin config check` loads the same): the
/// platform's settings, then the console's own (`ConsoleSettings`).
public typealias ConsoleLaunch = PlatformLaunch<ConsolePlan>

public enum ConsolePlan: ServicePlan {
    public static let service = ColonyService.console
    public static let app: App? = nil

    public static func settings(_ environment: EnvironmentReader, _ configuration: inout ServiceConfiguration) throws(ConfigurationError) -> ConsoleSettings {
        try ConsoleSettings.load(environment: environment)
    }

    public static func definition(_ settings: ConsoleSettings) -> ServiceDefinition {
        ConsoleService.definition(settings: settings)
    }
}
