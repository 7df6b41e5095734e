import AsyncHTTPClient
import ColonyKafka
import ColonyTesting
import Foundation
import Hummingbird
import NIOCore
import NIOPosix
import PostgresNIO
import ServiceLifecycle
import Synchronization
import Testing

/// The whole platform wired as a service runs it: migrations, HTTP with tokens, outbox relay,
/// consumer through the inbox, readiness, and shutdown on cancellation.
@Suite("Service host", .serialized)
struct ServiceHostTests {
    @Test("a service publishes through its outbox, consumes the event and reports ready")
    func endToEnd() async throws {
        let environment = try TestEnvironment.current()
        let tokens = TestTokens()
        let port = try freePort()
        let prefix = TestKafka.topicPrefix()
        try await withTestSchema { databaseConfiguration in
            let configuration = ServiceConfiguration(
                service: .habits, app: .habithive, httpHost: "127.0.0.1", httpPort: port, logLevel: .error,
                database: databaseConfiguration, kafkaBrokers: environment.kafkaBrokers, topicPrefix: prefix,
                tokens: tokens.verifierConfiguration(audience: .habithive)
            )
            let definition = ServiceDefinition(
                migrations: [Migration(version: 1, name: "pings", sql: "CREATE TABLE pings (user_id uuid NOT NULL, sequence int NOT NULL);")],
                consumes: [.habits],
                handleEvent: { event, connection, _ in
                    guard event.type == TestPing.eventType else { return }
                    let ping = try event.decode(TestPing.self)
                    try await connection.query("INSERT INTO pings (user_id, sequence) VALUES (\(ping.actor!), \(ping.payload.sequence))", logger: TestEnvironment.logger)
                },
                addRoutes: { router, service in
                    router.group("habits/v1").add(middleware: service.tokenMiddleware).post("pings") { _, context -> Response in
                        let user = try context.requireUser()
                        try await service.database.transaction { connection in
                            let event = EventEnvelope(app: .habithive, aggregateId: user.id.uuidString.lowercased(), actor: user.id, payload: TestPing(key: "p", sequence: 1))
                            try await service.outbox.publish(event, on: connection, logger: context.logger)
                        }
                        return Response(status: .accepted)
                    }
                }
            )
            let user = UUID()
            let token = try await tokens.token(user: user, app: .habithive)
            let check = Database(configuration: databaseConfiguration, logger: TestEnvironment.logger)
            try await withRunning(check) {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask { try await ServiceHost.run(definition, configuration: configuration) }
                    defer { group.cancelAll() }
                    let base = "http://127.0.0.1:\(port)"
                    try await waitUntil(timeout: .seconds(30)) {
                        (try? await get("\(base)/ready").status) == .ok
                    }
                    var request = HTTPClientRequest(url: "\(base)/habits/v1/pings")
                    request.method = .POST
                    request.headers.add(name: "Authorization", value: "Bearer \(token)")
                    let accepted = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
                    #expect(accepted.status == .accepted)

                    var unauthorized = HTTPClientRequest(url: "\(base)/habits/v1/pings")
                    unauthorized.method = .POST
                    #expect(try await HTTPClient.shared.execute(unauthorized, timeout: .seconds(30)).status == .unauthorized)

                    try await waitUntil(timeout: .seconds(30)) {
                        try await check.query("SELECT count(*) FROM pings WHERE user_id = \(user)").collect().first!.decode(Int.self) == 1
                    }
                    let metrics = try await get("\(base)/metrics")
                    let text = String(buffer: try await metrics.body.collect(upTo: 1 << 20))
                    #expect(text.contains(#"http_requests_total{method="POST",route="/habits/v1/pings",status="202"} 1"#))
                }
            }
        }
    }

    @Test("a service whose port is taken stops with the bind error instead of hanging, its other services shut down")
    func portTaken() async throws {
        let environment = try TestEnvironment.current()
        let tokens = TestTokens()
        // Something else listens on the port first.
        let occupant = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .bind(host: "127.0.0.1", port: 0).get()
        let port = try #require(occupant.localAddress?.port)
        defer { occupant.close(promise: nil) }
        try await withTestSchema { databaseConfiguration in
            let configuration = ServiceConfiguration(
                service: .habits, app: .habithive, httpHost: "127.0.0.1", httpPort: port, logLevel: .critical,
                database: databaseConfiguration, kafkaBrokers: environment.kafkaBrokers, topicPrefix: TestKafka.topicPrefix(),
                tokens: tokens.verifierConfiguration(audience: .habithive)
            )
            let definition = ServiceDefinition(
                migrations: [], consumes: [.habits], handleEvent: { _, _, _ in },
                jobs: { _ in [ScheduledJob(name: "tick", interval: .seconds(1)) { _, _ in }] },
                addRoutes: { _, _ in }
            )
            // The outcome is awaited with a deadline: a hang fails the test instead of the run.
            let outcome = Mutex<String?>(nil)
            let host = Task {
                do {
                    try await ServiceHost.run(definition, configuration: configuration)
                    outcome.withLock { $0 = "returned" }
                } catch {
                    outcome.withLock { $0 = "threw \(error)" }
                }
            }
            defer { host.cancel() }
            try await waitUntil(timeout: .seconds(60)) { outcome.withLock { $0 } != nil }
            #expect(outcome.withLock { $0 }?.hasPrefix("threw") == true, "\(outcome.withLock { $0 } ?? "")")
        }
    }

    @Test("a service cancelled while it starts (migrating, binding, joining its group) stops", arguments: [0, 20, 80, 200, 600, 1500])
    func cancelledWhileStarting(afterMilliseconds delay: Int) async throws {
        let environment = try TestEnvironment.current()
        let tokens = TestTokens()
        try await withTestSchema { databaseConfiguration in
            let configuration = ServiceConfiguration(
                service: .habits, app: .habithive, httpHost: "127.0.0.1", httpPort: try freePort(), logLevel: .critical,
                database: databaseConfiguration, kafkaBrokers: environment.kafkaBrokers, topicPrefix: TestKafka.topicPrefix(),
                tokens: tokens.verifierConfiguration(audience: .habithive)
            )
            let definition = ServiceDefinition(
                migrations: [Migration(version: 1, name: "pings", sql: "CREATE TABLE pings (n int);")], consumes: [.habits], handleEvent: { _, _, _ in },
                jobs: { _ in [ScheduledJob(name: "tick", interval: .seconds(1)) { _, _ in }] },
                addRoutes: { _, _ in }
            )
            let finished = Atomic<Bool>(false)
            let host = Task {
                try? await ServiceHost.run(definition, configuration: configuration)
                finished.store(true, ordering: .relaxed)
            }
            try await Task.sleep(for: .milliseconds(delay))
            host.cancel()
            try await waitUntil(timeout: .seconds(60)) { finished.load(ordering: .relaxed) }
        }
    }

    @Test("a service that ignores the shutdown is cancelled once the shutdown grace has passed, and the host stops")
    func shutdownGrace() async throws {
        let stubborn = Stubborn()
        // Without the grace the host would wait for the stubborn service for ever.
        let took = try await stopHost(running: stubborn, grace: .seconds(2))
        let cancelled = stubborn.wasCancelled.load(ordering: .relaxed)
        #expect(cancelled)
        #expect(took >= .seconds(2), "it had its grace first")
    }

    @Test("a service that ignores the shutdown and its cancellation too does not keep the host waiting: it stops waiting 15 s after the grace")
    func abandoned() async throws {
        let deaf = Deaf()
        defer { deaf.release() }
        let took = try await stopHost(running: deaf, grace: .seconds(1))
        #expect(took >= .seconds(16), "the grace and the 15 s after it came first")
        #expect(deaf.isRunning, "the host stopped waiting; the service itself never stopped")
    }

    /// Runs a host with `service` in its group until it is ready, cancels it (a graceful shutdown,
    /// as SIGTERM) and waits for `ServiceHost.run` to return; how long that took.
    func stopHost(running service: any Service, grace: Duration) async throws -> Duration {
        let environment = try TestEnvironment.current()
        let tokens = TestTokens()
        let port = try freePort()
        return try await withTestSchema { databaseConfiguration in
            var configuration = ServiceConfiguration(
                service: .habits, app: .habithive, httpHost: "127.0.0.1", httpPort: port, logLevel: .critical,
                database: databaseConfiguration, kafkaBrokers: environment.kafkaBrokers, topicPrefix: TestKafka.topicPrefix(),
                tokens: tokens.verifierConfiguration(audience: .habithive)
            )
            configuration.shutdownGrace = grace
            let definition = ServiceDefinition(migrations: [], consumes: [], handleEvent: nil, services: { _ in [service] }, addRoutes: { _, _ in })
            let finished = Atomic<Bool>(false)
            let host = Task {
                try? await ServiceHost.run(definition, configuration: configuration)
                finished.store(true, ordering: .relaxed)
            }
            try await waitUntil(timeout: .seconds(60)) { (try? await get("http://127.0.0.1:\(port)/ready").status) == .ok }
            let stopping = ContinuousClock.now
            host.cancel()
            try await waitUntil(timeout: .seconds(120)) { finished.load(ordering: .relaxed) }
            return ContinuousClock.now - stopping
        }
    }

    func get(_ url: String) async throws -> HTTPClientResponse {
        try await HTTPClient.shared.execute(HTTPClientRequest(url: url), timeout: .seconds(30))
    }
}

