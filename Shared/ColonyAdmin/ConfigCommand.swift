import ArgumentParser
import ColonyModels
import ColonyPlatform
import Foundation

/// `colony-admin config check`: every variable each service reads, checked as the service checks it.
struct ConfigCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "config",
        abstract: "The services' configuration.",
        subcommands: [Check.self, ConfigReference.self]
    )

    struct Check: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Load each service's configuration as the service would; list every variable it reads (secrets redacted) and every problem.",
            discussion: """
                Reads this process's environment as each service would get it from Colony's image (deploy/entrypoint.sh): a secret \
                that is not set is read from <VAR>_FILE, and without COLONY_PG_PASSWORD the service's <secrets dir>/<service>.env \
                (written by `colony-admin provision`). Secrets (passwords, keys, tokens, peppers, and whatever a service reads as a \
                secret) are shown only as `set (N chars)`. Exits 1 when any service's configuration is invalid.
                """
        )

        @Option(name: .customLong("service"), help: "Only these services (repeatable; all by default).")
        var services: [ColonyService] = []

        @Option(name: .customLong("secrets-dir"), help: "Where provision wrote the services' <service>.env files ($COLONY_SECRETS_DIR, else .local/secrets).")
        var secretsDirectory: String?

        func run() throws {
            let environment = ProcessInfo.processInfo.environment
            let directory = secretsDirectory ?? environment["COLONY_SECRETS_DIR"] ?? ".local/secrets"
            var invalid: [String] = []
            for service in services.isEmpty ? ColonyService.allCases : services {
                let prepared = ServiceEnvironment(service: service, base: environment, secretsDirectory: directory)
                let check = ConfigurationCheck(service: service, values: prepared.values)
                let report = ConfigurationReport(check: check, sources: prepared.sources)
                for line in report.lines() { print(line) }
                print("")
                if !check.isValid { invalid.append(service.rawValue) }
            }
            if invalid.isEmpty {
                print("every configuration is valid")
            } else {
                print("invalid: \(invalid.joined(separator: ", "))")
                throw ExitCode(1)
            }
        }
    }
}

/// One service's check as text: a table of the variables read, then the problems. A secret's
/// value is never in it (and any text that contains one has it replaced).
struct ConfigurationReport {
    var check: ConfigurationCheck
    var sources: [String: String]

    func lines() -> [String] {
        let problems = check.problems
        var lines = [problems.isEmpty && check.isValid
                     ? "\(check.service.rawValue): valid (\(check.reads.count) variables read)"
                     : "\(check.service.rawValue): INVALID (\(problems.count) problem\(problems.count == 1 ? "" : "s"))"]
        let rows = check.reads.map { read in
            let state = problems.contains { $0.variable == read.name } ? "FAIL" : "ok"
            return [read.name, value(read), state]
        }
        lines += table(["VARIABLE", "VALUE", "CHECK"], rows).map { "  " + $0 }
        for problem in problems {
            lines.append("  problem: \(problem.variable) \(problem.problem)")
        }
        if let stopped = check.stoppedAt {
            lines.append("  (the service stops at \(stopped.variable): settings it reads after that were not checked)")
        }
        let secrets = check.reads.filter(\.isSecret).compactMap(\.value).filter { $0.count >= 4 }
        return lines.map { line in secrets.reduce(line) { $0.replacingOccurrences(of: $1, with: "[redacted]") } }
    }

    func value(_ read: EnvironmentRecord.Read) -> String {
        let source = sources[read.name].map { ", from \($0)" } ?? ""
        if read.isSecret {
            guard let value = read.value else { return read.defaultValue == nil ? "not set" : "not set (a default applies)" }
            return "set (\(value.count) chars\(source))"
        }
        guard let value = read.value else {
            return read.defaultValue.map { "default: \(Self.shown($0))" } ?? "not set"
        }
        return Self.shown(value) + (source.isEmpty ? "" : " (\(source.dropFirst(2)))")
    }

    /// One line, not too long.
    static func shown(_ value: String) -> String {
        let flat = value.replacingOccurrences(of: "\n", with: "\\n")
        return flat.count > 90 ? String(flat.prefix(87)) + "..." : flat
    }
}

/// A table's lines with aligned columns.
func table(_ header: [String], _ rows: [[String]]) -> [String] {
    let widths = header.indices.map { column in ([header] + rows).map { $0[column].count }.max() ?? 0 }
    return ([header] + rows).map { row in
        zip(row, widths).map { $0.padding(toLength: $1, withPad: " ", startingAt: 0) }.joined(separator: "  ").trimmingCharacters(in: .whitespaces)
    }
}
