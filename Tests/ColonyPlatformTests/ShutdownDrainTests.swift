import AsyncHTTPClient
import ColonyPlatform
import ColonyTesting
import Foundation
import Hummingbird
import Synchronization
import Testing

/// The pre-stop pause (`COLONY_SHUTDOWN_DRAIN_SECONDS`): at a shutdown a replica first answers
/// `/ready` with 503 while it still serves, so the gateway stops sending before it stops accepting.
@Suite("Shutdown drain", .serialized)
struct ShutdownDrainTests {
    @Test("at a shutdown /ready answers 503 through the pre-stop pause while the routes still serve; then beforeStopping runs and the host stops")
    func preStopPause() async throws {
        let environment = try TestEnvironment.current()
        let tokens = TestTokens()
        let port = try freePort()
        let pause = Duration.seconds(5)
        let stoppedServing = DrainFlag(), finished = DrainFlag()
        try await withTestSchema { databaseConfiguration in
            var configuration = ServiceConfiguration(
                service: .habits, app: .habithive, httpHost: "127.0.0.1", httpPort: port, logLevel: .critical,
                database: databaseConfiguration, kafkaBrokers: environment.kafkaBrokers, topicPrefix: TestKafka.topicPrefix(),
                tokens: tokens.verifierConfiguration(audience: .habithive)
            )
            configuration.shutdownDrain = pause
            var definition = ServiceDefinition(migrations: []) { router, _ in
                router.get("habits/v1/ping") { _, _ -> String in "pong" }
            }
            definition.beforeStopping = { stoppedServing.set() }
            let host = Task {
                try? await ServiceHost.run(definition, configuration: configuration)
                finished.set()
            }
            let base = "http://127.0.0.1:\(port)"
            try await waitUntil(timeout: .seconds(60)) { await status(of: "\(base)/ready") == 200 }

            let stopping = ContinuousClock.now
            host.cancel()  // a graceful shutdown, as SIGTERM
            try await waitUntil(timeout: .seconds(30)) { await status(of: "\(base)/ready") == 503 }
            let ping = await status(of: "\(base)/habits/v1/ping")
            // (On a machine so busy that the pause was over before the ping, there is nothing to see.)
            if ContinuousClock.now - stopping < pause {
                #expect(ping == 200, "still serving during the pause")
                #expect(!stoppedServing.isSet, "beforeStopping waits for the end of the pause")
            }
            try await waitUntil(timeout: .seconds(60)) { finished.isSet }
            #expect(ContinuousClock.now - stopping >= pause, "the host stopped only after the pause")
            #expect(stoppedServing.isSet)
        }
    }

    @Test("without a pause (the default in code) the host stops at once and /ready has the serving check")
    func noPause() async throws {
        let environment = try TestEnvironment.current()
        let tokens = TestTokens()
        let port = try freePort()
        let finished = DrainFlag()
        try await withTestSchema { databaseConfiguration in
            let configuration = ServiceConfiguration(
                service: .habits, app: .habithive, httpHost: "127.0.0.1", httpPort: port, logLevel: .critical,
                database: databaseConfiguration, kafkaBrokers: environment.kafkaBrokers, topicPrefix: TestKafka.topicPrefix(),
                tokens: tokens.verifierConfiguration(audience: .habithive)
            )
            #expect(configuration.shutdownDrain == .zero)
            let definition = ServiceDefinition(migrations: []) { _, _ in }
            let host = Task {
                try? await ServiceHost.run(definition, configuration: configuration)
                finished.set()
            }
            let base = "http://127.0.0.1:\(port)"
            try await waitUntil(timeout: .seconds(60)) { await status(of: "\(base)/ready") == 200 }
            let body = try await HTTPClient.shared.execute(HTTPClientRequest(url: "\(base)/ready"), timeout: .seconds(30)).body.collect(upTo: 1 << 16)
            #expect(String(buffer: body).contains("\"serving\":\"ok\""))
            host.cancel()
            try await waitUntil(timeout: .seconds(60)) { finished.isSet }
        }
    }

    func status(of url: String) async -> Int? {
        (try? await HTTPClient.shared.execute(HTTPClientRequest(url: url), timeout: .seconds(5))).map { Int($0.status.code) }
    }
}

final class DrainFlag: Sendable {
    private let value = Atomic<Bool>(false)
    func set() { value.store(true, ordering: .relaxed) }
    var isSet: Bool { value.load(ordering: .relaxed) }
}
