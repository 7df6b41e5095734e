import ColonyPlatform
import ColonyStorage

/// `ExportPlan.problems` against a service's migrated schema, on the service's own role (what it
/// may read is what its export can hold).
public func exportPlanProblems(_ plan: ExportPlan, database configuration: DatabaseConfiguration) async throws -> [String] {
    let database = Database(configuration: configuration, logger: TestEnvironment.logger)
    return try await withRunning(database) {
        try await database.withConnection { try await plan.problems(schema: configuration.schema, on: $0, logger: TestEnvironment.logger) }
    }
}
