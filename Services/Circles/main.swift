import CirclesService
import ColonyModels
import ColonyPlatform
import ColonyStorage
import Foundation

// colony-circles: MyCirclee's circles, ephemeral posts, DMs and presence (mycirclee tokens only).
do {
    let environment = EnvironmentReader()
    try ColonyObservability.bootstrap(service: "circles", environment: environment)
    let settings = try CirclesSettings.load(environment: environment)
    var configuration = try ServiceConfiguration.load(service: .circles, app: .mycirclee, environment: environment)
    // Post photos arrive as request bodies: their routes (and only those) read up to this much.
    configuration.maxUploadBytes = max(configuration.maxBodyBytes, settings.maxUploadBytes)
    let storage = try Storage.load(environment: environment)
    try await ServiceHost.run(CirclesService.definition(settings: settings, storage: storage), configuration: configuration)
} catch let error as ConfigurationError {
    FileHandle.standardError.write(Data("colony-circles: \(error)\n".utf8))
    exit(78)
}
