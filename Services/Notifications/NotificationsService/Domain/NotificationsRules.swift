import ColonyModels
import ColonyPlatform
import Foundation

/// Input rules for device registration and preferences, without HTTP or a database.
public enum NotificationsRules {
    /// A device registration, checked and normalised.
    public struct Device: Sendable, Equatable {
        public var token: String
        public var environment: APNsEnvironment
        public var platform: String
        public var appVersion: String?
        public var locale: String?
    }

    /// APNs tokens are hex (64 characters today; Apple says not to assume the length).
    /// Trimmed; ASCII hex digits only (the document's `^\s*([0-9a-fA-F]{2}){16,100}\s*$`).
    public static func token(_ text: String) -> String? {
        let token = TextRules.trimmed(text).lowercased()
        guard (32...200).contains(token.utf8.count), token.utf8.count % 2 == 0, token.utf8.allSatisfy(isHex) else { return nil }
        return token
    }

    static func isHex(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
    }

    static let platforms = ["ios", "ipados", "watchos", "macos"]

    /// An app version as sent, less the whitespace around it: 1–32 of ASCII letters, digits and `.-+_ ()`.
    static let appVersionPattern = #"[A-Za-z0-9.+_()-](?:[A-Za-z0-9.+_() -]{0,30}[A-Za-z0-9.+_()-])?"#
    /// A language tag as sent, less the whitespace around it: 2–35 of ASCII letters, digits, `-` and `_`.
    static let localePattern = #"[A-Za-z0-9_-]{2,35}"#
    /// A Live Activity id as sent, less the whitespace around it.
    static let activityIDPattern = #"[A-Za-z0-9_.:-]{1,128}"#

    public static func device(token: String, environment: String?, platform: String?, appVersion: String?, locale: String?) throws(ValidationErrors) -> Device {
        var errors = ValidationErrors()
        let normalised = Self.token(token)
        errors.check(normalised != nil, "token must be the device's APNs token in hex (32–200 hex digits)")
        let environment = environment.map(APNsEnvironment.named) ?? .production
        errors.check(environment != nil, "environment must be production (or prod) or sandbox (or development)")
        let platform = platform ?? "ios"
        errors.check(platforms.contains(platform), "platform must be ios, ipados, watchos or macos")
        errors.check(appVersion.map { TextRules.matches($0, appVersionPattern) } ?? true,
                     "app_version must be 1–32 characters: letters, digits and . - + _ ( ) and spaces")
        errors.check(locale.map { TextRules.matches($0, localePattern) } ?? true, "locale must be a language tag such as en-US")
        let appVersion = appVersion.map(TextRules.trimmed)
        let locale = locale.map(TextRules.trimmed)
        try errors.throwIfAny()
        return Device(token: normalised!, environment: environment!, platform: platform, appVersion: appVersion, locale: locale)
    }

    /// Live Activity ids are the app's own (ActivityKit's `Activity.id`): printable, short.
    public static func activityID(_ text: String) -> String? {
        TextRules.matches(text, activityIDPattern) ? TextRules.trimmed(text) : nil
    }

    /// A user's preferences for one app, checked.
    public struct Preferences: Sendable, Equatable {
        public var disabledKinds: Set<NotificationKind>
        public var quietHours: QuietHours?
    }

    /// `kinds` maps kind names to on/off (absent: unchanged from `current`); `quiet_hours` nil
    /// leaves them, `.some(nil)` removes them. A kind that cannot be switched off
    /// (`moderation_warning`) is no preference: naming it is refused, on or off.
    public static func preferences(app: App, current: Preferences, kinds: [String: Bool]?, quietHours: QuietHoursInput??) throws(ValidationErrors) -> Preferences {
        var errors = ValidationErrors()
        var result = current
        let known = Dictionary(uniqueKeysWithValues: NotificationKind.preferenceKinds(of: app).map { ($0.rawValue, $0) })
        for (key, enabled) in kinds ?? [:] {
            // Colony's request decoder camel-cases dictionary keys too: `circle_post` arrives as `circlePost`.
            let name = ColonyJSON.snakeCase(key)
            if let kind = NotificationKind(rawValue: name), !kind.canBeSwitchedOff {
                errors.check(false, "\(name) cannot be switched off: the moderators' warnings always reach the user")
                continue
            }
            guard let kind = known[name] else {
                errors.check(false, "unknown notification kind \(name) for \(app.rawValue) (known: \(known.keys.sorted().joined(separator: ", ")))")
                continue
            }
            if enabled { result.disabledKinds.remove(kind) } else { result.disabledKinds.insert(kind) }
        }
        switch quietHours {
        case nil:
            break
        case .some(nil):
            result.quietHours = nil
        case .some(.some(let input)):
            let start = QuietHours.minutes(input.start)
            let end = QuietHours.minutes(input.end)
            errors.check(start != nil, "quiet_hours.start must be HH:MM (24 h)")
            errors.check(end != nil, "quiet_hours.end must be HH:MM (24 h)")
            errors.check(TimeZone(identifier: input.timezone) != nil, "quiet_hours.timezone must be an IANA time zone such as Europe/Berlin")
            if let start, let end {
                errors.check(start != end, "quiet_hours.start and end must differ (remove quiet hours with null)")
                result.quietHours = QuietHours(start: start, end: end, timeZone: input.timezone)
            }
        }
        try errors.throwIfAny()
        return result
    }

    public struct QuietHoursInput: Codable, Sendable, Equatable {
        public var start: String
        public var end: String
        public var timezone: String

        public init(start: String, end: String, timezone: String) {
            self.start = start
            self.end = end
            self.timezone = timezone
        }
    }

    /// How long to wait before retry `attempt` (1-based) after a 429, a 5xx or a lost connection:
    /// doubling from one second, at most five minutes, with up to a quarter of jitter.
    public static func retryDelay(attempt: Int, jitter: Double = Double.random(in: 0...0.25)) -> Duration {
        let base = min(300.0, pow(2.0, Double(max(0, attempt - 1))))
        return .milliseconds(Int(base * (1 + jitter) * 1000))
    }
}
