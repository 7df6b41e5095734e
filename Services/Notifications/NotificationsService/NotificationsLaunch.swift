import ColonyModels
import ColonyPlatform
import ColonyStorage

/// What colony-notifications reads at start (`colony-admin config check` loads the same): the platform's
/// settings for every app's tokens, then its own and its storage (where its part of a user's data
/// export goes; it takes no uploads and serves no bucket).
public typealias NotificationsLaunch = PlatformLaunch<NotificationsPlan>

public enum NotificationsPlan: ServicePlan {
    public static let service = ColonyService.notifications
    public static let app: App? = nil

    public static func settings(_ environment: EnvironmentReader, _ configuration: inout ServiceConfiguration) throws(ConfigurationError) -> WithStorage<NotificationsSettings> {
        try WithStorage(environment, settings: try NotificationsSettings.load(environment: environment))
    }

    public static func definition(_ loaded: WithStorage<NotificationsSettings>) throws -> ServiceDefinition {
        try NotificationsService.definition(settings: loaded.settings, exports: loaded.storage.backend)
    }
}