/// A service that goes on through a graceful shutdown and stops only when cancelled.
final class Stubborn: Service, Sendable {
    let wasCancelled = Atomic<Bool>(false)

    func run() async throws {
        while !Task.isCancelled {
            try? await Task.sleep(for: .milliseconds(100))
        }
        wasCancelled.store(true, ordering: .relaxed)
    }
}

/// A service that stops for nothing, neither a graceful shutdown nor cancellation, until the
/// test releases it.
final class Deaf: Service, Sendable {
    private let waiter = Mutex<CheckedContinuation<Void, Never>?>(nil)
    private let released = Atomic<Bool>(false)
    private let running = Atomic<Bool>(false)

    var isRunning: Bool { running.load(ordering: .relaxed) }

    func run() async throws {
        running.store(true, ordering: .relaxed)
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let resumeNow = waiter.withLock { waiter in
                if released.load(ordering: .relaxed) { return true }
                waiter = continuation
                return false
            }
            if resumeNow { continuation.resume() }
        }
        running.store(false, ordering: .relaxed)
    }

    func release() {
        let continuation = waiter.withLock { waiter in
            released.store(true, ordering: .relaxed)
            defer { waiter = nil }
            return waiter
        }
        continuation?.resume()
    }
}

@Suite("Token keys from a JWKS URL")
struct JWKSFetchTests {
    @Test("keys are fetched from the JWKS URL, cached, and refetched when a new key id appears")
    func rotation() async throws {
        let first = TestTokens(keyID: "key-1")
        let second = TestTokens(keyID: "key-2")
        let published = Mutex<[TestTokens]>([first])
        let fetches = Atomic<Int>(0)
        try await withJWKSServer({ fetches.add(1, ordering: .relaxed); return published.withLock { $0 } }) { url in
            let verifier = TokenVerifier(configuration: .init(keySource: .jwks(url), issuer: "colony-auth", audience: .unify), logger: TestEnvironment.logger)
            try await waitUntil(timeout: .seconds(60)) {
                (try? await verifier.verify(try await first.token(app: .unify))) != nil
            }
            _ = try await verifier.verify(try await first.token(app: .unify))
            #expect(fetches.load(ordering: .relaxed) == 1, "cached")

            // Auth rotates: the new key is published next to the old one.
            published.withLock { $0 = [second, first] }
            let user = UUID()
            let verified = try await verifier.verify(try await second.token(user: user, app: .unify))
            #expect(verified.id == user)
            #expect(fetches.load(ordering: .relaxed) == 2)
            // Tokens of the previous key keep working.
            _ = try await verifier.verify(try await first.token(app: .unify))
            // A token from a key nobody published is refused, without hammering the JWKS URL.
            await #expect(throws: APIError.self) { try await verifier.verify(try await TestTokens(keyID: "key-3").token(app: .unify)) }
            #expect(fetches.load(ordering: .relaxed) == 2)
        }
    }

