import ColonyModels
import ColonyPlatform
import Foundation
import RealtimeService

// colony-realtime: Supabase-Realtime-compatible WebSocket fan-out (tokens of every app).
do {
    let environment = EnvironmentReader()
    try ColonyObservability.bootstrap(service: "realtime", environment: environment)
    let settings = try RealtimeSettings.load(environment: environment)
    let configuration = try ServiceConfiguration.load(service: .realtime, app: nil, environment: environment)
    try await ServiceHost.run(RealtimeService.definition(settings: settings), configuration: configuration)
} catch let error as ConfigurationError {
    FileHandle.standardError.write(Data("colony-realtime: \(error)\n".utf8))
    exit(78)
}
