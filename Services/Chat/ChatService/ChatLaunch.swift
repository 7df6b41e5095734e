import ColonyModels
import ColonyPlatform
import ColonyStorage

/// What colony-chat reads at start (`colony-admin config check` loads the same).
public struct ChatLaunch: ServiceLaunch {
    public static let service = ColonyService.chat
    public var configuration: ServiceConfiguration
    public var settings: ChatSettings
    public var storage: Storage

    public static func load(environment: EnvironmentReader) throws(ConfigurationError) -> ChatLaunch {
        let settings = try ChatSettings.load(environment: environment)
        var configuration = try ServiceConfiguration.load(service: service, app: .unify, environment: environment)
        // Voice messages and pictures arrive as request bodies: their routes (and only those) read up to this much.
        configuration.maxUploadBytes = max(configuration.maxBodyBytes, settings.maxUploadBytes)
        return ChatLaunch(configuration: configuration, settings: settings, storage: try Storage.load(environment: environment))
    }

    public func definition() -> ServiceDefinition {
        ChatService.definition(settings: settings, storage: storage)
    }
}
