import ColonyModels
import Foundation
import Hummingbird
import NIOCore
import Synchronization

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
    public static func make(metrics: HTTPMetrics, maxBodyBytes: Int, maxUploadBytes: Int? = nil, trustedProxies: TrustedProxies = .loopback, requestDeadline: Duration = RequestDeadlineMiddleware.defaultDeadline, readiness: ReadinessChecks, health: ReadinessChecks = ReadinessChecks()) -> Router<ColonyRequestContext> {
        let router = Router(context: ColonyRequestContext.self)
        // A span per request, in the trace the caller's `traceparent` names (or a new one): the
        // trace follows the request into the outbox, the broker and the consumers.
        router.add(middleware: RequestTracingMiddleware())
        let routes = RouteMethods()
        routes.router = router
        router.add(middleware: ColonyMiddleware(metrics: metrics, maxBodyBytes: maxBodyBytes, maxUploadBytes: maxUploadBytes, trustedProxies: trustedProxies, routes: routes))
        // Inside ColonyMiddleware, so a request past its deadline is logged and counted as its 503.
        router.add(middleware: RequestDeadlineMiddleware(deadline: requestDeadline, boundedBodyBytes: maxBodyBytes))

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

/// Which methods the router serves on a path, for a 405's `Allow`. The router's own route list is
/// read at the first request (every route is added before the server starts) and the router let
/// go then; paths are matched as the router's trie matches them: the most specific template wins
/// (`posts/kept` over `posts/{post_id}`).
public final class RouteMethods: @unchecked Sendable {
    // Set by `ColonyRouter.make`, read and released under `table`'s lock at the first request.
    var router: Router<ColonyRequestContext>?
    private let table = Mutex<[(path: RouterPath, methods: [String])]?>(nil)

    init() {}

    /// Takes the route list from the router, once.
    func prepare() {
        table.withLock { table in
            guard table == nil, let router else { return }
            var byPath: [String: (RouterPath, Set<String>)] = [:]
            for route in router.routes {
                byPath[route.path.description, default: (route.path, [])].1.insert(route.method.rawValue)
            }
            table = byPath.values.map { (path: $0.0, methods: $0.1.sorted()) }
            self.router = nil
        }
    }

    /// The methods served on `path`, sorted; empty when no route matches it.
    public func methods(forPath path: String) -> [String] {
        prepare()
        let table = self.table.withLock { $0 ?? [] }
        let segments = path.split(separator: "/", omittingEmptySubsequences: true)
        var best: (rank: [Int], methods: [String])?
        for entry in table {
            guard let rank = Self.rank(entry.path, segments) else { continue }
            if let current = best, !current.rank.lexicographicallyPrecedes(rank) { continue }
            best = (rank, entry.methods)
        }
        return best?.methods ?? []
    }

    /// How specifically `template` matches the segments (per segment: 3 a literal, 2 a capture
    /// with a prefix or suffix, 1 a capture or wildcard, 0 the rest), nil when it does not.
    static func rank(_ template: RouterPath, _ segments: [Substring]) -> [Int]? {
        var rank: [Int] = []
        for (index, element) in template.components.enumerated() {
            // (The element's kind is not public; its description spells it: `{id}`, `*`, `**`.)
            let text = element.description
            // `**` takes one segment or more, as the router's recursive wildcard does.
            if text == "**" { return index < segments.count ? rank + [0] : nil }
            guard index < segments.count, element ~= segments[index] else { return nil }
            let whole = text == "*" || (text.hasPrefix("{") && text.hasSuffix("}") && text.dropFirst().dropLast().allSatisfy { $0 != "{" && $0 != "}" })
            rank.append(!text.contains("{") && !text.contains("*") ? 3 : whole ? 1 : 2)
        }
        return template.components.count == segments.count ? rank : nil
    }
}

struct HealthStatus: ResponseCodable {
    var status: String
    var checks: [String: String]?
}

enum ColonyJSONResponse {
    static func encode(_ value: some Encodable) throws -> ByteBuffer {
        ByteBuffer(bytes: try ColonyJSON.encode(value))
    }
}
