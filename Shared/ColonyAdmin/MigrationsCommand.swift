import ArgumentParser
import AuthService
import ChatService
import CirclesService
import ColonyModels
import ConsoleService
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
        case .console: ConsoleService.migrations
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
                    guard let states = try await MigrationState.read(service: service, schema: schema, on: connection) else {
                        rows.append([schema, "-", "-", "-", "not provisioned or never started"])
                        trouble = true
                        continue
                    }
                    for state in states {
                        if !state.unknown.isEmpty { trouble = true }
                        rows.append([schema, state.component, "\(state.applied.count)/\(state.known.count)", state.applied.max().map(String.init) ?? "-", state.summary])
                    }
                }
            }
            printTable(["SCHEMA", "COMPONENT", "APPLIED", "LATEST", "STATE"], rows)
            if trouble { throw ExitCode(1) }
        }
    }
}

/// One component's migrations in a schema (the platform's tables, the service's own) against
/// what this build ships.
struct MigrationState {
    var component: String
    var applied: Set<Int>
    var known: Set<Int>

    var pending: [Int] { known.subtracting(applied).sorted() }
    /// Applied by a build newer than this one.
    var unknown: [Int] { applied.subtracting(known).sorted() }

    var summary: String {
        !unknown.isEmpty ? "applied \(unknown) unknown to this build (a newer release?)"
            : pending.isEmpty ? "up to date" : "pending \(pending) (applied when the service starts)"
    }

    /// The schema's states, or nil when it has no migrations table (not provisioned, or the
    /// service never started). Reads what `connection`'s role may read: the superuser's or the service's own.
    static func read(service: ColonyService, schema: String, on connection: PostgresConnection) async throws -> [MigrationState]? {
        let logger = AdminDatabase.logger
        let exists = try await connection.query("SELECT to_regclass(\(quoteIdentifier(schema) + ".schema_migrations")) IS NOT NULL", logger: logger)
            .firstValue(Bool.self) ?? false
        guard exists else { return nil }
        var applied: [String: Set<Int>] = [:]
        for try await row in try await connection.query(
            "SELECT component, version FROM \(unescaped: quoteIdentifier(schema)).schema_migrations", logger: logger
        ) {
            var cells = RowCells(row)
            let component: String = try cells.next()
            applied[component, default: []].insert(try cells.next(Int.self))
        }
        return [("platform", MigrationRunner.platformMigrations), ("service", MigrationsCommand.known(service))].map { component, known in
            MigrationState(component: component, applied: applied[component] ?? [], known: Set(known.map(\.version)))
        }
    }
}
