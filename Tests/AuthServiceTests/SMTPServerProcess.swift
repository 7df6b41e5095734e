import AuthService
import ColonyTesting
import Foundation

/// A real SMTP server of a test's own: aiosmtpd (PyPI, installed by scripts/setup) run by
/// scripts/lib/mail-catcher.py on a free port, saving what it accepts as .eml files in a folder
/// of its own; with STARTTLS or implicit TLS (a certificate made by the test), AUTH, refused
/// recipients and temporary failures as asked.
final class SMTPServerProcess: @unchecked Sendable {
    // @unchecked: `process` is only touched from the owning test, one call at a time.
    enum Security { case none, startTLS, tls }

    let port: Int
    let folder: String
    let certificates: TestCertificates
    let caFile: String
    private var process: Process?

    init() throws {
        port = try freePort()
        folder = FileManager.default.temporaryDirectory.appendingPathComponent(uniqueName("smtp")).path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        certificates = try TestCertificates(name: "Colony SMTP test")
        caFile = folder + "/.ca.pem"
        try certificates.caPEM.write(toFile: caFile, atomically: true, encoding: .utf8)
        try certificates.serverCertificatePEM.write(toFile: folder + "/.server.pem", atomically: true, encoding: .utf8)
        try certificates.serverKeyPEM.write(toFile: folder + "/.server-key.pem", atomically: true, encoding: .utf8)
    }

    func start(security: Security, user: String? = nil, password: String? = nil, plainAuth: Bool = false, refuse: [String] = [], tempfail: Int = 0) async throws {
        var arguments = [PythonClient.path("scripts/lib/mail-catcher.py"), "serve", "--port", "\(port)", "--dir", folder, "--tempfail", "\(tempfail)"]
        switch security {
        case .none: break
        case .startTLS: arguments += ["--starttls", "--cert", folder + "/.server.pem", "--key", folder + "/.server-key.pem"]
        case .tls: arguments += ["--tls", "--cert", folder + "/.server.pem", "--key", folder + "/.server-key.pem"]
        }
        if let user, let password { arguments += ["--user", user, "--password", password] }
        for address in refuse { arguments += ["--refuse", address] }
        if plainAuth { arguments.append("--plain-auth") }
        process = try await ChildProcess.startServer("/usr/bin/env", ["python3"] + arguments, port: port, hint: "the SMTP server (is aiosmtpd installed? scripts/setup)")
    }

    /// Each AUTH the server answered, in order: "PLAIN ok", "LOGIN refused".
    func authAttempts() -> [String] {
        ((try? String(contentsOfFile: "\(folder)/auth-attempts", encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    /// The .eml files received so far, oldest first.
    func received() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter { $0.hasSuffix(".eml") && !$0.hasPrefix(".") }.sorted().map { folder + "/" + $0 }
    }

    /// A received message as Python's email package reads it (an independent parser).
    struct Parsed: Decodable {
        struct Part: Decodable { var charset: String?; var encoding: String?; var content: String }
        var headers: [String: String]
        var rawSubject: String?
        var contentType: String
        var dateUtc: String?
        var parts: [String: Part]
        var defects: [String]
        var raw: String

        enum CodingKeys: String, CodingKey {
            case headers, rawSubject = "raw_subject", contentType = "content_type", dateUtc = "date_utc", parts, defects, raw
        }
    }

    func parse(_ file: String) async throws -> Parsed {
        let (status, output) = try await ChildProcess.run("/usr/bin/env", ["python3", PythonClient.path("scripts/lib/mail-catcher.py"), "parse", file])
        guard status == 0 else { throw TestSetupError("mail-catcher.py parse failed: \(output)") }
        return try JSONDecoder().decode(Parsed.self, from: Data(output.utf8))
    }

    /// Waits for the `count`th message and parses it.
    func waitForMessage(_ count: Int = 1) async throws -> Parsed {
        try await waitUntil(timeout: .seconds(30)) { received().count >= count }
        return try await parse(received()[count - 1])
    }

    /// Settings for a client of this server.
    func settings(security: SMTPSettings.Security, user: String? = nil, password: String? = nil, auth: SMTPSettings.AuthMechanism = .auto, trusted: Bool = true, attempts: Int = 3) -> SMTPSettings {
        SMTPSettings(host: "127.0.0.1", port: port, security: security, username: user, password: password, authMechanism: auth,
                     from: MailAddress(address: "no-reply@colony.test", name: "Colony Tests"), heloName: "colony.test",
                     caFile: trusted ? caFile : nil, connectTimeout: .seconds(10), commandTimeout: .seconds(20), attempts: attempts, retryDelay: .milliseconds(100))
    }

    func stop() {
        guard let process else { return }
        self.process = nil
        killAndReap(process)
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(atPath: folder)
    }
}
