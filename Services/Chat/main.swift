import ChatService
import ColonyModels
import ColonyPlatform
import ColonyStorage
import Foundation

// colony-chat: Unify's groups, messages, unread counts and calendar events (unify tokens only).
do {
    let environment = EnvironmentReader()
    try ColonyObservability.bootstrap(service: "chat", environment: environment)
    let settings = try ChatSettings.load(environment: environment)
    var configuration = try ServiceConfiguration.load(service: .chat, app: .unify, environment: environment)
    // Voice messages and pictures arrive as request bodies: their routes (and only those) read up to this much.
    configuration.maxUploadBytes = max(configuration.maxBodyBytes, settings.maxUploadBytes)
    let storage = try Storage.load(environment: environment)
    try await ServiceHost.run(ChatService.definition(settings: settings, storage: storage), configuration: configuration)
} catch let error as ConfigurationError {
    FileHandle.standardError.write(Data("colony-chat: \(error)\n".utf8))
    exit(78)
}
