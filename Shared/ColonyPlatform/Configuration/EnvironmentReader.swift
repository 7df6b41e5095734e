import Configuration
import Foundation
import Synchronization

/// A missing or malformed setting, named so an operator can fix it at once.
public struct ConfigurationError: Error, CustomStringConvertible, Equatable {
    public var variable: String
    public var problem: String

    public init(variable: String, problem: String) {
        self.variable = variable
        self.problem = problem
    }

    public var description: String { "configuration error: \(variable) \(problem)" }
}

/// Typed, checked reads of Colony's settings, the one way every service and command reads them.
/// The values come from a swift-configuration `ConfigReader` over three providers, the first
/// answer winning (`SettingsSources`): the environment, secret files (`<NAME>_FILE`), and the JSON
/// settings file `COLONY_CONFIG_FILE` names. A setting's key is its variable's name in all three.
/// What each setting means is in `SettingsCatalog` (docs/configuration.md is made from it).
public struct EnvironmentReader: Sendable {
    /// The environment as given (the settings file and secret files are read from what it names).
    public let values: [String: String]
    /// What a read of an unset variable gets before the caller's own default: a service's
    /// defaults for platform settings (auth's JWKS URL is its own, its body limit larger).
    let fallbacks: [String: String]
    /// Set by `colony-admin config check`: every read is noted there, and problems are noted
    /// instead of thrown, so that one run names them all.
    public let record: EnvironmentRecord?
    let sources: SettingsSources

    public init(_ values: [String: String] = ProcessInfo.processInfo.environment) {
        self.init(values, fallbacks: [:], record: nil)
    }

    /// A reader that notes every variable read (and every problem) in `record` and goes on past
    /// problems with the default or a stand-in value: for checking, never for running.
    public init(_ values: [String: String], recordingInto record: EnvironmentRecord) {
        self.init(values, fallbacks: [:], record: record)
    }

    init(_ values: [String: String], fallbacks: [String: String], record: EnvironmentRecord?, sources: SettingsSources? = nil) {
        self.values = values
        self.fallbacks = fallbacks
        self.record = record
        self.sources = sources ?? SettingsSources(environment: values)
    }

    /// This reader with `value` standing in for `name` when no source sets it.
    public func withDefault(_ value: String, for name: String) -> EnvironmentReader {
        EnvironmentReader(values, fallbacks: fallbacks.merging([name: value]) { $1 }, record: record, sources: sources)
    }

    /// Throws the first problem met while opening the sources (a settings file that cannot be
    /// read or parsed, a secret file that cannot be read); a check notes them all. Every launch
    /// calls it first, so such a problem stops the service at start with the variable named.
    public func checkSources() throws(ConfigurationError) {
        for error in sources.problems { try problem(error) }
    }

    /// Whether `name` has a value, without noting a read (for choosing a default).
    public func isSet(_ name: String) -> Bool {
        sources.value(name, secret: false) != nil
    }

    public func string(_ name: String) throws(ConfigurationError) -> String {
        guard let value = read(name, default: nil) else {
            try problem(ConfigurationError(variable: name, problem: "is required but not set"))
            return ""
        }
        return value
    }

    public func string(_ name: String, default defaultValue: String) -> String {
        read(name, default: defaultValue) ?? defaultValue
    }

    public func optionalString(_ name: String) -> String? {
        read(name, default: nil)
    }

    public func int(_ name: String, default defaultValue: Int, range: ClosedRange<Int> = Int.min...Int.max) throws(ConfigurationError) -> Int {
        if range != Int.min...Int.max { noteAllowed(name, "\(range.lowerBound)–\(range.upperBound)") }
        guard let text = read(name, default: String(defaultValue)) else { return defaultValue }
        guard let value = Int(text) else {
            try problem(ConfigurationError(variable: name, problem: "must be an integer, got \"\(text)\""))
            return defaultValue
        }
        guard range.contains(value) else {
            try problem(ConfigurationError(variable: name, problem: "must be between \(range.lowerBound) and \(range.upperBound), got \(value)"))
            return defaultValue
        }
        return value
    }

    public func url(_ name: String) throws(ConfigurationError) -> URL? {
        noteAllowed(name, "an http(s) URL")
        guard let text = read(name, default: nil) else { return nil }
        guard let url = URL(string: text), let scheme = url.scheme, ["http", "https"].contains(scheme), url.host != nil else {
            try problem(ConfigurationError(variable: name, problem: "must be an http(s) URL, got \"\(text)\""))
            return nil
        }
        return url
    }

    public func enumeration<Value: RawRepresentable>(_ name: String, default defaultValue: Value) throws(ConfigurationError) -> Value where Value.RawValue == String {
        guard let text = read(name, default: defaultValue.rawValue) else { return defaultValue }
        guard let value = Value(rawValue: text) else {
            try problem(ConfigurationError(variable: name, problem: "has unknown value \"\(text)\""))
            return defaultValue
        }
        return value
    }

