import ColonyKafka
import ColonyModels
import Foundation
import Hummingbird
import Logging
import NIOCore
import PostgresNIO
import Synchronization

/// The Colony Console's view of a service's event pipeline (its Pipeline and Overview pages), on
/// every service (`ServiceHost` adds them): the outbox backlog, the consumer's lag, the dead
/// letters, and an operator's retry or drop of one, as `colony-admin dead-letters` does it but
/// through the service instead of its schema. Documented by `pipeline-admin.openapi.json`.
///
/// Only the console's credential is taken (`ConsoleCaller`, `COLONY_CONSOLE_KEY`, with the
/// operator in `X-Colony-Operator`); anything else is 401 `invalid_console_credential`. The
/// gateway (deploy/nginx) and the Kubernetes Ingress (deploy/k8s/base/ingress.yaml) route only
/// the apps' prefixes (`/auth/v1/`, `/circles/v1/`, …), never `/internal/`: these routes are
/// reached on a service's own port, by the console inside the deployment.
public enum PipelineAdminRoutes {
    public static let prefix = "/internal/v1/console"
    public static let pipelinePath = "\(prefix)/pipeline"
    public static let deadLettersPath = "\(prefix)/dead-letters"
    public static let defaultLimit = 100
    public static let limits = 1...500

    /// The routes' OpenAPI document, the same for every service.
    public static var document: OpenAPIDocument { OpenAPIDocument(bytes: PackageResources.pipeline_admin_openapi_json) }

    // MARK: Answers (public: the console decodes them with `ColonyJSON.decoder()`)

    /// `GET /internal/v1/console/pipeline`.
    public struct Pipeline: Codable, Sendable, Equatable {
        public var service: String
        public var outbox: OutboxBacklog
        public var deadLetters: DeadLetterCounts
        /// What this replica's consumer last saw (librdkafka's statistics, every 5 s), partitions
        /// whose lag it knows; empty when the service consumes nothing or no statistics came yet.
        public var consumers: [PartitionLag]
        /// `ok` when a broker answered a metadata request now, else `unavailable`.
        public var broker: String
        /// `ok` (the answer was read from it; without it the route answers 503).
        public var database: String
    }

    public struct OutboxBacklog: Codable, Sendable, Equatable {
        /// Events not yet acknowledged by the broker.
        public var pending: Int
        /// When the oldest of them was written; absent when none waits.
        public var oldestPendingAt: Date?
    }

    public struct DeadLetterCounts: Codable, Sendable, Equatable {
        public var publish: Int
        public var consume: Int
    }

    public struct PartitionLag: Codable, Sendable, Equatable {
        public var topic: String
        public var partition: Int32
        public var lag: Int64
    }

    /// `GET /internal/v1/console/dead-letters`.
    public struct DeadLetterList: Codable, Sendable, Equatable {
        public var deadLetters: [DeadLetter]
    }

    /// One dead letter; absent fields have no value (an unreadable event has no id or type).
    public struct DeadLetter: Codable, Sendable, Equatable {
        public var id: Int64
        public var stage: DeadLetters.Stage
        public var eventID: UUID?
        public var eventType: String?
        public var topic: String
        public var partition: Int32?
        public var offset: Int64?
        public var attempts: Int
        public var firstFailedAt: Date
        public var lastFailedAt: Date
        public var retryRequestedAt: Date?
        public var error: String
        public var payloadBytes: Int
        /// With `include_payload=true`: the stored event when it is JSON (an envelope)…
        public var payload: JSONValue?
        /// …or its bytes in base64 when it is not (an event that could not be read).
        public var payloadBase64: String?

        enum CodingKeys: String, CodingKey {
            case id, stage, topic, partition, offset, attempts, error, payload
            case eventID = "event_id", eventType = "event_type", firstFailedAt = "first_failed_at", lastFailedAt = "last_failed_at"
            case retryRequestedAt = "retry_requested_at", payloadBytes = "payload_bytes", payloadBase64 = "payload_base64"
        }
    }

    /// `POST /internal/v1/console/dead-letters/{id}/retry`: what the request did (as `DeadLetters.RetryRequest`).
    public struct RetryAnswer: Codable, Sendable, Equatable {
        public var id: Int64
        public var stage: DeadLetters.Stage
        /// 1 when a publish dead letter went back to the end of the outbox.
        public var republished: Int
        /// 1 when the service's `DeadLetterRetrier` was asked to apply a consume dead letter again.
        public var requested: Int
    }

