import AsyncHTTPClient
import ColonyTesting
import Foundation

/// The shipped nginx gateway, `deploy/nginx/colony.conf.template` rendered the way `scripts/run`
/// renders it (only auth's blocks kept), running in front of an in-process auth service.
struct LocalGateway: Sendable {
    let port: Int
    let prefix: URL

    var base: String { "http://127.0.0.1:\(port)" }
    var accessLog: String { (try? String(contentsOf: prefix.appendingPathComponent("logs/nginx-access.log"), encoding: .utf8)) ?? "" }

    static let services = ["auth", "circles", "chat", "habits", "nearby", "projects", "realtime", "notifications"]

    /// The template with `scripts/run`'s substitutions: auth at `authPort`, every other
    /// service's `# @BEGIN`…`# @END` block dropped.
    static func render(authPort: Int, port: Int, prefix: URL) throws -> String {
        let template = try String(contentsOfFile: PythonClient.path("deploy/nginx/colony.conf.template"), encoding: .utf8)
        var kept: [Substring] = []
        var dropping: String?
        for line in template.split(separator: "\n", omittingEmptySubsequences: false) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if let name = dropping {
                if trimmed == "# @END \(name)" { dropping = nil }
                continue
            }
            if trimmed.hasPrefix("# @BEGIN "), case let name = String(trimmed.dropFirst("# @BEGIN ".count)), name != "auth" {
                dropping = name
                continue
            }
            kept.append(line)
        }
        return kept.joined(separator: "\n")
            .replacingOccurrences(of: "@PREFIX@", with: prefix.path)
            .replacingOccurrences(of: "@LOG_DIR@", with: prefix.appendingPathComponent("logs").path)
            .replacingOccurrences(of: "@GATEWAY_PORT@", with: String(port))
            .replacingOccurrences(of: "@PORT_auth@", with: String(authPort))
    }

    /// Runs nginx for `body`'s duration.
    static func run(authPort: Int, _ body: @Sendable (LocalGateway) async throws -> Void) async throws {
        guard let nginx = ["/usr/sbin/nginx", "/usr/bin/nginx", "/usr/local/sbin/nginx"].first(where: FileManager.default.isExecutableFile(atPath:)) else {
            throw TestSetupError("nginx is not installed (scripts/setup installs it)")
        }
        let prefix = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent(uniqueName("colony-nginx"))
        for folder in ["tmp", "logs"] {
            try FileManager.default.createDirectory(at: prefix.appendingPathComponent(folder), withIntermediateDirectories: true)
            // Workers may run as nobody when the tests run as root.
            try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: prefix.appendingPathComponent(folder).path)
        }
        defer { try? FileManager.default.removeItem(at: prefix) }
        let port = try freePort()
        let config = prefix.appendingPathComponent("nginx.conf")
        try render(authPort: authPort, port: port, prefix: prefix).write(to: config, atomically: true, encoding: .utf8)

        let process = Process()
        process.executableURL = URL(fileURLWithPath: nginx)
        process.arguments = ["-p", prefix.path, "-c", config.path, "-e", prefix.appendingPathComponent("logs/nginx-error.log").path, "-g", "daemon off;"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer {
            process.terminate()
            process.waitUntilExit()
        }
        let gateway = LocalGateway(port: port, prefix: prefix)
        try await waitUntil(timeout: .seconds(30)) {
            guard process.isRunning else {
                let log = (try? String(contentsOf: prefix.appendingPathComponent("logs/nginx-error.log"), encoding: .utf8)) ?? ""
                throw TestSetupError("nginx exited: \(log)")
            }
            let response = try? await HTTPClient.shared.execute(HTTPClientRequest(url: "\(gateway.base)/health"), timeout: .seconds(2))
            return response?.status == .ok
        }
        try await body(gateway)
    }
}
