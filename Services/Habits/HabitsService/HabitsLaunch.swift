import ColonyModels
import ColonyPlatform

/// What colony-habits reads at start (`colony-admin config check` loads the same).
public struct HabitsLaunch: ServiceLaunch {
    public static let service = ColonyService.habits
    public var configuration: ServiceConfiguration
    public var settings: HabitsSettings

    public static func load(environment: EnvironmentReader) throws(ConfigurationError) -> HabitsLaunch {
        HabitsLaunch(
            configuration: try ServiceConfiguration.load(service: service, app: .habithive, environment: environment),
            settings: try HabitsSettings.load(environment: environment)
        )
    }

    public func definition() -> ServiceDefinition {
        HabitsService.definition(settings: settings)
    }
}
