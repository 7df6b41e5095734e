import ColonyModels
import ColonyPlatform
import Foundation
import Logging
import PostgresNIO

/// `presences` and `replicas`: what each replica's sockets track, so a client joining on any
/// replica gets the whole `presence_state`; presences of replicas that stopped announcing
/// themselves are ignored, then swept.
struct PresenceStore: Sendable {
    let logger: Logger
    /// How long a replica may stay silent before its presences stop counting.
    static let replicaLifetimeSeconds = 30

    struct Entry: Sendable {
        var key: String
        var phxRef: String
        var meta: [String: JSONValue]
    }

    func track(topic: String, key: String, phxRef: String, replica: String, connection: String, meta: [String: JSONValue], on db: PostgresConnection) async throws {
        let json = JSONText.encode(.object(meta))
        try await db.query("""
            INSERT INTO presences (phx_ref, topic, presence_key, replica_id, connection_id, meta)
            VALUES (\(phxRef), \(topic), \(key), \(replica), \(connection), \(json)::jsonb)
            """, logger: logger)
    }

    func remove(phxRef: String, on db: PostgresConnection) async throws {
        try await db.query("DELETE FROM presences WHERE phx_ref = \(phxRef)", logger: logger)
    }

    func state(topic: String, on db: PostgresConnection) async throws -> [Entry] {
        let seconds = Self.replicaLifetimeSeconds
        var entries: [Entry] = []
        let rows = try await db.query("""
            SELECT p.presence_key, p.phx_ref, p.meta::text FROM presences p JOIN replicas r USING (replica_id)
            WHERE p.topic = \(topic) AND r.seen_at > now() - make_interval(secs => \(seconds))
            ORDER BY p.created_at
            """, logger: logger)
        for try await row in rows {
            var cells = RowCells(row)
            let key: String = try cells.next()
            let ref: String = try cells.next()
            let meta: String = try cells.next()
            let object = (try? JSONDecoder().decode(JSONValue.self, from: Data(meta.utf8)))?.objectValue ?? [:]
            entries.append(Entry(key: key, phxRef: ref, meta: object))
        }
        return entries
    }

    /// Announces the replica and sweeps presences of replicas long gone.
    func announce(replica: String, on db: PostgresConnection) async throws {
        let seconds = Self.replicaLifetimeSeconds
        try await db.query("""
            INSERT INTO replicas (replica_id) VALUES (\(replica))
            ON CONFLICT (replica_id) DO UPDATE SET seen_at = now()
            """, logger: logger)
        try await db.query("""
            DELETE FROM presences WHERE replica_id IN
                (SELECT replica_id FROM replicas WHERE seen_at < now() - make_interval(secs => \(seconds * 4)))
            """, logger: logger)
        try await db.query("DELETE FROM replicas WHERE seen_at < now() - make_interval(secs => \(seconds * 4))", logger: logger)
    }

    func removeReplica(_ replica: String, on db: PostgresConnection) async throws {
        try await db.query("DELETE FROM presences WHERE replica_id = \(replica)", logger: logger)
        try await db.query("DELETE FROM replicas WHERE replica_id = \(replica)", logger: logger)
    }
}
