import ColonyPlatform

/// The notifications schema: device and Live Activity tokens, preferences, the in-app list,
/// the delivery log (which is also the send queue), and the projections of other services'
/// events it fans out with (memberships, names, event posts).
enum NotificationsMigrations {
    static let all: [Migration] = [
        Migration(version: 1, name: "devices, preferences, notifications, deliveries, projections", sql: """
            -- A push token: an app install (kind device) or one Live Activity (kind live_activity,
            -- for a MyCirclee event post). A token belongs to the newest user who registered it.
            CREATE TABLE devices (
                id uuid PRIMARY KEY,
                app text NOT NULL,
                user_id uuid NOT NULL,
                kind text NOT NULL CHECK (kind IN ('device', 'live_activity')),
                token text NOT NULL,
                environment text NOT NULL CHECK (environment IN ('sandbox', 'production')),
                platform text NOT NULL DEFAULT 'ios',
                app_version text,
                locale text,
                activity_id text,
                post_id uuid,
                created_at timestamptz NOT NULL DEFAULT now(),
                updated_at timestamptz NOT NULL DEFAULT now(),
                UNIQUE (app, token),
                CHECK ((kind = 'live_activity') = (activity_id IS NOT NULL AND post_id IS NOT NULL))
            );
            CREATE INDEX devices_user ON devices (user_id, app);
            CREATE INDEX devices_post ON devices (post_id) WHERE post_id IS NOT NULL;
            CREATE UNIQUE INDEX devices_activity ON devices (app, user_id, activity_id) WHERE activity_id IS NOT NULL;

            -- Per user and app: kinds switched off, quiet hours in their time zone.
            CREATE TABLE preferences (
                user_id uuid NOT NULL,
                app text NOT NULL,
                disabled_kinds text[] NOT NULL DEFAULT '{}',
                quiet_start smallint CHECK (quiet_start BETWEEN 0 AND 1439),
                quiet_end smallint CHECK (quiet_end BETWEEN 0 AND 1439),
                timezone text,
                updated_at timestamptz NOT NULL DEFAULT now(),
                PRIMARY KEY (user_id, app),
                CHECK ((quiet_start IS NULL) = (quiet_end IS NULL) AND (quiet_start IS NULL) = (timezone IS NULL))
            );

            -- The in-app notification list: one row per alert and recipient. actor_id is who acted
            -- (absent for jobs and anonymous support): an erased account's words leave others' lists.
            CREATE TABLE notifications (
                id uuid PRIMARY KEY,
                user_id uuid NOT NULL,
                app text NOT NULL,
                kind text NOT NULL,
                event_id uuid NOT NULL,
                actor_id uuid,
                title text NOT NULL,
                body text NOT NULL,
                data jsonb NOT NULL DEFAULT '{}',
                created_at timestamptz NOT NULL,
                read_at timestamptz,
                UNIQUE (event_id, user_id)
            );
            CREATE INDEX notifications_list ON notifications (user_id, app, created_at DESC, id DESC);
            CREATE INDEX notifications_unread ON notifications (user_id, app) WHERE read_at IS NULL;
            CREATE INDEX notifications_actor ON notifications (actor_id) WHERE actor_id IS NOT NULL;

            -- One push to one token. Pending rows are the send queue (due at not_before; a sender
            -- leases a row until lease_until); the rest are the delivery log. (event_id, device_id)
            -- is unique: an event reaches a token once.
            CREATE TABLE deliveries (
                id uuid PRIMARY KEY,
                event_id uuid NOT NULL,
                device_id uuid REFERENCES devices (id) ON DELETE SET NULL,
                user_id uuid NOT NULL,
                app text NOT NULL,
                kind text NOT NULL,
                push_type text NOT NULL CHECK (push_type IN ('alert', 'background', 'liveactivity')),
                collapse_id text,
                expires_at timestamptz NOT NULL,
                payload text NOT NULL,
                token_suffix text NOT NULL,
                status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'sent', 'failed', 'dropped', 'skipped')),
                held_until timestamptz,
                not_before timestamptz NOT NULL,
                lease_until timestamptz,
                attempts int NOT NULL DEFAULT 0,
                last_status int,
                last_reason text,
                created_at timestamptz NOT NULL,
                sent_at timestamptz,
                UNIQUE (event_id, device_id)
            );
            CREATE INDEX deliveries_due ON deliveries (not_before) WHERE status = 'pending';
            CREATE INDEX deliveries_user ON deliveries (user_id, created_at DESC);
            CREATE INDEX deliveries_device ON deliveries (device_id) WHERE status = 'pending';
            CREATE INDEX deliveries_created ON deliveries (created_at);

            \(MembershipProjection.tableSQL)

            -- Names for push texts: circles, groups and projects, from their services' events.
            CREATE TABLE names (
                kind text NOT NULL CHECK (kind IN ('circle', 'group', 'project')),
                id uuid NOT NULL,
                name text NOT NULL,
                PRIMARY KEY (kind, id)
            );

            -- MyCirclee's event posts, for RSVP alerts and Live Activities.
            CREATE TABLE event_posts (
                post_id uuid PRIMARY KEY,
                circle_id uuid NOT NULL,
                author_id uuid NOT NULL,
                title text NOT NULL,
                location text,
                starts_at timestamptz,
                going int NOT NULL DEFAULT 0,
                maybe int NOT NULL DEFAULT 0,
                declined int NOT NULL DEFAULT 0,
                started_pushed boolean NOT NULL DEFAULT false,
                ended_pushed boolean NOT NULL DEFAULT false
            );
            CREATE INDEX event_posts_starts ON event_posts (starts_at) WHERE NOT ended_pushed;
            CREATE INDEX event_posts_author ON event_posts (author_id);
            """),
        Migration(version: 2, name: "deliveries carry their membership scope", sql: """
            -- The group, circle or hive a queued push is about: it is sent only while the recipient
            -- is still a member (checked when it is leased), and dropped when they leave.
            ALTER TABLE deliveries ADD COLUMN scope text CHECK (scope IN ('group', 'circle', 'hive'));
            ALTER TABLE deliveries ADD COLUMN scope_id uuid;
            CREATE INDEX deliveries_scope ON deliveries (scope, scope_id, user_id) WHERE status = 'pending';
            """),
        Migration(version: 3, name: "deliveries carry their trace", sql: """
            -- The W3C traceparent of the event a push was queued for: the send (its log lines and
            -- the APNs request's traceparent header) joins the trace of the request that caused it.
            ALTER TABLE deliveries ADD COLUMN trace_parent text;
            """),
        Migration(version: 4, name: "the console's delivery log per app", sql: """
            -- The console's Push page: an app's delivery log, newest first, all of it or of one
            -- status (deliveries_created would walk every app's rows, and past every other status's).
            -- The second also serves the Overview's pushes sent and failed per app and day.
            CREATE INDEX deliveries_app_created ON deliveries (app, created_at DESC, id DESC);
            CREATE INDEX deliveries_app_status_created ON deliveries (app, status, created_at DESC, id DESC);
            """),
        Migration(version: 5, name: "the in-app list's retention per app", sql: """
            -- The sweep deletes each app's entries past its own retention (the apps file's
            -- notification_retention_days): without this it read the whole list every round.
            CREATE INDEX notifications_app_created ON notifications (app, created_at);
            """),
        Migration(version: 6, name: "suspended accounts get no pushes", sql: """
            -- From auth's user_suspended (user_reinstated deletes the row): no push is queued for
            -- the account until `until`; the sweep deletes rows whose end has passed.
            CREATE TABLE suspended_accounts (
                user_id uuid PRIMARY KEY,
                app text NOT NULL,
                until timestamptz NOT NULL
            );
            """),
    ]
}