    // MARK: Routes

    /// Adds the routes. `brokerReachable` is the host's broker check; `consumerLag` what its
    /// consumer last saw.
    static func add(to router: Router<ColonyRequestContext>, service: ColonyService, key: InternalKey?, database: Database,
                    brokerReachable: @escaping @Sendable () async -> Bool, consumerLag: ConsumerLagSource) {
        let deadLetters = DeadLetters(schema: database.schema)

        router.get(RouterPath(pipelinePath)) { request, context -> Response in
            _ = try ConsoleCaller.required(request, key: key)
            async let broker = brokerReachable()
            let (backlog, counts) = try await reading {
                try await database.withConnection { connection in
                    (try await outboxBacklog(on: connection, logger: context.logger), try await deadLetters.counts(on: connection, logger: context.logger))
                }
            }
            let answer = Pipeline(service: service.rawValue, outbox: backlog,
                                  deadLetters: DeadLetterCounts(publish: counts[.publish] ?? 0, consume: counts[.consume] ?? 0),
                                  consumers: consumerLag.partitions(), broker: await broker ? "ok" : "unavailable", database: "ok")
            return try RouteSupport.json(answer, status: .ok)
        }

        router.get(RouterPath(deadLettersPath)) { request, context -> Response in
            _ = try ConsoleCaller.required(request, key: key)
            let stage = try query(request, "stage", code: "invalid_stage", "stage must be publish or consume") { DeadLetters.Stage(rawValue: $0) }
            let limit = try query(request, "limit", code: "invalid_limit", "limit must be a whole number from \(limits.lowerBound) to \(limits.upperBound)") {
                Int($0).flatMap { limits.contains($0) ? $0 : nil }
            } ?? defaultLimit
            let includePayload = try query(request, "include_payload", code: "invalid_include_payload", "include_payload must be true or false") {
                ["true": true, "false": false][$0]
            } ?? false
            let letters = try await reading {
                try await database.withConnection { connection in
                    let entries = try await deadLetters.list(stage: stage, limit: limit, on: connection, logger: context.logger)
                    let payloads = includePayload ? try await deadLetters.payloads(ids: entries.map(\.id), on: connection, logger: context.logger) : [:]
                    return entries.map { DeadLetter($0, payload: includePayload ? payloads[$0.id] : nil) }
                }
            }
            return try RouteSupport.json(DeadLetterList(deadLetters: letters), status: .ok)
        }

        router.post(RouterPath("\(deadLettersPath)/{id}/retry")) { request, context -> Response in
            let caller = try ConsoleCaller.required(request, key: key)
            let id = try deadLetterID(context)
            let answer = try await reading {
                try await database.transaction { connection -> RetryAnswer? in
                    // Locked, so a drop or the retrier cannot take it between the look and the request.
                    let stage = try await connection.query("SELECT stage FROM \(unescaped: deadLetters.table) WHERE id = \(id) FOR UPDATE", logger: context.logger)
                        .firstValue(String.self).flatMap(DeadLetters.Stage.init(rawValue:))
                    guard let stage else { return nil }
                    let outcome = try await deadLetters.requestRetry(ids: [id], on: connection, logger: context.logger)
                    return RetryAnswer(id: id, stage: stage, republished: outcome.republished, requested: outcome.requested)
                }
            }
            guard let answer else { throw noSuchDeadLetter }
            context.logger.notice("dead letter retry requested by an operator through the console", metadata: [
                "operator": .string(caller.operatorEmail), "dead_letter_id": "\(id)", "stage": .string(answer.stage.rawValue),
            ])
            return try RouteSupport.json(answer, status: .accepted)
        }

        router.delete(RouterPath("\(deadLettersPath)/{id}")) { request, context -> Response in
            let caller = try ConsoleCaller.required(request, key: key)
            let id = try deadLetterID(context)
            let dropped = try await reading {
                try await database.withConnection { try await deadLetters.drop(ids: [id], on: $0, logger: context.logger) }
            }
            guard dropped > 0 else { throw noSuchDeadLetter }
            context.logger.notice("dead letter dropped by an operator through the console", metadata: [
                "operator": .string(caller.operatorEmail), "dead_letter_id": "\(id)",
            ])
            return Response(status: .noContent)
        }
    }

    static let noSuchDeadLetter = APIError.notFound("no dead letter has this id", code: "dead_letter_not_found")

