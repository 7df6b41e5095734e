import ColonyTesting
import Configuration
import Foundation
import Synchronization
import Testing

@testable import ColonyPlatform

/// Settings come from the environment, secret files and the settings file, in that order, and
/// are checked the same whichever source gave them.
@Suite("Settings sources")
struct SettingsSourcesTests {
    let complete = [
        "COLONY_PG_HOST": "127.0.0.1", "COLONY_PG_PASSWORD": "Qm7vT2xK9pL4wR8zN3cH6jY1",
        "COLONY_KAFKA_BROKERS": "127.0.0.1:9092", "COLONY_JWKS_URL": "http://127.0.0.1:8081/auth/v1/.well-known/jwks.json",
    ]

    func load(_ values: [String: String]) throws -> ServiceConfiguration {
        try ServiceConfiguration.load(service: .habits, app: .habithive, environment: EnvironmentReader(values))
    }

    /// The problem that stops loading `values`, or nil when they load.
    func problem(_ values: [String: String]) -> ConfigurationError? {
        do {
            _ = try ServiceConfiguration.load(service: .habits, app: .habithive, environment: EnvironmentReader(values))
            return nil
        } catch {
            return error
        }
    }

    func remove(_ path: String) {
        try? FileManager.default.removeItem(atPath: URL(fileURLWithPath: path).deletingLastPathComponent().path)
    }

