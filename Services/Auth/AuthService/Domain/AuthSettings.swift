import ColonyModels
import ColonyPlatform
import Foundation

/// One app's sign-in settings: which methods are on, where links may redirect, token lifetimes.
/// Defaults follow the seeds; an operator overrides any field per app with a JSON file
/// (the apps file, `COLONY_APPS_FILE`, e.g. `{"unify": {"redirect_urls": ["unify://auth-callback"]}}`).
public struct AppAuthSettings: Codable, Sendable, Equatable {
    /// Email + password sign-up and sign-in.
    public var emailEnabled: Bool
    /// Passwordless email: magic link and 6-digit code.
    public var magicLinkEnabled: Bool
    /// Phone: SMS codes.
    public var phoneEnabled: Bool
    /// Phone + password sign-up and sign-in (no seed app offers it).
    public var phonePasswordEnabled: Bool
    /// Sign in with Apple (`grant_type=id_token`, provider `apple`).
    public var appleEnabled: Bool
    public var disableSignup: Bool
    /// Whether `POST /otp` may create an account for an unknown address (a client's
    /// `create_user: false` can only narrow it).
    public var otpCreateUser: Bool
    /// Email sign-ups get a session at once instead of a confirmation mail.
    public var emailAutoconfirm: Bool
    /// Where `redirect_to` may point: exact URLs, or patterns with `*` (`RedirectPattern`).
    public var redirectUrls: [String]
    /// The default redirect when a link names none (or names one not allowed).
    public var siteUrl: String
    /// Apple identity tokens must be issued for one of these (the app's bundle id).
    public var appleBundleIds: [String]
    public var accessTokenLifetimeSeconds: Int
    /// A rotated refresh token is accepted again within this many seconds (Supabase: 10).
    public var refreshTokenReuseIntervalSeconds: Int
    /// Sessions end this long after sign-in (nil: never).
    public var sessionTimeboxSeconds: Int?
    /// Sessions end after this long without a refresh (nil: never).
    public var sessionInactivityTimeoutSeconds: Int?
    /// A new password needs a reauthentication code unless the session signed in within
    /// `reauthenticationWindowSeconds` (GoTrue's secure password change).
    public var securePasswordChange: Bool
    /// A new email needs a code from the current address as well as the new one (GoTrue's secure
    /// email change); the old address is told once it is done either way.
    public var secureEmailChange: Bool
    /// How recent a sign-in spares a reauthentication code (password change, account deletion).
    public var reauthenticationWindowSeconds: Int
    /// The app's name in mails and SMS (`{{app_name}}`).
    public var displayName: String
    /// The language of its mails and SMS when the user's and the request's are not available
    /// (then English).
    public var defaultLocale: String
    /// The `From` of its mails (`Name <address>`), instead of `COLONY_AUTH_SMTP_FROM`.
    public var mailFrom: String?
    /// `POST /signup` with neither email nor phone makes an anonymous account (GoTrue's
    /// `GOTRUE_EXTERNAL_ANONYMOUS_USERS_ENABLED`); off for every app unless its operator says so.
    public var anonymousSignIns: Bool = false
    /// Anonymous accounts never converted are erased (with `user_deleted`) this many days after
    /// they were made; nil: kept.
    public var anonymousCleanupDays: Int? = nil
    /// Accounts whose address was never confirmed and that never signed in are erased (with
    /// `user_deleted`) this many days after they were made (or imported); nil: kept.
    public var unconfirmedSignupDays: Int? = 30
    /// Accounts nobody used for this many days are erased (with `user_deleted`), after a warning
    /// by mail or SMS `inactiveWarningDays` before; nil (the default): kept however long unused.
    public var inactiveAccountDays: Int? = nil
    public var inactiveWarningDays: Int = 14
    /// How long the app's audit log keeps entries (0: for good); nil: `COLONY_AUTH_AUDIT_RETENTION_DAYS`.
    public var auditRetentionDays: Int? = nil
    /// Where the app's users reach a person (App Review guideline 1.2's contact): an address and
    /// a web page, served in `GET /settings` under `support` for the app to show. nil: none given.
    public var supportEmail: String? = nil
    public var supportUrl: String? = nil
    /// OAuth/OIDC providers by name (`google`, `apple`, `github`, any OIDC issuer): the web flow
    /// (`GET /authorize`) and `grant_type=id_token` (see `OAuthProviderSettings`).
    public var oauthProviders: [String: OAuthProviderSettings] = [:]
    /// Signed-in users may link and unlink identities (GoTrue's `GOTRUE_SECURITY_MANUAL_LINKING_ENABLED`).
    public var manualLinking = false

