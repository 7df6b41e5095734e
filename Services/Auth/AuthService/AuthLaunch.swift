import ColonyModels
import ColonyPlatform

/// What colony-auth reads at start, for serving and for its commands (`colony-admin config
/// check` loads the same).
public struct AuthLaunch: ServiceLaunch {
    public static let service = ColonyService.auth
    public var configuration: ServiceConfiguration
    public var settings: AuthSettings

    public static func load(environment: EnvironmentReader) throws(ConfigurationError) -> AuthLaunch {
        var environment = environment
        // Auth verifies its own tokens with its own keys: the JWKS setting other services need
        // defaults to its own endpoint here.
        if !environment.isSet("COLONY_JWKS_URL") && !environment.isSet("COLONY_JWT_PUBLIC_KEY") {
            let port = environment.string("COLONY_HTTP_PORT", default: "8080")
            environment = environment.withDefault("http://127.0.0.1:\(port)/auth/v1/.well-known/jwks.json", for: "COLONY_JWKS_URL")
        }
        // Above the platform's limit, so oversized metadata gets its own 422 rather than a bare 413.
        environment = environment.withDefault(String(AuthSettings.defaultMaxBodyBytes), for: "COLONY_MAX_BODY_BYTES")
        let configuration = try ServiceConfiguration.load(service: service, app: nil, environment: environment)
        let settings = try AuthSettings.load(environment: environment, port: configuration.httpPort, issuer: configuration.tokens.issuer)
        return AuthLaunch(configuration: configuration, settings: settings)
    }

    public func definition() -> ServiceDefinition {
        AuthService.definition(settings: settings)
    }
}
