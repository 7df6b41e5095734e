import ColonyPlatform

/// The chat schema: the seed's five tables (`unify.md`, section 1) — `user`, `group`,
/// `group_members`, `message`, `event` — named in the plural here because `user` and `group` are
/// SQL keywords; events and answers use the seed's names. Additions are marked.
enum ChatMigrations {
    static let all: [Migration] = [
        Migration(version: 1, name: "users, groups, members, messages, events", sql: """
            CREATE TYPE group_role AS ENUM ('owner', 'admin', 'user');
            CREATE TYPE message_type AS ENUM ('text', 'voice');

            CREATE TABLE users (
                id uuid PRIMARY KEY,
                display_name text NOT NULL,
                email text,
                -- addition: the avatar's storage version, for the cache-busting `?v=` of its URL
                avatar_version bigint,
                created_at timestamptz NOT NULL DEFAULT now(),
                updated_at timestamptz NOT NULL DEFAULT now()
            );
            CREATE INDEX users_email ON users (lower(email)) WHERE email IS NOT NULL;

            -- addition: accounts erased by user_deleted; a late request must not bring them back
            CREATE TABLE deleted_users (
                user_id uuid PRIMARY KEY,
                deleted_at timestamptz NOT NULL DEFAULT now()
            );

            CREATE TABLE groups (
                id uuid PRIMARY KEY,
                name text NOT NULL CHECK (length(btrim(name)) BETWEEN 1 AND 100),
                owner_id uuid NOT NULL REFERENCES users (id),
                -- addition: the group picture's storage version (the picture is `{group_id}`)
                picture_version bigint,
                created_at timestamptz NOT NULL DEFAULT now(),
                updated_at timestamptz NOT NULL DEFAULT now()
            );

            CREATE TABLE group_members (
                group_id uuid NOT NULL REFERENCES groups (id) ON DELETE CASCADE,
                user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
                role group_role NOT NULL DEFAULT 'user',
                joined_at timestamptz NOT NULL DEFAULT now(),
                last_read_at timestamptz NOT NULL DEFAULT now(),
                PRIMARY KEY (group_id, user_id)
            );
            CREATE INDEX group_members_user ON group_members (user_id);
            -- exactly one owner per group; an ownership transfer swaps roles in one transaction
            CREATE UNIQUE INDEX group_members_one_owner ON group_members (group_id) WHERE role = 'owner';

            CREATE TABLE messages (
                id uuid PRIMARY KEY,
                group_id uuid NOT NULL REFERENCES groups (id) ON DELETE CASCADE,
                content text NOT NULL DEFAULT '',
                sent_by uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
                sent_at timestamptz NOT NULL DEFAULT now(),
                is_edited boolean NOT NULL DEFAULT false,
                message_type message_type NOT NULL DEFAULT 'text',
                voice_duration double precision CHECK (voice_duration > 0),
                -- addition: the voice file's storage key; `voice_url` is signed from it on the way out
                voice_path text,
                CHECK ((message_type = 'voice') = (voice_path IS NOT NULL AND voice_duration IS NOT NULL))
            );
            -- history pages and unread counts: one group's messages in time order
            CREATE INDEX messages_group_sent ON messages (group_id, sent_at, id);
            CREATE INDEX messages_sender ON messages (sent_by);

            CREATE TABLE events (
                id uuid PRIMARY KEY,
                title text NOT NULL CHECK (length(btrim(title)) BETWEEN 1 AND 200),
                details text,
                starts_at timestamptz NOT NULL,
                ends_at timestamptz NOT NULL,
                group_id uuid REFERENCES groups (id) ON DELETE CASCADE,
                created_by uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
                created_at timestamptz NOT NULL DEFAULT now(),
                updated_at timestamptz NOT NULL DEFAULT now(),
                CHECK (ends_at >= starts_at)
            );
            CREATE INDEX events_group_time ON events (group_id, starts_at) WHERE group_id IS NOT NULL;
            CREATE INDEX events_personal_time ON events (created_by, starts_at) WHERE group_id IS NULL;
            """),
        Migration(version: 2, name: "users.auth_name", sql: """
            -- addition: the last name auth's events brought; an event applies its name only when it
            -- differs, so an email change never undoes a rename. Existing users count their
            -- current name as seen.
            ALTER TABLE users ADD COLUMN auth_name text;
            UPDATE users SET auth_name = display_name;
            """),
        Migration(version: 3, name: "member email lookup budget", sql: """
            -- Per-user budgets (MemberLookupBudget: addresses looked up when adding members by email).
            \(Quotas.tableSQL)
            """),
        Migration(version: 4, name: "the console's counts", sql: """
            -- The console's Overview counts the messages sent per day across every group
            -- (ChatService.consoleStats); the history's index leads with the group.
            CREATE INDEX messages_sent ON messages (sent_at);
            """),
    ]
}
