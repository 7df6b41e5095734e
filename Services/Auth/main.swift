import AuthService
import ColonyModels
import ColonyPlatform
import Foundation

// colony-auth [serve]                     run the service
// colony-auth keys [--rotate]             create (or rotate) keys; print each app's API keys
// colony-auth import --app APP --file F   import a Supabase auth.users export (JSON or CSV)

let arguments = Array(CommandLine.arguments.dropFirst())
func fail(_ message: String, status: Int32) -> Never {
    FileHandle.standardError.write(Data("colony-auth: \(message)\n".utf8))
    exit(status)
}
func option(_ name: String) -> String? {
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
    return arguments[index + 1]
}

do {
    // Auth verifies its own tokens with its own keys; other services' JWKS setting has a default here.
    var values = ProcessInfo.processInfo.environment
    if values["COLONY_JWKS_URL"] == nil && values["COLONY_JWT_PUBLIC_KEY"] == nil {
        values["COLONY_JWKS_URL"] = "http://127.0.0.1:\(values["COLONY_HTTP_PORT"] ?? "8080")/auth/v1/.well-known/jwks.json"
    }
    let environment = EnvironmentReader(values)
    var configuration = try ServiceConfiguration.load(service: .auth, app: nil, environment: environment)
    if environment.values["COLONY_MAX_BODY_BYTES"] == nil { configuration.maxBodyBytes = AuthSettings.defaultMaxBodyBytes }
    let settings = try AuthSettings.load(environment: environment, port: configuration.httpPort, issuer: configuration.tokens.issuer)
    switch arguments.first {
    case nil, "serve":
        try ColonyObservability.bootstrap(service: "auth", environment: environment)
        try await ServiceHost.run(AuthService.definition(settings: settings), configuration: configuration)
    case "keys":
        try await AuthCommands.keys(configuration: configuration, settings: settings, rotate: arguments.contains("--rotate"))
    case "import":
        guard let appName = option("--app"), let app = App(rawValue: appName) else {
            fail("import needs --app (one of \(App.allCases.map(\.rawValue).joined(separator: ", ")))", status: 2)
        }
        guard let file = option("--file") else { fail("import needs --file", status: 2) }
        try await AuthCommands.importUsers(configuration: configuration, settings: settings, app: app, file: file)
    default:
        fail("unknown command \(arguments[0]); use serve, keys [--rotate] or import --app APP --file FILE", status: 2)
    }
} catch let error as ConfigurationError {
    fail("configuration error: \(error)", status: 78)
} catch let error as UserImportParser.Failure {
    fail("import failed: \(error)", status: 65)
}
