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
        var environment = extra.compactMapValues { $0 }
        environment["PYTHONDONTWRITEBYTECODE"] = "1"
        return try await ChildProcess.run(python, arguments, environment: environment)
    }

    /// A path inside the repository.
    public static func path(_ relative: String) -> String { repositoryRoot.appendingPathComponent(relative).path }
}
