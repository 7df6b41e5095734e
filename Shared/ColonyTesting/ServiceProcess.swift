import AsyncHTTPClient
import Foundation

/// One of the package's service executables run as its own process, as an operator runs it: its
/// settings from the environment, its JSON log lines (stdout and stderr) kept in a file the test
/// reads. For what only a real process shows (its logs, its exit).
public final class ServiceProcess: @unchecked Sendable {
    public let name: String
    public let port: Int
    public let logFile: String
    private let process: Process

    /// `http://127.0.0.1:<port>`.
    public var base: String { "http://127.0.0.1:\(port)" }

    private init(name: String, port: Int, logFile: String, process: Process) {
        self.name = name
        self.port = port
        self.logFile = logFile
        self.process = process
    }

    /// Starts `executable` (built next to the tests) with `environment` on top of this process's
    /// and a free `COLONY_HTTP_PORT`, and waits until its `/ready` answers 200 (migrations run
    /// first: a generous deadline on a busy machine). One that exits first fails with its log.
    public static func start(_ executable: String, environment: [String: String], timeout: Duration = .seconds(180)) async throws -> ServiceProcess {
        let port = try freePort()
        let logFile = FileManager.default.temporaryDirectory.appendingPathComponent("\(executable)-\(UUID().uuidString).log").path
        FileManager.default.createFile(atPath: logFile, contents: nil)
        let log = try FileHandle(forWritingTo: URL(fileURLWithPath: logFile))
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try builtExecutable(executable))
        process.arguments = ["serve"]
        process.environment = ProcessInfo.processInfo.environment
            .merging(["COLONY_HTTP_HOST": "127.0.0.1", "COLONY_HTTP_PORT": "\(port)"]) { $1 }
            .merging(environment) { $1 }
        process.standardOutput = log
        process.standardError = log
        try process.run()
        let running = ServiceProcess(name: executable, port: port, logFile: logFile, process: process)
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            guard process.isRunning else {
                throw TestSetupError("\(executable) exited with \(process.terminationStatus):\n\(running.logText.suffix(4000))")
            }
            if let response = try? await HTTPClient.shared.execute(HTTPClientRequest(url: "\(running.base)/ready"), timeout: .seconds(5)),
               response.status == .ok {
                return running
            }
            try await Task.sleep(for: .milliseconds(250))
        }
        running.stop()
        throw TestSetupError("\(executable) was not ready within \(timeout):\n\(running.logText.suffix(4000))")
    }

    /// Asks it to stop (SIGTERM: a graceful shutdown flushes its logs and traces), killing it after
    /// 90 s: the shutdown's own grace is 20 s, but a whole test run on two busy cores stretches every
    /// step of it (a kill at 30 s lost a trace's flush in one such run).
    public func stop() {
        guard process.isRunning else { return }
        process.terminate()
        let deadline = Date().addingTimeInterval(90)
        while process.isRunning && Date() < deadline { usleep(50_000) }
        if process.isRunning { killAndReap(process) }
    }

    public var logText: String { (try? String(contentsOfFile: logFile, encoding: .utf8)) ?? "" }

    /// Its JSON log lines, parsed (lines that are not JSON objects are left out).
    public var logLines: [[String: Any]] {
        logText.split(separator: "\n").compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
        }
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(atPath: logFile)
    }
}
