import ColonyModels
import ColonyPlatform

/// What colony-notifications reads at start (`colony-admin config check` loads the same): the platform's
/// settings for every app's tokens, then its own.
public typealias NotificationsLaunch = PlatformLaunch<NotificationsPlan>

public enum NotificationsPlan: ServicePlan {
    public static let service = ColonyService.notifications
    public static let app: App? = nil

    public static func settings(_ environment: EnvironmentReader, _ configuration: inout ServiceConfiguration) throws(ConfigurationError) -> NotificationsSettings {
        try NotificationsSettings.load(environment: environment)
    }

    public static func definition(_ settings: NotificationsSettings) throws -> ServiceDefinition {
        try NotificationsService.definition(settings: settings)
    }
}
