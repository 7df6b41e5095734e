import ColonyModels
import Foundation

/// What an app's domain services and realtime accept beyond a valid token, per app:
///
/// - `require_aal2`: a user who has a verified MFA factor must present an `aal2` token (one
///   from a session that passed a factor's challenge); their `aal1` tokens are refused with
///   403 `insufficient_aal`. Users without a verified factor are not affected. The token says
///   whether its user had a verified factor when it was issued (`colony_mfa_enrolled`, see
///   `AccessTokenClaims`): services cannot read auth's factor table as Supabase's RLS reads
///   `auth.mfa_factors`.
/// - `anonymous_users`: whether tokens of anonymous users (`is_anonymous`) are accepted
///   (Supabase treats them as `authenticated`, so `true` by default); `false` refuses them with
///   403 `anonymous_not_allowed`.
///
/// Read from the JSON file `COLONY_APP_ACCESS_FILE` names, e.g.
/// `{"unify": {"require_aal2": true, "anonymous_users": false}}`; an app the file leaves out
/// (or no file) gets the defaults. Unknown apps or keys are refused at start-up: a misspelt
/// security setting must not be ignored.
public struct AppAccessPolicy: Sendable, Equatable {
    public var requireAal2: Bool
    public var anonymousUsers: Bool

    public init(requireAal2: Bool = false, anonymousUsers: Bool = true) {
        self.requireAal2 = requireAal2
        self.anonymousUsers = anonymousUsers
    }

    public static let open = AppAccessPolicy()

    public static let insufficientAAL = APIError(.forbidden, code: "insufficient_aal", message: "This app requires a second factor: verify one of your factors (AAL2) and use the new session's token")
    public static let anonymousNotAllowed = APIError(.forbidden, code: "anonymous_not_allowed", message: "This app does not accept anonymous users: sign up or sign in first")

    /// Refuses what the policy does not accept of a token whose signature, issuer and audience
    /// were checked.
    public func check(_ claims: AccessTokenClaims) throws(APIError) {
        if !anonymousUsers, claims.isAnonymous == true { throw Self.anonymousNotAllowed }
        if requireAal2, claims.colonyMfaEnrolled == true, claims.aal != "aal2" { throw Self.insufficientAAL }
    }
}

/// Every app's `AppAccessPolicy`.
public struct AppAccessPolicies: Sendable, Equatable {
    public var apps: [App: AppAccessPolicy]

    public init(_ apps: [App: AppAccessPolicy] = [:]) {
        self.apps = apps
    }

    /// Every app with the defaults.
    public static let open = AppAccessPolicies()

    public func policy(for app: App) -> AppAccessPolicy {
        apps[app] ?? .open
    }

    public static let variable = "COLONY_APP_ACCESS_FILE"

    /// The file `COLONY_APP_ACCESS_FILE` names, or the defaults when it is unset.
    public static func load(environment: EnvironmentReader) throws(ConfigurationError) -> AppAccessPolicies {
        guard let path = environment.optionalString(variable) else { return .open }
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            try environment.problem(ConfigurationError(variable: variable, problem: "could not read \(path): \(error.localizedDescription)"))
            return .open
        }
        do {
            return try parse(data)
        } catch {
            try environment.problem(ConfigurationError(variable: variable, problem: "\(path): \(error.problem)"))
            return .open
        }
    }

    /// `{"<app>": {"require_aal2": Bool, "anonymous_users": Bool}}`.
    public static func parse(_ data: Data) throws(ConfigurationError) -> AppAccessPolicies {
        let apps: [String: JSONValue]
        do {
            apps = try JSONDecoder().decode([String: JSONValue].self, from: data)
        } catch {
            throw ConfigurationError(variable: variable, problem: "must be a JSON object of apps, e.g. {\"unify\": {\"require_aal2\": true}}")
        }
        var policies: [App: AppAccessPolicy] = [:]
        for (name, value) in apps {
            guard let app = App(rawValue: name) else {
                throw ConfigurationError(variable: variable, problem: "names an unknown app \"\(name)\" (known: \(App.allCases.map(\.rawValue).joined(separator: ", ")))")
            }
            guard case .object(let fields) = value else {
                throw ConfigurationError(variable: variable, problem: "\(name) must be an object with require_aal2 and/or anonymous_users")
            }
            var policy = AppAccessPolicy()
            for (key, field) in fields {
                guard case .bool(let flag) = field else {
                    throw ConfigurationError(variable: variable, problem: "\(name).\(key) must be true or false")
                }
                switch key {
                case "require_aal2": policy.requireAal2 = flag
                case "anonymous_users": policy.anonymousUsers = flag
                default:
                    throw ConfigurationError(variable: variable, problem: "\(name) has an unknown setting \"\(key)\" (known: require_aal2, anonymous_users)")
                }
            }
            policies[app] = policy
        }
        return AppAccessPolicies(policies)
    }
}
