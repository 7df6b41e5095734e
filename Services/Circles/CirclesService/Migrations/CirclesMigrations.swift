import ColonyPlatform

/// The circles schema: the seed's tables (`mycirclee.md`) except `push_tokens` (the
/// notifications service owns push tokens). `circle_members` gates everything. Additions are
/// marked.
enum CirclesMigrations {
    static let all: [Migration] = [
        Migration(version: 1, name: "profiles, circles, posts, dms, presence", sql: """
            CREATE TYPE circle_role AS ENUM ('owner', 'member');
            CREATE TYPE post_type AS ENUM ('note', 'event', 'ask', 'poll');
            CREATE TYPE ask_urgency AS ENUM ('low', 'medium', 'high', 'urgent');
            CREATE TYPE rsvp_status AS ENUM ('going', 'maybe', 'declined');
            CREATE TYPE dm_privacy AS ENUM ('anyone', 'reciprocal', 'nobody');
            CREATE TYPE presence_status AS ENUM ('free', 'deep_work', 'out', 'still_up', 'asleep');
            CREATE TYPE add_request_status AS ENUM ('pending', 'accepted', 'declined');

            CREATE TABLE profiles (
                user_id uuid PRIMARY KEY,
                display_name text NOT NULL,
                handle text NOT NULL,
                bio text,
                dm_privacy dm_privacy NOT NULL DEFAULT 'anyone',
                is_pro boolean NOT NULL DEFAULT false,
                full_name text,
                location text,
                address text,
                email text,
                phone text,
                birthday date,
                created_at timestamptz NOT NULL DEFAULT now(),
                updated_at timestamptz NOT NULL DEFAULT now()
            );
            CREATE UNIQUE INDEX profiles_handle ON profiles (lower(handle));

            -- addition: accounts erased by user_deleted; a late request must not bring them back
            CREATE TABLE deleted_users (
                user_id uuid PRIMARY KEY,
                deleted_at timestamptz NOT NULL DEFAULT now()
            );

            CREATE TABLE circles (
                id uuid PRIMARY KEY,
                name text NOT NULL CHECK (length(btrim(name)) BETWEEN 1 AND 60),
                -- who made it (history: no reference, the account may be gone)
                created_by uuid NOT NULL,
                created_at timestamptz NOT NULL DEFAULT now()
            );

            CREATE TABLE circle_members (
                circle_id uuid NOT NULL REFERENCES circles (id) ON DELETE CASCADE,
                user_id uuid NOT NULL REFERENCES profiles (user_id) ON DELETE CASCADE,
                role circle_role NOT NULL DEFAULT 'member',
                joined_at timestamptz NOT NULL DEFAULT now(),
                PRIMARY KEY (circle_id, user_id)
            );
            CREATE INDEX circle_members_user ON circle_members (user_id);

            -- The seed's circles.invite_code, as single-use codes that expire (48 h).
            CREATE TABLE circle_invites (
                code text PRIMARY KEY,
                circle_id uuid NOT NULL REFERENCES circles (id) ON DELETE CASCADE,
                created_by uuid NOT NULL REFERENCES profiles (user_id) ON DELETE CASCADE,
                created_at timestamptz NOT NULL DEFAULT now(),
                expires_at timestamptz NOT NULL,
                claimed_by uuid REFERENCES profiles (user_id) ON DELETE SET NULL,
                claimed_at timestamptz
            );
            CREATE INDEX circle_invites_circle ON circle_invites (circle_id);

            CREATE TABLE add_requests (
                id uuid PRIMARY KEY,
                circle_id uuid NOT NULL REFERENCES circles (id) ON DELETE CASCADE,
                from_user_id uuid NOT NULL REFERENCES profiles (user_id) ON DELETE CASCADE,
                to_user_id uuid NOT NULL REFERENCES profiles (user_id) ON DELETE CASCADE,
                status add_request_status NOT NULL DEFAULT 'pending',
                created_at timestamptz NOT NULL DEFAULT now(),
                decided_at timestamptz
            );
            -- one open request per person and circle
            CREATE UNIQUE INDEX add_requests_pending ON add_requests (circle_id, to_user_id) WHERE status = 'pending';
            CREATE INDEX add_requests_to ON add_requests (to_user_id) WHERE status = 'pending';

            CREATE TABLE posts (
                id uuid PRIMARY KEY,
                circle_id uuid NOT NULL REFERENCES circles (id) ON DELETE CASCADE,
                author_id uuid NOT NULL REFERENCES profiles (user_id) ON DELETE CASCADE,
                type post_type NOT NULL,
                body text NOT NULL,
                mood text,
                category text,
                urgency ask_urgency,
                location text,
                latitude double precision CHECK (latitude BETWEEN -90 AND 90),
                longitude double precision CHECK (longitude BETWEEN -180 AND 180),
                -- addition: an event post's start time
                starts_at timestamptz,
                -- addition: the photo's storage key and version (the seed's photo_url is built from them)
                photo_version bigint,
                expires_at timestamptz NOT NULL,
                created_at timestamptz NOT NULL DEFAULT now(),
                updated_at timestamptz NOT NULL DEFAULT now()
            );
            -- the feed: one circle's live posts, newest first
            CREATE INDEX posts_circle_feed ON posts (circle_id, created_at DESC, id DESC);
            CREATE INDEX posts_expires ON posts (expires_at);
            CREATE INDEX posts_author ON posts (author_id);

            CREATE TABLE post_reactions (
                post_id uuid NOT NULL REFERENCES posts (id) ON DELETE CASCADE,
                user_id uuid NOT NULL REFERENCES profiles (user_id) ON DELETE CASCADE,
                emoji text NOT NULL,
                created_at timestamptz NOT NULL DEFAULT now(),
                PRIMARY KEY (post_id, user_id, emoji)
            );

            CREATE TABLE poll_options (
                id uuid PRIMARY KEY,
                post_id uuid NOT NULL REFERENCES posts (id) ON DELETE CASCADE,
                label text NOT NULL,
                -- addition: the options' order
                position int NOT NULL,
                created_at timestamptz NOT NULL DEFAULT now(),
                UNIQUE (post_id, position)
            );

            CREATE TABLE poll_votes (
                option_id uuid NOT NULL REFERENCES poll_options (id) ON DELETE CASCADE,
                user_id uuid NOT NULL REFERENCES profiles (user_id) ON DELETE CASCADE,
                -- addition: the poll, so one vote per user and poll is a key
                post_id uuid NOT NULL REFERENCES posts (id) ON DELETE CASCADE,
                created_at timestamptz NOT NULL DEFAULT now(),
                PRIMARY KEY (post_id, user_id)
            );
            CREATE INDEX poll_votes_option ON poll_votes (option_id);

            CREATE TABLE event_rsvps (
                post_id uuid NOT NULL REFERENCES posts (id) ON DELETE CASCADE,
                user_id uuid NOT NULL REFERENCES profiles (user_id) ON DELETE CASCADE,
                status rsvp_status NOT NULL,
                created_at timestamptz NOT NULL DEFAULT now(),
                PRIMARY KEY (post_id, user_id)
            );

            CREATE TABLE kept_posts (
                user_id uuid NOT NULL REFERENCES profiles (user_id) ON DELETE CASCADE,
                post_id uuid NOT NULL REFERENCES posts (id) ON DELETE CASCADE,
                kept_at timestamptz NOT NULL DEFAULT now(),
                PRIMARY KEY (user_id, post_id)
            );

            -- user_a < user_b: one thread per pair and circle
            CREATE TABLE dm_threads (
                id uuid PRIMARY KEY,
                circle_id uuid NOT NULL REFERENCES circles (id) ON DELETE CASCADE,
                user_a uuid NOT NULL REFERENCES profiles (user_id) ON DELETE CASCADE,
                user_b uuid NOT NULL REFERENCES profiles (user_id) ON DELETE CASCADE,
                last_message_at timestamptz,
                notify_a boolean NOT NULL DEFAULT true,
                notify_b boolean NOT NULL DEFAULT true,
                created_at timestamptz NOT NULL DEFAULT now(),
                CHECK (user_a < user_b),
                UNIQUE (circle_id, user_a, user_b)
            );
            CREATE INDEX dm_threads_a ON dm_threads (user_a);
            CREATE INDEX dm_threads_b ON dm_threads (user_b);

            CREATE TABLE dm_messages (
                id uuid PRIMARY KEY,
                thread_id uuid NOT NULL REFERENCES dm_threads (id) ON DELETE CASCADE,
                sender_id uuid NOT NULL REFERENCES profiles (user_id) ON DELETE CASCADE,
                body text NOT NULL,
                reply_to_id uuid REFERENCES dm_messages (id) ON DELETE SET NULL,
                created_at timestamptz NOT NULL DEFAULT now(),
                read_at timestamptz
            );
            CREATE INDEX dm_messages_thread ON dm_messages (thread_id, created_at DESC, id DESC);
            CREATE INDEX dm_messages_unread ON dm_messages (thread_id, sender_id) WHERE read_at IS NULL;

            CREATE TABLE dm_reactions (
                message_id uuid NOT NULL REFERENCES dm_messages (id) ON DELETE CASCADE,
                user_id uuid NOT NULL REFERENCES profiles (user_id) ON DELETE CASCADE,
                emoji text NOT NULL,
                created_at timestamptz NOT NULL DEFAULT now(),
                PRIMARY KEY (message_id, user_id, emoji)
            );

            CREATE TABLE presence_states (
                user_id uuid NOT NULL REFERENCES profiles (user_id) ON DELETE CASCADE,
                circle_id uuid NOT NULL REFERENCES circles (id) ON DELETE CASCADE,
                status presence_status NOT NULL,
                updated_at timestamptz NOT NULL DEFAULT now(),
                PRIMARY KEY (user_id, circle_id)
            );
            CREATE INDEX presence_states_circle ON presence_states (circle_id);
            """),
        Migration(version: 2, name: "add request approval, quotas", sql: """
            -- The owner's optional approval of an add request; only the invitee's acceptance adds them.
            ALTER TABLE add_requests ADD COLUMN owner_approved_at timestamptz;

            \(Quotas.tableSQL)
            """),
        Migration(version: 3, name: "profiles.auth_name", sql: """
            -- addition: the last name auth's events brought; an event applies its name only when
            -- it differs (a late sign-up name replaces the placeholder, an email change does not
            -- undo a rename). Existing profiles count their current name as seen.
            ALTER TABLE profiles ADD COLUMN auth_name text;
            UPDATE profiles SET auth_name = display_name;
            """),
        Migration(version: 4, name: "the console's counts", sql: """
            -- The console's Overview counts the posts created per day across every circle
            -- (CirclesService.consoleStats); the feed's index leads with the circle.
            CREATE INDEX posts_created ON posts (created_at);
            """),
    ]
}
