import ColonyModels
import ColonyTesting
import Foundation

extension RunningHabits {
    /// Reads the habits topic from the start until `done` is satisfied (or 30 s pass).
    func events(until done: @escaping @Sendable ([ReceivedEvent]) -> Bool) async throws -> [ReceivedEvent] {
        try await collectEvents(brokers: brokers, topic: EventTopics.topic(for: .habits, prefix: topicPrefix), until: done)
    }

    func events(count type: EventType, atLeast minimum: Int) async throws -> [ReceivedEvent] {
        try await events { events in events.filter { $0.type == type }.count >= minimum }.filter { $0.type == type }
    }
}
