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
    // Voice messages and pictures arrive as request bodies: the default limit must fit them.
    if environment.values["COLONY_MAX_BODY_BYTES"] == nil { configuration.maxBodyBytes = settings.maxBodyBytes }
    let storage = try Storage.load(environment: environment)
    try await ServiceHost.run(ChatService.definition(settings: settings, storage: storage), configuration: configuration)
} catch let error as ConfigurationError {
    FileHandle.standardError.write(Data("colony-chat: \(error)\n".utf8))
    exit(78)
}
