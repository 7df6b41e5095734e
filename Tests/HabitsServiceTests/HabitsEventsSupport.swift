import ColonyKafka
import ColonyModels
import ColonyPlatform
import ColonyTesting
import Foundation

extension RunningHabits {
    /// Reads the habits topic from the start until `done` is satisfied (or 30 s pass).
    func events(until done: @escaping @Sendable ([ReceivedEvent]) -> Bool) async throws -> [ReceivedEvent] {
        let topic = EventTopics.topic(for: .habits, prefix: topicPrefix)
        try await KafkaAdmin(configuration: KafkaConfiguration(bootstrapServers: brokers)).createTopics([topic], partitions: 3)
        let consumer = try KafkaConsumer(configuration: TestKafka.consumer(brokers: brokers), topics: [topic], logger: TestEnvironment.logger)
        let collected: [ReceivedEvent] = try await withThrowingTaskGroup(of: [ReceivedEvent]?.self) { group in
            group.addTask {
                var events: [ReceivedEvent] = []
                if done(events) { return events }
                for try await message in consumer.messages() {
                    events.append(try ReceivedEvent(bytes: message.value))
                    consumer.markHandled(message)
                    if done(events) { return events }
                }
                return events
            }
            group.addTask {
                try await Task.sleep(for: .seconds(30))
                return nil
            }
            let first = try await group.next()!
            group.cancelAll()
            return first ?? []
        }
        await consumer.close()
        return collected
    }

    func events(count type: EventType, atLeast minimum: Int) async throws -> [ReceivedEvent] {
        try await events { events in events.filter { $0.type == type }.count >= minimum }.filter { $0.type == type }
    }
}
