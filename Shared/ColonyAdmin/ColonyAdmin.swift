import ArgumentParser

/// colony-admin: the operator's tool. Every command reads the database's superuser settings
/// from the environment (`COLONY_PG_HOST`, `COLONY_PG_PORT`, `COLONY_PG_DATABASE`,
/// `COLONY_PG_ADMIN_USER`, `COLONY_PG_ADMIN_PASSWORD`); the Kafka commands read
/// `COLONY_KAFKA_BROKERS` and `COLONY_TOPIC_PREFIX`; `config check` and `doctor` read each
/// service's own settings, as the service reads them.
@main
struct ColonyAdmin: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "colony-admin",
        abstract: "Operate a Colony deployment.",
        subcommands: [ProvisionCommand.self, MigrationsCommand.self, OutboxCommand.self, ConsumersCommand.self, DeadLettersCommand.self, KeysCommand.self, ConfigCommand.self, DoctorCommand.self, ImportCommand.self, OperatorsCommand.self]
    )
}
