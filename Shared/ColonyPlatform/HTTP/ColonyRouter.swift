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

    /// What a service needs to serve its HTTP API: its database. The broker is not among them:
    /// with the broker down, writes still succeed (the outbox holds their events) and reads work.
    public static func standard(database: Database) -> ReadinessChecks {
        ReadinessChecks([(name: "database", check: { await database.isReachable() })])
    }

    /// Runs every check concurrently: the results by name, and whether all passed.
    func run() async -> (results: [String: String], passed: Bool) {
        let results = await withTaskGroup(of: (String, Bool).self) { group in
            for (name, check) in checks {
                group.addTask { (name, await check()) }
            }
            var results: [String: String] = [:]
            for await (name, ok) in group {
                results[name] = ok ? "ok" : "unavailable"
            }
            return results
        }
        return (results, results.values.allSatisfy { $0 == "ok" })
    }
}

/// Builds a service's router with the platform's parts in place: `ColonyMiddleware`, and the
/// public `/health`, `/ready` and `/metrics`. The service adds its routes, usually in a group
/// behind `TokenMiddleware`.
///
/// - `/health` is liveness: always 200 while the process serves HTTP, with the `health` checks'
///   results as detail (the broker, say), which never fail it.
/// - `/ready` is 200 when every `readiness` check passes (the database), 503 otherwise.
public enum ColonyRouter {
    public static func make(metrics: HTTPMetrics, maxBodyBytes: Int, maxUploadBytes: Int? = nil, trustedProxies: TrustedProxies = .loopback, readiness: ReadinessChecks, health: ReadinessChecks = ReadinessChecks()) -> Router<ColonyRequestContext> {
        let router = Router(context: ColonyRequestContext.self)
        router.add(middleware: ColonyMiddleware(metrics: metrics, maxBodyBytes: maxBodyBytes, maxUploadBytes: maxUploadBytes, trustedProxies: trustedProxies))

        router.get("/health") { _, _ -> HealthStatus in
            guard !health.checks.isEmpty else { return HealthStatus(status: "ok", checks: nil) }
            return HealthStatus(status: "ok", checks: await health.run().results)
        }
        router.get("/ready") { _, _ -> Response in
            let (results, ready) = await readiness.run()
            let body = try ColonyJSONResponse.encode(HealthStatus(status: ready ? "ready" : "not_ready", checks: results))
            return Response(status: ready ? .ok : .serviceUnavailable, headers: [.contentType: "application/json; charset=utf-8"], body: .init(byteBuffer: body))
        }
        router.get("/metrics") { _, _ -> Response in
            await metrics.sample()
            return Response(
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
