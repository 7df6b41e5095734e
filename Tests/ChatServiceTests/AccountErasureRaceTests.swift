import ColonyPlatform
import ColonyTesting
import Foundation
import PostgresNIO
import Testing
@testable import ChatService

/// A request racing auth's `user_deleted` must not bring the erased account back. The erasure is
/// held uncommitted (as its inbox transaction would be, after `AccountLock.lockForErasure`) while
/// the request's profile lookup runs; it commits only once the request waits on a lock or has
/// answered. Before `AccountLock`, the request's insert-or-read re-created the profile in both
/// cases, and every later request was served as if the account still existed.
@Suite("Chat: a request racing an account's erasure")
struct AccountErasureRaceTests {
    @Test("the account stays erased, whether it had a profile or this is its first request", arguments: [true, false])
    func requestRacingErasure(hadProfile: Bool) async throws {
        try await withRunningChat { chat in
            try await chat.service.withDatabase { database in
                let userID = UUID()
                let store = UserStore(logger: TestEnvironment.logger)
                if hadProfile {
                    _ = try await database.withConnection { try await store.ensure(userID, email: "racer@example.com", on: $0) }
                }
                try await database.withDedicatedConnection { erasure in
                    try await erasure.query("BEGIN", logger: TestEnvironment.logger)
                    try await AccountLock.lockForErasure(userID, on: erasure, logger: TestEnvironment.logger)
                    try await store.erase(userID, on: erasure)
                    try await withThrowingTaskGroup(of: Void.self) { group in
                        let answered = Answered()
                        group.addTask {
                            // The request's answer is either (served just before the erasure, or 401).
                            _ = try await database.withDedicatedConnection { request in try await store.ensure(userID, email: "racer@example.com", on: request) }
                            await answered.set()
                        }
                        try await waitUntil(timeout: .seconds(60)) {
                            if await answered.value { return true }
                            let waiting = try await database.query("""
                                SELECT count(*)::int FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()
                                """).collect()
                            return try waiting.first?.decode(Int.self) ?? 0 > 0
                        }
                        try await erasure.query("COMMIT", logger: TestEnvironment.logger)
                        try await group.waitForAll()
                    }
                }
                let after = try await database.withConnection { try await store.ensure(userID, email: "racer@example.com", on: $0) }
                #expect(after == nil, "the erased account came back: \(String(describing: after))")
                let rows = try await database.query("SELECT count(*)::int FROM users WHERE id = \(userID)").collect().first?.decode(Int.self)
                #expect(rows == 0)
            }
        }
    }
}

/// Whether the racing request has answered.
actor Answered {
    private(set) var value = false
    func set() { value = true }
}
