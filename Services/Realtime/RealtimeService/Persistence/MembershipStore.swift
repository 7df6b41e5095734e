import ColonyModels
import Foundation
import Logging
import PostgresNIO

/// `memberships`: the projection of group, circle and hive members from the domain events.
struct MembershipStore: Sendable {
    let logger: Logger

    func apply(_ change: MembershipChange, on connection: PostgresConnection) async throws {
        switch change {
        case .add(let scope, let id, let users):
            for user in users {
                try await connection.query("""
                    INSERT INTO memberships (scope, scope_id, user_id) VALUES (\(scope.rawValue), \(id), \(user))
                    ON CONFLICT DO NOTHING
                    """, logger: logger)
            }
        case .remove(let scope, let id, let user):
            try await connection.query("DELETE FROM memberships WHERE scope = \(scope.rawValue) AND scope_id = \(id) AND user_id = \(user)", logger: logger)
        case .removeAll(let scope, let id):
            try await connection.query("DELETE FROM memberships WHERE scope = \(scope.rawValue) AND scope_id = \(id)", logger: logger)
        }
    }

    func members(_ scope: Audience.Scope, _ id: UUID, on connection: PostgresConnection) async throws -> Set<UUID> {
        var members: Set<UUID> = []
        for try await user in try await connection.query("SELECT user_id FROM memberships WHERE scope = \(scope.rawValue) AND scope_id = \(id)", logger: logger).decode(UUID.self) {
            members.insert(user)
        }
        return members
    }
}
