import ColonyModels
import ColonyPlatform
import Foundation
import NotificationsService

// colony-notifications [serve]                               run the service (every app's tokens)
// colony-notifications deliveries USER_ID [--app APP] [--limit N]
//                                                            print a user's delivery log (JSON), for support

let arguments = Array(CommandLine.arguments.dropFirst())
func fail(_ message: String, status: Int32) -> Never {
    FileHandle.standardError.write(Data("colony-notifications: \(message)\n".utf8))
    exit(status)
}
func option(_ name: String) -> String? {
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
    return arguments[index + 1]
}

do {
    let environment = EnvironmentReader()
    let configuration = try ServiceConfiguration.load(service: .notifications, app: nil, environment: environment)
    switch arguments.first {
    case nil, "serve":
        try ColonyObservability.bootstrap(service: "notifications", environment: environment)
        let settings = try NotificationsSettings.load(environment: environment)
        try await ServiceHost.run(try NotificationsService.definition(settings: settings), configuration: configuration)
    case "deliveries":
        guard arguments.count > 1, let user = UUID(uuidString: arguments[1]) else { fail("deliveries needs a user id", status: 2) }
        let app = try option("--app").map { name throws(ConfigurationError) -> App in
            guard let app = App(rawValue: name) else { throw ConfigurationError(variable: "--app", problem: "must be one of \(App.allCases.map(\.rawValue).joined(separator: ", "))") }
            return app
        }
        let limit = Int(option("--limit") ?? "100") ?? 100
        let database = Database(configuration: configuration.database, logger: .init(label: "colony.notifications"))
        let entries = try await withThrowingTaskGroup(of: [DeliveryLogEntry]?.self) { group in
            group.addTask { try await database.run(); return nil }
            defer { group.cancelAll() }
            return try await NotificationsService.deliveryLog(user: user, app: app, limit: limit, database: database)
        }
        let encoder = ColonyJSON.encoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        print(String(decoding: try encoder.encode(entries), as: UTF8.self))
    default:
        fail("unknown command \(arguments[0]); use serve or deliveries USER_ID [--app APP] [--limit N]", status: 2)
    }
} catch let error as ConfigurationError {
    fail("configuration error: \(error)", status: 78)
}
