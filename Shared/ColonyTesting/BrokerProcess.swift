import Foundation

/// A Tansu broker of a test's own, on a free port, that the test can stop and start again
/// (an outage). Tansu keeps data in memory, so a restarted broker comes back empty.
public final class BrokerProcess: @unchecked Sendable {
    // @unchecked: `process` is only touched from the owning test, one call at a time.
    public let port: Int
    private let binary: String
    private var process: Process?

    public init() throws {
        guard let binary = try TestEnvironment.current().tansuBinary else {
            throw TestSetupError("COLONY_TANSU_BIN is not set")
        }
        self.binary = binary
        self.port = try freePort()
    }

    public var bootstrapServers: String { "127.0.0.1:\(port)" }

    public func start() async throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = [
            "broker",
            "--listener-url", "tcp://127.0.0.1:\(port)",
            "--advertised-listener-url", "tcp://127.0.0.1:\(port)",
            "--storage-engine", "memory://tansu/",
        ]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        self.process = process
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            if canConnect(port: port) { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw TestSetupError("Tansu did not start on port \(port)")
    }

    public func stop() {
        guard let process else { return }
        self.process = nil
        // Foundation's waitUntilExit spins a run loop that async code does not drive; kill and
        // reap directly (ECHILD means Foundation reaped it first, which is as good).
        killAndReap(process)
        while canConnect(port: port) { usleep(10_000) }
    }

    deinit {
        stop()
    }
}

/// Kills a child process and reaps it without a run loop (ECHILD means Foundation reaped it
/// first, which is as good).
public func killAndReap(_ process: Process) {
    let pid = process.processIdentifier
    kill(pid, SIGKILL)
    var status: Int32 = 0
    while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
}
