import ColonyModels
import Foundation
import Logging
import PostgresNIO

/// A service's own `memberships` table: who is in which group, circle and hive, written from
/// the domain events (`Memberships.changes`) inside the inbox transaction, so a redelivered
/// event changes nothing. Realtime authorizes deliveries with it; notifications fans out with it.
public struct MembershipProjection: Sendable {
    /// The table, for a service's migration.
    public static let tableSQL = """
        CREATE TABLE memberships (
            scope text NOT NULL CHECK (scope IN ('group', 'circle', 'hive')),
            scope_id uuid NOT NULL,
            user_id uuid NOT NULL,
            PRIMARY KEY (scope, scope_id, user_id)
        );
        """

    public let logger: Logger

    public init(logger: Logger) {
        self.logger = logger
    }

    /// Applies what `event` does to membership; a no-op for other events.
    public func apply(_ event: ReceivedEvent, on connection: PostgresConnection) async throws {
        for change in try Memberships.changes(for: event) {
            try await apply(change, on: connection)
        }
    }

    public func apply(_ change: MembershipChange, on connection: PostgresConnection) async throws {
        switch change {
        case .add(let scope, let id, let users):
            try await connection.query("""
                INSERT INTO memberships (scope, scope_id, user_id) SELECT \(scope.rawValue), \(id), unnest(\(users)::uuid[])
                ON CONFLICT DO NOTHING
                """, logger: logger)
        case .remove(let scope, let id, let user):
            try await connection.query("DELETE FROM memberships WHERE scope = \(scope.rawValue) AND scope_id = \(id) AND user_id = \(user)", logger: logger)
        case .removeAll(let scope, let id):
            try await connection.query("DELETE FROM memberships WHERE scope = \(scope.rawValue) AND scope_id = \(id)", logger: logger)
        }
    }

    public func members(_ scope: MembershipScope, _ id: UUID, on connection: PostgresConnection) async throws -> Set<UUID> {
        var members: Set<UUID> = []
        for user in try await connection.query("SELECT user_id FROM memberships WHERE scope = \(scope.rawValue) AND scope_id = \(id)", logger: logger).values(UUID.self) {
            members.insert(user)
        }
        return members
    }

    public func isMember(_ user: UUID, of scope: MembershipScope, _ id: UUID, on connection: PostgresConnection) async throws -> Bool {
        try await connection.query("SELECT 1 FROM memberships WHERE scope = \(scope.rawValue) AND scope_id = \(id) AND user_id = \(user)", logger: logger)
            .collect().isEmpty == false
    }

    /// Forgets a deleted account everywhere.
    public func removeUser(_ user: UUID, on connection: PostgresConnection) async throws {
        try await connection.query("DELETE FROM memberships WHERE user_id = \(user)", logger: logger)
    }
}