    @Test("the settings file sets what the environment leaves unset; numbers, booleans and strings read as text")
    func settingsFile() throws {
        let path = try temporaryFile(#"{"COLONY_HTTP_PORT": 8181, "COLONY_PG_POOL_SIZE": "12", "LOG_LEVEL": "debug", "COLONY_PG_HOST": "file-host"}"#)
        defer { remove(path) }
        var values = complete
        values["COLONY_CONFIG_FILE"] = path
        let configuration = try load(values)
        #expect(configuration.httpPort == 8181)
        #expect(configuration.database.poolSize == 12)
        #expect(configuration.logLevel == .debug)
        #expect(configuration.database.host == "127.0.0.1", "the environment wins over the file")
        values["COLONY_PG_HOST"] = "  "
        let fromFile = try load(values)
        #expect(fromFile.database.host == "file-host", "an empty variable counts as unset")
    }

    @Test("a value from the settings file is checked as the environment's is, its variable named")
    func badValueFromFile() throws {
        let path = try temporaryFile(#"{"COLONY_HTTP_PORT": 70000}"#)
        defer { remove(path) }
        var values = complete
        values["COLONY_CONFIG_FILE"] = path
        let error = problem(values)
        #expect(error?.variable == "COLONY_HTTP_PORT")
        #expect(error?.description == "configuration error: COLONY_HTTP_PORT must be between 1 and 65535, got 70000")
    }

    @Test("a settings file that cannot be read, is not an object of scalars, or names an unknown setting stops the load",
          arguments: [
            (nil, "cannot be read"), ("[1, 2]", "is not a JSON object"), (#"{"COLONY_HTTP_PORT": [1]}"#, "COLONY_HTTP_PORT is not a string, number or boolean"),
            (#"{"COLONY_HTP_PORT": 1}"#, "sets COLONY_HTP_PORT, a setting Colony does not read"),
          ] as [(String?, String)])
    func badSettingsFile(text: String?, expected: String) throws {
        let path = try temporaryFile(text ?? "{}")
        defer { remove(path) }
        var values = complete
        values["COLONY_CONFIG_FILE"] = text == nil ? path + ".missing" : path
        let error = problem(values)
        #expect(error?.variable == "COLONY_CONFIG_FILE")
        #expect(error?.problem.contains(expected) == true, "\(error?.problem ?? "no problem")")
    }

    @Test("a secret comes from the file its _FILE variable names, trimmed; the environment wins; a file that cannot be read is named")
    func secretFile() throws {
        let path = try temporaryFile("  Zx8cV4bN1mQ7wE3rT6yU9iO2\n", name: "pg-password")
        defer { remove(path) }
        var values = complete
        values["COLONY_PG_PASSWORD"] = nil
        values["COLONY_PG_PASSWORD_FILE"] = path
        let fromFile = try load(values)
        #expect(fromFile.database.password == "Zx8cV4bN1mQ7wE3rT6yU9iO2")
        values["COLONY_PG_PASSWORD"] = complete["COLONY_PG_PASSWORD"]
        let fromEnvironment = try load(values)
        #expect(fromEnvironment.database.password == complete["COLONY_PG_PASSWORD"])
        values["COLONY_PG_PASSWORD"] = nil
        values["COLONY_PG_PASSWORD_FILE"] = path + ".missing"
        let error = problem(values)
        #expect(error?.variable == "COLONY_PG_PASSWORD_FILE")
        #expect(error?.problem.contains("cannot be read") == true)
    }

    @Test("precedence: the environment, then secret files, then the settings file; secrets are checked and marked whichever gave them")
    func precedence() throws {
        let file = try temporaryFile(#"{"COLONY_PG_PASSWORD": "Fh3kL9pQ2wX7vB4nM8zR1tY6", "COLONY_STORAGE_SIGNING_KEY": "change-me"}"#)
        let secret = try temporaryFile("Jd5gH8sK2lP9qW4eR7tY1uI3", name: "secret")
        defer { remove(file); remove(secret) }
        var values = complete
        values["COLONY_CONFIG_FILE"] = file
        values["COLONY_PG_PASSWORD"] = nil
        let fromSettings = try load(values)
        #expect(fromSettings.database.password == "Fh3kL9pQ2wX7vB4nM8zR1tY6")
        values["COLONY_PG_PASSWORD_FILE"] = secret
        let fromSecretFile = try load(values)
        #expect(fromSecretFile.database.password == "Jd5gH8sK2lP9qW4eR7tY1uI3", "a secret file wins over the settings file")

        let record = EnvironmentRecord()
        let reader = EnvironmentReader(values, recordingInto: record)
        _ = try reader.secret("COLONY_STORAGE_SIGNING_KEY", minimumLength: 32)
        _ = try reader.secret("COLONY_PG_PASSWORD")
        #expect(record.problems.map(\.variable) == ["COLONY_STORAGE_SIGNING_KEY"], "a known default from the file is refused too")
        #expect(record.reads.count == 2 && record.reads.allSatisfy(\.isSecret))
    }

    @Test("swift-configuration sees secrets as secret, from the environment, a secret file or the settings file, and never shows them")
    func redacted() throws {
        let file = try temporaryFile(#"{"COLONY_AUTH_PHONE_PEPPER": "Vb7nM2qW9eR4tY8uI1oP6aS3"}"#)
        let secret = try temporaryFile("Jd5gH8sK2lP9qW4eR7tY1uI3", name: "signing-key")
        defer { remove(file); remove(secret) }
        let events = AccessEvents()
        let sources = SettingsSources(environment: complete.merging(["COLONY_CONFIG_FILE": file, "COLONY_STORAGE_SIGNING_KEY_FILE": secret]) { $1 }, accessReporter: events)
        #expect(sources.problems.isEmpty)
        let values = ["COLONY_PG_PASSWORD", "COLONY_STORAGE_SIGNING_KEY", "COLONY_AUTH_PHONE_PEPPER"].map { sources.value($0, secret: false) }
        #expect(values == [complete["COLONY_PG_PASSWORD"], "Jd5gH8sK2lP9qW4eR7tY1uI3", "Vb7nM2qW9eR4tY8uI1oP6aS3"])
        let seen = events.all
        #expect(seen.count == 3)
        for (event, value) in zip(seen, values) {
            #expect((try? event.result.get())??.isSecret == true, "\(event.metadata.key)")
            #expect(!String(describing: event).contains(value ?? "-"), "\(event)")
        }
    }

    @Test("every setting the code reads has a description in the catalog")
    func everyNameDescribed() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        var names: Set<String> = []
        for folder in ["Shared", "Services"] {
            let files = FileManager.default.enumerator(at: root.appendingPathComponent(folder), includingPropertiesForKeys: nil)
            while let file = files?.nextObject() as? URL {
                // The test harness's own variables are not settings of a Colony program.
                guard file.pathExtension == "swift", !file.path.contains("/ColonyTesting/") else { continue }
                let text = try String(contentsOf: file, encoding: .utf8)
                for match in text.matches(of: /"((?:COLONY_[A-Z0-9_]+)|LOG_LEVEL)(\\\()?/) {
                    // A name built in code (`COLONY_AUTH_RATE_\(name)`) stands for the entries it begins.
                    names.insert(String(match.output.1) + (match.output.2 == nil ? "" : "*"))
                }
            }
        }
        #expect(names.count > 100)
        let undescribed = names.filter { name in
            name.hasSuffix("*") ? !SettingsCatalog.descriptions.keys.contains { $0.hasPrefix(name.dropLast()) } : !SettingsCatalog.isKnown(name)
        }.sorted()
        #expect(undescribed.isEmpty, "add them to SettingsCatalog.descriptions: \(undescribed)")
    }

    @Test("docs/configuration.md is what the code makes, and a changed copy fails the check")
    func reference() async throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let path = root.appendingPathComponent("docs/configuration.md").path
        let admin = try builtExecutable("colony-admin")
        let checked = try await ChildProcess.run(admin, ["config", "reference", "--check", "--output", path])
        #expect(checked.status == 0, "\(checked.output)")
        let reference = try String(contentsOfFile: path, encoding: .utf8)
        for name in SettingsCatalog.descriptions.keys.filter({ !$0.hasSuffix("*") }) {
            #expect(reference.contains("| `\(name)` |"), "\(name) is described but nothing reads it")
        }
        let stale = try temporaryFile(reference.replacingOccurrences(of: "| `COLONY_HTTP_PORT` | `8080`", with: "| `COLONY_HTTP_PORT` | `80`"), name: "configuration.md")
        defer { remove(stale) }
        let failed = try await ChildProcess.run(admin, ["config", "reference", "--check", "--output", stale])
        #expect(failed.status == 1)
        #expect(failed.output.contains("is not what the code makes"))
    }

    @Test("a bad value in the settings file stops a service at start with exit 78 and the variable named")
    func serviceStops() async throws {
        let file = try temporaryFile(#"{"COLONY_NEARBY_GRID_FEET": 5}"#)
        defer { remove(file) }
        let environment = complete.merging(["COLONY_CONFIG_FILE": file, "COLONY_STORAGE_SIGNING_KEY": "Pw4xQ9zL2kV7mN3bT8yR1cH6jF5dS0aG"]) { $1 }
        let run = try await ChildProcess.run(try builtExecutable("colony-nearby"), [], environment: environment)
        #expect(run.status == 78)
        #expect(run.output.contains("configuration error: COLONY_NEARBY_GRID_FEET must be between 10 and 1000, got 5"), "\(run.output)")
    }

    /// A file with `text` in a fresh folder of its own.
    func temporaryFile(_ text: String, name: String = "settings.json") throws -> String {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("colony-settings-\(UUID().uuidString.lowercased())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let path = folder.appendingPathComponent(name).path
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }
}

/// Every lookup swift-configuration reports.
final class AccessEvents: AccessReporter, Sendable {
    private let events = Mutex<[AccessEvent]>([])
    var all: [AccessEvent] { events.withLock { $0 } }
    func report(_ event: AccessEvent) { events.withLock { $0.append(event) } }
}
