import Foundation

/// An event type's wire name: snake_case, as the seeds and the original design use them.
public struct EventType: RawRepresentable, Codable, Sendable, Hashable, ExpressibleByStringLiteral, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { self.rawValue = value }
    public var description: String { rawValue }
}

/// A typed payload knows its event type, the service that publishes it and its schema version.
public protocol EventPayload: Codable, Sendable, Equatable {
    static var eventType: EventType { get }
    static var source: ColonyService { get }
    static var schemaVersion: Int { get }
}

extension EventPayload {
    public static var schemaVersion: Int { 1 }
}

/// The envelope every service publishes and consumes. `aggregateId` is the Kafka key, so all
/// events of one aggregate (a user, a circle, a hive) land on one partition, in order.
public struct EventEnvelope<Payload: EventPayload>: Codable, Sendable, Equatable {
    public var id: UUID
    public var type: EventType
    public var source: ColonyService
    public var app: App?
    public var aggregateId: String
    public var occurredAt: Date
    public var actor: UUID?
    /// Those of the event's audience who blocked its author: realtime and notifications do not
    /// show it to them (`BlockList`). Nil or empty: nobody's view is withheld.
    public var withheldFrom: [UUID]?
    public var schemaVersion: Int
    public var payload: Payload

    public init(
        id: UUID = .timeOrdered(),
        app: App?,
        aggregateId: String,
        occurredAt: Date = Date(),
        actor: UUID? = nil,
        withheldFrom: [UUID]? = nil,
        payload: Payload
    ) {
        self.id = id
        self.type = Payload.eventType
        self.source = Payload.source
        self.app = app
        self.aggregateId = aggregateId
        self.occurredAt = ISO8601.wholeMilliseconds(occurredAt)
        self.actor = actor
        self.withheldFrom = withheldFrom?.isEmpty == false ? withheldFrom : nil
        self.schemaVersion = Payload.schemaVersion
        self.payload = payload
    }

    /// The Kafka topic this event goes to: one per source service.
    public func topic(prefix: String = EventTopics.defaultPrefix) -> String {
        EventTopics.topic(for: source, prefix: prefix)
    }

    public func encoded() throws -> [UInt8] {
        try ColonyJSON.encode(self)
    }
}

/// One topic per source service: `colony.auth`, `colony.circles`, … Tests use their own prefix.
public enum EventTopics {
    public static let defaultPrefix = "colony"

    public static func topic(for service: ColonyService, prefix: String = defaultPrefix) -> String {
        "\(prefix).\(service.rawValue)"
    }
}

/// An event as it arrives, before its payload is decoded: consumers read the header fields to
/// dispatch on `type` and decode the payload they handle.
public struct ReceivedEvent: Sendable {
    public struct Header: Codable, Sendable, Equatable {
        public var id: UUID
        public var type: EventType
        public var source: ColonyService
        public var app: App?
        public var aggregateId: String
        public var occurredAt: Date
        public var actor: UUID?
        public var withheldFrom: [UUID]?
        public var schemaVersion: Int
    }

    public let header: Header
    public let bytes: [UInt8]

    public init(bytes: [UInt8]) throws {
        self.header = try ColonyJSON.decoder().decode(Header.self, from: Data(bytes))
        self.bytes = bytes
    }

    public var id: UUID { header.id }
    public var type: EventType { header.type }

    /// Decodes the whole envelope with a typed payload; fails if the type does not match.
    public func decode<Payload: EventPayload>(_: Payload.Type) throws -> EventEnvelope<Payload> {
        guard header.type == Payload.eventType else {
            throw EventDecodingError.typeMismatch(expected: Payload.eventType, actual: header.type)
        }
        return try ColonyJSON.decoder().decode(EventEnvelope<Payload>.self, from: Data(bytes))
    }
}

public enum EventDecodingError: Error, Equatable {
    case typeMismatch(expected: EventType, actual: EventType)
}
