import ColonyPlatform

/// The realtime schema: the membership projection built from the domain events (who is in which
/// group, circle, hive), the replicas that are alive, and the presences tracked on them.
enum RealtimeMigrations {
    static let all: [Migration] = [
        Migration(version: 1, name: "memberships, replicas, presences", sql: """
            CREATE TABLE memberships (
                scope text NOT NULL CHECK (scope IN ('group', 'circle', 'hive')),
                scope_id uuid NOT NULL,
                user_id uuid NOT NULL,
                PRIMARY KEY (scope, scope_id, user_id)
            );

            -- replicas announce themselves every few seconds; presences of silent ones are ignored and swept
            CREATE TABLE replicas (
                replica_id text PRIMARY KEY,
                seen_at timestamptz NOT NULL DEFAULT now()
            );

            CREATE TABLE presences (
                phx_ref text PRIMARY KEY,
                topic text NOT NULL,
                presence_key text NOT NULL,
                replica_id text NOT NULL,
                connection_id text NOT NULL,
                meta jsonb NOT NULL DEFAULT '{}',
                created_at timestamptz NOT NULL DEFAULT now()
            );
            CREATE INDEX presences_topic ON presences (topic);
            CREATE INDEX presences_replica ON presences (replica_id);
            """),
    ]
}
