import ColonyModels
import ColonyPlatform

/// What colony-habits reads at start (`colony-admin config check` loads the same): the platform's
/// settings for habithive's tokens, then its own.
public typealias HabitsLaunch = PlatformLaunch<HabitsPlan>

public enum HabitsPlan: ServicePlan {
    public static let service = ColonyService.habits
    public static let app: App? = .habithive

    public static func settings(_ environment: EnvironmentReader, _ configuration: inout ServiceConfiguration) throws(ConfigurationError) -> HabitsSettings {
        let settings = try HabitsSettings.load(environment: environment)
        // A full contacts upload is larger than other bodies: its route reads up to its own limit.
        configuration.allowUploads(upTo: settings.contactsBodyLimit)
        return settings
    }

    public static func definition(_ settings: HabitsSettings) -> ServiceDefinition {
        HabitsService.definition(settings: settings)
    }
}
