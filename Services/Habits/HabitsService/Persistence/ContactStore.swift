import ColonyPlatform
import Foundation
import Logging
import PostgresNIO

/// `contact_hashes` and matching them against other users' phone hashes.
struct ContactStore: Sendable {
    let logger: Logger

    struct Contact: Sendable {
        var hash: String
        var displayName: String?
    }

    /// The user's contacts become exactly `contacts` (an upload replaces, never accumulates).
    func replace(_ contacts: [Contact], userID: UUID, on connection: PostgresConnection) async throws {
        try await deleteAll(userID: userID, on: connection)
        guard !contacts.isEmpty else { return }
        try await connection.query("""
            INSERT INTO contact_hashes (user_id, contact_hash, display_name)
            SELECT \(userID), hash, nullif(name, '') FROM unnest(\(contacts.map(\.hash))::text[], \(contacts.map { $0.displayName ?? "" })::text[]) AS c(hash, name)
            """, logger: logger)
    }

    func deleteAll(userID: UUID, on connection: PostgresConnection) async throws {
        try await connection.query("DELETE FROM contact_hashes WHERE user_id = \(userID)", logger: logger)
    }

    struct Match: Codable, Sendable, Equatable {
        var userId: UUID
        var displayName: String
        var avatarUrl: String?
        var contactHash: String
        var contactName: String?
        /// The number as uploaded (in an upload's answer; numbers themselves are never stored).
        var phone: String? = nil
    }

    /// Other habithive users whose phone hash is among the user's uploaded contacts.
    func matches(userID: UUID, on connection: PostgresConnection) async throws -> [Match] {
        let rows = try await connection.query("""
            SELECT p.id, p.display_name, p.avatar_url, c.contact_hash, c.display_name
            FROM contact_hashes c JOIN profiles p ON p.phone_hash = c.contact_hash
            WHERE c.user_id = \(userID) AND p.id <> \(userID)
            ORDER BY coalesce(c.display_name, p.display_name), p.id
            """, logger: logger)
        return try await rows.read { c in
            Match(userId: try c.next(UUID.self), displayName: try c.next(String.self), avatarUrl: try c.next(String?.self), contactHash: try c.next(String.self),
                  contactName: try c.next(String?.self))
        }
    }
}
