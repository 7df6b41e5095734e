import ArgumentParser
import ColonyModels
import ColonyPlatform
import Foundation
import PostgresNIO

extension DeadLetters.Stage: ExpressibleByArgument {}

/// `colony-admin dead-letters list|retry|drop`: the events a service's pipeline set aside.
struct DeadLettersCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dead-letters",
        abstract: "List, retry and drop a service's dead letters.",
        subcommands: [List.self, Retry.self, Drop.self]
    )

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List dead letters, oldest first.")

        @OptionGroup var target: ServiceSchemaOptions
        @Option(help: "Only this stage (publish: the broker refused it; consume: the handler failed).")
        var stage: DeadLetters.Stage?
        @Option(help: "At most this many.")
        var limit = 100
        @Flag(help: "One JSON object per line instead of a table.")
        var json = false

        func run() async throws {
            let deadLetters = DeadLetters(schema: target.schemaName)
            let entries = try await AdminDatabase.withConnection { try await deadLetters.list(stage: stage, limit: limit, on: $0, logger: AdminDatabase.logger) }
            if json {
                let encoder = ColonyJSON.encoder()
                for entry in entries { print(String(decoding: try encoder.encode(entry), as: UTF8.self)) }
                return
            }
            if entries.isEmpty {
                print("no dead letters in \(target.schemaName)")
                return
            }
            printTable(["ID", "STAGE", "EVENT", "TYPE", "TOPIC", "ATTEMPTS", "LAST FAILED", "RETRY", "ERROR"], entries.map { entry in
                [String(entry.id), entry.stage.rawValue, entry.eventID?.uuidString.lowercased() ?? "-", entry.eventType ?? "-", entry.topic, String(entry.attempts),
                 ISO8601.format(entry.lastFailedAt), entry.retryRequestedAt == nil ? "-" : "requested", String(entry.error.prefix(120))]
            })
        }
    }

    struct Retry: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Retry dead letters: publish ones go back to the outbox; consume ones are applied again by the running service.",
            discussion: "Waits (up to --wait seconds) for the service to apply or fail each consume dead letter and prints the outcome; exits 1 when any failed again or did not finish."
        )

        @OptionGroup var target: ServiceSchemaOptions
        @Option(name: .customLong("id"), help: "A dead letter's id (repeatable).")
        var ids: [Int64] = []
        @Flag(help: "Every dead letter of the service.")
        var all = false
        @Option(help: "Seconds to wait for the service's outcome (0: do not wait).")
        var wait = 60

        func validate() throws {
            guard all != !ids.isEmpty else { throw ValidationError("name dead letters with --id, or pass --all") }
        }

        func run() async throws {
            let deadLetters = DeadLetters(schema: target.schemaName)
            let logger = AdminDatabase.logger
            let selected: [Int64]? = all ? nil : ids
            let (request, consumeIDs) = try await AdminDatabase.withConnection { connection in
                let consume = try await deadLetters.list(stage: .consume, limit: 100_000, on: connection, logger: logger)
                    .map(\.id).filter { selected?.contains($0) ?? true }
                return (try await deadLetters.requestRetry(ids: selected, on: connection, logger: logger), consume)
            }
            print("put back into the outbox: \(request.republished); asked \(target.service.rawValue) to apply again: \(request.requested)")
            guard request.requested > 0, wait > 0 else { return }
            let deadline = ContinuousClock.now + .seconds(wait)
            var pending = Set(consumeIDs)
            var failed: [DeadLetters.Entry] = []
            while !pending.isEmpty && ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(250))
                let remaining = try await AdminDatabase.withConnection { try await deadLetters.list(stage: .consume, limit: 100_000, on: $0, logger: logger) }
                let byID = Dictionary(uniqueKeysWithValues: remaining.map { ($0.id, $0) })
                for id in pending {
                    guard let entry = byID[id] else {
                        print("dead letter \(id): applied")
                        pending.remove(id)
                        continue
                    }
                    if entry.retryRequestedAt == nil {
                        print("dead letter \(id): failed again: \(entry.error)")
                        failed.append(entry)
                        pending.remove(id)
                    }
                }
            }
            for id in pending.sorted() { print("dead letter \(id): no outcome within \(wait) s (is \(target.service.rawValue) running?)") }
            if !failed.isEmpty || !pending.isEmpty { throw ExitCode(1) }
        }
    }

    struct Drop: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete dead letters for good.")

        @OptionGroup var target: ServiceSchemaOptions
        @Option(name: .customLong("id"), help: "A dead letter's id (repeatable).")
        var ids: [Int64] = []
        @Flag(help: "Every dead letter of the service.")
        var all = false

        func validate() throws {
            guard all != !ids.isEmpty else { throw ValidationError("name dead letters with --id, or pass --all") }
        }

        func run() async throws {
            let deadLetters = DeadLetters(schema: target.schemaName)
            let dropped = try await AdminDatabase.withConnection { try await deadLetters.drop(ids: all ? nil : ids, on: $0, logger: AdminDatabase.logger) }
            print("dropped \(dropped) dead letter\(dropped == 1 ? "" : "s")")
        }
    }
}
