import ArgumentParser
import ColonyKafka
import ColonyModels
import ColonyPlatform
import Foundation

/// `colony-admin consumers lag`: how far each service's consumer group is behind its topics.
struct ConsumersCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "consumers",
        abstract: "The services' consumer groups.",
        subcommands: [Lag.self]
    )

    struct Lag: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Committed offsets against the end of each partition, per consuming service (its shared group, <prefix>-<service>)."
        )

        @Option(name: .customLong("service"), help: "Only these services (repeatable; every consuming service by default).")
        var services: [ColonyService] = []

        func run() async throws {
            let environment = EnvironmentReader()
            let brokers = try environment.string("COLONY_KAFKA_BROKERS")
            let prefix = environment.string("COLONY_TOPIC_PREFIX", default: EventTopics.defaultPrefix)
            let admin = KafkaAdmin(configuration: KafkaConfiguration(bootstrapServers: brokers, properties: try KafkaSecurity.properties(environment: environment)))
            let consuming = (services.isEmpty ? ColonyService.allCases : services).filter { !EventCatalogue.subscriptions(of: $0).isEmpty }
            var rows: [[String]] = []
            var total: Int64 = 0
            for service in consuming {
                let group = "\(prefix)-\(service.rawValue)"
                let topics = EventCatalogue.subscriptions(of: service).map { EventTopics.topic(for: $0, prefix: prefix) }
                do {
                    for partition in try await admin.groupLag(group: group, topics: topics) {
                        total += partition.lag
                        rows.append([service.rawValue, group, partition.topic, String(partition.partition), partition.committed.map(String.init) ?? "-",
                                     String(partition.end), String(partition.lag)])
                    }
                } catch {
                    rows.append([service.rawValue, group, topics.joined(separator: ","), "-", "-", "-", "unknown: \(error)"])
                }
            }
            printTable(["SERVICE", "GROUP", "TOPIC", "PARTITION", "COMMITTED", "END", "LAG"], rows)
            print("total lag: \(total)")
        }
    }
}
