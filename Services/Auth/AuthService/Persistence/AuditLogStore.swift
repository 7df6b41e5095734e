import ColonyModels
import ColonyPlatform
import Foundation
import Logging
import PostgresNIO

/// Plain SQL over `audit_log_entries`; every read is scoped to one app.
struct AuditLogStore {
    let logger: Logger

    func insert(app: App, payload: [String: JSONValue], ip: String, on connection: PostgresConnection) async throws {
        try await connection.query("""
            INSERT INTO audit_log_entries (id, app, payload, ip_address) VALUES (\(UUID.timeOrdered()), \(app.rawValue), \(try json(payload))::jsonb, \(ip))
            """, logger: logger)
    }

    func list(app: App, query: AuditQuery?, page: AuditPage, on connection: PostgresConnection) async throws -> (entries: [AuditLogEntryResource], total: Int) {
        // The filter's fields come from `AuditQuery`'s fixed list, never from the request.
        let filter = query.map { query in
            "(" + query.fields.map { "payload->>'\($0)' ILIKE $2" }.joined(separator: " OR ") + ")"
        } ?? "$2::text IS NULL"
        var binds = PostgresBindings()
        binds.append(app.rawValue)
        binds.append(query?.likePattern)
        let total = try await connection.query(PostgresQuery(unsafeSQL: "SELECT count(*)::int FROM audit_log_entries WHERE app = $1 AND \(filter)", binds: binds), logger: logger)
            .firstValue(Int.self) ?? 0
        var entries: [AuditLogEntryResource] = []
        if page.offset < total {
            binds.append(page.perPage)
            binds.append(page.offset)
            let rows = try await connection.query(PostgresQuery(unsafeSQL: """
                SELECT id, payload::text, created_at, ip_address FROM audit_log_entries WHERE app = $1 AND \(filter)
                ORDER BY created_at DESC, id DESC LIMIT $3 OFFSET $4
                """, binds: binds), logger: logger)
            for try await row in rows {
                let (id, payload, created, ip) = try row.read { c in try (c.next(UUID.self), c.next(String.self), c.next(Date.self), c.next(String.self)) }
                entries.append(AuditLogEntryResource(id: id.uuidString.lowercased(), payload: try decodeJSON(payload), createdAt: created, ipAddress: ip))
            }
        }
        return (entries, total)
    }

    /// Retention: entries older than `days` go, a batch at a time so a long backlog never holds
    /// one huge transaction. Returns how many went.
    func deleteOlder(thanDays days: Int, app: App? = nil, on connection: PostgresConnection) async throws -> Int {
        try await connection.query("""
            WITH gone AS (
                DELETE FROM audit_log_entries WHERE id IN (
                    SELECT id FROM audit_log_entries WHERE created_at < now() - make_interval(days => \(days)::int)
                      AND (\(app?.rawValue)::text IS NULL OR app = \(app?.rawValue)) LIMIT 10000)
                RETURNING 1)
            SELECT count(*)::int FROM gone
            """, logger: logger).firstValue(Int.self) ?? 0
    }
}
