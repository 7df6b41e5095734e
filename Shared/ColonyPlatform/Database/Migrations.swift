import Logging
import PostgresNIO

/// One ordered step of a schema's history. Versions are applied in ascending order, once.
public struct Migration: Sendable {
    public var version: Int
    public var name: String
    public var sql: String

    public init(version: Int, name: String, sql: String) {
        self.version = version
        self.name = name
        self.sql = sql
    }
}

/// Applies migrations to a service's schema under an advisory lock, recording each in the
/// schema's own `schema_migrations` table. Running it again (or on several replicas at once)
/// applies nothing twice. Platform tables (outbox, inbox, jobs) are their own component.
public struct MigrationRunner: Sendable {
    public let database: Database

    public init(database: Database) {
        self.database = database
    }

    /// The platform's own migrations (every schema has them, as component `platform`).
    public static var platformMigrations: [Migration] { PlatformMigrations.all }

    /// Applies the platform's tables, then the service's migrations. Returns what was applied.
    @discardableResult
    public func migrate(_ migrations: [Migration], component: String = "service") async throws -> [Int] {
        try await apply(PlatformMigrations.all, component: "platform")
        return try await apply(migrations, component: component)
    }

    @discardableResult
    func apply(_ migrations: [Migration], component: String) async throws -> [Int] {
        let versions = migrations.map(\.version)
        precondition(versions == versions.sorted() && Set(versions).count == versions.count, "migration versions must be unique and ascending")
        let schema = database.schema
        let logger = database.logger
        return try await database.transaction { connection in
            try await connection.query("SELECT pg_advisory_xact_lock(hashtext(\(schema + ".migrations")))", logger: logger)
            try await connection.execute(script: """
                SET LOCAL search_path TO \(quoteIdentifier(schema)), public;
                CREATE TABLE IF NOT EXISTS schema_migrations (
                    component text NOT NULL,
                    version integer NOT NULL,
                    name text NOT NULL,
                    applied_at timestamptz NOT NULL DEFAULT now(),
                    PRIMARY KEY (component, version)
                );
                """, logger: logger)
            var applied = Set<Int>()
            for version in try await connection.query("SELECT version FROM schema_migrations WHERE component = \(component)", logger: logger).values(Int.self) {
                applied.insert(version)
            }
            var newlyApplied: [Int] = []
            for migration in migrations where !applied.contains(migration.version) {
                try await connection.execute(script: migration.sql, logger: logger)
                try await connection.query(
                    "INSERT INTO schema_migrations (component, version, name) VALUES (\(component), \(migration.version), \(migration.name))",
                    logger: logger
                )
                logger.info("migration applied", metadata: ["schema": "\(schema)", "component": "\(component)", "version": "\(migration.version)", "name": "\(migration.name)"])
                newlyApplied.append(migration.version)
            }
            return newlyApplied
        }
    }
}

