import ColonyModels
import Foundation

/// The apps file: every per-app setting of a deployment in one JSON object keyed by app, e.g.
/// `{"unify": {"redirect_urls": ["unify://auth-callback"], "require_aal2": true,
/// "push_log_retention_days": 14}}`, named by `COLONY_APPS_FILE` and read by every service at
/// start. Each service takes the fields it owns (`AppsFile.fields` says whose each one is); a
/// field no service owns, or an app Colony does not know, stops every service at start: a
/// misspelt security or retention setting must not be ignored. An app the file leaves out, or
/// no file, gets each field's default.
public struct AppsFile: Sendable, Equatable {
    public static let variable = "COLONY_APPS_FILE"

    /// The names the file had when auth's settings and the access policies were two files: set,
    /// they stop a start, so that a policy they held is not dropped without a word.
    public static let retiredVariables = ["COLONY_AUTH_APPS_FILE", "COLONY_APP_ACCESS_FILE"]

    /// Every field, with the service that reads it and what it means (docs/configuration.md's
    /// "The apps file" is made from it). Auth's are its `AppAuthSettings` (a test holds the two
    /// equal); `access` fields are read by every service that checks tokens, `platform` ones by
    /// every service's pipeline.
    public static let fields: [Field] = [
        // Every service (AppAccessPolicy).
        Field("require_aal2", .access, "A user with a verified second factor must present an `aal2` token (403 `insufficient_aal`)"),
        Field("anonymous_users", .access, "Whether the services accept tokens of anonymous users (`false`: 403 `anonymous_not_allowed`)"),
        // Auth: sign-in (AppAuthSettings).
        Field("email_enabled", .auth, "Email + password sign-up and sign-in"),
        Field("magic_link_enabled", .auth, "Passwordless email: magic links and 6-digit codes"),
        Field("phone_enabled", .auth, "Phone: SMS codes"),
        Field("phone_password_enabled", .auth, "Phone + password sign-up and sign-in"),
        Field("apple_enabled", .auth, "Sign in with Apple (`grant_type=id_token`, provider `apple`)"),
        Field("disable_signup", .auth, "Refuse new accounts (existing ones still sign in)"),
        Field("otp_create_user", .auth, "Whether `POST /otp` may create an account for an unknown address (a client's `create_user: false` only narrows it)"),
        Field("email_autoconfirm", .auth, "Email sign-ups get a session at once instead of a confirmation mail"),
        Field("redirect_urls", .auth, "Where `redirect_to` may point: exact URLs, or patterns with `*`"),
        Field("site_url", .auth, "The redirect when a link names none (or one not allowed)"),
        Field("apple_bundle_ids", .auth, "Apple identity tokens must be issued for one of these (the app's bundle ids)"),
        Field("access_token_lifetime_seconds", .auth, "Access tokens' lifetime"),
        Field("refresh_token_reuse_interval_seconds", .auth, "A rotated refresh token is accepted again within this many seconds (Supabase: 10)"),
        Field("session_timebox_seconds", .auth, "Sessions end this long after sign-in (null: never)"),
        Field("session_inactivity_timeout_seconds", .auth, "Sessions end after this long without a refresh (null: never)"),
        Field("secure_password_change", .auth, "A new password needs a reauthentication code unless the session signed in within the window"),
        Field("secure_email_change", .auth, "A new email needs a code from the current address as well as the new one"),
        Field("reauthentication_window_seconds", .auth, "How recent a sign-in spares a reauthentication code (password change, account deletion)"),
        Field("display_name", .auth, "The app's name in mails and SMS (`{{app_name}}`)"),
        Field("default_locale", .auth, "The language of its mails and SMS when the user's and the request's are not available"),
        Field("mail_from", .auth, "The `From` of its mails (`Name <address>`), instead of `COLONY_AUTH_SMTP_FROM`"),
        Field("anonymous_sign_ins", .auth, "`POST /signup` with neither email nor phone makes an anonymous account"),
        Field("anonymous_cleanup_days", .auth, "Anonymous accounts never converted are erased this many days after they were made (null: kept)"),
        Field("unconfirmed_signup_days", .auth, "Accounts never confirmed that never signed in are erased this many days after they were made (null: kept)"),
        Field("inactive_account_days", .auth, "Accounts nobody used for this many days are erased, after a warning (null: kept)"),
        Field("inactive_warning_days", .auth, "How many days before that erasure the warning goes out by mail or SMS"),
        Field("audit_retention_days", .auth, "How long the app's audit log keeps entries (0: for good; else `COLONY_AUTH_AUDIT_RETENTION_DAYS`)"),
        Field("support_email", .auth, "Where the app's users reach a person: an address (`GET /settings`, `support`)"),
        Field("support_url", .auth, "And a web page"),
        Field("oauth_providers", .auth, "OAuth/OIDC providers by name (`google`, `apple`, `github`, any OIDC issuer): client ids, secrets, endpoints"),
        Field("manual_linking", .auth, "Signed-in users may link and unlink identities"),
        Field("mfa_totp_enabled", .auth, "Users may enroll TOTP factors"),
        Field("mfa_phone_enabled", .auth, "Users may enroll phone factors (each challenge is an SMS the operator pays for)"),
        // Every service: the platform's retention (PipelineSettings).
        Field("import_ledger_retention_days", .platform, "How long the app's import ledger entries and import runs are kept (0: for good; else `COLONY_IMPORT_LEDGER_RETENTION_DAYS`)"),
        // Notifications (NotificationsSettings).
        Field("notification_retention_days", .notifications, "How long the in-app notification list keeps an entry (else `COLONY_NOTIFICATIONS_RETENTION_DAYS`)"),
        Field("push_log_retention_days", .notifications, "How long the push delivery log keeps a finished push (else `COLONY_NOTIFICATIONS_RETENTION_DAYS`)"),
    ]

