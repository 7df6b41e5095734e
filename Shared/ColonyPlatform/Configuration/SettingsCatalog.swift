import ColonyModels
import Foundation

/// Every setting a Colony program reads, with a one-line description: the reference's source
/// (docs/configuration.md, `colony-admin config reference`). A setting's name, default and the
/// values it takes are where the code reads it (`EnvironmentReader`); the reference records those
/// reads (`SettingsReference`), so they cannot drift from the code. A read of a name with no entry
/// here fails the reference, and the settings file refuses names that have none.
public enum SettingsCatalog {
    /// One line per setting; a name ending in `*` stands for every name it begins (`<APP>`).
    public static let descriptions: [String: String] = [
        // Sources and the platform (every service).
        "COLONY_CONFIG_FILE": "A JSON settings file (one object, keys the variables' names), read after the environment and secret files",
        "COLONY_HTTP_HOST": "The address the service listens on (`/health`, `/ready`, `/metrics` at the root)",
        "COLONY_HTTP_PORT": "The port the service listens on",
        "COLONY_MAX_BODY_BYTES": "What a route reads of a body, after authentication (413 beyond); upload routes read up to their file limit",
        "LOG_LEVEL": "swift-log level of the service's logs",
        "COLONY_LOG_FORMAT": "`json` (one object a line, for collectors) or `text` (swift-log's plain lines, for reading locally)",
        "COLONY_FAST_PATHS": "`on`: the hot reads and writes that have a hand-written fast path are served by it; `off`: through their generated handlers (the same bytes, slower)",
        "COLONY_SHUTDOWN_GRACE_SECONDS": "How long a graceful shutdown (SIGTERM) may take before what still runs is cancelled",
        "COLONY_SHUTDOWN_DRAIN_SECONDS": "The pause at SIGTERM, within the grace, while `/ready` answers 503 and the service still serves, so the gateway stops sending first",
        "COLONY_PG_HOST": "Postgres host (required)",
        "COLONY_PG_PORT": "Postgres port",
        "COLONY_PG_DATABASE": "Postgres database",
        "COLONY_PG_USER": "The service's own login role (written by `colony-admin provision`)",
        "COLONY_PG_PASSWORD": "The service's role's password (required; from `colony-admin provision` or a secret file)",
        "COLONY_PG_SCHEMA": "The schema the service owns: its tables, migrations, outbox and inbox",
        "COLONY_PG_POOL_SIZE": "Pooled Postgres connections per replica",
        "COLONY_PG_CONNECT_TIMEOUT_SECONDS": "Opening a Postgres connection (TCP, TLS, startup, login) fails after this long",
        "COLONY_PG_STATEMENT_TIMEOUT_SECONDS": "Postgres cancels a pooled session's statement running longer (`statement_timeout`; 0: never; not migrations)",
        "COLONY_PG_IDLE_IN_TRANSACTION_TIMEOUT_SECONDS": "Postgres ends a session idle inside a transaction this long, freeing the locks of a replica cut off mid-transaction (0: never)",
        "COLONY_PG_LEASE_TIMEOUT_SECONDS": "A pooled connection leased longer is probed with SELECT 1, and closed and replaced when that goes unanswered for 5 s, its peer taken for gone (keep it above the statement timeout; 0: only a cancelled request's connection is probed)",
        "COLONY_REQUEST_DEADLINE_SECONDS": "A request unanswered this long is answered 503 `deadline_exceeded` and its handler cancelled (not console routes or uploads)",
        "COLONY_PG_SSLMODE": "TLS to Postgres: `disable`, `require` (encrypted, certificate unchecked) or `verify-full`",
        "COLONY_PG_SSLROOTCERT": "With `verify-full`: a PEM file of the CA that signed Postgres' certificate",
        "COLONY_KAFKA_BROKERS": "Kafka bootstrap servers (required)",
        "COLONY_KAFKA_SECURITY_PROTOCOL": "`plaintext`, `ssl`, `sasl_plaintext` or `sasl_ssl` for every producer, consumer and admin client",
        "COLONY_KAFKA_SSL_CA_FILE": "With `ssl`/`sasl_ssl`: a PEM file of the brokers' CA",
        "COLONY_KAFKA_SASL_MECHANISM": "With SASL: `SCRAM-SHA-512`, `SCRAM-SHA-256` or `PLAIN` (never over `sasl_plaintext`)",
        "COLONY_KAFKA_SASL_USERNAME": "With SASL: the user",
        "COLONY_KAFKA_SASL_PASSWORD": "With SASL: the password",
        "COLONY_TOPIC_PREFIX": "Topics are `<prefix>.<service>`, consumer groups `<prefix>-<service>`",
        "COLONY_KAFKA_TOPIC_PARTITIONS": "Partitions of the topics Colony creates",
        "COLONY_KAFKA_REPLICATION_FACTOR": "Replicas of the topics Colony creates (3 on a production cluster)",
        "COLONY_OUTBOX_MAX_EVENT_BYTES": "The largest event the outbox takes (413 `event_too_large` beyond); keep it below the broker's limit",
        "COLONY_KAFKA_FETCH_WAIT_MS": "How long the broker may hold a consumer's fetch while no event is there: 500 on Apache Kafka (a long poll, far less idle work); the local Tansu holds every fetch for its whole wait, so 10",
        "COLONY_KAFKA_IDLE_FETCH_INTERVAL_MS": "A consumer that received nothing for `COLONY_KAFKA_IDLE_AFTER_MS` pauses and looks for events this often (the first event after a quiet spell waits up to this long); 0 on Apache Kafka with a 500 ms fetch wait",
        "COLONY_KAFKA_IDLE_AFTER_MS": "How long a consumer receives nothing before it dozes (see `COLONY_KAFKA_IDLE_FETCH_INTERVAL_MS`)",
        "COLONY_CONSUMER_MAX_ATTEMPTS": "Failed handler attempts before a consumed event becomes a dead letter",
        "COLONY_OUTBOX_RETENTION_SECONDS": "How long acknowledged events stay in the outbox, to be sent again should the broker lose them (0: at once)",
        "COLONY_DEAD_LETTER_RETENTION_DAYS": "How long a dead letter is kept after it last failed (0: until dropped)",
        "COLONY_IMPORT_LEDGER_RETENTION_DAYS": "How long an import's ledger entries and runs are kept (0: for good), for an app whose `import_ledger_retention_days` the apps file leaves out",
        "COLONY_JWKS_URL": "Where access tokens' keys come from (auth's JWKS); this or `COLONY_JWT_PUBLIC_KEY` is required",
        "COLONY_JWT_PUBLIC_KEY": "One PEM public key for access tokens, instead of `COLONY_JWKS_URL`",
        "COLONY_JWT_ISSUER": "The `iss` access tokens must carry",
        "COLONY_AUTH_URL": "Auth's internal URL (default: the root of `COLONY_JWKS_URL`): every service reads suspended accounts from it, chat asks it about addresses; unset with a pinned key: not asked",
        "COLONY_REPORTS_RATE": "Reports one user may file in a service (`COUNT/SECONDS`, default 20 a day); past it, 429 `report_quota`",
        "COLONY_SUSPENSIONS_REFRESH_SECONDS": "How often a service reads auth's suspended accounts: a suspended user's access tokens are refused everywhere within this time",
        "COLONY_APPS_FILE": "The apps file: every per-app setting (sign-in, access policies, retention) as JSON by app; see [The apps file](#the-apps-file). Unset: every app's defaults",
        "COLONY_APP_ACCESS_FILE": "Retired: its fields are in `COLONY_APPS_FILE`; set, a service refuses to start",
        "COLONY_AUTH_APPS_FILE": "Retired: its fields are in `COLONY_APPS_FILE`; set, a service refuses to start",
        "COLONY_TRUSTED_PROXIES": "CIDRs of the gateways whose `X-Forwarded-For` names the client (default: loopback)",
        "COLONY_TRUSTED_PROXY_COUNT": "Instead of CIDRs: the exact number of proxies in front",
        "COLONY_INTERNAL_KEY": "The service credential for internal routes, 32+ random characters, one value for all; unset: internal routes refuse all",
        "COLONY_CONSOLE_KEY": "The console's credential on every service's admin routes, 32+ random characters, another value than `COLONY_INTERNAL_KEY`; unset: admin routes refuse the console",
        // Storage (chat, circles, nearby, projects: their buckets; auth, habits, notifications: data exports).
        "COLONY_STORAGE_BACKEND": "`filesystem` (files under `{path}/{bucket}/{key}`) or `s3`",
        "COLONY_STORAGE_PATH": "With `filesystem`: the folder",
        "COLONY_STORAGE_PUBLIC_URL": "The gateway's URL as clients see it, the base of signed URLs",
        "COLONY_STORAGE_SIGNING_KEY": "The key of signed URLs, 32+ random characters, the same on every replica (required)",
        "COLONY_STORAGE_SIGNER_CHECK_SECONDS": "How long a members-only signed URL's \"may its signer still read this\" answer is reused",
        "COLONY_STORAGE_S3_ENDPOINT": "With `s3`: the endpoint (path-style URLs, SigV4)",
        "COLONY_STORAGE_S3_REGION": "With `s3`: the region",
        "COLONY_STORAGE_S3_BUCKET": "With `s3`: the one bucket; Colony's buckets are key prefixes in it",
        "COLONY_STORAGE_S3_ACCESS_KEY_ID": "With `s3`: the access key id",
        "COLONY_STORAGE_S3_SECRET_ACCESS_KEY": "With `s3`: the secret access key",
        // Auth.
        "COLONY_AUTH_PUBLIC_URL": "The base of links in mails",
        "COLONY_AUTH_PHONE_PEPPER": "HMAC pepper of HabitHive's phone hashes, a strong secret (required)",
        "COLONY_AUTH_MAIL_DIR": "Mails and SMS as JSON files in this folder (a channel with no SMTP or Twilio)",
        "COLONY_AUTH_MAIL_DIR_ALLOWED": "`off` (production): auth refuses to start while mails or SMS would go to `COLONY_AUTH_MAIL_DIR` (no SMTP, Twilio or webhook carries them)",
        "COLONY_AUTH_WEBHOOK_URL": "Mails and SMS POSTed to a provider bridge (Standard Webhooks)",
        "COLONY_AUTH_WEBHOOK_SECRET": "With the webhook: `whsec_…`, the deliveries' signing secret",
        "COLONY_AUTH_SMTP_HOST": "Mail over SMTP: the relay",
        "COLONY_AUTH_SMTP_PORT": "The relay's port (by security: 587, 465, 25)",
        "COLONY_AUTH_SMTP_SECURITY": "`starttls` (required, never plain), `tls` (implicit) or `none` (a local catcher, no AUTH)",
        "COLONY_AUTH_SMTP_USER": "AUTH user (with the password, or neither)",
        "COLONY_AUTH_SMTP_PASSWORD": "AUTH password",
        "COLONY_AUTH_SMTP_AUTH": "`plain`, `login`, or `auto` (PLAIN if offered, else LOGIN)",
        "COLONY_AUTH_SMTP_FROM": "With the relay: `address` or `Name <address>` (an app's `mail_from` overrides it)",
        "COLONY_AUTH_SMTP_HELO": "The `EHLO` name",
        "COLONY_AUTH_SMTP_CA_FILE": "Extra trusted CAs (PEM) for a private relay",
        "COLONY_AUTH_SMTP_CONNECT_TIMEOUT_SECONDS": "SMTP connect timeout",
        "COLONY_AUTH_SMTP_TIMEOUT_SECONDS": "SMTP per-reply timeout",
        "COLONY_AUTH_SMTP_ATTEMPTS": "Tries per mail on transient failures (doubling backoff from 1 s)",
        "COLONY_AUTH_TWILIO_ACCOUNT_SID": "SMS through Twilio's Messages API: the account",
        "COLONY_AUTH_TWILIO_AUTH_TOKEN": "With the account: its auth token",
        "COLONY_AUTH_TWILIO_FROM": "The sending number (E.164), or use a Messaging Service",
        "COLONY_AUTH_TWILIO_MESSAGING_SERVICE_SID": "The Messaging Service, instead of a number",
        "COLONY_AUTH_TWILIO_URL": "A Twilio-compatible provider's base URL",
        "COLONY_AUTH_TWILIO_ATTEMPTS": "Tries per SMS (429, 5xx, connection errors)",
        "COLONY_AUTH_TEMPLATES_DIR": "The operator's mail and SMS templates over the shipped ones",
        "COLONY_AUTH_MFA_CHALLENGE_SECONDS": "An MFA challenge's lifetime",
        "COLONY_AUTH_MFA_FACTOR_EXPIRY_SECONDS": "An unverified factor's lifetime",
        "COLONY_AUTH_MFA_MAX_FACTORS": "Factors per user",
        "COLONY_AUTH_MFA_MAX_VERIFIED_FACTORS": "Verified factors per user",
        "COLONY_AUTH_BCRYPT_COST": "bcrypt cost of password hashes",
        "COLONY_AUTH_HASH_THREADS": "Threads that hash passwords",
        "COLONY_AUTH_APPLE_KEYS_URL": "Sign in with Apple's keys",
        "COLONY_AUTH_AUDIT_RETENTION_DAYS": "How long the audit log keeps entries, for an app whose `audit_retention_days` the apps file leaves out",
        "COLONY_AUTH_EXPORT_TIMEOUT_SECONDS": "How long a data export waits for every service's part before it fails",
        "COLONY_AUTH_RATE_SIGNUP_IP": "Sign-ups per client address",
        "COLONY_AUTH_RATE_OTP_IP": "One-time codes and magic links asked for per client address",
        "COLONY_AUTH_RATE_SIGNIN_IP": "Sign-in attempts per client address",
        "COLONY_AUTH_RATE_SIGNIN_ACCOUNT": "Sign-in attempts per account",
        "COLONY_AUTH_RATE_REFRESH_IP": "Token refreshes per client address",
        "COLONY_AUTH_RATE_VERIFY_IP": "Verifications per client address",
        "COLONY_AUTH_RATE_VERIFY_RECIPIENT": "Failed verifications per recipient",
        "COLONY_AUTH_RATE_SEND_RECIPIENT": "Mails and SMS sent per recipient",
        "COLONY_AUTH_RATE_SMS_NUMBER": "SMS per phone number",
        "COLONY_AUTH_RATE_SMS_APP": "SMS per app (a budget)",
        "COLONY_AUTH_RATE_SMS_GLOBAL": "SMS in all (a budget)",
        "COLONY_AUTH_RATE_ANONYMOUS_IP": "Anonymous sign-ins per client address",
        "COLONY_AUTH_RATE_MFA_VERIFY_IP": "MFA verifications per client address",
        "COLONY_AUTH_RATE_MFA_FAILURES_USER": "Failed MFA verifications per user",
        "COLONY_AUTH_RATE_EXPORT_USER": "Data exports per user",
        // Habits.
        "COLONY_HABITS_PHONE_PEPPER": "The same value as `COLONY_AUTH_PHONE_PEPPER` (required)",
        "COLONY_HABITS_JOB_INTERVAL_SECONDS": "How often the day close-out and at-risk job runs",
        "COLONY_HABITS_CONTACTS_PER_UPLOAD": "Contacts in one upload",
        "COLONY_HABITS_CONTACT_UPLOAD_RATE": "Contact uploads per user (`COUNT/SECONDS`)",
        "COLONY_HABITS_CONTACT_NUMBER_RATE": "Contact numbers matched per user (`COUNT/SECONDS`)",
        "COLONY_HABITS_CONTACT_MATCH_RATE": "Match lookups per user (`COUNT/SECONDS`)",
        // Circles.
        "COLONY_CIRCLES_MAX_PHOTO_BYTES": "The largest post photo",
        "COLONY_CIRCLES_EXPIRY_INTERVAL_SECONDS": "How often the expiry job runs",
        "COLONY_CIRCLES_ADD_REQUEST_RATE": "Add requests per member (`COUNT/SECONDS`)",
        // Chat.
        "COLONY_CHAT_MAX_IMAGE_BYTES": "The largest picture",
        "COLONY_CHAT_MAX_VOICE_BYTES": "The largest voice message",
        "COLONY_CHAT_MAX_VOICE_SECONDS": "The longest voice message",
        "COLONY_CHAT_EMAIL_LOOKUP_RATE": "Addresses looked up when adding members, per user (`COUNT/SECONDS`)",
        // Console.
        "COLONY_CONSOLE_AUTH_URL": "Auth's URL inside the deployment, where the console calls its admin routes (required)",
        "COLONY_CONSOLE_SERVICE_URLS": "Each service's URL inside the deployment (`circles=http://circles:8080,…`), for its pipeline state",
        "COLONY_CONSOLE_SESSION_IDLE_MINUTES": "An operator's session ends after this long without a request",
        "COLONY_CONSOLE_SESSION_MAX_HOURS": "An operator's session ends this long after sign-in, used or not",
        "COLONY_CONSOLE_SECURE_COOKIES": "`on`: the session cookie is `Secure` (HTTPS, or localhost); `off`: plain HTTP on a private network only",
        "COLONY_CONSOLE_BCRYPT_COST": "bcrypt cost of operators' passwords",
        "COLONY_CONSOLE_LOCKOUT_ATTEMPTS": "Wrong passwords or codes in a row before an operator is locked",
        "COLONY_CONSOLE_LOCKOUT_MINUTES": "How long a locked operator waits",
        "COLONY_CONSOLE_SIGN_IN_RATE": "Sign-in attempts (passwords and codes) per client address (`COUNT/SECONDS`)",
        "COLONY_CONSOLE_INVITATION_HOURS": "How long an operator's invitation link stays open",
        // Nearby.
        "COLONY_NEARBY_RADIUS_FEET": "The discovery radius",
        "COLONY_NEARBY_MAX_RADIUS_FEET": "The largest radius a query may ask for",
        "COLONY_NEARBY_LOCATION_TTL_SECONDS": "How long a reported position counts",
        "COLONY_NEARBY_JOB_INTERVAL_SECONDS": "How often stale positions are swept",
        "COLONY_NEARBY_MAX_PHOTO_BYTES": "The largest profile photo",
        "COLONY_NEARBY_OFFSET_MIN_FEET": "The smallest offset of what others see of a position (at least the grid)",
        "COLONY_NEARBY_OFFSET_MAX_FEET": "The largest offset of what others see of a position",
        "COLONY_NEARBY_GRID_FEET": "The grid positions are snapped to",
        "COLONY_NEARBY_REPORT_RATE": "Position reports per user (`COUNT/SECONDS`)",
        "COLONY_NEARBY_QUERY_RATE": "Nearby queries per viewer (`COUNT/SECONDS`)",
        "COLONY_NEARBY_TARGET_QUERY_RATE": "Card lookups per viewer and person (`COUNT/SECONDS`)",
        "COLONY_NEARBY_MAX_SPEED_MPS": "The jump check: a faster move between reports is refused",
        // Projects.
        "COLONY_PROJECTS_MAX_IMAGE_BYTES": "The largest avatar, cover or post picture",
        "COLONY_PROJECTS_SUPPORT_LIMIT": "Support messages per window",
        "COLONY_PROJECTS_SUPPORT_WINDOW_SECONDS": "The support-message window",
        "COLONY_PROJECTS_UPLOAD_TTL_SECONDS": "How long an unused upload is kept",
        "COLONY_PROJECTS_JOB_INTERVAL_SECONDS": "How often the cleanup job runs",
        // Realtime.
        "COLONY_REALTIME_HEARTBEAT_TIMEOUT_SECONDS": "A socket with no heartbeat for this long is closed",
        "COLONY_REALTIME_SOCKET_BUFFER_MESSAGES": "Messages buffered for a slow client before it is dropped",
        "COLONY_REALTIME_MAX_FRAME_BYTES": "The largest WebSocket frame (1009 beyond)",
        "COLONY_REALTIME_REPLICA_ID": "The replica's live consumer group suffix (set the pod name; default: random)",
        "COLONY_REALTIME_MAX_EVENT_AGE_SECONDS": "The oldest event pushed to a socket",
        "COLONY_REALTIME_MAX_SOCKETS_PER_USER": "Sockets per user",
        "COLONY_REALTIME_MAX_SOCKETS_PER_ADDRESS": "Sockets per client address",
        "COLONY_REALTIME_MAX_CHANNELS_PER_SOCKET": "Channels per socket",
        "COLONY_REALTIME_MAX_BINDINGS_PER_CHANNEL": "postgres_changes bindings per channel",
        "COLONY_REALTIME_MAX_MESSAGES_PER_SECOND": "Messages a client sends per second",
        "COLONY_REALTIME_MAX_BROADCAST_BYTES": "The largest broadcast payload",
        "COLONY_REALTIME_MAX_PRESENCE_META_BYTES": "The largest presence metadata",
        "COLONY_REALTIME_PRESENCE_RATE": "Presence updates per client (`COUNT/SECONDS`)",
        "COLONY_REALTIME_UNSCOPED_TOPICS": "Topics outside the scopes: `deny`, `changes` (postgres_changes only) or `open`",
        "COLONY_REALTIME_UNSCOPED_TOPICS_*": "The same for one app (`<APP>`), over `COLONY_REALTIME_UNSCOPED_TOPICS`",
        "COLONY_REALTIME_MEMBERSHIP_CACHE_SECONDS": "How long an owner's membership answer is reused",
        "COLONY_REALTIME_MEMBERSHIP_NEGATIVE_CACHE_MS": "How long an owner's \"not a member\" answer is reused",
        "COLONY_REALTIME_MEMBERSHIP_LOOKUP_TIMEOUT_MS": "How long an owner is given to answer",
        "COLONY_CIRCLES_URL": "Circles' internal URL, asked about memberships the projection has not seen yet (unset: not asked)",
        "COLONY_CHAT_URL": "Chat's internal URL, asked about memberships the projection has not seen yet (unset: not asked)",
        "COLONY_HABITS_URL": "Habits' internal URL, asked about memberships the projection has not seen yet (unset: not asked)",
        // Notifications.
        "COLONY_APNS_TEAM_ID": "APNs token auth: the team (all three of team, key id and key, or none: pushes `skipped`)",
        "COLONY_APNS_KEY_ID": "APNs token auth: the key's id",
        "COLONY_APNS_PRIVATE_KEY_FILE": "APNs token auth: the `.p8` key file",
        "COLONY_APNS_TOPIC_*": "Each app's bundle id (`apns-topic`), `<APP>` its name",
        "COLONY_APNS_PRODUCTION_URL": "The APNs production host",
        "COLONY_APNS_SANDBOX_URL": "The APNs sandbox host",
        "COLONY_APNS_CA_FILE": "An extra trusted CA (PEM) for APNs (a stand-in)",
        "COLONY_NOTIFICATIONS_CONCURRENCY": "Push requests in flight",
        "COLONY_NOTIFICATIONS_MAX_ATTEMPTS": "Tries per push",
        "COLONY_NOTIFICATIONS_RETENTION_DAYS": "How long the in-app list and the push delivery log keep entries, for an app whose `notification_retention_days` or `push_log_retention_days` the apps file leaves out",
        "COLONY_NOTIFICATIONS_JOB_INTERVAL_SECONDS": "How often the Live Activity and retention job runs",
        "COLONY_NOTIFICATIONS_MAX_DEVICES_PER_USER": "Device tokens an account keeps per app",
        "COLONY_NOTIFICATIONS_MAX_LIVE_ACTIVITIES_PER_USER": "Live Activity tokens an account keeps per app",
        // colony-admin.
        "COLONY_PG_ADMIN_USER": "The superuser that creates schemas and roles (and imports, as each service's role)",
        "COLONY_PG_ADMIN_PASSWORD": "Its password (required)",
        "COLONY_PROVISION_TIMEOUT_SECONDS": "`colony-admin provision`: how long it waits for Postgres to accept the admin login before it gives up (a refused password fails at once)",
        "COLONY_SECRETS_DIR": "Where `provision` writes the services' `<service>.env` files (`config check` and `doctor` read them)",
        "COLONY_IMPORT_S3_ACCESS_KEY_ID": "`import supabase --storage s3://…`: the Supabase project's S3 access key id",
        "COLONY_IMPORT_S3_SECRET_ACCESS_KEY": "`import supabase --storage s3://…`: its secret access key",
        "COLONY_IMPORT_S3_REGION": "`import supabase --storage s3://…`: its region",
    ]

