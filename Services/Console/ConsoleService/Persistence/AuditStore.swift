import ColonyModels
import ColonyPlatform
import Foundation
import Logging
import PostgresNIO

/// One entry of the console's audit log.
public struct AuditEntry: Sendable, Equatable {
    public enum Outcome: String, Sendable, CaseIterable { case ok, refused, failed }

    public var id: Int64
    public var at: Date
    public var operatorID: UUID?
    public var operatorEmail: String
    public var role: String?
    public var action: String
    public var app: String?
    public var target: String?
    public var outcome: Outcome
    public var detail: String?
    public var ipAddress: String?
}

/// What the audit log page filters on; all optional.
public struct AuditFilter: Sendable, Equatable {
    public var operatorEmail: String?
    public var action: String?
    public var app: App?
    public var target: String?
    /// Entries older than this id (the next page).
    public var before: Int64?

    public init(operatorEmail: String? = nil, action: String? = nil, app: App? = nil, target: String? = nil, before: Int64? = nil) {
        self.operatorEmail = operatorEmail
        self.action = action
        self.app = app
        self.target = target
        self.before = before
    }
}

/// The append-only `audit_log` and its `operator_action` event, written in one transaction.
struct AuditStore {
    let logger: Logger

    func append(operatorID: UUID?, operatorEmail: String, role: OperatorRole?, action: String, app: App?, target: String?, outcome: AuditEntry.Outcome,
                detail: String?, ipAddress: String?, outbox: Outbox, on connection: PostgresConnection) async throws {
        let rows = try await connection.query("""
            INSERT INTO audit_log (operator_id, operator_email, role, action, app, target, outcome, detail, ip_address)
            VALUES (\(operatorID), \(String(operatorEmail.prefix(320))), \(role?.rawValue), \(action), \(app?.rawValue), \(target.map { String($0.prefix(512)) }),
                    \(outcome.rawValue), \(detail.map { String($0.prefix(2000)) }), \(ipAddress))
            RETURNING id, at
            """, logger: logger)
        for (id, at) in try await rows.read({ c in try (c.next(Int64.self), c.next(Date.self)) }) {
            let event = EventEnvelope(app: app, aggregateId: operatorEmail, actor: operatorID, payload: OperatorAction(
                entryId: id, operatorId: operatorID, operatorEmail: operatorEmail, role: role?.rawValue, action: action, app: app,
                target: target, outcome: outcome.rawValue, ipAddress: ipAddress, at: at))
            try await outbox.publish(event, on: connection, logger: logger)
        }
    }

    func list(_ filter: AuditFilter, limit: Int, on connection: PostgresConnection) async throws -> [AuditEntry] {
        let rows = try await connection.query("""
            SELECT id, at, operator_id, operator_email, role, action, app, target, outcome, detail, ip_address FROM audit_log
            WHERE (\(filter.operatorEmail)::text IS NULL OR operator_email = \(filter.operatorEmail))
              AND (\(filter.action)::text IS NULL OR action = \(filter.action))
              AND (\(filter.app?.rawValue)::text IS NULL OR app = \(filter.app?.rawValue))
              AND (\(filter.target)::text IS NULL OR target = \(filter.target))
              AND (\(filter.before)::bigint IS NULL OR id < \(filter.before))
            ORDER BY id DESC LIMIT \(limit)
            """, logger: logger)
        var entries: [AuditEntry] = []
        for try await row in rows {
            let entry = try row.read { c -> AuditEntry in
                let (id, at, operatorID, email, role, action) = try (c.next(Int64.self), c.next(Date.self), c.next(UUID?.self), c.next(String.self), c.next(String?.self), c.next(String.self))
                let (app, target, outcome, detail, ip) = try (c.next(String?.self), c.next(String?.self), c.next(String.self), c.next(String?.self), c.next(String?.self))
                return AuditEntry(id: id, at: at, operatorID: operatorID, operatorEmail: email, role: role, action: action, app: app, target: target,
                                  outcome: AuditEntry.Outcome(rawValue: outcome) ?? .failed, detail: detail, ipAddress: ip)
            }
            entries.append(entry)
        }
        return entries
    }
}
