import Foundation

/// Runs a program to its end for a test or a benchmark (the Python clients, pgbench).
public enum ChildProcess {
    /// `executable arguments…` with `environment` added to this process's; its exit status and
    /// combined output. The whole run happens on a thread of its own: reading the pipe and waiting
    /// for the exit block, and on one of the (two, on CI) threads of Swift's shared pool they would
    /// stall every service running in this process, including the one the program talks to.
    public static func run(_ executable: String, _ arguments: [String], environment extra: [String: String] = [:]) async throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(extra) { $1 }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        return try await withCheckedThrowingContinuation { continuation in
            let thread = Thread {
                do {
                    try process.run()
                    let data = output.fileHandleForReading.readDataToEndOfFile()
                    process.waitUntilExit()
                    continuation.resume(returning: (process.terminationStatus, String(decoding: data, as: UTF8.self)))
                } catch {
                    continuation.resume(throwing: error)
                }
            }
            thread.name = "child-process"
            thread.start()
        }
    }
}

/// The path of one of the package's executables from the same build as the running tests
/// (`.build/<configuration>/<name>`): the test target must depend on its target so it is built.
public func builtExecutable(_ name: String) throws -> String {
    let candidates = [
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent(),
        Bundle.main.bundleURL,
        Bundle.main.bundleURL.deletingLastPathComponent(),
    ].map { $0.appendingPathComponent(name).path }
    guard let path = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
        throw TestSetupError("\(name) was not built next to the tests (looked in \(candidates))")
    }
    return path
}

extension ChildProcess {
    /// Starts a server program for a test (output discarded) and waits until it accepts TCP
    /// connections on `port`; one that exits or is not listening within `timeout` is killed and
    /// the error says `hint`.
    public static func startServer(_ executable: String, _ arguments: [String], port: Int, environment extra: [String: String] = [:], timeout: Duration = .seconds(30), hint: String) async throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(extra) { $1 }
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if canConnect(port: port) { return process }
            guard process.isRunning else { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        killAndReap(process)
        throw TestSetupError("\(hint) did not start on port \(port)")
    }
}
