import ColonyModels
import ColonyPlatform
import ColonyStorage

/// What colony-circles reads at start (`colony-admin config check` loads the same): the platform's
/// settings for mycirclee's tokens, then its own and its storage. Post photos arrive as request bodies:
/// their routes (and only those) read up to the settings' upload limit.
public typealias CirclesLaunch = PlatformLaunch<CirclesPlan>

public enum CirclesPlan: ServicePlan {
    public static let service = ColonyService.circles
    public static let app: App? = .mycirclee

    public static func settings(_ environment: EnvironmentReader, _ configuration: inout ServiceConfiguration) throws(ConfigurationError) -> WithStorage<CirclesSettings> {
        let settings = try CirclesSettings.load(environment: environment)
        return try WithStorage(environment, &configuration, settings: settings, uploads: settings.maxUploadBytes)
    }

    public static func definition(_ loaded: WithStorage<CirclesSettings>) -> ServiceDefinition {
        CirclesService.definition(settings: loaded.settings, storage: loaded.storage)
    }
}
