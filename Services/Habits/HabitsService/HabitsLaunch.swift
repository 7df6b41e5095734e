import ColonyModels
import ColonyPlatform

/// What colony-habits reads at start (`colony-admin config check` loads the same): the platform's
/// settings for habithive's tokens, then its own.
public typealias HabitsLaunch = PlatformLaunch<HabitsPlan>

public enum HabitsPlan: ServicePlan {
    public static let service = ColonyService.habits
    public static let app: App? = .habithive

    public static func settings(_ environment: EnvironmentReader, _ configuration: inout ServiceConfiguration) throws(ConfigurationError) -> HabitsSettings {
        try HabitsSettings.load(environment: environment)
    }

    public static func definition(_ settings: HabitsSettings) -> ServiceDefinition {
        HabitsService.definition(settings: settings)
    }
}
