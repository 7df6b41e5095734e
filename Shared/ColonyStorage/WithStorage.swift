import ColonyPlatform

/// A service's own settings with its storage (`Storage.load`), for a service that keeps files:
/// its upload routes may read up to `uploads` bytes (`ServiceConfiguration.allowUploads`).
public struct WithStorage<Settings: Sendable>: Sendable {
    public var settings: Settings
    public var storage: Storage

    public init(_ environment: EnvironmentReader, _ configuration: inout ServiceConfiguration, settings: Settings, uploads: Int) throws(ConfigurationError) {
        configuration.allowUploads(upTo: uploads)
        self.settings = settings
        self.storage = try Storage.load(environment: environment)
    }

    /// For a service that keeps no uploads of its own but writes to storage (its part of a data
    /// export, auth's archives): its routes keep the platform's body limit.
    public init(_ environment: EnvironmentReader, settings: Settings) throws(ConfigurationError) {
        self.settings = settings
        self.storage = try Storage.load(environment: environment)
    }
}
