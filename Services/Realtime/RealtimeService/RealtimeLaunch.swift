import ColonyModels
import ColonyPlatform

/// What colony-realtime reads at start (`colony-admin config check` loads the same): the platform's
/// settings for every app's tokens, then its own.
public typealias RealtimeLaunch = PlatformLaunch<RealtimePlan>

public enum RealtimePlan: ServicePlan {
    public static let service = ColonyService.realtime
    public static let app: App? = nil

    public static func settings(_ environment: EnvironmentReader, _ configuration: inout ServiceConfiguration) throws(ConfigurationError) -> RealtimeSettings {
        try RealtimeSettings.load(environment: environment)
    }

    public static func definition(_ settings: RealtimeSettings) -> ServiceDefinition {
        RealtimeService.definition(settings: settings)
    }
}
