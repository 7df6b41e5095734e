import ColonyModels
import ColonyPlatform

/// What colony-notifications reads at start (`colony-admin config check` loads the same).
public struct NotificationsLaunch: ServiceLaunch {
    public static let service = ColonyService.notifications
    public var configuration: ServiceConfiguration
    public var settings: NotificationsSettings

    public static func load(environment: EnvironmentReader) throws(ConfigurationError) -> NotificationsLaunch {
        NotificationsLaunch(
            configuration: try ServiceConfiguration.load(service: service, app: nil, environment: environment),
            settings: try NotificationsSettings.load(environment: environment)
        )
    }

    public func definition() throws -> ServiceDefinition {
        try NotificationsService.definition(settings: settings)
    }
}
