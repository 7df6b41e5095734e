import ColonyModels
import ColonyPlatform
import ColonyStorage

/// What colony-auth reads at start, for serving and for its commands (`colony-admin config
/// check` loads the same): the platform's settings, with auth's own defaults for two of them,
/// then its own (which take its port and issuer).
public typealias AuthLaunch = PlatformLaunch<AuthPlan>

public enum AuthPlan: ServicePlan {
    public static let service = ColonyService.auth
    public static let app: App? = nil

    public static func prepare(_ environment: EnvironmentReader) -> EnvironmentReader {
        var environment = environment
        // Auth verifies its own tokens with its own keys: the JWKS setting other services need
        // defaults to its own endpoint here.
        if !environment.isSet("COLONY_JWKS_URL") && !environment.isSet("COLONY_JWT_PUBLIC_KEY") {
            let port = environment.string("COLONY_HTTP_PORT", default: "8080")
            environment = environment.withDefault("http://127.0.0.1:\(port)/auth/v1/.well-known/jwks.json", for: "COLONY_JWKS_URL")
        }
        // Above the platform's limit, so oversized metadata gets its own 422 rather than a bare 413.
        return environment.withDefault(String(AuthSettings.defaultMaxBodyBytes), for: "COLONY_MAX_BODY_BYTES")
    }

    /// Auth's settings, and the storage its data-export archives go to.
    public static func settings(_ environment: EnvironmentReader, _ configuration: inout ServiceConfiguration) throws(ConfigurationError) -> WithStorage<AuthSettings> {
        try WithStorage(environment, settings: AuthSettings.load(environment: environment, port: configuration.httpPort, issuer: configuration.tokens.issuer))
    }

    public static func definition(_ settings: WithStorage<AuthSettings>) -> ServiceDefinition {
        AuthService.definition(settings: settings.settings, exports: settings.storage)
    }
}