    /// Settings read outside a service's launch (which the reference records): by every program
    /// before it loads anything, or by `colony-admin` alone. Their defaults are stated here.
    public static let declared: [(section: String, name: String, defaultValue: String?, allowed: String?)] = [
        ("every program", "COLONY_CONFIG_FILE", nil, "a path"),
        ("every program", "COLONY_LOG_FORMAT", "json", "json, text"),
        ("colony-admin", "COLONY_PG_ADMIN_USER", "postgres", nil),
        ("colony-admin", "COLONY_PG_ADMIN_PASSWORD", nil, "a secret, 16+ characters"),
        ("colony-admin", "COLONY_PROVISION_TIMEOUT_SECONDS", "120", "1–86400"),
        ("colony-admin", "COLONY_SECRETS_DIR", ".local/secrets", "a path"),
        ("colony-admin", "COLONY_IMPORT_S3_ACCESS_KEY_ID", nil, nil),
        ("colony-admin", "COLONY_IMPORT_S3_SECRET_ACCESS_KEY", nil, nil),
        ("colony-admin", "COLONY_IMPORT_S3_REGION", "us-east-1", nil),
    ]

    /// Defaults the code works out from the machine it runs on, as the reference states them
    /// (the recorded value would differ from one machine to the next).
    public static let machineDefaults: [String: String] = [
        "COLONY_AUTH_HASH_THREADS": "cores − 1",
        "COLONY_AUTH_SMTP_HELO": "the host's name",
    ]

