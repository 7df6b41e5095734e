import ColonyPlatform

/// The auth schema: five user pools in one set of tables, each row tagged with its app.
enum AuthMigrations {
    static let all: [Migration] = [
        Migration(version: 1, name: "users, identities, sessions, tokens, keys, rate limits", sql: """
            CREATE TABLE users (
                id uuid PRIMARY KEY,
                app text NOT NULL,
                email text,
                phone text,
                encrypted_password text,
                email_confirmed_at timestamptz,
                phone_confirmed_at timestamptz,
                confirmation_sent_at timestamptz,
                recovery_sent_at timestamptz,
                email_change_sent_at timestamptz,
                phone_change_sent_at timestamptz,
                new_email text,
                new_phone text,
                raw_app_meta_data jsonb NOT NULL DEFAULT '{}',
                raw_user_meta_data jsonb NOT NULL DEFAULT '{}',
                last_sign_in_at timestamptz,
                banned_until timestamptz,
                created_at timestamptz NOT NULL DEFAULT now(),
                updated_at timestamptz NOT NULL DEFAULT now()
            );
            -- One account per address and app; the same address may hold accounts in two apps.
            CREATE UNIQUE INDEX users_app_email ON users (app, email) WHERE email IS NOT NULL;
            CREATE UNIQUE INDEX users_app_phone ON users (app, phone) WHERE phone IS NOT NULL;
            CREATE INDEX users_app_created ON users (app, created_at, id);

            CREATE TABLE identities (
                id uuid PRIMARY KEY,
                user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
                app text NOT NULL,
                provider text NOT NULL,
                provider_id text NOT NULL,
                identity_data jsonb NOT NULL DEFAULT '{}',
                last_sign_in_at timestamptz,
                created_at timestamptz NOT NULL DEFAULT now(),
                updated_at timestamptz NOT NULL DEFAULT now(),
                UNIQUE (app, provider, provider_id)
            );
            CREATE INDEX identities_user ON identities (user_id);

            CREATE TABLE sessions (
                id uuid PRIMARY KEY,
                user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
                app text NOT NULL,
                aal text NOT NULL DEFAULT 'aal1',
                amr jsonb NOT NULL DEFAULT '[]',
                not_after timestamptz,
                refreshed_at timestamptz,
                user_agent text,
                ip text,
                created_at timestamptz NOT NULL DEFAULT now(),
                updated_at timestamptz NOT NULL DEFAULT now()
            );
            CREATE INDEX sessions_user ON sessions (user_id);

            -- Only hashes are stored. A child token is HMAC(parent, salt), so the holder of the
            -- parent can be handed the active token again without it being kept in clear.
            CREATE TABLE refresh_tokens (
                id bigserial PRIMARY KEY,
                session_id uuid NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
                token_hash bytea NOT NULL UNIQUE,
                parent_hash bytea,
                salt bytea,
                revoked_at timestamptz,
                created_at timestamptz NOT NULL DEFAULT now()
            );
            CREATE INDEX refresh_tokens_session ON refresh_tokens (session_id, id);

            -- Mailed and texted codes and links: single-use, short-lived, hashed, limited tries.
            CREATE TABLE one_time_tokens (
                id uuid PRIMARY KEY,
                app text NOT NULL,
                user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
                kind text NOT NULL CHECK (kind IN ('signup', 'magiclink', 'recovery', 'email_change', 'sms', 'phone_change')),
                recipient text NOT NULL,
                code_hash bytea NOT NULL,
                link_hash bytea UNIQUE,
                attempts int NOT NULL DEFAULT 0,
                redirect_to text,
                code_challenge text,
                code_challenge_method text,
                expires_at timestamptz NOT NULL,
                created_at timestamptz NOT NULL DEFAULT now()
            );
            CREATE INDEX one_time_tokens_lookup ON one_time_tokens (app, recipient, kind);
            CREATE INDEX one_time_tokens_user ON one_time_tokens (user_id);

            -- PKCE: an auth code handed to the app's redirect, exchanged with the code verifier.
            CREATE TABLE flow_states (
                auth_code_hash bytea PRIMARY KEY,
                app text NOT NULL,
                user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
                code_challenge text NOT NULL,
                code_challenge_method text NOT NULL,
                authentication_method text NOT NULL,
                expires_at timestamptz NOT NULL,
                created_at timestamptz NOT NULL DEFAULT now()
            );

            -- ES256 signing keys. Exactly one is current; retired ones stay published a while.
            CREATE TABLE signing_keys (
                kid text PRIMARY KEY,
                private_key_pem text NOT NULL,
                created_at timestamptz NOT NULL DEFAULT now(),
                retired_at timestamptz
            );
            CREATE UNIQUE INDEX signing_keys_one_current ON signing_keys ((true)) WHERE retired_at IS NULL;

            -- The keys apps ship (anon) and servers keep (service_role); they name the app.
            CREATE TABLE api_keys (
                key text PRIMARY KEY,
                app text NOT NULL,
                role text NOT NULL CHECK (role IN ('anon', 'service_role')),
                created_at timestamptz NOT NULL DEFAULT now(),
                revoked_at timestamptz
            );
            CREATE UNIQUE INDEX api_keys_one_active ON api_keys (app, role) WHERE revoked_at IS NULL;

            -- Fixed-window counters shared by every replica.
            CREATE TABLE rate_limits (
                bucket text NOT NULL,
                window_start timestamptz NOT NULL,
                hits int NOT NULL,
                PRIMARY KEY (bucket, window_start)
            );
            """),
        Migration(version: 2, name: "proven addresses, secure changes, resendable codes", sql: """
            -- Proven (the owner showed a code, a link or Apple's verified email) is not confirmed
            -- (an app may autoconfirm). Existing accounts start with nothing proven.
            ALTER TABLE users
                ADD COLUMN email_proven_at timestamptz,
                ADD COLUMN phone_proven_at timestamptz,
                ADD COLUMN password_unproven boolean NOT NULL DEFAULT false,
                ADD COLUMN email_change_confirm_status int NOT NULL DEFAULT 0;

            -- A secure email change's code to the current address; reauthentication codes.
            ALTER TABLE one_time_tokens DROP CONSTRAINT one_time_tokens_kind_check;
            ALTER TABLE one_time_tokens ADD CONSTRAINT one_time_tokens_kind_check CHECK (kind IN (
                'signup', 'magiclink', 'recovery', 'email_change', 'email_change_current', 'sms', 'phone_change', 'reauthentication'));
            -- The code of a sign-up that set a password (entering it proves that password).
            ALTER TABLE one_time_tokens ADD COLUMN confirms_sign_up boolean NOT NULL DEFAULT false;
            -- The code and link are derived from this, so asking again re-sends the same ones.
            ALTER TABLE one_time_tokens ADD COLUMN seed bytea;
            CREATE INDEX one_time_tokens_user_kind ON one_time_tokens (user_id, kind);
            """),
        Migration(version: 3, name: "address requests", sql: """
            -- Recover, magic links and confirming sign-ups, queued by the request whether or not
            -- the address has an account: what depends on the account (a code, a new account, a
            -- mail) happens off the request path, so answers and their timing tell nothing.
            CREATE TABLE address_requests (
                id uuid PRIMARY KEY,
                app text NOT NULL,
                kind text NOT NULL CHECK (kind IN ('recovery', 'magiclink', 'signup')),
                email text NOT NULL,
                details jsonb NOT NULL,
                attempts int NOT NULL DEFAULT 0,
                due_at timestamptz NOT NULL DEFAULT now(),
                created_at timestamptz NOT NULL DEFAULT now()
            );
            CREATE INDEX address_requests_due ON address_requests (due_at);
            """),
        Migration(version: 4, name: "mfa factors and challenges", sql: """
            -- TOTP and phone factors (GoTrue's mfa_factors). The TOTP secret is kept as GoTrue
            -- keeps it without its optional encryption: verifying needs it in clear.
            CREATE TABLE mfa_factors (
                id uuid PRIMARY KEY,
                user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
                app text NOT NULL,
                factor_type text NOT NULL CHECK (factor_type IN ('totp', 'phone')),
                status text NOT NULL CHECK (status IN ('unverified', 'verified')),
                friendly_name text NOT NULL DEFAULT '',
                secret text,
                phone text,
                -- The last TOTP time step accepted: a code is good once.
                last_totp_step bigint,
                last_challenged_at timestamptz,
                created_at timestamptz NOT NULL DEFAULT now(),
                updated_at timestamptz NOT NULL DEFAULT now()
            );
            CREATE INDEX mfa_factors_user ON mfa_factors (user_id, created_at);
            CREATE UNIQUE INDEX mfa_factors_user_friendly_name ON mfa_factors (user_id, friendly_name) WHERE friendly_name <> '';

            -- A challenge is verified once, from the address that asked for it, before it expires.
            -- A phone challenge keeps its texted code's hash.
            CREATE TABLE mfa_challenges (
                id uuid PRIMARY KEY,
                factor_id uuid NOT NULL REFERENCES mfa_factors (id) ON DELETE CASCADE,
                ip text NOT NULL,
                code_hash bytea,
                expires_at timestamptz NOT NULL,
                verified_at timestamptz,
                created_at timestamptz NOT NULL DEFAULT now()
            );
            CREATE INDEX mfa_challenges_factor ON mfa_challenges (factor_id, expires_at);

            -- The factor a session reached aal2 with: removing the factor takes the session back to aal1.
            ALTER TABLE sessions ADD COLUMN factor_id uuid REFERENCES mfa_factors (id) ON DELETE SET NULL;
            CREATE INDEX sessions_factor ON sessions (factor_id) WHERE factor_id IS NOT NULL;
            """),
        Migration(version: 5, name: "oauth states, identity emails", sql: """
            -- The web flow's authorizations in progress: GET /authorize makes one, the provider's
            -- callback uses it once (used_at), within minutes. The state handed to the provider is
            -- signed and names the row; the row keeps what must not travel (nonce, verifiers).
            CREATE TABLE oauth_states (
                id uuid PRIMARY KEY,
                app text NOT NULL,
                provider text NOT NULL,
                redirect_to text NOT NULL,
                code_challenge text,
                code_challenge_method text,
                nonce text NOT NULL,
                provider_code_verifier text,
                linking_user_id uuid REFERENCES users (id) ON DELETE CASCADE,
                expires_at timestamptz NOT NULL,
                used_at timestamptz,
                created_at timestamptz NOT NULL DEFAULT now()
            );
            CREATE INDEX oauth_states_expires ON oauth_states (expires_at);
            -- Account linking looks identities up by the address their provider verified.
            CREATE INDEX identities_app_email ON identities (app, lower(identity_data->>'email')) WHERE identity_data ? 'email';
            """),
        Migration(version: 6, name: "anonymous users", sql: """
            -- Signed in with no address (`POST /signup` with neither email nor phone); false once
            -- an address is confirmed or an identity linked, the id kept.
            ALTER TABLE users ADD COLUMN is_anonymous boolean NOT NULL DEFAULT false;
            -- The cleanup of accounts never converted reads the oldest first.
            CREATE INDEX users_anonymous_created ON users (app, created_at) WHERE is_anonymous;
            """),
        Migration(version: 7, name: "invitations, queued resends", sql: """
            -- An operator's invitation (POST /invite, generate_link type invite): its own kind, so
            -- its mail and link say `invite`.
            ALTER TABLE one_time_tokens DROP CONSTRAINT one_time_tokens_kind_check;
            ALTER TABLE one_time_tokens ADD CONSTRAINT one_time_tokens_kind_check CHECK (kind IN (
                'signup', 'invite', 'magiclink', 'recovery', 'email_change', 'email_change_current', 'sms', 'phone_change', 'reauthentication'));
            -- POST /resend is queued like recover: answered alike whether or not the address or
            -- number has an account. The `email` column holds the number for the SMS kinds.
            ALTER TABLE address_requests DROP CONSTRAINT address_requests_kind_check;
            ALTER TABLE address_requests ADD CONSTRAINT address_requests_kind_check CHECK (kind IN (
                'recovery', 'magiclink', 'signup', 'resend_signup', 'resend_email_change', 'resend_sms', 'resend_phone_change'));
            """),
        Migration(version: 8, name: "audit log, invited_at", sql: """
            -- GoTrue's audit log (GET /admin/audit), per app: an app's service-role key reads only
            -- its own. `payload` as GoTrue's: actor_id, actor_username, actor_via_sso, action,
            -- log_type, traits. Written in the transaction of the action it records.
            CREATE TABLE audit_log_entries (
                id uuid PRIMARY KEY,
                app text NOT NULL,
                payload jsonb NOT NULL,
                ip_address text NOT NULL DEFAULT '',
                -- The clock, not the transaction's start: entries of one action keep their order.
                created_at timestamptz NOT NULL DEFAULT clock_timestamp()
            );
            -- The listing is newest first per app; retention deletes by age.
            CREATE INDEX audit_log_entries_app_created ON audit_log_entries (app, created_at DESC, id DESC);
            CREATE INDEX audit_log_entries_created ON audit_log_entries (created_at);
            -- When an operator invited the account (POST /invite, generate_link type invite).
            ALTER TABLE users ADD COLUMN invited_at timestamptz;
            """),
        Migration(version: 9, name: "data exports", sql: """
            -- A person's copies of their data (POST /user/export; an operator's subject access
            -- request): each service writes its part to the exports bucket, the job assembles
            -- them. No foreign key: the archive of an erased account is deleted by the sweep,
            -- which needs the row to find it.
            CREATE TABLE exports (
                id uuid PRIMARY KEY,
                app text NOT NULL,
                user_id uuid NOT NULL,
                -- 'user', or the operator who asked for them (a subject access request).
                requested_by text NOT NULL,
                status text NOT NULL CHECK (status IN ('running', 'ready', 'failed', 'expired')),
                requested_at timestamptz NOT NULL DEFAULT now(),
                ready_at timestamptz,
                -- When the archive and its link stop (ready_at + 7 days).
                expires_at timestamptz,
                archive_bytes bigint
            );
            -- One export running per person: a second request while one runs is refused.
            CREATE UNIQUE INDEX exports_one_running ON exports (user_id) WHERE status = 'running';
            CREATE INDEX exports_user ON exports (user_id, requested_at DESC);
            CREATE INDEX exports_open ON exports (status, requested_at) WHERE status IN ('running', 'ready');
            """),
        Migration(version: 10, name: "inactivity warnings", sql: """
            -- When an unused account was warned that it will be erased (per app's
            -- inactive_account_days): erased only after a warning newer than its last use.
            ALTER TABLE users ADD COLUMN inactivity_warned_at timestamptz;
            """),
        Migration(version: 11, name: "the console's user search", sql: """
            -- GET /admin/users?filter=: prefixes of the email, the phone and the display name, per
            -- app, each read in order with LIKE 'text%' (text_pattern_ops: byte order, whatever the
            -- collation). The expressions are UserStore.searchQuery's, character for character.
            CREATE INDEX users_app_email_prefix ON users (app, lower(email) text_pattern_ops);
            CREATE INDEX users_app_phone_prefix ON users (app, phone text_pattern_ops);
            -- The name an app keeps in user_metadata: display_name (HabitHive's), else full_name
            -- (Sign in with Apple's, the clients'), else name.
            CREATE INDEX users_app_name_prefix ON users (app, lower(coalesce(nullif(raw_user_meta_data->>'display_name', ''),
                nullif(raw_user_meta_data->>'full_name', ''), raw_user_meta_data->>'name')) text_pattern_ops);
            """),
        Migration(version: 12, name: "import runs", sql: """
            -- Each `colony-admin import supabase` run, for the console's Imports page (GET
            -- /admin/imports). The import writes it as auth's role (ImportRunLog): `running` when it
            -- starts, then how it ended with its summary's counts. An operators' record: the source
            -- without its password, the storage without credentials, who ran it from where.
            CREATE TABLE import_runs (
                id uuid PRIMARY KEY,
                app text NOT NULL,
                source text NOT NULL,
                storage text,
                dry_run boolean NOT NULL,
                -- The OS user and host that ran it: user@host.
                run_by text NOT NULL,
                started_at timestamptz NOT NULL DEFAULT now(),
                finished_at timestamptz,
                status text NOT NULL CHECK (status IN ('running', 'complete', 'incomplete', 'failed')),
                -- One line, at most 2000 characters.
                error text,
                -- ImportRunSummary: counts per table, at most 100 skipped or incomplete rows.
                summary jsonb
            );
            -- The listing is newest first per app.
            CREATE INDEX import_runs_app_started ON import_runs (app, started_at DESC);
            """),
        Migration(version: 13, name: "when a ban began", sql: """
            -- Every service refuses the access tokens a suspended account still holds: it lists
            -- the bans that began within a token's lifetime (SuspendedAccountsRoute), not every
            -- ban ever made. Null when no ban is in force, or for bans imported from Supabase.
            ALTER TABLE users ADD COLUMN banned_at timestamptz;
            CREATE INDEX users_banned_at ON users (banned_at) WHERE banned_at IS NOT NULL;
            """),
    ]
}
