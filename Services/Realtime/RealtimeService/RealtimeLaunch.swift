import ColonyModels
import ColonyPlatform

/// What colony-realtime reads at start (`colony-admin config check` loads the same).
public struct RealtimeLaunch: ServiceLaunch {
    public static let service = ColonyService.realtime
    public var configuration: ServiceConfiguration
    public var settings: RealtimeSettings

    public static func load(environment: EnvironmentReader) throws(ConfigurationError) -> RealtimeLaunch {
        RealtimeLaunch(
            configuration: try ServiceConfiguration.load(service: service, app: nil, environment: environment),
            settings: try RealtimeSettings.load(environment: environment)
        )
    }

    public func definition() -> ServiceDefinition {
        RealtimeService.definition(settings: settings)
    }
}