    /// MFA: users may enroll TOTP factors (GoTrue: on) and phone factors, whose challenges are
    /// texted (GoTrue: off; each challenge is an SMS the operator pays for).
    public var mfaTotpEnabled = true
    public var mfaPhoneEnabled = false

    public init(emailEnabled: Bool = true, magicLinkEnabled: Bool = false, phoneEnabled: Bool = false, phonePasswordEnabled: Bool = false, appleEnabled: Bool = false, disableSignup: Bool = false, otpCreateUser: Bool = true, emailAutoconfirm: Bool = true, redirectUrls: [String], siteUrl: String, appleBundleIds: [String] = [], accessTokenLifetimeSeconds: Int = 3600, refreshTokenReuseIntervalSeconds: Int = 10, sessionTimeboxSeconds: Int? = nil, sessionInactivityTimeoutSeconds: Int? = nil, securePasswordChange: Bool = true, secureEmailChange: Bool = true, reauthenticationWindowSeconds: Int = 86_400, displayName: String = "Colony", defaultLocale: String = "en", mailFrom: String? = nil, anonymousSignIns: Bool = false, anonymousCleanupDays: Int? = nil, oauthProviders: [String: OAuthProviderSettings] = [:], manualLinking: Bool = false, mfaTotpEnabled: Bool = true, mfaPhoneEnabled: Bool = false) {
        self.emailEnabled = emailEnabled
        self.magicLinkEnabled = magicLinkEnabled
        self.phoneEnabled = phoneEnabled
        self.phonePasswordEnabled = phonePasswordEnabled
        self.appleEnabled = appleEnabled
        self.disableSignup = disableSignup
        self.otpCreateUser = otpCreateUser
        self.emailAutoconfirm = emailAutoconfirm
        self.redirectUrls = redirectUrls
        self.siteUrl = siteUrl
        self.appleBundleIds = appleBundleIds
        self.accessTokenLifetimeSeconds = accessTokenLifetimeSeconds
        self.refreshTokenReuseIntervalSeconds = refreshTokenReuseIntervalSeconds
        self.sessionTimeboxSeconds = sessionTimeboxSeconds
        self.sessionInactivityTimeoutSeconds = sessionInactivityTimeoutSeconds
        self.securePasswordChange = securePasswordChange
        self.secureEmailChange = secureEmailChange
        self.reauthenticationWindowSeconds = reauthenticationWindowSeconds
        self.displayName = displayName
        self.defaultLocale = defaultLocale
        self.mailFrom = mailFrom
        self.mfaTotpEnabled = mfaTotpEnabled
        self.mfaPhoneEnabled = mfaPhoneEnabled
        self.anonymousSignIns = anonymousSignIns
        self.anonymousCleanupDays = anonymousCleanupDays
        self.oauthProviders = oauthProviders
        self.manualLinking = manualLinking
    }

    /// The seeds' sign-in methods per app.
    public static func defaults(for app: App) -> AppAuthSettings {
        let callback = "\(app.rawValue)://auth-callback"
        switch app {
        case .mycirclee:  // email + password and magic link
            return AppAuthSettings(magicLinkEnabled: true, redirectUrls: [callback], siteUrl: callback, displayName: "MyCirclee")
        case .unify:  // email + password, confirmed by mail, redirect to unify://auth-callback; German
            return AppAuthSettings(emailAutoconfirm: false, redirectUrls: [callback], siteUrl: callback, displayName: "Unify", defaultLocale: "de")
        case .habithive:  // phone OTP and Sign in with Apple
            return AppAuthSettings(emailEnabled: false, phoneEnabled: true, appleEnabled: true, redirectUrls: [callback], siteUrl: callback, appleBundleIds: ["com.habithive.app"], displayName: "HabitHive")
        case .socialspot:  // email + password, Apple
            return AppAuthSettings(appleEnabled: true, redirectUrls: [callback], siteUrl: callback, appleBundleIds: ["com.socialspot.app"], displayName: "SocialSpot")
        case .ibelieveinyou:  // email + password
            return AppAuthSettings(redirectUrls: [callback], siteUrl: callback, displayName: "I Believe In You")
        }
    }

