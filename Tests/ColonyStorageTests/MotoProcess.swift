import ColonyTesting
import Foundation

/// A moto S3 server of a test's own (PyPI `moto[server]`, installed by scripts/setup), on a
/// free port. moto checks SigV4 signatures once its first `unauthenticatedCalls` requests have
/// been served, so a test can create an IAM user with those and be checked from then on.
final class MotoProcess: @unchecked Sendable {
    // @unchecked: `process` is only touched from the owning test, one call at a time.
    let port: Int
    private var process: Process?

    init() throws {
        self.port = try freePort()
    }

    var endpoint: String { "http://127.0.0.1:\(port)" }

    func start(unauthenticatedCalls: Int) async throws {
        process = try await ChildProcess.startServer(
            "/usr/bin/env", ["python3", "-m", "moto.server", "-H", "127.0.0.1", "-p", "\(port)"], port: port,
            environment: ["INITIAL_NO_AUTH_ACTION_COUNT": "\(unauthenticatedCalls)"], hint: "moto (is moto[server] installed? scripts/setup)"
        )
    }

    func stop() {
        guard let process else { return }
        self.process = nil
        killAndReap(process)
    }

    deinit {
        stop()
    }
}
