import ColonyPlatform

/// The habits schema: the seed's tables (`habithive.md`, section 2) with their constraints and
/// indexes, minus `auth.users` (users live in the auth service; ids arrive by event) and
/// `device_tokens` (the notifications service owns push tokens). Additions are marked.
enum HabitsMigrations {
    static let all: [Migration] = [
        Migration(version: 1, name: "profiles, habits, logs, hives, invites, contacts, activity", sql: """
            CREATE TYPE habit_type AS ENUM ('checkbox', 'counter');
            -- 'hive_left' is an addition: departures show in the feed.
            CREATE TYPE activity_type AS ENUM ('habit_completed', 'streak_milestone', 'hive_joined', 'hive_left', 'hive_advanced', 'hive_broken');

            CREATE TABLE profiles (
                id uuid PRIMARY KEY,
                display_name text NOT NULL DEFAULT 'New Bee',
                avatar_url text,
                timezone text NOT NULL DEFAULT 'America/New_York',
                day_start_hour int NOT NULL DEFAULT 4 CHECK (day_start_hour BETWEEN 0 AND 23),
                theme text NOT NULL DEFAULT 'honey' CHECK (theme IN ('honey', 'mint', 'night')),
                -- addition: sha256(pepper || E.164 phone) from auth's events, for contact matching
                phone_hash text,
                created_at timestamptz NOT NULL DEFAULT now(),
                updated_at timestamptz NOT NULL DEFAULT now()
            );
            CREATE INDEX profiles_phone_hash ON profiles (phone_hash) WHERE phone_hash IS NOT NULL;

            -- addition: accounts erased by user_deleted; a late request must not bring them back
            CREATE TABLE deleted_users (
                user_id uuid PRIMARY KEY,
                deleted_at timestamptz NOT NULL DEFAULT now()
            );

            CREATE TABLE habits (
                id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
                user_id uuid NOT NULL REFERENCES profiles (id) ON DELETE CASCADE,
                name text NOT NULL,
                emoji text,
                color_hex text NOT NULL DEFAULT '#FF9F1C',
                type habit_type NOT NULL DEFAULT 'checkbox',
                target_per_day int NOT NULL DEFAULT 1 CHECK (target_per_day > 0),
                schedule_daily boolean NOT NULL DEFAULT true,
                schedule_weekmask int NOT NULL DEFAULT 127,  -- bitmask Mon..Sun
                -- addition: reminder times ("HH:MM") the client schedules locally
                reminder_times text[] NOT NULL DEFAULT '{}',
                is_active boolean NOT NULL DEFAULT true,
                created_at timestamptz NOT NULL DEFAULT now(),
                updated_at timestamptz NOT NULL DEFAULT now()
            );
            CREATE INDEX idx_habits_user ON habits (user_id);

            CREATE TABLE habit_logs (
                id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
                habit_id uuid NOT NULL REFERENCES habits (id) ON DELETE CASCADE,
                user_id uuid NOT NULL REFERENCES profiles (id) ON DELETE CASCADE,
                log_date date NOT NULL,  -- user-local day
                value int NOT NULL DEFAULT 1,
                source text NOT NULL DEFAULT 'manual',
                created_at timestamptz NOT NULL DEFAULT now(),
                UNIQUE (habit_id, log_date)
            );
            CREATE INDEX idx_logs_user_date ON habit_logs (user_id, log_date);

            CREATE TABLE hives (
                id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
                name text NOT NULL,
                owner_id uuid NOT NULL REFERENCES profiles (id) ON DELETE CASCADE,
                color_hex text NOT NULL DEFAULT '#FF9F1C',
                type habit_type NOT NULL DEFAULT 'checkbox',
                target_per_day int NOT NULL DEFAULT 1,
                rule text NOT NULL DEFAULT 'all_must_complete',
                threshold int,
                schedule_daily boolean NOT NULL DEFAULT true,
                schedule_weekmask int NOT NULL DEFAULT 127,
                current_length int NOT NULL DEFAULT 0,
                last_advanced_on date,
                -- additions: the habit it was converted from, and the last day the hourly job closed
                source_habit_id uuid REFERENCES habits (id) ON DELETE SET NULL,
                last_closed_on date,
                created_at timestamptz NOT NULL DEFAULT now()
            );
            CREATE INDEX idx_hives_owner ON hives (owner_id);

            CREATE TABLE hive_members (
                hive_id uuid NOT NULL REFERENCES hives (id) ON DELETE CASCADE,
                user_id uuid NOT NULL REFERENCES profiles (id) ON DELETE CASCADE,
                role text NOT NULL DEFAULT 'member',
                joined_at timestamptz NOT NULL DEFAULT now(),
                PRIMARY KEY (hive_id, user_id)
            );
            CREATE INDEX idx_hive_members_user ON hive_members (user_id);

            CREATE TABLE hive_member_days (
                hive_id uuid NOT NULL REFERENCES hives (id) ON DELETE CASCADE,
                user_id uuid NOT NULL REFERENCES profiles (id) ON DELETE CASCADE,
                day_date date NOT NULL,
                value int NOT NULL DEFAULT 1,
                done boolean GENERATED ALWAYS AS (value > 0) STORED,
                PRIMARY KEY (hive_id, user_id, day_date)
            );
            -- addition: the at-risk and close-out queries read a hive's members' days by date
            CREATE INDEX idx_hive_member_days_day ON hive_member_days (hive_id, day_date);

            CREATE TABLE hive_days (
                hive_id uuid NOT NULL REFERENCES hives (id) ON DELETE CASCADE,
                day_date date NOT NULL,
                complete_count int NOT NULL DEFAULT 0,
                required_count int NOT NULL,
                advanced boolean NOT NULL DEFAULT false,
                PRIMARY KEY (hive_id, day_date)
            );

            CREATE TABLE hive_invites (
                id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
                hive_id uuid NOT NULL REFERENCES hives (id) ON DELETE CASCADE,
                code text NOT NULL UNIQUE,
                created_by uuid NOT NULL REFERENCES profiles (id) ON DELETE CASCADE,
                expires_at timestamptz NOT NULL,
                max_uses int NOT NULL DEFAULT 20,
                use_count int NOT NULL DEFAULT 0,
                created_at timestamptz NOT NULL DEFAULT now()
            );
            CREATE INDEX idx_hive_invites_hive ON hive_invites (hive_id);

            -- addition: at most one at-risk alert per hive, member and day
            CREATE TABLE hive_risk_alerts (
                hive_id uuid NOT NULL REFERENCES hives (id) ON DELETE CASCADE,
                user_id uuid NOT NULL REFERENCES profiles (id) ON DELETE CASCADE,
                day_date date NOT NULL,
                sent_at timestamptz NOT NULL DEFAULT now(),
                PRIMARY KEY (hive_id, user_id, day_date)
            );

            CREATE TABLE contact_hashes (
                id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
                user_id uuid NOT NULL REFERENCES profiles (id) ON DELETE CASCADE,
                contact_hash text NOT NULL,  -- sha256(pepper || e164)
                display_name text,
                imported_at timestamptz NOT NULL DEFAULT now(),
                UNIQUE (user_id, contact_hash)
            );
            CREATE INDEX idx_contact_hashes_hash ON contact_hashes (contact_hash);

            CREATE TABLE activity_events (
                id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
                actor_id uuid REFERENCES profiles (id) ON DELETE CASCADE,
                hive_id uuid REFERENCES hives (id) ON DELETE CASCADE,
                habit_id uuid REFERENCES habits (id) ON DELETE CASCADE,
                type activity_type NOT NULL,
                data jsonb NOT NULL DEFAULT '{}'::jsonb,
                -- addition: one 'completed' or 'advanced' line per day, however often a request is replayed
                dedupe_key text UNIQUE,
                created_at timestamptz NOT NULL DEFAULT now()
            );
            CREATE INDEX idx_activity_hive_time ON activity_events (hive_id, created_at DESC, id DESC);

            -- addition: answers to requests sent with an Idempotency-Key, replayed as they were
            CREATE TABLE idempotency_keys (
                user_id uuid NOT NULL,
                key text NOT NULL,
                request_hash text NOT NULL,
                status int NOT NULL,
                response bytea NOT NULL,
                created_at timestamptz NOT NULL DEFAULT now(),
                PRIMARY KEY (user_id, key)
            );
            CREATE INDEX idx_idempotency_keys_created ON idempotency_keys (created_at);
            """),
        Migration(version: 2, name: "quotas", sql: """
            -- Per-user quotas of contact matching (uploads, numbers, match reads).
            \(Quotas.tableSQL)
            """),
        Migration(version: 3, name: "habit and hive linked both ways, invitations", sql: """
            -- addition: a converted habit shows its hive (one hive per habit); each link is cleared
            -- when the other side is deleted
            UPDATE hives SET source_habit_id = NULL WHERE source_habit_id IS NOT NULL AND id NOT IN (
                SELECT DISTINCT ON (source_habit_id) id FROM hives WHERE source_habit_id IS NOT NULL ORDER BY source_habit_id, created_at, id);
            CREATE UNIQUE INDEX hives_source_habit ON hives (source_habit_id) WHERE source_habit_id IS NOT NULL;
            ALTER TABLE habits ADD COLUMN hive_id uuid UNIQUE REFERENCES hives (id) ON DELETE SET NULL;
            UPDATE habits h SET hive_id = x.id FROM hives x WHERE x.source_habit_id = h.id;

            -- addition: the owner invites a contact match; the invitee accepts (joins) or declines
            CREATE TYPE hive_invitation_status AS ENUM ('pending', 'accepted', 'declined');
            CREATE TABLE hive_invitations (
                id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
                hive_id uuid NOT NULL REFERENCES hives (id) ON DELETE CASCADE,
                user_id uuid NOT NULL REFERENCES profiles (id) ON DELETE CASCADE,
                invited_by uuid NOT NULL REFERENCES profiles (id) ON DELETE CASCADE,
                status hive_invitation_status NOT NULL DEFAULT 'pending',
                created_at timestamptz NOT NULL DEFAULT now(),
                decided_at timestamptz
            );
            -- one open invitation per person and hive
            CREATE UNIQUE INDEX hive_invitations_pending ON hive_invitations (hive_id, user_id) WHERE status = 'pending';
            CREATE INDEX hive_invitations_user ON hive_invitations (user_id, created_at DESC) WHERE status = 'pending';
            """),
        Migration(version: 4, name: "the console's counts", sql: """
            -- The console's Overview counts the logs written per day (HabitsService.consoleStats);
            -- the other index is by user and local day.
            CREATE INDEX habit_logs_created ON habit_logs (created_at);
            """),
    ]
}