    /// Whether a link may send the user to `url`.
    public func allowsRedirect(to url: String) -> Bool {
        url == siteUrl || redirectUrls.contains { pattern in
            pattern.contains("*") ? RedirectPattern(pattern)?.matches(url) ?? false : url == pattern
        }
    }

    /// `redirect_to` if allowed, else the site URL (as Supabase Auth does).
    public func redirect(_ requested: String?) -> String {
        guard let requested, !requested.isEmpty, allowsRedirect(to: requested) else { return siteUrl }
        return requested
    }
}

/// A fixed-window limit: at most `count` hits per `windowSeconds`.
public struct RateLimitRule: Sendable, Equatable {
    public var count: Int
    public var windowSeconds: Int

    public init(_ count: Int, per windowSeconds: Int) {
        self.count = count
        self.windowSeconds = windowSeconds
    }

    /// Parses `COUNT/SECONDS`, e.g. `30/300`.
    static func parse(_ text: String) -> RateLimitRule? {
        let parts = text.split(separator: "/")
        // Bounded as quotas are: `start + windowSeconds` overflowed (a trap) for a window near Int.max.
        guard parts.count == 2, let count = Int(parts[0]), let seconds = Int(parts[1]),
              (1...Quota.maximumCount).contains(count), (1...Quota.maximumSeconds).contains(seconds) else { return nil }
        return RateLimitRule(count, per: seconds)
    }
}

/// Rate limits, in the spirit of Supabase Auth's defaults. Per-IP limits key on the client's
/// address as the gateway saw it (`TrustedProxies`).
public struct RateLimitSettings: Sendable, Equatable {
    public var signUpPerIP = RateLimitRule(30, per: 300)
    public var otpPerIP = RateLimitRule(30, per: 300)
    public var signInPerIP = RateLimitRule(30, per: 300)
    /// Failed password sign-ins per account from one address (successes are not counted, and a
    /// stranger's failures from elsewhere never lock the owner out).
    public var signInPerAccount = RateLimitRule(10, per: 300)
    public var refreshPerIP = RateLimitRule(150, per: 300)
    public var verifyPerIP = RateLimitRule(30, per: 300)
    /// Wrong codes per recipient across all their codes (each code also dies after
    /// `maxCodeAttempts`): asking for new codes does not buy more guesses.
    public var verifyFailuresPerRecipient = RateLimitRule(10, per: 3600)
    /// One mail or SMS per recipient per minute.
    public var sendPerRecipient = RateLimitRule(1, per: 60)
    /// A cap on SMS per number per hour.
    public var smsPerNumber = RateLimitRule(5, per: 3600)
    /// The operator's SMS bill: per app and in total, per hour.
    public var smsPerApp = RateLimitRule(500, per: 3600)
    public var smsGlobal = RateLimitRule(1000, per: 3600)
    /// MFA challenges and verifications per address (GoTrue: 15 a minute).
    public var mfaVerifyPerIP = RateLimitRule(15, per: 60)
    /// Failed MFA verifications per user, all factors together (counted in Postgres).
    public var mfaFailuresPerUser = RateLimitRule(5, per: 300)
    /// Anonymous sign-ins per address (GoTrue: 30 an hour), counted in Postgres: each one is an account.
    public var anonymousPerIP = RateLimitRule(30, per: 3600)
    /// Data exports a person may ask for (each reads every service and mails a link): two a day.
    public var exportPerUser = RateLimitRule(2, per: 86_400)

    public init() {}

    /// Effectively off (benchmarks).
    public static let unlimited: RateLimitSettings = {
        var settings = RateLimitSettings()
        let open = RateLimitRule(1_000_000_000, per: 1)
        settings.signUpPerIP = open
        settings.otpPerIP = open
        settings.signInPerIP = open
        settings.signInPerAccount = open
        settings.refreshPerIP = open
        settings.verifyPerIP = open
        settings.verifyFailuresPerRecipient = open
        settings.sendPerRecipient = open
        settings.smsPerNumber = open
        settings.smsPerApp = open
        settings.smsGlobal = open
        settings.mfaVerifyPerIP = open
        settings.mfaFailuresPerUser = open
        settings.anonymousPerIP = open
        return settings
    }()
}