    /// The description of `name`, exact or by a `*` entry.
    public static func description(of name: String) -> String? {
        if let exact = descriptions[name] { return exact }
        return descriptions.first { $0.key.hasSuffix("*") && name.hasPrefix($0.key.dropLast()) }?.value
    }

    /// Whether a Colony program reads `name` (the settings file refuses others).
    public static func isKnown(_ name: String) -> Bool {
        description(of: name) != nil
    }
}

/// docs/configuration.md: what each service reads (recorded from its launch, so the names,
/// defaults and ranges are the code's own) with the catalog's descriptions, as Markdown.
public enum SettingsReference {
    public struct Row: Equatable, Sendable {
        public var name: String
        public var defaultValue: String?
        public var allowed: String?
        public var isSecret: Bool

        public init(name: String, defaultValue: String?, allowed: String?, isSecret: Bool) {
            self.name = name
            self.defaultValue = defaultValue
            self.allowed = allowed
            self.isSecret = isSecret
        }

        public init(_ read: EnvironmentRecord.Read) {
            self.init(name: read.name, defaultValue: SettingsCatalog.machineDefaults[read.name] ?? read.defaultValue, allowed: read.allowed, isSecret: read.isSecret)
        }
    }

    /// A setting read that the catalog does not describe.
    public struct Undescribed: Error, CustomStringConvertible {
        public var names: [String]
        public var description: String {
            "settings with no description in SettingsCatalog (Shared/ColonyPlatform/Configuration/SettingsCatalog.swift): \(names.joined(separator: ", "))"
        }
    }

