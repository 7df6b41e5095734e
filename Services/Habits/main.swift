import ColonyModels
import ColonyPlatform
import Foundation
import HabitsService

// colony-habits: HabitHive's habits, hives and shared streaks (habithive tokens only).
do {
    let environment = EnvironmentReader()
    try ColonyObservability.bootstrap(service: "habits", environment: environment)
    let configuration = try ServiceConfiguration.load(service: .habits, app: .habithive, environment: environment)
    let settings = try HabitsSettings.load(environment: environment)
    try await ServiceHost.run(HabitsService.definition(settings: settings), configuration: configuration)
} catch let error as ConfigurationError {
    FileHandle.standardError.write(Data("colony-habits: \(error)\n".utf8))
    exit(78)
}
