import ColonyModels
import ColonyPlatform
import ColonyStorage

/// What colony-habits reads at start (`colony-admin config check` loads the same): the platform's
/// settings for habithive's tokens, then its own and its storage (where its part of a user's data
/// export goes; it serves no bucket).
public typealias HabitsLaunch = PlatformLaunch<HabitsPlan>

public enum HabitsPlan: ServicePlan {
    public static let service = ColonyService.habits
    public static let app: App? = .habithive

    public static func settings(_ environment: EnvironmentReader, _ configuration: inout ServiceConfiguration) throws(ConfigurationError) -> WithStorage<HabitsSettings> {
        let settings = try HabitsSettings.load(environment: environment)
        // A full contacts upload is larger than other bodies: its route reads up to its own limit.
        return try WithStorage(environment, &configuration, settings: settings, uploads: settings.contactsBodyLimit)
    }

    public static func definition(_ loaded: WithStorage<HabitsSettings>) -> ServiceDefinition {
        HabitsService.definition(settings: loaded.settings, exports: loaded.storage.backend)
    }
}