    /// The reference: the settings every service reads, then each service's own, then the
    /// declared ones. `services` is each service's reads in the order it reads them.
    public static func markdown(services: [(ColonyService, [Row])]) throws -> String {
        let all = services.flatMap { $0.1.map(\.name) } + SettingsCatalog.declared.map(\.name)
        let undescribed = Array(Set(all.filter { SettingsCatalog.description(of: $0) == nil })).sorted()
        guard undescribed.isEmpty else { throw Undescribed(names: undescribed) }

        let sets = services.map { Set($0.1.map(\.name)) }
        let common = sets.dropFirst().reduce(sets.first ?? []) { $0.intersection($1) }
        var text = """
            # Configuration reference

            <!-- Generated by `colony-admin config reference` from the code; scripts/test fails when this file differs. Do not edit. -->

            Every Colony program reads its settings through one swift-configuration `ConfigReader`
            (`EnvironmentReader`, Shared/ColonyPlatform/Configuration). Its providers answer in this order, the
            first that has a value winning:

            1. **The environment.** An empty variable counts as unset.
            2. **Secret files.** A secret (a password, key, token or pepper: the rows marked *secret*) that the
               environment leaves unset is read from the file `<NAME>_FILE` names, e.g.
               `COLONY_PG_PASSWORD_FILE=/run/secrets/colony-pg-password` (Docker and Kubernetes secrets); the
               value is trimmed.
            3. **The settings file** that `COLONY_CONFIG_FILE` names: one JSON object whose keys are the
               variables' names below and whose values are strings, numbers or booleans, e.g.
               `{"COLONY_HTTP_PORT": 8081, "LOG_LEVEL": "debug"}`. A key no Colony program reads is refused.

            Secrets are marked secret in every provider: swift-configuration and `colony-admin config check`
            redact them wherever they show values (swift-configuration's own `CONFIG_ACCESS_LOG_FILE`, when set,
            logs every read to that file, secrets as `<REDACTED>`). A value out of range, a malformed one, a missing required
            one, or a file that cannot be read stops the service at start (exit 78) with the variable named;
            `colony-admin config check` lists every problem of every service at once.

            *Default* is what applies when no source sets the setting (— : none, the setting is off or
            required). *Takes* is what the code checks.

            """
        func table(_ rows: [Row], defaults: (String) -> String) -> String {
            var lines = ["| Setting | Default | Takes | Description |", "| --- | --- | --- | --- |"]
            for row in rows {
                let takes = [row.allowed, row.isSecret ? "secret" : nil].compactMap { $0 }.joined(separator: "; ")
                let description = SettingsCatalog.description(of: row.name) ?? ""
                lines.append("| `\(row.name)` | \(cell(defaults(row.name))) | \(cell(takes)) | \(cell(description)) |")
            }
            return lines.joined(separator: "\n") + "\n"
        }
        // Every service: in the order a service other than auth (which reads its own defaults first)
        // reads them; a default that differs says whose it is.
        if let first = services.first(where: { $0.0 != .auth }) ?? services.first {
            text += "\n## Every service\n\n"
            let rows = first.1.filter { common.contains($0.name) }
            text += table(rows) { name in
                var byDefault: [String: [String]] = [:]
                var order: [String] = []
                for (service, reads) in services {
                    let value = reads.first { $0.name == name }?.defaultValue.map(code) ?? "—"
                    if byDefault[value] == nil { order.append(value) }
                    byDefault[value, default: []].append(service.rawValue)
                }
                guard order.count > 1 else { return order.first ?? "—" }
                let usual = order.max { byDefault[$0]!.count < byDefault[$1]!.count }!
                return order.filter { $0 != usual }.map { "\($0) (\(byDefault[$0]!.joined(separator: ", ")))" }.joined(separator: ", ") + ", else \(usual)"
            }
        }
        for (service, reads) in services {
            let own = reads.filter { !common.contains($0.name) }
            guard !own.isEmpty else { continue }
            text += "\n## \(service.rawValue)\n\n"
            text += table(own) { name in own.first { $0.name == name }?.defaultValue.map(code) ?? "—" }
        }
        var sections: [String] = []
        for entry in SettingsCatalog.declared where !sections.contains(entry.section) { sections.append(entry.section) }
        for section in sections {
            let rows = SettingsCatalog.declared.filter { $0.section == section }.map {
                Row(name: $0.name, defaultValue: $0.defaultValue, allowed: $0.allowed, isSecret: EnvironmentRecord.looksSecret($0.name))
            }
            text += "\n## \(section)\n\n"
            text += table(rows) { name in rows.first { $0.name == name }?.defaultValue.map(code) ?? "—" }
        }
        text += appsFile()
        return text
    }

