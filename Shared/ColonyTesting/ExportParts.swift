import ColonyModels
import ColonyPlatform
import ColonyStorage
import Foundation
import NIOCore

/// `ExportPlan.problems` against a service's migrated schema, on the service's own role (what it
/// may read is what its export can hold).
public func exportPlanProblems(_ plan: ExportPlan, database configuration: DatabaseConfiguration) async throws -> [String] {
    let database = Database(configuration: configuration, logger: TestEnvironment.logger)
    return try await withRunning(database) {
        try await database.withConnection { try await plan.problems(schema: configuration.schema, on: $0, logger: TestEnvironment.logger) }
    }
}

/// A service's part of a data export as a test reads it back from the exports bucket: waited
/// for (its manifest is written last), then its manifest, `data.json` (as text and as JSON) and
/// README.
public struct WrittenExportPart: Sendable {
    public let manifest: UserExport.Manifest
    /// `data.json` as written, for "is this value anywhere in it".
    public let text: String
    public let data: JSONValue
    public let readme: String
    /// Where the part's objects are: `{prefix}/files/{bucket}/{key}`.
    public let prefix: String

    /// The rows of one exported table (none when the part has no such table).
    public func rows(_ table: String) -> [JSONValue] {
        data["tables"]?[table]?.arrayValue ?? []
    }

    /// Waits (up to `timeout`, across the broker) for `service`'s part of `export`, then reads it.
    public static func read(_ backend: any StorageBackend, export: UUID, service: ColonyService, timeout: Duration = .seconds(120)) async throws -> WrittenExportPart {
        let bucket = UserExport.bucket.name
        let manifestKey = UserExport.manifestKey(export, service)
        try await waitUntil(timeout: timeout) { try await backend.get(bucket: bucket, key: manifestKey) != nil }
        let prefix = UserExport.partPrefix(export, service)
        func object(_ key: String) async throws -> ByteBuffer {
            guard let found = try await backend.get(bucket: bucket, key: key) else { throw TestSetupError("export object \(key) is missing") }
            return found.body
        }
        let manifest = try ColonyJSON.decoder().decode(UserExport.Manifest.self, from: Data(buffer: try await object(manifestKey)))
        let data = try await object(prefix + "/data.json")
        return WrittenExportPart(
            manifest: manifest, text: String(buffer: data), data: try JSONDecoder().decode(JSONValue.self, from: Data(buffer: data)),
            readme: String(buffer: try await object(prefix + "/README.md")), prefix: prefix
        )
    }
}
