import Foundation

/// A missing or malformed environment variable, named so an operator can fix it at once.
public struct ConfigurationError: Error, CustomStringConvertible, Equatable {
    public var variable: String
    public var problem: String

    public init(variable: String, problem: String) {
        self.variable = variable
        self.problem = problem
    }

    public var description: String { "configuration error: \(variable) \(problem)" }
}

/// Typed reads of environment variables with clear errors.
public struct EnvironmentReader: Sendable {
    public let values: [String: String]

    public init(_ values: [String: String] = ProcessInfo.processInfo.environment) {
        self.values = values
    }

    public func string(_ name: String) throws(ConfigurationError) -> String {
        guard let value = optionalString(name) else {
            throw ConfigurationError(variable: name, problem: "is required but not set")
        }
        return value
    }

    public func string(_ name: String, default defaultValue: String) -> String {
        optionalString(name) ?? defaultValue
    }

    public func optionalString(_ name: String) -> String? {
        guard let value = values[name]?.trimmingCharacters(in: .whitespacesAndNewlines), !value.isEmpty else { return nil }
        return value
    }

    public func int(_ name: String, default defaultValue: Int, range: ClosedRange<Int> = Int.min...Int.max) throws(ConfigurationError) -> Int {
        guard let text = optionalString(name) else { return defaultValue }
        guard let value = Int(text) else {
            throw ConfigurationError(variable: name, problem: "must be an integer, got \"\(text)\"")
        }
        guard range.contains(value) else {
            throw ConfigurationError(variable: name, problem: "must be between \(range.lowerBound) and \(range.upperBound), got \(value)")
        }
        return value
    }

    public func url(_ name: String) throws(ConfigurationError) -> URL? {
        guard let text = optionalString(name) else { return nil }
        guard let url = URL(string: text), let scheme = url.scheme, ["http", "https"].contains(scheme), url.host != nil else {
            throw ConfigurationError(variable: name, problem: "must be an http(s) URL, got \"\(text)\"")
        }
        return url
    }

    public func enumeration<Value: RawRepresentable>(_ name: String, default defaultValue: Value) throws(ConfigurationError) -> Value where Value.RawValue == String {
        guard let text = optionalString(name) else { return defaultValue }
        guard let value = Value(rawValue: text) else {
            throw ConfigurationError(variable: name, problem: "has unknown value \"\(text)\"")
        }
        return value
    }
}