/// Where outgoing mail and SMS go: each channel its own way.
public struct SenderConfiguration: Sendable, Equatable {
    public enum Transport: Sendable, Equatable {
        /// One JSON file per message in a folder (development and tests).
        case folder(String)
        /// POSTed as JSON to a provider bridge, signed with the secret (Standard Webhooks).
        case webhook(URL, secret: WebhookSecret)
        /// Mail only: an SMTP server.
        case smtp(SMTPSettings)
        /// SMS only: a Twilio-compatible provider.
        case twilio(TwilioSettings)
    }

    public var mail: Transport
    public var sms: Transport

    public init(mail: Transport, sms: Transport) {
        self.mail = mail
        self.sms = sms
    }

    /// Both channels into one folder.
    public static func folder(_ path: String) -> SenderConfiguration { SenderConfiguration(mail: .folder(path), sms: .folder(path)) }

    /// Both channels to one bridge.
    public static func webhook(_ url: URL, secret: WebhookSecret) -> SenderConfiguration { SenderConfiguration(mail: .webhook(url, secret: secret), sms: .webhook(url, secret: secret)) }
}

/// Everything the auth service is configured with beyond the platform's settings.
public struct AuthSettings: Sendable {
    /// Auth's request body limit unless `COLONY_MAX_BODY_BYTES` is set: above the platform's
    /// 1 MiB, so oversized metadata gets its own 422 rather than a bare 413.
    public static let defaultMaxBodyBytes = 2 << 20

    public var issuer: String
    /// The public base URL of the auth API (`…/auth/v1`), used in mailed links.
    public var publicURL: String
    public var apps: [App: AppAuthSettings]
    public var rateLimits: RateLimitSettings
    /// Secret prefix of phone hashes (HabitHive's contact matching).
    public var phonePepper: String
    public var minimumPasswordLength = 6
    public var bcryptCost: Int
    public var hashingThreads: Int
    public var sender: SenderConfiguration
    /// The wording of every mail and SMS: the shipped templates, under the operator's folder.
    public var templates: MessageTemplates = .shipped
    public var mfa = MFASettings()
    public var appleKeysURL: URL
    /// Codes and links by mail stay valid this long; SMS codes a shorter while.
    public var emailCodeLifetimeSeconds = 3600
    public var smsCodeLifetimeSeconds = 600
    public var maxCodeAttempts = 5
    /// Retired signing keys stay in the JWKS this long, so tokens they signed keep verifying.
    public var retiredKeyRetentionSeconds = AuthSettings.retiredKeyRetention
    /// Audit log entries older than this many days are deleted (0 keeps them):
    /// `COLONY_AUTH_AUDIT_RETENTION_DAYS`, default 90.
    public var auditRetentionDays = 90
    /// `COLONY_AUTH_EXPORT_TIMEOUT_SECONDS`, default 3600: how long a data export waits for every
    /// service's part before it fails (a service down that long; the person may ask again).
    public var exportTimeoutSeconds = 3600
    /// How long a retired signing key stays in the JWKS: longer than any access token lives.
    public static let retiredKeyRetention = 86_400

    public init(issuer: String = "colony-auth", publicURL: String, apps: [App: AppAuthSettings] = Dictionary(uniqueKeysWithValues: App.allCases.map { ($0, .defaults(for: $0)) }), rateLimits: RateLimitSettings = RateLimitSettings(), phonePepper: String, bcryptCost: Int = 10, hashingThreads: Int = max(1, ProcessInfo.processInfo.activeProcessorCount - 1), sender: SenderConfiguration, appleKeysURL: URL = URL(string: "https://appleid.apple.com/auth/keys")!) {
        self.issuer = issuer
        self.publicURL = publicURL
        self.apps = apps
        self.rateLimits = rateLimits
        self.phonePepper = phonePepper
        self.bcryptCost = bcryptCost
        self.hashingThreads = hashingThreads
        self.sender = sender
        self.appleKeysURL = appleKeysURL
    }

    public func app(_ app: App) -> AppAuthSettings {
        apps[app] ?? .defaults(for: app)
    }

