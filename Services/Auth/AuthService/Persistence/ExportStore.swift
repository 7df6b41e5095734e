import ColonyModels
import ColonyPlatform
import Foundation
import Logging
import PostgresNIO

/// One data export as auth keeps it (`exports`).
struct ExportRecord: Sendable, Equatable {
    enum Status: String, Sendable { case running, ready, failed, expired }

    var id: UUID
    var app: App
    var userID: UUID
    var requestedBy: String
    var status: Status
    var requestedAt: Date
    var readyAt: Date?
    var expiresAt: Date?
}

/// Plain SQL over `exports`.
struct ExportStore {
    let logger: Logger

    private static let columns = "id, app, user_id, requested_by, status, requested_at, ready_at, expires_at"

    private func records(_ rows: PostgresRowSequence) async throws -> [ExportRecord] {
        var records: [ExportRecord] = []
        for try await row in rows {
            let (id, app, user, by, status, requested, ready, expires) = try row.read { c in
                try (c.next(UUID.self), c.next(String.self), c.next(UUID.self), c.next(String.self), c.next(String.self), c.next(Date.self), c.next(Date?.self), c.next(Date?.self))
            }
            // The status is CHECKed; an app this build does not know is left alone.
            guard let app = App(rawValue: app), let status = ExportRecord.Status(rawValue: status) else {
                logger.error("export of an unknown app skipped", metadata: ["export_id": "\(id)"])
                continue
            }
            records.append(ExportRecord(id: id, app: app, userID: user, requestedBy: by, status: status, requestedAt: requested, readyAt: ready, expiresAt: expires))
        }
        return records
    }

    func running(userID: UUID, on connection: PostgresConnection) async throws -> ExportRecord? {
        try await records(connection.query("SELECT \(unescaped: Self.columns) FROM exports WHERE user_id = \(userID) AND status = 'running'", logger: logger)).first
    }

    /// Inserts a running export; false when one is running already (the partial unique index).
    func insert(_ record: ExportRecord, on connection: PostgresConnection) async throws -> Bool {
        do {
            try await connection.query("""
                INSERT INTO exports (id, app, user_id, requested_by, status, requested_at)
                VALUES (\(record.id), \(record.app.rawValue), \(record.userID), \(record.requestedBy), 'running', \(record.requestedAt))
                """, logger: logger)
            return true
        } catch let error as PSQLError where error.serverInfo?[.sqlState] == "23505" {
            return false
        }
    }

    func list(userID: UUID, app: App, on connection: PostgresConnection) async throws -> [ExportRecord] {
        try await records(connection.query("""
            SELECT \(unescaped: Self.columns) FROM exports WHERE user_id = \(userID) AND app = \(app.rawValue) ORDER BY requested_at DESC LIMIT 20
            """, logger: logger))
    }

    /// Running exports, oldest first, for the assembly job.
    func running(limit: Int, on connection: PostgresConnection) async throws -> [ExportRecord] {
        try await records(connection.query("SELECT \(unescaped: Self.columns) FROM exports WHERE status = 'running' ORDER BY requested_at LIMIT \(limit)", logger: logger))
    }

    /// Locks a running export for this replica's assembly; nil when another has it or it is done.
    func lockRunning(id: UUID, on connection: PostgresConnection) async throws -> ExportRecord? {
        try await records(connection.query("SELECT \(unescaped: Self.columns) FROM exports WHERE id = \(id) AND status = 'running' FOR UPDATE SKIP LOCKED", logger: logger)).first
    }

    func markReady(id: UUID, readyAt: Date, expiresAt: Date, bytes: Int, on connection: PostgresConnection) async throws {
        try await connection.query("""
            UPDATE exports SET status = 'ready', ready_at = \(readyAt), expires_at = \(expiresAt), archive_bytes = \(Int64(bytes)) WHERE id = \(id)
            """, logger: logger)
    }

    func markFailed(id: UUID, on connection: PostgresConnection) async throws {
        try await connection.query("UPDATE exports SET status = 'failed' WHERE id = \(id)", logger: logger)
    }

    /// Archives whose time is up or whose account is gone: marked expired, returned so their
    /// objects go. Running exports of an erased account end as failed.
    func expire(now: Date, on connection: PostgresConnection) async throws -> [ExportRecord] {
        try await records(connection.query("""
            UPDATE exports e SET status = CASE WHEN e.status = 'ready' THEN 'expired' ELSE 'failed' END
            WHERE (e.status = 'ready' AND (e.expires_at <= \(now) OR NOT EXISTS (SELECT 1 FROM users u WHERE u.id = e.user_id)))
               OR (e.status = 'running' AND NOT EXISTS (SELECT 1 FROM users u WHERE u.id = e.user_id))
            RETURNING \(unescaped: Self.columns)
            """, logger: logger))
    }

    /// Rows of erased accounts, once their objects are gone: the row is personal data too.
    func deleteOrphans(on connection: PostgresConnection) async throws {
        try await connection.query("""
            DELETE FROM exports e WHERE e.status IN ('expired', 'failed') AND NOT EXISTS (SELECT 1 FROM users u WHERE u.id = e.user_id)
            """, logger: logger)
    }
}