    /// The outbox's backlog (what `/metrics` samples as `colony_outbox_pending_events`).
    static func outboxBacklog(on connection: PostgresConnection, logger: Logger) async throws -> OutboxBacklog {
        var backlog = OutboxBacklog(pending: 0, oldestPendingAt: nil)
        for try await row in try await connection.query("SELECT count(*), min(created_at) FROM outbox WHERE relayed_at IS NULL", logger: logger) {
            var cells = RowCells(row)
            let pending: Int64 = try cells.next(), oldest: Date? = try cells.next()
            backlog = OutboxBacklog(pending: Int(pending), oldestPendingAt: oldest)
        }
        return backlog
    }

    /// A dead letter's id from the path: a whole number from 1 (anything else is the caller's 400).
    static func deadLetterID(_ context: ColonyRequestContext) throws -> Int64 {
        guard let text = context.parameters.get("id"), !text.isEmpty, text.utf8.allSatisfy({ (48...57).contains($0) }),
              let id = Int64(text), id >= 1
        else { throw APIError.badRequest("a dead letter's id is a whole number from 1", code: "invalid_id") }
        return id
    }

    /// An optional query value; present but not one `parse` takes is a 400 with `code`.
    public static func query<Value>(_ request: Request, _ name: String, code: String, _ problem: String, _ parse: (String) -> Value?) throws -> Value? {
        guard let text = request.uri.queryParameters[Substring(name)] else { return nil }
        guard let value = parse(String(text)) else { throw APIError.badRequest(problem, code: code) }
        return value
    }

    /// Runs a read or write of the service's tables: a database that cannot be reached is the
    /// console's 503 (it shows the service as unavailable), not a 500. Every service's own console
    /// routes use it too (notifications' push routes).
    public static func reading<Value: Sendable>(_ body: () async throws -> Value) async throws -> Value {
        do {
            return try await body()
        } catch where !(error is APIError) && EventConsumer.isDatabaseUnavailable(error) {
            throw APIError(.serviceUnavailable, code: "database_unavailable", message: "the service cannot reach its database; try again shortly")
        }
    }
}

extension PipelineAdminRoutes.DeadLetter {
    init(_ entry: DeadLetters.Entry, payload: ByteBuffer?) {
        self.init(id: entry.id, stage: entry.stage, eventID: entry.eventID, eventType: entry.eventType, topic: entry.topic, partition: entry.partition,
                  offset: entry.offset, attempts: entry.attempts, firstFailedAt: entry.firstFailedAt, lastFailedAt: entry.lastFailedAt,
                  retryRequestedAt: entry.retryRequestedAt, error: entry.error, payloadBytes: entry.payloadBytes)
        if let payload {
            let bytes = Data(buffer: payload)
            if let json = JSONValue.parse(bytes) {
                self.payload = json
            } else {
                payloadBase64 = bytes.base64EncodedString()
            }
        }
    }
}

extension DeadLetters {
    /// The stored events of these dead letters, by id (what `list` leaves out): personal data,
    /// read only when the console asks for it.
    func payloads(ids: [Int64], on connection: PostgresConnection, logger: Logger) async throws -> [Int64: ByteBuffer] {
        guard !ids.isEmpty else { return [:] }
        var payloads: [Int64: ByteBuffer] = [:]
        for try await row in try await connection.query("SELECT id, payload FROM \(unescaped: table) WHERE id = ANY(\(ids)::bigint[])", logger: logger) {
            var cells = RowCells(row)
            let id: Int64 = try cells.next(), payload: ByteBuffer = try cells.next()
            payloads[id] = payload
        }
        return payloads
    }
}

/// The partitions' lag as the host's consumer last saw it. The routes are added before the host
/// makes its consumer (the router is built first), so the host hands it over once it exists.
final class ConsumerLagSource: Sendable {
    private let consumer = Mutex<EventConsumer?>(nil)

    init() {}

    /// The consumer whose lag the pipeline route reports: the service's shared group (a live
    /// consumer's lag says nothing about what the service has applied).
    func watch(_ consumer: EventConsumer) {
        self.consumer.withLock { $0 = consumer }
    }

    func partitions() -> [PipelineAdminRoutes.PartitionLag] {
        guard let statistics = consumer.withLock({ $0 })?.statistics else { return [] }
        return statistics.partitions.compactMap { partition in
            partition.lag.map { PipelineAdminRoutes.PartitionLag(topic: partition.topic, partition: partition.partition, lag: max(0, $0)) }
        }.sorted { ($0.topic, $0.partition) < ($1.topic, $1.partition) }
    }
}
