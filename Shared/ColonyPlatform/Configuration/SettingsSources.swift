import Configuration
import Foundation

/// Where settings come from, as one swift-configuration `ConfigReader` whose providers answer in
/// this order (the first that has a value wins):
/// 1. the environment (an empty variable counts as unset);
/// 2. secret files: a secret `NAME` (a password, key, token or pepper) that the environment leaves
///    unset is read from the file `NAME_FILE` names (Docker and Kubernetes secrets under
///    /run/secrets), trimmed;
/// 3. the settings file `COLONY_CONFIG_FILE` names: one JSON object whose keys are the settings'
///    variable names, e.g. `{"COLONY_HTTP_PORT": 8081, "LOG_LEVEL": "debug"}`; values are strings,
///    numbers or booleans, read as their text.
/// Secrets are marked secret in every provider, so swift-configuration redacts them wherever it
/// shows values. Files are read once, when the reader is made; what cannot be read is a problem
/// `EnvironmentReader.checkSources()` throws.
struct SettingsSources: Sendable {
    static let settingsFileVariable = "COLONY_CONFIG_FILE"

    let reader: ConfigReader
    let problems: [ConfigurationError]

    /// `accessReporter` sees every lookup (values of secrets redacted); swift-configuration also
    /// logs them to the file `CONFIG_ACCESS_LOG_FILE` names, when it is set.
    init(environment values: [String: String], accessReporter: (any AccessReporter)? = nil) {
        var problems: [ConfigurationError] = []
        let environment = values.compactMapValues { value -> String? in
            let trimmed = value.trimmingCharacters(in: .whitespacesAndNewlines)
            return trimmed.isEmpty ? nil : trimmed
        }
        var secretFiles: [AbsoluteConfigKey: ConfigValue] = [:]
        for (variable, path) in environment where variable.hasSuffix("_FILE") {
            let name = String(variable.dropLast("_FILE".count))
            guard EnvironmentRecord.looksSecret(name), environment[name] == nil else { continue }
            switch Self.text(of: path) {
            case .some(let text): secretFiles[AbsoluteConfigKey([name])] = ConfigValue(.string(text), isSecret: true)
            case .none: problems.append(ConfigurationError(variable: variable, problem: "names \(path), which cannot be read"))
            }
        }
        var settingsFile: [AbsoluteConfigKey: ConfigValue] = [:]
        if let path = environment[Self.settingsFileVariable] {
            do throws(ConfigurationError) {
                settingsFile = try Self.settingsFile(at: path)
            } catch {
                problems.append(error)
            }
        }
        let isSecret: @Sendable (String, String) -> Bool = { name, _ in EnvironmentRecord.looksSecret(name) }
        reader = ConfigReader(providers: [
            EnvironmentVariablesProvider(environmentVariables: environment, secretsSpecifier: .dynamic(isSecret)),
            InMemoryProvider(name: "secret files", values: secretFiles),
            InMemoryProvider(name: "settings file", values: settingsFile),
        ], accessReporter: accessReporter)
        self.problems = problems
    }

    /// The setting's value from the first provider that has one; nil when none does.
    func value(_ name: String, secret: Bool) -> String? {
        let value = reader.string(forKey: ConfigKey([name]), isSecret: secret || EnvironmentRecord.looksSecret(name))
        guard let trimmed = value?.trimmingCharacters(in: .whitespacesAndNewlines), !trimmed.isEmpty else { return nil }
        return trimmed
    }

    static func text(of path: String) -> String? {
        guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8) else { return nil }
        return text.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The settings file's values; a file that cannot be read, is not one JSON object of
    /// scalars, or names a setting no Colony program reads is refused (a typo must not pass
    /// silently as a default).
    static func settingsFile(at path: String) throws(ConfigurationError) -> [AbsoluteConfigKey: ConfigValue] {
        let variable = settingsFileVariable
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ConfigurationError(variable: variable, problem: "names \(path), which cannot be read")
        }
        let object: [String: SettingsFileValue]
        do {
            object = try JSONDecoder().decode([String: SettingsFileValue].self, from: data)
        } catch let DecodingError.typeMismatch(_, context) where !context.codingPath.isEmpty {
            throw ConfigurationError(variable: variable, problem: "names \(path), whose \(context.codingPath[0].stringValue) is not a string, number or boolean")
        } catch {
            throw ConfigurationError(variable: variable, problem: "names \(path), which is not a JSON object of settings")
        }
        var values: [AbsoluteConfigKey: ConfigValue] = [:]
        for (name, value) in object {
            guard SettingsCatalog.isKnown(name) else {
                throw ConfigurationError(variable: variable, problem: "names \(path), which sets \(name), a setting Colony does not read (see docs/configuration.md)")
            }
            values[AbsoluteConfigKey([name])] = ConfigValue(.string(value.text), isSecret: EnvironmentRecord.looksSecret(name))
        }
        return values
    }
}

/// One value of the settings file: a string, number or boolean, kept as the text the environment
/// would hold (`8080`, `true`).
struct SettingsFileValue: Decodable {
    var text: String

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let value = try? container.decode(Bool.self) {
            text = value ? "true" : "false"
        } else if let value = try? container.decode(Int.self) {
            text = String(value)
        } else if let value = try? container.decode(Double.self) {
            text = String(value)
        } else {
            text = try container.decode(String.self)
        }
    }
}
