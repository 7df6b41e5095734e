import ColonyModels
import ColonyPlatform
import ColonyStorage
import Foundation
import NearbyService

// colony-nearby: SocialSpot's profiles, location sharing and people nearby (socialspot tokens only).
do {
    let environment = EnvironmentReader()
    try ColonyObservability.bootstrap(service: "nearby", environment: environment)
    let settings = try NearbySettings.load(environment: environment)
    var configuration = try ServiceConfiguration.load(service: .nearby, app: .socialspot, environment: environment)
    // Profile photos arrive as request bodies: their routes (and only those) read up to this much.
    configuration.maxUploadBytes = max(configuration.maxBodyBytes, settings.maxUploadBytes)
    let storage = try Storage.load(environment: environment)
    try await ServiceHost.run(NearbyService.definition(settings: settings, storage: storage), configuration: configuration)
} catch let error as ConfigurationError {
    FileHandle.standardError.write(Data("colony-nearby: \(error)\n".utf8))
    exit(78)
}
