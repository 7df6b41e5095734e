import ColonyModels
import ColonyPlatform
import ColonyStorage

/// What colony-nearby reads at start (`colony-admin config check` loads the same).
public struct NearbyLaunch: ServiceLaunch {
    public static let service = ColonyService.nearby
    public var configuration: ServiceConfiguration
    public var settings: NearbySettings
    public var storage: Storage

    public static func load(environment: EnvironmentReader) throws(ConfigurationError) -> NearbyLaunch {
        let settings = try NearbySettings.load(environment: environment)
        var configuration = try ServiceConfiguration.load(service: service, app: .socialspot, environment: environment)
        // Profile photos arrive as request bodies: their routes (and only those) read up to this much.
        configuration.maxUploadBytes = max(configuration.maxBodyBytes, settings.maxUploadBytes)
        return NearbyLaunch(configuration: configuration, settings: settings, storage: try Storage.load(environment: environment))
    }

    public func definition() -> ServiceDefinition {
        NearbyService.definition(settings: settings, storage: storage)
    }
}
