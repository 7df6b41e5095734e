import ColonyModels
import ColonyStorage

/// What auth holds about a person, for their data export: the account, how they sign in, their
/// sessions and second factors, the audit log of their account, their earlier exports. Never a
/// secret: no password hash, token or code hashes, TOTP secrets.
enum AuthExport {
    static let plan = ExportPlan(
        service: .auth,
        about: "The auth service keeps your account: your email address and phone number, how you sign in, your sessions on each device, your second factors and a log of what happened to your account.",
        tables: [
            ExportTable("account", about: "Your account.", sources: ["users"], sql: """
                SELECT id, app, email, phone, new_email, new_phone, email_confirmed_at, phone_confirmed_at, invited_at,
                       confirmation_sent_at, recovery_sent_at, email_change_sent_at, phone_change_sent_at,
                       raw_user_meta_data AS user_metadata, raw_app_meta_data AS app_metadata, is_anonymous,
                       encrypted_password IS NOT NULL AS has_password, last_sign_in_at, banned_until, created_at, updated_at
                FROM users WHERE id = $1
                """, fields: [
                    "id": "Your account's id.",
                    "app": "The app the account belongs to.",
                    "email": "Your email address.",
                    "phone": "Your phone number.",
                    "new_email": "An email address you asked to change to, not yet confirmed.",
                    "new_phone": "A phone number you asked to change to, not yet confirmed.",
                    "email_confirmed_at": "When you confirmed your email address.",
                    "phone_confirmed_at": "When you confirmed your phone number.",
                    "invited_at": "When the app's operator invited you, if they did.",
                    "confirmation_sent_at": "When the last confirmation mail or text was sent.",
                    "recovery_sent_at": "When the last password recovery mail was sent.",
                    "email_change_sent_at": "When the last email change mail was sent.",
                    "phone_change_sent_at": "When the last phone change text was sent.",
                    "user_metadata": "What you (or the app for you) stored with your account, such as your name.",
                    "app_metadata": "What the app's operator stored with your account, such as your sign-in providers.",
                    "is_anonymous": "Whether the account was made without an address (a guest account).",
                    "has_password": "Whether the account has a password (the password itself is kept only as a one-way hash and is not exported).",
                    "last_sign_in_at": "When you last signed in.",
                    "banned_until": "Until when the account is suspended, if it is.",
                    "created_at": "When the account was made.",
                    "updated_at": "When the account last changed.",
                ]),
            ExportTable("identities", about: "The ways you sign in: by email, phone, or another provider (Apple, Google, ...).", sql: """
                SELECT id, provider, provider_id, identity_data, last_sign_in_at, created_at, updated_at
                FROM identities WHERE user_id = $1 ORDER BY created_at
                """, fields: [
                    "id": "The identity's id.",
                    "provider": "The way of signing in (email, phone, apple, google, ...).",
                    "provider_id": "Your id at that provider (your address for email and phone).",
                    "identity_data": "What the provider told us about you when you signed in with it.",
                    "last_sign_in_at": "When you last signed in this way.",
                    "created_at": "When the identity was added.",
                    "updated_at": "When it last changed.",
                ]),
            ExportTable("sessions", about: "Your signed-in devices.", sql: """
                SELECT id, aal, amr, user_agent, ip, not_after, refreshed_at, created_at, updated_at
                FROM sessions WHERE user_id = $1 ORDER BY created_at
                """, fields: [
                    "id": "The session's id.",
                    "aal": "Its assurance level: aal2 once a second factor was verified.",
                    "amr": "How the session signed in, and when.",
                    "user_agent": "The app or browser that signed in.",
                    "ip": "The network address it signed in from.",
                    "not_after": "When the session ends at the latest, if the app limits sessions.",
                    "refreshed_at": "When the session was last used to get a new token.",
                    "created_at": "When you signed in.",
                    "updated_at": "When the session last changed.",
                ]),
            ExportTable("factors", about: "Your second factors (authenticator apps, phones). Their secrets are not exported.", sources: ["mfa_factors"], sql: """
                SELECT id, factor_type, status, friendly_name, phone, last_challenged_at, created_at, updated_at
                FROM mfa_factors WHERE user_id = $1 ORDER BY created_at
                """, fields: [
                    "id": "The factor's id.",
                    "factor_type": "totp (an authenticator app) or phone.",
                    "status": "verified, or unverified while being set up.",
                    "friendly_name": "The name you gave it.",
                    "phone": "The phone number of a phone factor.",
                    "last_challenged_at": "When a code was last asked of it.",
                    "created_at": "When it was added.",
                    "updated_at": "When it last changed.",
                ]),
            ExportTable("audit_log", about: "What happened to your account, as the app's audit log records it.", sources: ["audit_log_entries"], sql: """
                SELECT created_at, payload->>'action' AS action, payload->>'log_type' AS log_type,
                       CASE WHEN payload->>'actor_id' = $1::text THEN 'you' ELSE 'operator' END AS actor, ip_address
                FROM audit_log_entries
                WHERE payload->>'actor_id' = $1::text OR payload->'traits'->>'user_id' = $1::text
                ORDER BY created_at
                """, fields: [
                    "created_at": "When it happened.",
                    "action": "What happened (login, logout, user_modified, token_refreshed, ...).",
                    "log_type": "The kind of entry (account, user, token, factor, team).",
                    "actor": "Who did it: you, or the app's operator.",
                    "ip_address": "The network address it came from, when recorded.",
                ]),
            ExportTable("exports", about: "The copies of your data you (or the app's operator for you) asked for.", sql: """
                SELECT id, CASE WHEN requested_by = 'user' THEN 'you' ELSE 'operator' END AS requested_by, status, requested_at, ready_at, expires_at
                FROM exports WHERE user_id = $1 ORDER BY requested_at
                """, fields: [
                    "id": "The export's id.",
                    "requested_by": "Who asked for it: you, or the app's operator (a subject access request).",
                    "status": "running, ready, failed or expired.",
                    "requested_at": "When it was asked for.",
                    "ready_at": "When its archive was ready.",
                    "expires_at": "When its archive and link are deleted.",
                ]),
        ],
        notExported: [
            "refresh_tokens": "hashes of your sessions' refresh tokens: secrets, exported as the sessions they belong to",
            "one_time_tokens": "hashes of codes and links mailed or texted to you, deleted once used or expired: secrets",
            "flow_states": "hashes of sign-in codes in flight, minutes long: secrets",
            "oauth_states": "sign-ins with another provider in flight, minutes long",
            "mfa_challenges": "codes asked of your factors, minutes long: exported as the factors' last_challenged_at",
            "address_requests": "mails waiting to be sent, seconds long",
            "signing_keys": "the service's own signing keys: nothing of yours",
            "api_keys": "the apps' API keys: nothing of yours",
            "rate_limits": "counters of requests per address and account over minutes, for abuse limits",
            "import_runs": "the operators' record of the app's imports from Supabase: when, by whom, rows per table, and the ids of at most 100 rows that did not come over and why",
        ]
    )
}
