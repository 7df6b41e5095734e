import ColonyKafka
import ColonyModels
import Foundation
import Logging
import PostgresNIO
import ServiceLifecycle
import Synchronization

/// What a service does with one event, inside the inbox transaction. Handlers ignore types
/// they do not care about.
public typealias EventHandler = @Sendable (ReceivedEvent, PostgresConnection) async throws -> Void

/// Consumes topics as a consumer group and hands each event to the handler through the inbox.
/// An offset is committed only after the handler's transaction committed; a failing handler is
/// retried with backoff (its partition waits), so nothing is skipped and nothing applied twice.
public final class EventConsumer: Service, Sendable {
    private let configuration: KafkaConfiguration
    private let topics: [String]
    private let inbox: Inbox
    private let handler: EventHandler
    private let afterHandling: (@Sendable (ReceivedEvent) async -> Void)?
    private let logger: Logger
    private let stopping = Atomic<Bool>(false)

    /// `afterHandling` runs after each event's inbox transaction, whether it applied the event
    /// or found it applied already (by this or another consumer group sharing the inbox).
    public init(configuration: KafkaConfiguration, topics: [String], database: Database, logger: Logger, handler: @escaping EventHandler,
                afterHandling: (@Sendable (ReceivedEvent) async -> Void)? = nil) {
        self.configuration = configuration
        self.topics = topics
        self.inbox = Inbox(database: database)
        self.handler = handler
        self.afterHandling = afterHandling
        self.logger = logger
    }

    public func run() async throws {
        let consumer = try KafkaConsumer(configuration: configuration, topics: topics, logger: logger)
        try await withGracefulShutdownHandler {
            do {
                for try await message in consumer.messages() {
                    // A message whose handling was cut short by shutdown stays unmarked and is
                    // delivered again after the restart.
                    guard await process(message) else { break }
                    consumer.markHandled(message)
                    if stopping.load(ordering: .relaxed) { break }
                }
            } catch {
                await consumer.close()
                throw error
            }
            await consumer.close()
        } onGracefulShutdown: {
            self.stopping.store(true, ordering: .relaxed)
            consumer.stopDelivery()
        }
    }

    /// Handles one message, retrying until it is applied (or found already applied). Returns
    /// false only when shutdown interrupted the retries.
    private func process(_ message: KafkaConsumerMessage) async -> Bool {
        let event: ReceivedEvent
        do {
            event = try ReceivedEvent(bytes: message.value)
        } catch {
            // Not an envelope at all: no retry can fix it. Log it and move on.
            logger.error("skipping malformed event", metadata: ["topic": "\(message.topic)", "partition": "\(message.partition)", "offset": "\(message.offset)", "error": "\(error)"])
            return true
        }
        var logger = self.logger
        logger[metadataKey: "event_id"] = .string(event.id.uuidString.lowercased())
        logger[metadataKey: "event_type"] = .string(event.type.rawValue)
        var backoff: Duration = .milliseconds(100)
        while true {
            do {
                let applied = try await inbox.handle(event) { connection in
                    try await handler(event, connection)
                }
                logger.debug(applied ? "event handled" : "event already handled")
                await afterHandling?(event)
                return true
            } catch {
                if stopping.load(ordering: .relaxed) || Task.isCancelled {
                    return false
                }
                logger.error("event handler failed, retrying", metadata: ["error": "\(error)", "retry_in": "\(backoff)"])
                try? await Task.sleep(for: backoff)
                backoff = min(backoff * 2, .seconds(30))
            }
        }
    }
}
