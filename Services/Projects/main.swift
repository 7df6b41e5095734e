import ColonyModels
import ColonyPlatform
import ColonyStorage
import Foundation
import ProjectsService

// colony-projects: I Believe In You's builders, projects, posts, support and karma (ibelieveinyou tokens only).
do {
    let environment = EnvironmentReader()
    try ColonyObservability.bootstrap(service: "projects", environment: environment)
    let settings = try ProjectsSettings.load(environment: environment)
    var configuration = try ServiceConfiguration.load(service: .projects, app: .ibelieveinyou, environment: environment)
    // Avatars, covers and post pictures arrive as request bodies: their routes (and only those) read up to this much.
    configuration.maxUploadBytes = max(configuration.maxBodyBytes, settings.maxUploadBytes)
    let storage = try Storage.load(environment: environment)
    try await ServiceHost.run(ProjectsService.definition(settings: settings, storage: storage), configuration: configuration)
} catch let error as ConfigurationError {
    FileHandle.standardError.write(Data("colony-projects: \(error)\n".utf8))
    exit(78)
}