    /// The apps file's fields (`AppsFile.fields`): whose each is and what it means.
    static func appsFile() -> String {
        var lines = [
            "", "## The apps file", "",
            "`\(AppsFile.variable)` names one JSON file of every per-app setting, an object per app, e.g.",
            "`{\"unify\": {\"redirect_urls\": [\"unify://auth-callback\"], \"require_aal2\": true, \"push_log_retention_days\": 14}}`.",
            "Every service reads it at start and takes its own fields; an unknown app or field stops every",
            "service (a misspelt policy must not be ignored). An app the file leaves out, or a field, gets the",
            "default. The file's old names (\(AppsFile.retiredVariables.map { "`\($0)`" }.joined(separator: ", ")))",
            "stop a start when set.", "",
            "| Field | Read by | Description |", "| --- | --- | --- |",
        ]
        for field in AppsFile.fields {
            lines.append("| `\(field.name)` | \(field.readBy.rawValue) | \(cell(field.description)) |")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    static func code(_ value: String) -> String {
        value.isEmpty ? "(empty)" : "`\(value.replacingOccurrences(of: "`", with: "'"))`"
    }

    static func cell(_ value: String) -> String {
        value.replacingOccurrences(of: "|", with: "\\|").replacingOccurrences(of: "\n", with: " ")
    }
}
