import ColonyPlatform

/// The projects schema: the seed's nine tables (`ibelieveinyou.md`, section 2) — `builders`,
/// `karma`, `projects`, `posts`, `follows`, `milestones`, `support_messages`, `likes`,
/// `support_actions` — with their counters kept by the service, never by clients. Additions are
/// marked.
enum ProjectsMigrations {
    static let all: [Migration] = [
        Migration(version: 1, name: "builders, karma, projects, posts, follows, milestones, support, likes", sql: """
            CREATE TYPE project_mood AS ENUM ('green', 'yellow', 'red');
            CREATE TYPE support_action_type AS ENUM ('follow', 'message', 'like');

            -- The seed's level table (section 7) in SQL, so a karma update sets the level in the
            -- same statement that adds the points. `KarmaLevel` is the same table in Swift; a test
            -- holds the two together.
            CREATE FUNCTION karma_level(points integer) RETURNS integer
                LANGUAGE sql IMMUTABLE PARALLEL SAFE
                RETURN CASE WHEN points >= 1001 THEN 5 WHEN points >= 501 THEN 4 WHEN points >= 201 THEN 3 WHEN points >= 51 THEN 2 ELSE 1 END;

            CREATE TABLE builders (
                id uuid PRIMARY KEY,
                user_id uuid NOT NULL UNIQUE,
                name text NOT NULL CHECK (length(btrim(name)) BETWEEN 1 AND 60),
                bio text,
                -- addition: the avatar's storage version (the file is `{builder_id}` in `builder-avatars`)
                avatar_version bigint,
                website_url text,
                twitter_handle text,
                is_creator boolean NOT NULL DEFAULT false,
                -- addition: the name was made from the token's email; user_registered may replace it
                name_is_default boolean NOT NULL DEFAULT false,
                created_at timestamptz NOT NULL DEFAULT now(),
                updated_at timestamptz NOT NULL DEFAULT now()
            );

            CREATE TABLE karma (
                id uuid PRIMARY KEY,
                user_id uuid NOT NULL UNIQUE REFERENCES builders (user_id) ON DELETE CASCADE,
                total_points integer NOT NULL DEFAULT 0 CHECK (total_points >= 0),
                level integer NOT NULL DEFAULT 1 CHECK (level BETWEEN 1 AND 5),
                created_at timestamptz NOT NULL DEFAULT now(),
                updated_at timestamptz NOT NULL DEFAULT now(),
                CHECK (level = karma_level(total_points))
            );

            -- addition: accounts erased by user_deleted; a late request must not bring them back
            CREATE TABLE deleted_users (
                user_id uuid PRIMARY KEY,
                deleted_at timestamptz NOT NULL DEFAULT now()
            );

            CREATE TABLE projects (
                id uuid PRIMARY KEY,
                builder_id uuid NOT NULL REFERENCES builders (id) ON DELETE CASCADE,
                title text NOT NULL CHECK (length(btrim(title)) BETWEEN 1 AND 100),
                tagline text,
                description text,
                -- addition: the cover's storage version (the file is `{project_id}` in `project-covers`)
                cover_version bigint,
                public_slug text NOT NULL UNIQUE CHECK (public_slug ~ '^[a-z0-9]+(-[a-z0-9]+)*$' AND length(public_slug) <= 80),
                mood project_mood,
                follower_count integer NOT NULL DEFAULT 0 CHECK (follower_count >= 0),
                is_published boolean NOT NULL DEFAULT true,
                created_at timestamptz NOT NULL DEFAULT now(),
                updated_at timestamptz NOT NULL DEFAULT now()
            );
            CREATE INDEX projects_builder ON projects (builder_id, created_at DESC);
            -- discovery: new (created_at desc) and trending (follower_count desc), published only
            CREATE INDEX projects_new ON projects (created_at DESC, id DESC) WHERE is_published;
            CREATE INDEX projects_trending ON projects (follower_count DESC, id DESC) WHERE is_published;

            CREATE TABLE posts (
                id uuid PRIMARY KEY,
                project_id uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
                content text NOT NULL CHECK (length(btrim(content)) >= 1),
                -- storage keys in `post-images`; answers and events carry their URLs
                images text[] NOT NULL DEFAULT '{}',
                like_count integer NOT NULL DEFAULT 0 CHECK (like_count >= 0),
                created_at timestamptz NOT NULL DEFAULT now(),
                updated_at timestamptz NOT NULL DEFAULT now()
            );
            -- a project's updates and the feed's per-project scans, newest first
            CREATE INDEX posts_project_created ON posts (project_id, created_at DESC, id DESC);

            -- addition: uploaded post pictures not yet in a post; a job removes them after a day
            CREATE TABLE post_uploads (
                key text PRIMARY KEY,
                project_id uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
                uploaded_at timestamptz NOT NULL DEFAULT now()
            );
            CREATE INDEX post_uploads_age ON post_uploads (uploaded_at);

            CREATE TABLE follows (
                id uuid PRIMARY KEY,
                user_id uuid NOT NULL REFERENCES builders (user_id) ON DELETE CASCADE,
                project_id uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
                created_at timestamptz NOT NULL DEFAULT now(),
                UNIQUE (user_id, project_id)
            );
            CREATE INDEX follows_project ON follows (project_id, created_at DESC);

            CREATE TABLE milestones (
                id uuid PRIMARY KEY,
                project_id uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
                title text NOT NULL CHECK (length(btrim(title)) BETWEEN 1 AND 200),
                description text,
                is_completed boolean NOT NULL DEFAULT false,
                target_date date,
                completed_at timestamptz,
                created_at timestamptz NOT NULL DEFAULT now(),
                CHECK (is_completed = (completed_at IS NOT NULL))
            );
            CREATE INDEX milestones_project ON milestones (project_id, target_date);

            CREATE TABLE support_messages (
                id uuid PRIMARY KEY,
                project_id uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
                -- the seed's NOT NULL is relaxed: an erased sender's messages stay, anonymous
                sender_id uuid REFERENCES builders (id) ON DELETE SET NULL,
                message text NOT NULL CHECK (length(btrim(message)) BETWEEN 1 AND 1000),
                is_anonymous boolean NOT NULL DEFAULT false,
                created_at timestamptz NOT NULL DEFAULT now(),
                CHECK (sender_id IS NOT NULL OR is_anonymous)
            );
            CREATE INDEX support_messages_project ON support_messages (project_id, created_at DESC);
            -- the sender's rate limit and stats
            CREATE INDEX support_messages_sender ON support_messages (sender_id, created_at DESC);

            CREATE TABLE likes (
                id uuid PRIMARY KEY,
                user_id uuid NOT NULL REFERENCES builders (user_id) ON DELETE CASCADE,
                post_id uuid NOT NULL REFERENCES posts (id) ON DELETE CASCADE,
                created_at timestamptz NOT NULL DEFAULT now(),
                UNIQUE (user_id, post_id)
            );
            CREATE INDEX likes_post ON likes (post_id);

            CREATE TABLE support_actions (
                id uuid PRIMARY KEY,
                user_id uuid NOT NULL REFERENCES builders (user_id) ON DELETE CASCADE,
                project_id uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
                action_type support_action_type NOT NULL,
                points_earned integer NOT NULL CHECK (points_earned >= 0),
                metadata jsonb,
                created_at timestamptz NOT NULL DEFAULT now()
            );
            CREATE INDEX support_actions_user ON support_actions (user_id, created_at DESC);
            CREATE INDEX support_actions_project ON support_actions (project_id);

            -- addition: karma a user was given for following a project or liking a post, once
            -- ever per subject: unfollowing and following again (or unliking and liking) earns
            -- nothing more. Kept when the project or post goes, erased with the user.
            CREATE TABLE karma_awards (
                user_id uuid NOT NULL REFERENCES builders (user_id) ON DELETE CASCADE,
                kind support_action_type NOT NULL CHECK (kind <> 'message'),
                subject_id uuid NOT NULL,
                awarded_at timestamptz NOT NULL DEFAULT now(),
                PRIMARY KEY (user_id, kind, subject_id)
            );
            """),
        Migration(version: 2, name: "follow notices", sql: """
            -- addition: when each user's follow of a project was last announced to its owner; an
            -- unfollow and re-follow within a day is not announced again
            CREATE TABLE follow_notices (
                user_id uuid NOT NULL REFERENCES builders (user_id) ON DELETE CASCADE,
                project_id uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
                notified_at timestamptz NOT NULL DEFAULT now(),
                PRIMARY KEY (user_id, project_id)
            );
            """),
        Migration(version: 3, name: "the console's counts", sql: """
            -- The console's Overview counts the projects (drafts too: projects_new holds published
            -- ones only) and posts created per day (ProjectsService.consoleStats).
            CREATE INDEX projects_created ON projects (created_at);
            CREATE INDEX posts_created ON posts (created_at);
            """),
    ]
}
