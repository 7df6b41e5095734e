import AsyncHTTPClient
import ColonyClient
import ColonyClientTesting
import ColonyKafka
import ColonyModels
import ColonyPlatform
import ColonyStorage
import ColonyTesting
import Foundation
import HabitsAPI
import HabitsService
import NIOCore
import NIOHTTP1
import Testing

/// A running habits service (see `RunningService`).
typealias RunningHabits = RunningService

extension RunningService {
    /// The habits service's generated client, as `user` (nil sends no token).
    func api(_ user: User?) -> HabitsAPI.Client { HabitsAPI.Client(connection(as: user)) }

    /// A user whose profile exists with the given clock.
    func user(timezone: String, dayStartHour: Int = 4) async throws -> User {
        let user = try await user()
        _ = try await api(user).updateProfile(body: .json(.init(timezone: timezone, dayStartHour: dayStartHour))).ok
        return user
    }

    func jobs(_ database: Database) -> HiveJobs {
        HiveJobs(database: database, outbox: Outbox(schema: database.schema, topicPrefix: topicPrefix), logger: TestEnvironment.logger, chunkSize: 50)
    }
}

/// Starts the habits service and runs `body` against it. Export parts go to filesystem storage
/// under `exportsRoot` (default: a fresh directory, removed afterwards).
func withRunningHabits(settings: HabitsSettings = HabitsSettings(phonePepper: "test-pepper"), exportsRoot: String? = nil,
                       _ body: @Sendable (RunningHabits) async throws -> Void) async throws {
    let root = exportsRoot ?? FileManager.default.temporaryDirectory.appendingPathComponent("colony-habits-\(UUID().uuidString)").path
    defer { if exportsRoot == nil { try? FileManager.default.removeItem(atPath: root) } }
    // As HabitsLaunch configures it: a full contacts upload is read up to its own limit.
    try await withRunningService(.habits, app: .habithive, apiPrefix: "/habits/v1", configure: { $0.allowUploads(upTo: settings.contactsBodyLimit) }, definition: { _ in
        HabitsService.definition(settings: settings, exports: FileSystemStorageBackend(root: root))
    }, body)
}

typealias Schemas = HabitsAPI.Components.Schemas
// The client module's names, for the files that also see the service's own `HabitsAPI` (its
// handlers) through `@testable import HabitsService`.
typealias HabitsClient = HabitsAPI.Client
typealias HabitsOperations = HabitsAPI.Operations
