import Foundation

/// Whether a configured secret (a signing key, a pepper, a database password) is fit for
/// production: not a value Colony ever shipped as an example, not a placeholder, long enough, and
/// not too predictable. Every service reads its secrets through `EnvironmentReader.secret`, so a
/// deployment that kept a default stops at start with the variable's name.
public enum SecretStrength {
    /// Values that appeared in `docker-compose.yml`, `.env.example` or the docs, and the obvious ones.
    public static let knownDefaults: Set<String> = [
        "colony", "postgres", "password", "secret", "changeme", "change-me",
        "change-me-phone-pepper", "change-me-storage-signing-key-at-least-32-chars",
    ]
    static let placeholders = ["change-me", "changeme", "change_me", "replace-me", "replaceme", "example", "default"]
    /// Below this many bits (the string's own character distribution times its length), a value
    /// is too predictable to be a secret; 32 random hex digits carry about 110 by this measure.
    public static let minimumBits = 64.0

    /// Why `value` must not be used as a secret, or nil when it may.
    public static func problem(_ value: String, minimumLength: Int) -> String? {
        let lowered = value.lowercased()
        if knownDefaults.contains(lowered) || placeholders.contains(where: lowered.contains) {
            return "is a known default or placeholder value; generate one, e.g. `openssl rand -hex 32`"
        }
        if value.count < minimumLength {
            return "must be at least \(minimumLength) characters (generate one, e.g. `openssl rand -hex 32`)"
        }
        if Set(value).count < 8 || estimatedBits(value) < minimumBits {
            return "is too predictable for a secret (too few distinct characters); generate one, e.g. `openssl rand -hex 32`"
        }
        return nil
    }

    /// Shannon entropy of the characters' frequencies, times the length.
    static func estimatedBits(_ value: String) -> Double {
        var counts: [Character: Int] = [:]
        for character in value { counts[character, default: 0] += 1 }
        let total = Double(value.count)
        let perCharacter = counts.values.reduce(0.0) { sum, count in
            let p = Double(count) / total
            return sum - p * log2(p)
        }
        return perCharacter * total
    }
}

extension EnvironmentReader {
    /// A required secret, refused (naming the variable) when `SecretStrength` finds it unfit.
    /// It may come from a file (`<NAME>_FILE`) and is redacted wherever values are shown.
    public func secret(_ name: String, minimumLength: Int = 16) throws(ConfigurationError) -> String {
        noteAllowed(name, "a secret, \(minimumLength)+ characters")
        guard let value = secretValue(name) else {
            try problem(ConfigurationError(variable: name, problem: "is required but not set"))
            return ""  // a check noted it missing
        }
        if let problem = SecretStrength.problem(value, minimumLength: minimumLength) {
            try self.problem(ConfigurationError(variable: name, problem: problem))
        }
        return value
    }
}
