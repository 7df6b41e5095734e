import ColonyModels
import ColonyPlatform
import ColonyStorage

/// What colony-circles reads at start (`colony-admin config check` loads the same).
public struct CirclesLaunch: ServiceLaunch {
    public static let service = ColonyService.circles
    public var configuration: ServiceConfiguration
    public var settings: CirclesSettings
    public var storage: Storage

    public static func load(environment: EnvironmentReader) throws(ConfigurationError) -> CirclesLaunch {
        let settings = try CirclesSettings.load(environment: environment)
        var configuration = try ServiceConfiguration.load(service: service, app: .mycirclee, environment: environment)
        // Post photos arrive as request bodies: their routes (and only those) read up to this much.
        configuration.maxUploadBytes = max(configuration.maxBodyBytes, settings.maxUploadBytes)
        return CirclesLaunch(configuration: configuration, settings: settings, storage: try Storage.load(environment: environment))
    }

    public func definition() -> ServiceDefinition {
        CirclesService.definition(settings: settings, storage: storage)
    }
}
