import ArgumentParser
import AuthService
import ChatService
import CirclesService
import ColonyModels
import ColonyPlatform
import Foundation
import HabitsService
import NearbyService
import NotificationsService
import PostgresNIO
import ProjectsService
import RealtimeService

/// `colony-admin migrations status`: what each schema has applied against what this build ships.
struct MigrationsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrations",
        abstract: "The services' schema migrations.",
        subcommands: [Status.self]
    )

    /// Each service's migrations as this build knows them.
    static func known(_ service: ColonyService) -> [Migration] {
        switch service {
        case .auth: AuthService.migrations
        case .circles: CirclesService.migrations
        case .chat: ChatService.migrations
        case .habits: HabitsService.migrations
        case .nearby: NearbyService.migrations
        case .projects: ProjectsService.migrations
        case .realtime: RealtimeService.migrations
        case .notifications: NotificationsService.migrations
        }
    }

    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Applied and pending migrations per service (services apply their own at start).",
            discussion: "Exits 1 when a schema has migrations this build does not know (a newer release ran there) or is missing."
        )
        @Option(name: .customLong("service"), help: "Only these services (repeatable; all by default).")
        var services: [ColonyService] = []

        func run() async throws {
            let services = self.services.isEmpty ? ColonyService.allCases : self.services
            var rows: [[String]] = []
            var trouble = false
            try await AdminDatabase.withConnection { connection in
                for service in services {
                    let schema = service.rawValue
                    let exists = try await connection.query("SELECT to_regclass(\(schema + ".schema_migrations")) IS NOT NULL", logger: AdminDatabase.logger)
                        .collect().first?.decode(Bool.self) ?? false
                    guard exists else {
                        rows.append([schema, "-", "-", "-", "not provisioned or never started"])
                        trouble = true
                        continue
                    }
                    var applied: [String: Set<Int>] = [:]
                    var last = Date.distantPast
                    for try await (component, version, at) in try await connection.query(
                        "SELECT component, version, applied_at FROM \(unescaped: quoteIdentifier(schema)).schema_migrations", logger: AdminDatabase.logger
                    ).decode((String, Int, Date).self) {
                        applied[component, default: []].insert(version)
                        last = max(last, at)
                    }
                    for (component, known) in [("platform", MigrationRunner.platformMigrations), ("service", MigrationsCommand.known(service))] {
                        let knownVersions = Set(known.map(\.version))
                        let done = applied[component] ?? []
                        let pending = knownVersions.subtracting(done).sorted()
                        let unknown = done.subtracting(knownVersions).sorted()
                        if !unknown.isEmpty { trouble = true }
                        let state = !unknown.isEmpty ? "applied \(unknown) unknown to this build (a newer release?)"
                            : pending.isEmpty ? "up to date" : "pending \(pending) (applied when the service starts)"
                        rows.append([schema, component, "\(done.count)/\(knownVersions.count)", done.max().map(String.init) ?? "-", state])
                    }
                    _ = last
                }
            }
            printTable(["SCHEMA", "COMPONENT", "APPLIED", "LATEST", "STATE"], rows)
            if trouble { throw ExitCode(1) }
        }
    }
}