    /// Reads `COLONY_AUTH_*`: `PUBLIC_URL`, `PHONE_PEPPER` (required, a strong secret), where
    /// mail and SMS go (`senders`), `TEMPLATES_DIR`, `BCRYPT_COST` (10),
    /// `HASH_THREADS`, `APPLE_KEYS_URL`, and rate limits as `COLONY_AUTH_RATE_<NAME>=COUNT/SECONDS`
    /// (`SIGNUP_IP`, `OTP_IP`, `SIGNIN_IP`, `SIGNIN_ACCOUNT`, `REFRESH_IP`, `VERIFY_IP`,
    /// `VERIFY_RECIPIENT`, `SEND_RECIPIENT`, `SMS_NUMBER`, `SMS_APP`, `SMS_GLOBAL`, `ANONYMOUS_IP`, `MFA_VERIFY_IP`,
    /// `MFA_FAILURES_USER`); MFA's own settings in `MFASettings.load`; each app's from the apps file
    /// (`AppsFile`).
    public static func load(environment: EnvironmentReader = EnvironmentReader(), port: Int, issuer: String) throws(ConfigurationError) -> AuthSettings {
        let publicURL = environment.string("COLONY_AUTH_PUBLIC_URL", default: "http://127.0.0.1:\(port)/auth/v1")
        // Links are built from it with `URLComponents(string:)!`: refused here, not at the first mail.
        guard URLComponents(string: "\(publicURL)/verify")?.host?.isEmpty == false else {
            throw ConfigurationError(variable: "COLONY_AUTH_PUBLIC_URL", problem: "must be an absolute URL such as https://api.example.com/auth/v1, got \"\(publicURL)\"")
        }
        let sender = try senders(environment: environment)
        var settings = AuthSettings(
            issuer: issuer,
            publicURL: publicURL.hasSuffix("/") ? String(publicURL.dropLast()) : publicURL,
            phonePepper: try environment.secret("COLONY_AUTH_PHONE_PEPPER"),
            bcryptCost: try environment.int("COLONY_AUTH_BCRYPT_COST", default: 10, range: 4...16),
            hashingThreads: try environment.int("COLONY_AUTH_HASH_THREADS", default: max(1, ProcessInfo.processInfo.activeProcessorCount - 1), range: 1...64),
            sender: sender
        )
        if let apple = try environment.url("COLONY_AUTH_APPLE_KEYS_URL") { settings.appleKeysURL = apple }
        settings.auditRetentionDays = try environment.int("COLONY_AUTH_AUDIT_RETENTION_DAYS", default: 90, range: 0...36_500)
        settings.exportTimeoutSeconds = try environment.int("COLONY_AUTH_EXPORT_TIMEOUT_SECONDS", default: 3600, range: 60...604_800)
        do {
            settings.apps = try loadApps(try AppsFile.load(environment: environment))
        } catch {
            try environment.problem(error)
        }
        settings.mfa = try MFASettings.load(environment: environment)
        settings.templates = try MessageTemplates.load(overrides: environment.optionalString("COLONY_AUTH_TEMPLATES_DIR"))
        let rules: [(String, WritableKeyPath<RateLimitSettings, RateLimitRule>)] = [
            ("SIGNUP_IP", \.signUpPerIP), ("OTP_IP", \.otpPerIP), ("SIGNIN_IP", \.signInPerIP),
            ("SIGNIN_ACCOUNT", \.signInPerAccount), ("REFRESH_IP", \.refreshPerIP), ("VERIFY_IP", \.verifyPerIP),
            ("VERIFY_RECIPIENT", \.verifyFailuresPerRecipient), ("SEND_RECIPIENT", \.sendPerRecipient), ("SMS_NUMBER", \.smsPerNumber),
            ("SMS_APP", \.smsPerApp), ("SMS_GLOBAL", \.smsGlobal), ("ANONYMOUS_IP", \.anonymousPerIP),
            ("MFA_VERIFY_IP", \.mfaVerifyPerIP), ("MFA_FAILURES_USER", \.mfaFailuresPerUser), ("EXPORT_USER", \.exportPerUser),
        ]
        for (name, keyPath) in rules {
            let variable = "COLONY_AUTH_RATE_\(name)"
            let builtIn = settings.rateLimits[keyPath: keyPath]
            environment.noteAllowed(variable, "COUNT/SECONDS")
            let text = environment.string(variable, default: "\(builtIn.count)/\(builtIn.windowSeconds)")
            guard text != "\(builtIn.count)/\(builtIn.windowSeconds)" else { continue }
            guard let rule = RateLimitRule.parse(text) else {
                throw ConfigurationError(variable: variable, problem: "must be COUNT/SECONDS, e.g. 30/300")
            }
            settings.rateLimits[keyPath: keyPath] = rule
        }
        return settings
    }

