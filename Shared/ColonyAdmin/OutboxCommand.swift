import ArgumentParser
import ColonyModels
import ColonyPlatform
import Foundation
import PostgresNIO

/// `colony-admin outbox status`: what each service has not yet handed to the broker.
struct OutboxCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "outbox",
        abstract: "The services' outboxes.",
        subcommands: [Status.self]
    )

    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Events waiting in each service's outbox, the oldest one's age, those kept after delivery, and dead letters.")

        @Option(name: .customLong("service"), help: "Only these services (repeatable; all by default).")
        var services: [ColonyService] = []

        func run() async throws {
            let services = self.services.isEmpty ? ColonyService.allCases : self.services
            let rows = try await AdminDatabase.withConnection { connection in
                var rows: [[String]] = []
                for service in services {
                    let schema = quoteIdentifier(service.rawValue)
                    let exists = try await connection.query("SELECT to_regclass(\(service.rawValue + ".outbox")) IS NOT NULL", logger: AdminDatabase.logger)
                        .firstValue(Bool.self) ?? false
                    guard exists else {
                        rows.append([service.rawValue, "-", "-", "-", "-", "-", "not migrated"])
                        continue
                    }
                    for try await row in try await connection.query("""
                        SELECT (SELECT count(*) FROM \(unescaped: schema).outbox WHERE relayed_at IS NULL),
                               (SELECT coalesce(extract(epoch FROM now() - min(created_at)), 0)::float8 FROM \(unescaped: schema).outbox WHERE relayed_at IS NULL),
                               (SELECT count(*) FROM \(unescaped: schema).outbox WHERE relayed_at IS NOT NULL),
                               (SELECT count(*) FROM \(unescaped: schema).dead_letters WHERE stage = 'publish'),
                               (SELECT count(*) FROM \(unescaped: schema).dead_letters WHERE stage = 'consume')
                        """, logger: AdminDatabase.logger) {
                        var cells = RowCells(row)
                        let pending: Int64 = try cells.next(), oldest: Double = try cells.next(), retained: Int64 = try cells.next()
                        let publish: Int64 = try cells.next(), consume: Int64 = try cells.next()
                        rows.append([service.rawValue, String(pending), String(format: "%.1f", oldest), String(retained), String(publish), String(consume),
                                     pending > 0 && oldest > 60 ? "behind" : "ok"])
                    }
                }
                return rows
            }
            printTable(["SERVICE", "PENDING", "OLDEST (S)", "RETAINED", "DEAD (PUBLISH)", "DEAD (CONSUME)", "STATE"], rows)
        }
    }
}
