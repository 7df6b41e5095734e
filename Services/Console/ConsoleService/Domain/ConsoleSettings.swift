import ColonyModels
import ColonyPlatform
import Foundation

/// The console's own settings, from the environment (`COLONY_CONSOLE_*`).
public struct ConsoleSettings: Sendable {
    public enum CookieSecurity: String, Sendable, CaseIterable {
        /// `Secure` cookies: the console is reached over HTTPS (or on localhost, which browsers treat as secure).
        case on
        /// Plain HTTP on another host, for a private network only.
        case off
    }

    /// Where auth answers its admin routes (inside the deployment, not through the gateway).
    public var authURL: String
    /// Each service's root URL inside the deployment, for its pipeline state.
    public var serviceURLs: [ColonyService: String]
    /// A session ends after this long without a request, and in any case this long after sign-in.
    public var idleTimeout: Duration
    public var absoluteTimeout: Duration
    public var cookieSecurity: CookieSecurity
    public var bcryptCost: Int
    /// Wrong passwords or codes in a row before an operator is locked, and for how long.
    public var lockoutAttempts: Int
    public var lockout: Duration
    /// Sign-in attempts (password or code) per client address.
    public var signInQuota: Quota
    /// How long an invitation to set a password stays open.
    public var invitationLifetime: Duration

    public init(authURL: String, serviceURLs: [ColonyService: String] = [:], idleTimeout: Duration = .seconds(30 * 60), absoluteTimeout: Duration = .seconds(12 * 3600),
                cookieSecurity: CookieSecurity = .on, bcryptCost: Int = 12, lockoutAttempts: Int = 5, lockout: Duration = .seconds(15 * 60),
                signInQuota: Quota = Quota(30, perSeconds: 900), invitationLifetime: Duration = .seconds(72 * 3600)) {
        self.authURL = authURL
        self.serviceURLs = serviceURLs
        self.idleTimeout = idleTimeout
        self.absoluteTimeout = absoluteTimeout
        self.cookieSecurity = cookieSecurity
        self.bcryptCost = bcryptCost
        self.lockoutAttempts = lockoutAttempts
        self.lockout = lockout
        self.signInQuota = signInQuota
        self.invitationLifetime = invitationLifetime
    }

    /// `COLONY_CONSOLE_AUTH_URL` (required), `COLONY_CONSOLE_SERVICE_URLS` (`circles=http://circles:8080,…`),
    /// `COLONY_CONSOLE_SESSION_IDLE_MINUTES` (30), `COLONY_CONSOLE_SESSION_MAX_HOURS` (12),
    /// `COLONY_CONSOLE_SECURE_COOKIES` (`on`), `COLONY_CONSOLE_BCRYPT_COST` (12),
    /// `COLONY_CONSOLE_LOCKOUT_ATTEMPTS` (5), `COLONY_CONSOLE_LOCKOUT_MINUTES` (15),
    /// `COLONY_CONSOLE_SIGN_IN_RATE` (`30/900` per address), `COLONY_CONSOLE_INVITATION_HOURS` (72).
    public static func load(environment: EnvironmentReader) throws(ConfigurationError) -> ConsoleSettings {
        var authURL = "http://127.0.0.1:9999"
        if let url = try environment.url("COLONY_CONSOLE_AUTH_URL") {
            authURL = url.absoluteString
        } else {
            try environment.problem(ConfigurationError(variable: "COLONY_CONSOLE_AUTH_URL", problem: "is required (auth's URL inside the deployment)"))
        }
        let services = try serviceURLs(environment.string("COLONY_CONSOLE_SERVICE_URLS", default: ""), environment: environment)
        return ConsoleSettings(
            authURL: trimmed(authURL),
            serviceURLs: services,
            idleTimeout: .seconds(60 * (try environment.int("COLONY_CONSOLE_SESSION_IDLE_MINUTES", default: 30, range: 1...1440))),
            absoluteTimeout: .seconds(3600 * (try environment.int("COLONY_CONSOLE_SESSION_MAX_HOURS", default: 12, range: 1...168))),
            cookieSecurity: try environment.enumeration("COLONY_CONSOLE_SECURE_COOKIES", default: CookieSecurity.on),
            bcryptCost: try environment.int("COLONY_CONSOLE_BCRYPT_COST", default: 12, range: 4...16),
            lockoutAttempts: try environment.int("COLONY_CONSOLE_LOCKOUT_ATTEMPTS", default: 5, range: 1...100),
            lockout: .seconds(60 * (try environment.int("COLONY_CONSOLE_LOCKOUT_MINUTES", default: 15, range: 1...1440))),
            signInQuota: try environment.quota("COLONY_CONSOLE_SIGN_IN_RATE", default: Quota(30, perSeconds: 900)),
            invitationLifetime: .seconds(3600 * (try environment.int("COLONY_CONSOLE_INVITATION_HOURS", default: 72, range: 1...720)))
        )
    }

    /// `name=url` pairs separated by commas; a name must be a Colony service, a URL http(s).
    static func serviceURLs(_ text: String, environment: EnvironmentReader) throws(ConfigurationError) -> [ColonyService: String] {
        var urls: [ColonyService: String] = [:]
        for pair in text.split(separator: ",") {
            let parts = pair.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard parts.count == 2, let service = ColonyService(rawValue: parts[0]),
                  let url = URL(string: parts[1]), ["http", "https"].contains(url.scheme ?? ""), url.host != nil
            else {
                try environment.problem(ConfigurationError(variable: "COLONY_CONSOLE_SERVICE_URLS", problem: "has \"\(pair)\", not service=http(s)://host:port"))
                continue
            }
            urls[service] = trimmed(parts[1])
        }
        return urls
    }

    static func trimmed(_ url: String) -> String {
        url.hasSuffix("/") ? String(url.dropLast()) : url
    }
}
