import ColonyModels
import ColonyPlatform
import ColonyStorage

/// What colony-nearby reads at start (`colony-admin config check` loads the same): the platform's
/// settings for socialspot's tokens, then its own and its storage. Profile photos arrive as request bodies:
/// their routes (and only those) read up to the settings' upload limit.
public typealias NearbyLaunch = PlatformLaunch<NearbyPlan>

public enum NearbyPlan: ServicePlan {
    public static let service = ColonyService.nearby
    public static let app: App? = .socialspot

    public static func settings(_ environment: EnvironmentReader, _ configuration: inout ServiceConfiguration) throws(ConfigurationError) -> WithStorage<NearbySettings> {
        let settings = try NearbySettings.load(environment: environment)
        return try WithStorage(environment, &configuration, settings: settings, uploads: settings.maxUploadBytes)
    }

    public static func definition(_ loaded: WithStorage<NearbySettings>) -> ServiceDefinition {
        NearbyService.definition(settings: loaded.settings, storage: loaded.storage)
    }
}
