import ColonyPlatform

/// The nearby schema: SocialSpot's profiles (with the app's settings), the one location row per
/// sharing user as a PostGIS `geography` point with a GiST index (blocks are the platform's
/// `user_blocks` since version 4). PostGIS lives in `public`, created by `colony-admin provision`;
/// the service's role only uses it.
enum NearbyMigrations {
    static let all: [Migration] = [
        Migration(version: 1, name: "profiles, locations, blocks", sql: """
            CREATE TABLE profiles (
                id uuid PRIMARY KEY,
                name text NOT NULL DEFAULT '',
                bio text,
                school text,
                birthday date,
                social_links jsonb NOT NULL DEFAULT '{}',
                -- the photo's storage version (the photo is `{user_id}`), for `?v=` cache-busting
                photo_version bigint,
                dark_mode boolean NOT NULL DEFAULT false,
                satellite_map boolean NOT NULL DEFAULT false,
                share_location boolean NOT NULL DEFAULT false,
                created_at timestamptz NOT NULL DEFAULT now(),
                updated_at timestamptz NOT NULL DEFAULT now()
            );

            -- accounts erased by user_deleted; a late request must not bring them back
            CREATE TABLE deleted_users (
                user_id uuid PRIMARY KEY,
                deleted_at timestamptz NOT NULL DEFAULT now()
            );

            -- One row per sharing user; it exists only while they share and report.
            CREATE TABLE locations (
                user_id uuid PRIMARY KEY REFERENCES profiles (id) ON DELETE CASCADE,
                position geography(Point, 4326) NOT NULL,
                accuracy_m double precision CHECK (accuracy_m IS NULL OR accuracy_m >= 0),
                updated_at timestamptz NOT NULL DEFAULT now()
            );
            CREATE INDEX locations_position ON locations USING gist (position);
            CREATE INDEX locations_updated_at ON locations (updated_at);

            CREATE TABLE blocks (
                blocker_id uuid NOT NULL REFERENCES profiles (id) ON DELETE CASCADE,
                blocked_id uuid NOT NULL,
                created_at timestamptz NOT NULL DEFAULT now(),
                PRIMARY KEY (blocker_id, blocked_id),
                CHECK (blocker_id <> blocked_id)
            );
            CREATE INDEX blocks_blocked ON blocks (blocked_id);
            """),
        Migration(version: 2, name: "shown positions, offset key, quotas", sql: """
            -- What others see of a point (offset and snapped, `LocationPrivacy`), with its own index:
            -- who is in range of whom is computed from it. Points stored before it are made stale,
            -- so the TTL job removes them (with their events) and clients report afresh.
            ALTER TABLE locations ADD COLUMN shown geography(Point, 4326);
            UPDATE locations SET shown = position, updated_at = 'epoch';
            ALTER TABLE locations ALTER COLUMN shown SET NOT NULL;
            CREATE INDEX locations_shown ON locations USING gist (shown);

            -- The key of everyone's secret offsets: random, made once, the same on every replica.
            CREATE TABLE location_noise_key (
                id integer PRIMARY KEY CHECK (id = 1),
                key text NOT NULL
            );
            INSERT INTO location_noise_key (id, key)
            VALUES (1, replace(gen_random_uuid()::text || gen_random_uuid()::text || gen_random_uuid()::text, '-', ''));

            \(Quotas.tableSQL)
            """),
        Migration(version: 3, name: "the console's counts", sql: """
            -- The console's Overview counts the profiles created per day (NearbyService.consoleStats).
            CREATE INDEX profiles_created ON profiles (created_at);
            """),
        Migration(version: 4, name: "blocks into the platform's user_blocks", sql: """
            -- SocialSpot's blocks move to the platform's `user_blocks` (`BlockList`, the same table
            -- in every app; its migration ran before this one). What cascaded from `profiles` is
            -- now `ProfileStore.erase` (and the platform's erasure on `user_deleted`).
            INSERT INTO user_blocks (blocker_id, blocked_id, created_at)
            SELECT blocker_id, blocked_id, created_at FROM blocks
            ON CONFLICT DO NOTHING;
            DROP TABLE blocks;
            """),
    ]
}
