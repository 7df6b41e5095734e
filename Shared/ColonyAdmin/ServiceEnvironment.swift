import AuthService
import ChatService
import CirclesService
import ColonyModels
import ConsoleService
import ColonyPlatform
import Foundation
import HabitsService
import NearbyService
import NotificationsService
import ProjectsService
import RealtimeService

/// Each service's launch: what it reads from its environment, loaded as the service loads it.
func launchType(of service: ColonyService) -> any ServiceLaunch.Type {
    switch service {
    case .auth: AuthLaunch.self
    case .circles: CirclesLaunch.self
    case .chat: ChatLaunch.self
    case .habits: HabitsLaunch.self
    case .nearby: NearbyLaunch.self
    case .projects: ProjectsLaunch.self
    case .realtime: RealtimeLaunch.self
    case .notifications: NotificationsLaunch.self
    case .console: ConsoleLaunch.self
    }
}

/// The environment a service would start with in Colony's image, prepared as
/// deploy/entrypoint.sh prepares it: a secret that is not set is read from `<VAR>_FILE`, and
/// without `COLONY_PG_PASSWORD` the service's `<secrets dir>/<service>.env` (written by
/// `colony-admin provision`) is loaded. `sources` says where such values came from.
struct ServiceEnvironment {
    var values: [String: String]
    var sources: [String: String] = [:]

    init(service: ColonyService, base: [String: String], secretsDirectory: String?) {
        values = base
        for (name, path) in base where name.hasSuffix("_FILE") {
            let secret = String(name.dropLast("_FILE".count))
            guard EnvironmentRecord.looksSecret(secret), (base[secret] ?? "").isEmpty,
                  let text = try? String(contentsOfFile: path, encoding: .utf8) else { continue }
            values[secret] = text.trimmingCharacters(in: .newlines)  // as the shell's $(cat file)
            sources[secret] = name
        }
        guard (values["COLONY_PG_PASSWORD"] ?? "").isEmpty, let secretsDirectory else { return }
        let file = "\(secretsDirectory)/\(service.rawValue).env"
        guard let text = try? String(contentsOfFile: file, encoding: .utf8) else { return }
        for line in text.split(separator: "\n") {
            guard let equals = line.firstIndex(of: "="), !line.hasPrefix("#") else { continue }
            let name = String(line[..<equals]).trimmingCharacters(in: .whitespaces)
            values[name] = String(line[line.index(after: equals)...])
            sources[name] = file
        }
    }
}

/// What `config check` found for one service.
struct ConfigurationCheck {
    var service: ColonyService
    var reads: [EnvironmentRecord.Read]
    var problems: [ConfigurationError]
    /// The problem after which the service's loading could not go on (later settings unchecked).
    var stoppedAt: ConfigurationError?
    /// The service as loaded, when its configuration is valid.
    var launch: (any ServiceLaunch)?

    var isValid: Bool { problems.isEmpty && launch != nil }

    /// Loads the service's configuration from `values` with a reader that records every read and
    /// goes on past problems. A problem the service's own code throws ends that load: the
    /// variable is left out and the load runs again, so the rest is checked too.
    init(service: ColonyService, values: [String: String]) {
        self.service = service
        let record = EnvironmentRecord()
        var values = values
        var launch: (any ServiceLaunch)?
        var stoppedAt: ConfigurationError?
        for _ in 0..<64 {
            do {
                launch = try launchType(of: service).load(environment: EnvironmentReader(values, recordingInto: record))
                break
            } catch {
                record.note(error)
                guard values[error.variable] != nil else {
                    stoppedAt = error
                    break
                }
                values[error.variable] = nil
            }
        }
        self.reads = record.reads
        self.problems = record.problems
        self.stoppedAt = stoppedAt
        // A load that went on past problems made a launch of stand-ins: not one to use.
        self.launch = record.problems.isEmpty ? launch : nil
    }
}