    public struct Field: Sendable, Equatable {
        public enum Reader: String, Sendable {
            case access = "every service (tokens)", platform = "every service (retention)", auth, notifications
        }

        public var name: String
        public var readBy: Reader
        public var description: String

        init(_ name: String, _ readBy: Reader, _ description: String) {
            self.name = name
            self.readBy = readBy
            self.description = description
        }
    }

    /// Each app's fields as the file gives them.
    public var apps: [App: [String: JSONValue]]

    public init(apps: [App: [String: JSONValue]] = [:]) {
        self.apps = apps
    }

    /// No file: every app with every default.
    public static let none = AppsFile()

    /// `app`'s fields (empty when the file leaves it out).
    public func fields(of app: App) -> [String: JSONValue] {
        apps[app] ?? [:]
    }

    /// The file `COLONY_APPS_FILE` names, or `none` when it is unset. A retired name that is set,
    /// a file that cannot be read, or one that is not an object of known apps with known fields is
    /// a problem (a check notes it and goes on with `none`).
    public static func load(environment: EnvironmentReader) throws(ConfigurationError) -> AppsFile {
        for retired in retiredVariables where environment.optionalString(retired) != nil {
            try environment.problem(ConfigurationError(variable: retired, problem: "is retired: its settings are fields of the one apps file \(variable) names (docs/configuration.md, \"The apps file\")"))
        }
        guard let path = environment.optionalString(variable) else { return .none }
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            try environment.problem(ConfigurationError(variable: variable, problem: "could not read \(path): \(error.localizedDescription)"))
            return .none
        }
        do {
            return try parse(data, path: path)
        } catch {
            try environment.problem(error)
            return .none
        }
    }

    /// `data` as an apps file: an object of apps, each an object of known fields (`path` names
    /// the file in problems).
    public static func parse(_ data: Data, path: String? = nil) throws(ConfigurationError) -> AppsFile {
        let place = path.map { "\($0): " } ?? ""
        guard case .object(let objects)? = JSONValue.parse(data) else {
            throw ConfigurationError(variable: variable, problem: "\(place)must be a JSON object of apps, e.g. {\"unify\": {\"require_aal2\": true}}")
        }
        let known = Set(fields.map(\.name))
        var apps: [App: [String: JSONValue]] = [:]
        for (name, value) in objects.sorted(by: { $0.key < $1.key }) {
            guard let app = App(rawValue: name) else {
                throw ConfigurationError(variable: variable, problem: "\(place)names an unknown app \"\(name)\" (known: \(App.allCases.map(\.rawValue).joined(separator: ", ")))")
            }
            guard case .object(let settings) = value else {
                throw ConfigurationError(variable: variable, problem: "\(place)\(name) must be an object of settings")
            }
            if let unknown = settings.keys.sorted().first(where: { !known.contains($0) }) {
                throw ConfigurationError(variable: variable, problem: "\(place)\(name) has an unknown setting \"\(unknown)\" (the fields are in docs/configuration.md, \"The apps file\")")
            }
            apps[app] = settings
        }
        return AppsFile(apps: apps)
    }

    /// A whole number of days `field` gives `app`, within `range`; nil when the file leaves it out
    /// (or gives null).
    public func days(_ field: String, of app: App, range: ClosedRange<Int>) throws(ConfigurationError) -> Int? {
        switch fields(of: app)[field] {
        case nil, .null?: return nil
        case .number(let value)? where value.rounded() == value && Double(range.lowerBound) <= value && value <= Double(range.upperBound):
            return Int(value)
        case let other?:
            throw ConfigurationError(variable: Self.variable, problem: "\(app.rawValue).\(field) must be a whole number of days from \(range.lowerBound) to \(range.upperBound), got \(other)")
        }
    }

    /// A flag `field` gives `app`; nil when the file leaves it out.
    public func flag(_ field: String, of app: App) throws(ConfigurationError) -> Bool? {
        switch fields(of: app)[field] {
        case nil: return nil
        case .bool(let flag)?: return flag
        case let other?: throw ConfigurationError(variable: Self.variable, problem: "\(app.rawValue).\(field) must be true or false, got \(other)")
        }
    }
}
