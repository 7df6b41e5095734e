import ColonyModels
import ColonyPlatform
import ColonyStorage

/// What colony-projects reads at start (`colony-admin config check` loads the same).
public struct ProjectsLaunch: ServiceLaunch {
    public static let service = ColonyService.projects
    public var configuration: ServiceConfiguration
    public var settings: ProjectsSettings
    public var storage: Storage

    public static func load(environment: EnvironmentReader) throws(ConfigurationError) -> ProjectsLaunch {
        let settings = try ProjectsSettings.load(environment: environment)
        var configuration = try ServiceConfiguration.load(service: service, app: .ibelieveinyou, environment: environment)
        // Avatars, covers and post pictures arrive as request bodies: their routes (and only those) read up to this much.
        configuration.maxUploadBytes = max(configuration.maxBodyBytes, settings.maxUploadBytes)
        return ProjectsLaunch(configuration: configuration, settings: settings, storage: try Storage.load(environment: environment))
    }

    public func definition() -> ServiceDefinition {
        ProjectsService.definition(settings: settings, storage: storage)
    }
}