    @Test("a verified token is remembered until it expires; when the keys change (a revocation) remembered tokens are checked again")
    func verifiedTokenCache() async throws {
        let first = TestTokens(keyID: "key-1")
        let second = TestTokens(keyID: "key-2")
        let published = Mutex<[TestTokens]>([first, second])
        try await withJWKSServer({ published.withLock { $0 } }) { url in
            // Keys are fetched again after a second, so the revocation below is seen.
            let verifier = TokenVerifier(configuration: .init(keySource: .jwks(url), issuer: "colony-auth", audience: .unify, cacheLifetime: .seconds(1)),
                                         logger: TestEnvironment.logger)
            let user = UUID()
            let token = try await first.token(user: user, app: .unify)
            try await waitUntil(timeout: .seconds(60)) { (try? await verifier.verify(token)) != nil }
            #expect(try await verifier.verify(token).id == user, "the same token again")
            let expiring = try await second.token(app: .unify, expiresIn: 2)
            _ = try await verifier.verify(expiring)

            // key-1 is revoked (no longer published): its remembered token is refused once the
            // keys are fetched again; an expired remembered token is refused too.
            published.withLock { $0 = [second] }
            try await waitUntil(timeout: .seconds(60)) {
                do { _ = try await verifier.verify(token); return false } catch { return true }
            }
            try await waitUntil(timeout: .seconds(60)) {
                do { _ = try await verifier.verify(expiring); return false } catch { return (error as any Error as? APIError)?.code == "token_expired" }
            }
        }
    }
}