/// The tables every service schema has: the outbox, the inbox, the job ledger, the dead letters,
/// the import ledger, the reports and the blocks.
enum PlatformMigrations {
    static let all: [Migration] = [
        Migration(version: 1, name: "outbox_inbox_jobs", sql: """
            CREATE TABLE outbox (
                position bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                event_id uuid NOT NULL UNIQUE,
                topic text NOT NULL,
                event_key text NOT NULL,
                event_type text NOT NULL,
                payload bytea NOT NULL,
                created_at timestamptz NOT NULL DEFAULT now()
            );
            CREATE TABLE inbox (
                event_id uuid PRIMARY KEY,
                event_type text NOT NULL,
                handled_at timestamptz NOT NULL DEFAULT now()
            );
            CREATE INDEX inbox_handled_at_idx ON inbox (handled_at);
            CREATE TABLE job_runs (
                job text PRIMARY KEY,
                last_started_at timestamptz,
                last_finished_at timestamptz,
                last_error text
            );
            """),
        // Events that could not be published (`publish`: the broker refused the message for good)
        // or applied (`consume`: the handler failed N times, or the event could not be read).
        // Operators list, retry and drop them with `colony-admin dead-letters`.
        Migration(version: 2, name: "dead_letters", sql: """
            CREATE TABLE dead_letters (
                id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                stage text NOT NULL CHECK (stage IN ('publish', 'consume')),
                event_id uuid,
                event_type text,
                topic text NOT NULL,
                event_key text,
                kafka_partition integer,
                kafka_offset bigint,
                payload bytea NOT NULL,
                error text NOT NULL,
                attempts integer NOT NULL DEFAULT 1,
                first_failed_at timestamptz NOT NULL DEFAULT now(),
                last_failed_at timestamptz NOT NULL DEFAULT now(),
                retry_requested_at timestamptz
            );
            CREATE UNIQUE INDEX dead_letters_event_idx ON dead_letters (stage, event_id) WHERE event_id IS NOT NULL;
            CREATE UNIQUE INDEX dead_letters_message_idx ON dead_letters (topic, kafka_partition, kafka_offset) WHERE event_id IS NULL;
            CREATE INDEX dead_letters_retry_idx ON dead_letters (id) WHERE retry_requested_at IS NOT NULL;
            """),
        // Acknowledged rows are kept a while (`relayed_at`, and where the broker put them) to be sent
        // again should the broker lose them; `trace_parent` carries the W3C trace context of the
        // change that published.
        Migration(version: 3, name: "outbox_retention_and_trace", sql: """
            ALTER TABLE outbox ADD COLUMN relayed_at timestamptz;
            ALTER TABLE outbox ADD COLUMN relayed_partition integer;
            ALTER TABLE outbox ADD COLUMN relayed_offset bigint;
            ALTER TABLE outbox ADD COLUMN trace_parent text;
            CREATE INDEX outbox_unrelayed_idx ON outbox (position) WHERE relayed_at IS NULL;
            CREATE INDEX outbox_relayed_at_idx ON outbox (relayed_at) WHERE relayed_at IS NOT NULL;
            """),
        Migration(version: 4, name: "job_last_success", sql: """
            ALTER TABLE job_runs ADD COLUMN last_succeeded_at timestamptz;
            """),
        // What `colony-admin import supabase` has brought into this schema, per app: a source
        // row (or a step done for one) is written with its entry in one transaction, so a run
        // after a failure neither writes a row twice nor misses one (see ColonyImport).
        Migration(version: 5, name: "import_ledger", sql: """
            CREATE TABLE import_ledger (
                app text NOT NULL,
                source_table text NOT NULL,
                source_id text NOT NULL,
                -- the id Colony gave the row, when not the source's
                target_id text,
                imported_at timestamptz NOT NULL DEFAULT now(),
                PRIMARY KEY (app, source_table, source_id)
            );
            """),
        // Reports of users' content (`ReportDesk`): ids, category and words only, never a copy of
        // the content; one open report per reporter and object.
        Migration(version: 6, name: "reports", sql: """
            CREATE TABLE reports (
                id uuid PRIMARY KEY,
                app text NOT NULL,
                object_type text NOT NULL,
                object_id uuid NOT NULL,
                reported_user_id uuid NOT NULL,
                reporter_id uuid NOT NULL,
                category text NOT NULL CHECK (category IN ('spam', 'harassment', 'hate', 'sexual', 'violence', 'self_harm', 'illegal', 'other')),
                words text,
                status text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'dismissed', 'removed', 'warned', 'suspended')),
                created_at timestamptz NOT NULL DEFAULT now(),
                resolved_at timestamptz,
                resolved_by text
            );
            CREATE UNIQUE INDEX reports_open_once_idx ON reports (reporter_id, object_type, object_id) WHERE status = 'open';
            CREATE INDEX reports_open_idx ON reports (created_at) WHERE status = 'open';
            CREATE INDEX reports_object_idx ON reports (object_type, object_id);
            CREATE INDEX reports_reported_user_idx ON reports (reported_user_id);
            CREATE INDEX reports_reporter_idx ON reports (reporter_id, created_at);
            """),
        // Blocks of one user by another in the service's app (`BlockList`); a user's go when the
        // account is deleted. Named apart from SocialSpot's older `blocks`, which moved here.
        Migration(version: 7, name: "user_blocks", sql: """
            CREATE TABLE user_blocks (
                blocker_id uuid NOT NULL,
                blocked_id uuid NOT NULL,
                created_at timestamptz NOT NULL DEFAULT now(),
                PRIMARY KEY (blocker_id, blocked_id),
                CHECK (blocker_id <> blocked_id)
            );
            CREATE INDEX user_blocks_blocked_idx ON user_blocks (blocked_id);
            """),
    ]
}
