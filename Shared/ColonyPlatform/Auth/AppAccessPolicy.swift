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
/// Fields of the apps file (`COLONY_APPS_FILE`, `AppsFile`), e.g.
/// `{"unify": {"require_aal2": true, "anonymous_users": false}}`; an app the file leaves out
/// (or no file) gets the defaults. Unknown apps or fields are refused at start-up: a misspelt
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

    /// The apps file's access fields (`AppsFile`), or the defaults when `COLONY_APPS_FILE` is unset.
    public static func load(environment: EnvironmentReader) throws(ConfigurationError) -> AppAccessPolicies {
        let file = try AppsFile.load(environment: environment)
        do {
            return try AppAccessPolicies(file)
        } catch {
            try environment.problem(error)
            return .open
        }
    }

    /// Each app's `require_aal2` and `anonymous_users` (true or false) in `file`.
    public init(_ file: AppsFile) throws(ConfigurationError) {
        var policies: [App: AppAccessPolicy] = [:]
        for app in file.apps.keys {
            var policy = AppAccessPolicy()
            if let flag = try file.flag("require_aal2", of: app) { policy.requireAal2 = flag }
            if let flag = try file.flag("anonymous_users", of: app) { policy.anonymousUsers = flag }
            policies[app] = policy
        }
        self.init(policies)
    }
}
