import Foundation
import Logging
import PostgresNIO

/// One lock per user account in a service's schema, taken by the two things that decide whether
/// the account has a profile there: a first request creating it (`findOrCreate`) and auth's
/// `user_deleted` erasing it (`lockForErasure`). Each holds it until its transaction commits.
///
/// Without it, a request racing an erasure brought the erased account back: its insert-or-read
/// waited on the profile row the erasure was deleting, then went ahead on a snapshot from before
/// the erasure committed, so the "not a deleted account" check passed. With it, the request either
/// commits its profile before the erasure starts (which then removes it), or waits for the erasure
/// and, reading afresh, sees the account gone.
public enum AccountLock {
    /// Takes the account's lock for the rest of the erasure's transaction: call it first, before
    /// the erasure reads or changes anything, so both sides always take it before any row lock.
    public static func lockForErasure(_ userID: UUID, on connection: PostgresConnection, logger: Logger = Logger(label: "colony.account-lock")) async throws {
        try await lock(userID, on: connection, logger: logger)
    }

    /// The account's profile in this service: `find` (a plain read, the usual case), else `create`
    /// (an insert-or-read that must not create a profile for an erased account; nil for one).
    /// `create` runs holding the account's lock until what it wrote is committed: inside the
    /// caller's transaction when there is one, or in a transaction of its own on a pooled
    /// connection's autocommit. Only a request that found no profile pays for the lock, so the
    /// cost is a first request's (or an erased account's).
    public static func findOrCreate<Profile: Sendable>(_ userID: UUID, on connection: PostgresConnection, logger: Logger,
                                                       find: () async throws -> Profile?, create: () async throws -> Profile?) async throws -> Profile? {
        if let found = try await find() { return found }
        return try await createOnFirstSight(userID, on: connection, logger: logger, create)
    }

    private static func createOnFirstSight<Result: Sendable>(_ userID: UUID, on connection: PostgresConnection, logger: Logger,
                                                             _ create: () async throws -> Result) async throws -> Result {
        if try await isInTransaction(connection, logger: logger) {
            // The caller's commit releases the lock; the savepoint only told us we were inside one.
            try await lock(userID, on: connection, logger: logger)
            let result = try await create()
            try await connection.query("RELEASE SAVEPOINT colony_account_lock", logger: logger)
            return result
        }
        try await connection.query("BEGIN", logger: logger)
        do {
            try await lock(userID, on: connection, logger: logger)
            let result = try await create()
            try await connection.query("COMMIT", logger: logger)
            return result
        } catch {
            _ = try? await connection.query("ROLLBACK", logger: logger)
            throw error
        }
    }

    /// A transaction-scoped advisory lock keyed by the schema (each service's accounts apart) and
    /// the user id (a 32-bit hash: a collision only makes two accounts wait on each other).
    private static func lock(_ userID: UUID, on connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query("SELECT pg_advisory_xact_lock(hashtext(current_schema()), hashtext(\(userID.uuidString.lowercased())))", logger: logger)
    }

    /// A savepoint is accepted only inside a transaction block; outside one Postgres refuses it
    /// with 25P01 and nothing else happens.
    private static func isInTransaction(_ connection: PostgresConnection, logger: Logger) async throws -> Bool {
        do {
            try await connection.query("SAVEPOINT colony_account_lock", logger: logger)
            return true
        } catch let error as PSQLError where error.serverInfo?[.sqlState] == "25P01" {
            return false
        }
    }
}