    /// The same, with the allowed values noted for the reference.
    public func enumeration<Value: RawRepresentable & CaseIterable>(_ name: String, default defaultValue: Value) throws(ConfigurationError) -> Value where Value.RawValue == String {
        noteAllowed(name, Value.allCases.map(\.rawValue).joined(separator: ", "))
        guard let text = read(name, default: defaultValue.rawValue) else { return defaultValue }
        guard let value = Value(rawValue: text) else {
            try problem(ConfigurationError(variable: name, problem: "has unknown value \"\(text)\""))
            return defaultValue
        }
        return value
    }

    /// Throws `error`; while recording (a check), notes it instead and lets the caller go on with
    /// a stand-in value, so that the next problem is found too.
    public func problem(_ error: ConfigurationError) throws(ConfigurationError) {
        guard let record else { throw error }
        record.note(error)
    }

    /// Notes what `name` takes (a range, the values allowed), for the reference.
    public func noteAllowed(_ name: String, _ allowed: String) {
        record?.noteAllowed(name, allowed)
    }

    /// Marks `name` as a secret in the record (its value is never shown).
    func noteSecret(_ name: String) {
        record?.markSecret(name)
    }

    /// Reads a secret (redacted wherever swift-configuration shows values).
    func secretValue(_ name: String) -> String? {
        noteSecret(name)
        return read(name, default: nil, secret: true)
    }

    /// The setting's value (or the service's fallback for it), noting the read and the default
    /// the caller uses when neither is there.
    private func read(_ name: String, default defaultValue: String?, secret: Bool = false) -> String? {
        let value = sources.value(name, secret: secret)
        let fallback = value == nil ? fallbacks[name] : nil
        record?.noteRead(name, value: value, defaultValue: fallback ?? defaultValue)
        return value ?? fallback
    }
}

/// The variables one service's configuration read, and every problem found in them
/// (`colony-admin config check`).
public final class EnvironmentRecord: Sendable {
    public struct Read: Sendable, Equatable {
        public var name: String
        /// As set in the environment; nil when unset.
        public var value: String?
        /// What the service uses when it is unset (nil: nothing, the setting is off or required).
        public var defaultValue: String?
        /// Read as a secret (`EnvironmentReader.secret`) or named like one: never shown.
        public var isSecret: Bool
        /// What it takes, when the read says (a range, the values allowed).
        public var allowed: String? = nil
    }

    private struct State {
        var reads: [Read] = []
        var problems: [ConfigurationError] = []
        /// Allowed values noted before the read itself.
        var pendingAllowed: [String: String] = [:]
    }
    private let state = Mutex(State())

    public init() {}

    /// Every variable read, in the order the service first read it.
    public var reads: [Read] { state.withLock { $0.reads } }
    /// Every problem, the first per variable.
    public var problems: [ConfigurationError] { state.withLock { $0.problems } }

    func noteRead(_ name: String, value: String?, defaultValue: String?) {
        state.withLock { state in
            if let index = state.reads.firstIndex(where: { $0.name == name }) {
                if state.reads[index].defaultValue == nil { state.reads[index].defaultValue = defaultValue }
                return
            }
            state.reads.append(Read(name: name, value: value, defaultValue: defaultValue, isSecret: Self.looksSecret(name), allowed: state.pendingAllowed[name]))
        }
    }

    func noteAllowed(_ name: String, _ allowed: String) {
        state.withLock { state in
            for index in state.reads.indices where state.reads[index].name == name && state.reads[index].allowed == nil { state.reads[index].allowed = allowed }
            if !state.reads.contains(where: { $0.name == name }) { state.pendingAllowed[name] = allowed }
        }
    }

    func markSecret(_ name: String) {
        state.withLock { state in
            for index in state.reads.indices where state.reads[index].name == name { state.reads[index].isSecret = true }
        }
    }

    /// Notes a problem unless its variable already has one (a stand-in value can cause a second).
    public func note(_ error: ConfigurationError) {
        state.withLock { state in
            guard !state.problems.contains(where: { $0.variable == error.variable }) else { return }
            state.problems.append(error)
        }
    }

    /// Names that hold secrets whichever way they are read: passwords, keys, tokens, peppers.
    /// A `_FILE` variable names where a secret is (a path, shown), as a `_DIR` one names a folder.
    public static func looksSecret(_ name: String) -> Bool {
        guard !name.hasSuffix("_FILE"), !name.hasSuffix("_DIR"), !name.hasSuffix("_KEY_ID") else { return false }
        return ["PASSWORD", "SECRET", "TOKEN", "PEPPER", "PRIVATE_KEY", "SIGNING_KEY", "API_KEY", "INTERNAL_KEY", "CONSOLE_KEY"].contains { name.contains($0) }
    }
}