    /// Each app's defaults with the apps file's auth fields laid over them (`AppsFile.fields`
    /// names them; the other services' fields are theirs).
    static func loadApps(_ file: AppsFile) throws(ConfigurationError) -> [App: AppAuthSettings] {
        let variable = AppsFile.variable
        let ours = Set(AppsFile.fields.filter { $0.readBy == .auth }.map(\.name))
        var apps: [App: AppAuthSettings] = [:]
        for app in App.allCases {
            let base = AppAuthSettings.defaults(for: app)
            let fields = file.fields(of: app).filter { ours.contains($0.key) }
            guard !fields.isEmpty else { apps[app] = base; continue }
            do {
                let encoded = try ColonyJSON.encoder().encode(base)
                var merged = try ColonyJSON.decoder().decode([String: JSONValue].self, from: encoded)
                merged.merge(fields) { _, new in new }
                apps[app] = try ColonyJSON.decoder().decode(AppAuthSettings.self, from: ColonyJSON.encoder().encode(merged))
            } catch {
                throw ConfigurationError(variable: variable, problem: "settings for \(app.rawValue) are invalid: \(error)")
            }
            if let from = apps[app]?.mailFrom, MailAddress(parsing: from) == nil {
                throw ConfigurationError(variable: variable, problem: "settings for \(app.rawValue): mail_from must be an address or Name <address>, got \"\(from)\"")
            }
            guard let locale = apps[app].flatMap({ MessageLocale.normalized($0.defaultLocale) }) else {
                throw ConfigurationError(variable: variable, problem: "settings for \(app.rawValue): default_locale must be a language tag such as en or de")
            }
            apps[app]?.defaultLocale = locale
            // Times are added to now and bound to Postgres or made whole seconds: a lifetime past
            // ten years (9e18 s) trapped at the first sign-in instead of here.
            if let settings = apps[app] {
                let durations: [(String, Int?)] = [
                    ("access_token_lifetime_seconds", settings.accessTokenLifetimeSeconds), ("refresh_token_reuse_interval_seconds", settings.refreshTokenReuseIntervalSeconds),
                    ("session_timebox_seconds", settings.sessionTimeboxSeconds), ("session_inactivity_timeout_seconds", settings.sessionInactivityTimeoutSeconds),
                    ("reauthentication_window_seconds", settings.reauthenticationWindowSeconds),
                ]
                for case let (name, seconds?) in durations where !(0...315_360_000).contains(seconds) {
                    throw ConfigurationError(variable: variable, problem: "settings for \(app.rawValue): \(name) must be between 0 and 315360000 (ten years), got \(seconds)")
                }
                if let days = settings.anonymousCleanupDays, !(1...3650).contains(days) {
                    throw ConfigurationError(variable: variable, problem: "settings for \(app.rawValue): anonymous_cleanup_days must be between 1 and 3650, got \(days)")
                }
                if let email = settings.supportEmail, MailAddress(parsing: email) == nil || email.contains("<") {
                    throw ConfigurationError(variable: variable, problem: "settings for \(app.rawValue): support_email must be an address, got \"\(email)\"")
                }
                if let url = settings.supportUrl, !(url.hasPrefix("https://") || url.hasPrefix("http://")) || URL(string: url)?.host == nil {
                    throw ConfigurationError(variable: variable, problem: "settings for \(app.rawValue): support_url must be an http(s) URL, got \"\(url)\"")
                }
                if let days = settings.auditRetentionDays, !(0...36_500).contains(days) {
                    throw ConfigurationError(variable: variable, problem: "settings for \(app.rawValue): audit_retention_days must be between 0 and 36500, got \(days)")
                }
                if let days = settings.unconfirmedSignupDays, !(1...3650).contains(days) {
                    throw ConfigurationError(variable: variable, problem: "settings for \(app.rawValue): unconfirmed_signup_days must be between 1 and 3650, got \(days)")
                }
                if let days = settings.inactiveAccountDays, !(30...36_500).contains(days) || !(1...(days - 1)).contains(settings.inactiveWarningDays) {
                    throw ConfigurationError(variable: variable, problem: "settings for \(app.rawValue): inactive_account_days must be between 30 and 36500 and inactive_warning_days between 1 and one less, got \(days) and \(settings.inactiveWarningDays)")
                }
            }
        }
        return apps
    }
}
