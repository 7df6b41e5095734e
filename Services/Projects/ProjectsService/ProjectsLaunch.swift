import ColonyModels
import ColonyPlatform
import ColonyStorage

/// What colony-projects reads at start (`colony-admin config check` loads the same): the platform's
/// settings for ibelieveinyou's tokens, then its own and its storage. Avatars, covers and post pictures
/// arrive as request bodies: their routes (and only those) read up to the settings' upload limit.
public typealias ProjectsLaunch = PlatformLaunch<ProjectsPlan>

public enum ProjectsPlan: ServicePlan {
    public static let service = ColonyService.projects
    public static let app: App? = .ibelieveinyou

    public static func settings(_ environment: EnvironmentReader, _ configuration: inout ServiceConfiguration) throws(ConfigurationError) -> WithStorage<ProjectsSettings> {
        let settings = try ProjectsSettings.load(environment: environment)
        return try WithStorage(environment, &configuration, settings: settings, uploads: settings.maxUploadBytes)
    }

    public static func definition(_ loaded: WithStorage<ProjectsSettings>) -> ServiceDefinition {
        ProjectsService.definition(settings: loaded.settings, storage: loaded.storage)
    }
}
