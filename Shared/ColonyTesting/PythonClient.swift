import Foundation

/// Runs a Python script or module from the repository with the venv `scripts/setup` makes
/// (`.local/venv`, with the official Supabase clients), for tests that check Colony against
/// the clients apps use.
public enum PythonClient {
    /// The repository's root (this file is Shared/ColonyTesting/PythonClient.swift).
    public static let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Runs `python arguments…` (paths inside the repository are the caller's to build
    /// with `path`) with `environment` added (nil values left out); its exit status and combined output.
    public static func run(_ arguments: [String], environment extra: [String: String?]) async throws -> (status: Int32, output: String) {
        let python = repositoryRoot.appendingPathComponent(".local/venv/bin/python").path
        guard FileManager.default.isExecutableFile(atPath: python) else {
            throw TestSetupError("\(python) is missing: run scripts/setup (it creates .local/venv with the Python clients)")
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment.merge(extra.compactMapValues { $0 }) { $1 }
        environment["PYTHONDONTWRITEBYTECODE"] = "1"
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        // The whole run happens on a thread of its own: reading the pipe and waiting for the exit
        // block, and on one of the (two, on CI) threads of Swift's shared pool they would stall
        // every service running in this test process, including the one the script talks to.
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
            thread.name = "python-client"
            thread.start()
        }
    }

    /// A path inside the repository.
    public static func path(_ relative: String) -> String { repositoryRoot.appendingPathComponent(relative).path }
}
