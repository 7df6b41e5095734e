import ColonyModels
import Foundation
import Hummingbird
import NIOCore

/// The checks `/ready` runs: the service is ready when all of them pass.
public struct ReadinessChecks: Sendable {
    public var checks: [(name: String, check: @Sendable () async -> Bool)]

    public init(_ checks: [(name: String, check: @Sendable () async -> Bool)] = []) {
        self.checks = checks
    }

    /// Postgres answers and a broker answers a metadata request.
    public static func standard(database: Database, broker: @escaping @Sendable () async -> Bool) -> ReadinessChecks {
        ReadinessChecks([
            (name: "database", check: { await database.isReachable() }),
            (name: "broker", check: broker),
        ])
    }
}

/// Builds a service's router with the platform's parts in place: `ColonyMiddleware`, and the
/// public `/health`, `/ready` and `/metrics`. The service adds its routes, usually in a group
/// behind `TokenMiddleware`.
public enum ColonyRouter {
    public static func make(metrics: HTTPMetrics, maxBodyBytes: Int, readiness: ReadinessChecks) -> Router<ColonyRequestContext> {
        let router = Router(context: ColonyRequestContext.self)
        router.add(middleware: ColonyMiddleware(metrics: metrics, maxBodyBytes: maxBodyBytes))

        router.get("/health") { _, _ in
            HealthStatus(status: "ok", checks: nil)
        }
        router.get("/ready") { _, _ -> Response in
            let results = await withTaskGroup(of: (String, Bool).self) { group in
                for (name, check) in readiness.checks {
                    group.addTask { (name, await check()) }
                }
                var results: [String: String] = [:]
                for await (name, ok) in group {
                    results[name] = ok ? "ok" : "unavailable"
                }
                return results
            }
            let ready = results.values.allSatisfy { $0 == "ok" }
            let body = try ColonyJSONResponse.encode(HealthStatus(status: ready ? "ready" : "not_ready", checks: results))
            return Response(status: ready ? .ok : .serviceUnavailable, headers: [.contentType: "application/json; charset=utf-8"], body: .init(byteBuffer: body))
        }
        router.get("/metrics") { _, _ -> Response in
            Response(
                status: .ok,
                headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(bytes: metrics.exposition()))
            )
        }
        return router
    }
}

struct HealthStatus: ResponseCodable {
    var status: String
    var checks: [String: String]?
}

enum ColonyJSONResponse {
    static func encode(_ value: some Encodable) throws -> ByteBuffer {
        ByteBuffer(data: try ColonyJSON.encoder().encode(value))
    }
}
