import ColonyModels
import ColonyPlatform
import ColonyStorage

/// What colony-chat reads at start (`colony-admin config check` loads the same): the platform's
/// settings for unify's tokens, then its own and its storage. Voice messages and pictures arrive as
/// request bodies: their routes (and only those) read up to the settings' upload limit.
public typealias ChatLaunch = PlatformLaunch<ChatPlan>

public enum ChatPlan: ServicePlan {
    public static let service = ColonyService.chat
    public static let app: App? = .unify

    public static func settings(_ environment: EnvironmentReader, _ configuration: inout ServiceConfiguration) throws(ConfigurationError) -> WithStorage<ChatSettings> {
        let settings = try ChatSettings.load(environment: environment)
        return try WithStorage(environment, &configuration, settings: settings, uploads: settings.maxUploadBytes)
    }

    public static func definition(_ loaded: WithStorage<ChatSettings>) -> ServiceDefinition {
        ChatService.definition(settings: loaded.settings, storage: loaded.storage)
    }
}
