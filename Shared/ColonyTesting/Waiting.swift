import AsyncHTTPClient
import ColonyKafka
import ColonyModels
import Foundation

/// Polls a condition until it holds; throws (failing the test) when the timeout passes first.
public func waitUntil(timeout: Duration = .seconds(30), file: String = #fileID, line: Int = #line, _ condition: () async throws -> Bool) async throws {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try await condition() { return }
        try await Task.sleep(for: .milliseconds(100))
    }
    throw TestSetupError("condition not met within \(timeout) (the wait at \(file):\(line))")
}

/// Reads a service's topic from the start with a fresh consumer group until `done` holds for
/// what arrived, or the timeout passes (then returns nothing, so the test's expectations fail).
public func collectEvents(brokers: String, topic: String, timeout: Duration = .seconds(30), until done: @escaping @Sendable ([ReceivedEvent]) -> Bool) async throws -> [ReceivedEvent] {
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
            try await Task.sleep(for: timeout)
            return nil
        }
        let first = try await group.next()!
        group.cancelAll()
        return first ?? []
    }
    await consumer.close()
    return collected
}

/// Waits until the service at `base` reports on `/metrics` a consumer group whose name contains
/// `group` with partitions assigned: a live consumer starts at the end of its topics, so what is
/// published before its assignment is not its to deliver.
public func waitForConsumerAssignment(base: String, group: String, timeout: Duration = .seconds(60)) async throws {
    try await waitUntil(timeout: timeout) {
        guard let response = try? await HTTPClient.shared.execute(HTTPClientRequest(url: "\(base)/metrics"), timeout: .seconds(10)),
              let body = try? await response.body.collect(upTo: 16 << 20) else { return false }
        return String(buffer: body).split(separator: "\n").contains { line in
            line.hasPrefix("colony_consumer_assigned_partitions{") && line.contains(group) && (Double(line.split(separator: " ").last ?? "") ?? 0) > 0
        }
    }
}
