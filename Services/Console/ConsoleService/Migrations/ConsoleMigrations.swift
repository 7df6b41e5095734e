import ColonyPlatform

/// The console schema: operators (not app users), their server-side sessions and the audit log
/// of everything they do. No app's data lives here: the console reads and acts through the
/// services' admin routes.
enum ConsoleMigrations {
    static let all: [Migration] = [
        Migration(version: 1, name: "operators, sessions, audit log", sql: """
            CREATE TABLE operators (
                id uuid PRIMARY KEY,
                -- lower case; the sign-in name
                email text NOT NULL UNIQUE,
                role text NOT NULL CHECK (role IN ('owner', 'admin', 'support', 'moderator', 'viewer')),
                -- the apps the operator works on; empty: every app
                apps text[] NOT NULL DEFAULT '{}',
                -- bcrypt; null until the operator takes their invitation
                password_hash text,
                -- sha256 (hex) of the one-time invitation token, while it is open
                invitation_hash text UNIQUE,
                invitation_expires_at timestamptz,
                -- base32 TOTP secret; confirmed once the operator has entered a code from it
                totp_secret text,
                totp_confirmed_at timestamptz,
                -- the last 30 s step whose code was accepted: a code is good once
                totp_last_step bigint,
                failed_attempts integer NOT NULL DEFAULT 0,
                locked_until timestamptz,
                disabled_at timestamptz,
                created_by text NOT NULL,
                created_at timestamptz NOT NULL DEFAULT now(),
                updated_at timestamptz NOT NULL DEFAULT now(),
                last_sign_in_at timestamptz
            );

            -- The cookie carries a random token; only its sha256 (hex) is kept.
            CREATE TABLE operator_sessions (
                token_hash text PRIMARY KEY,
                operator_id uuid NOT NULL REFERENCES operators (id) ON DELETE CASCADE,
                -- password: the password was right, the second factor is awaited;
                -- enrolling: the operator has no confirmed TOTP yet and is setting it up; full: signed in
                stage text NOT NULL CHECK (stage IN ('password', 'enrolling', 'full')),
                csrf_token text NOT NULL,
                created_at timestamptz NOT NULL DEFAULT now(),
                last_seen_at timestamptz NOT NULL DEFAULT now(),
                ended_at timestamptz,
                ip_address text,
                user_agent text
            );
            CREATE INDEX operator_sessions_operator ON operator_sessions (operator_id) WHERE ended_at IS NULL;

            -- Append-only: the trigger below refuses updates and deletes, even to the service's role.
            CREATE TABLE audit_log (
                id bigserial PRIMARY KEY,
                at timestamptz NOT NULL DEFAULT now(),
                operator_id uuid,
                operator_email text NOT NULL,
                role text,
                action text NOT NULL,
                app text,
                target text,
                outcome text NOT NULL CHECK (outcome IN ('ok', 'refused', 'failed')),
                detail text,
                ip_address text
            );
            CREATE INDEX audit_log_at ON audit_log (at DESC, id DESC);
            CREATE INDEX audit_log_operator ON audit_log (operator_email, at DESC);

            CREATE FUNCTION audit_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                RAISE EXCEPTION 'the console audit log is append-only';
            END;
            $$;
            CREATE TRIGGER audit_log_append_only BEFORE UPDATE OR DELETE ON audit_log
                FOR EACH ROW EXECUTE FUNCTION audit_log_append_only();
            CREATE TRIGGER audit_log_no_truncate BEFORE TRUNCATE ON audit_log
                FOR EACH STATEMENT EXECUTE FUNCTION audit_log_append_only();

            \(Quotas.tableSQL)
            """),
    ]
}
