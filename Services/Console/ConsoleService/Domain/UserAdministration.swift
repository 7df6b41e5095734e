import ColonyModels
import ColonyPlatform
import Foundation
import Logging

/// What operators do to app users, through auth's admin routes: each action checks the
/// operator's right on the user's app first, then calls auth, then writes the audit entry
/// (refused and failed attempts too).
public struct UserAdministration: Sendable {
    let auth: AuthAdminClient
    /// The services asked what they hold of a user (`HoldingsAdminRoutes`), by service.
    let services: [ColonyService: PipelineClient]
    let operators: Operators
    let logger: Logger

    public init(auth: AuthAdminClient, services: [ColonyService: PipelineClient] = [:], operators: Operators, logger: Logger) {
        self.auth = auth
        self.services = services
        self.operators = operators
        self.logger = logger
    }

    public enum Action: String, Sendable, CaseIterable {
        case ban = "ban_user"
        case unban = "unban_user"
        case signOut = "sign_out_user"
        case sendRecovery = "send_recovery"
        case resendConfirmation = "resend_confirmation"
        case removeFactor = "remove_factor"
        case delete = "delete_user"
        case requestExport = "request_export"

        var right: OperatorRight {
            switch self {
            case .ban, .unban: .banUsers
            case .signOut: .signOutUsers
            case .sendRecovery, .resendConfirmation: .sendUserLinks
            case .removeFactor: .removeFactors
            case .delete: .deleteUsers
            case .requestExport: .requestExports
            }
        }
    }

    /// The bans an operator picks from: Supabase's `ban_duration`s.
    public static let banDurations: [(value: String, label: String)] = [
        ("1h", "1 hour"), ("24h", "1 day"), ("168h", "1 week"), ("720h", "30 days"), ("876000h", "indefinitely"),
    ]

    /// One search across the apps the operator works on, at most `perApp` users of each.
    public func search(_ text: String, by actor: SignedInOperator, perApp: Int = 20) async throws -> [(app: App, user: AdminUser)] {
        guard actor.rights.allows(.viewUsers) else { throw ConsoleRefusal(.forbidden, "Your role does not show users.") }
        let query = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !query.isEmpty else { return [] }
        guard query.utf8.count <= 320 else { throw ConsoleRefusal(.badInput, "Search for at most 320 characters.") }
        let apps = actor.rights.visibleApps
        return try await withThrowingTaskGroup(of: (App, [AdminUser]).self) { group in
            for app in apps {
                group.addTask { (app, try await auth.search(query, app: app, perPage: perApp, operatorEmail: actor.email)) }
            }
            var found: [App: [AdminUser]] = [:]
            for try await (app, users) in group { found[app] = users }
            return apps.flatMap { app in (found[app] ?? []).map { (app, $0) } }
        }
    }

    /// A user of `app` with their sessions, or nil when `app` has no such user.
    public func user(_ id: UUID, app: App, by actor: SignedInOperator) async throws -> (user: AdminUser, sessions: [AdminSession])? {
        guard actor.rights.allows(.viewUsers, on: app) else { throw ConsoleRefusal(.forbidden, "You do not work on \(app.rawValue).") }
        guard let user = try await auth.user(id, app: app, operatorEmail: actor.email) else { return nil }
        let sessions = try await auth.sessions(of: id, app: app, operatorEmail: actor.email)
        return (user, sessions)
    }

    /// What one service holds of a user, or why it did not say.
    public struct ServiceHoldings: Sendable {
        public var service: ColonyService
        public var holdings: [HoldingsAdminRoutes.Holding]?
        public var problem: String?
    }

    /// What the app's own service and notifications hold of a user (counts), asked at once; a
    /// service that does not answer (or that the console is not told of) is shown as such.
    public func holdings(of id: UUID, app: App, by actor: SignedInOperator) async throws -> [ServiceHoldings] {
        guard actor.rights.allows(.viewUsers, on: app) else { throw ConsoleRefusal(.forbidden, "You do not work on \(app.rawValue).") }
        let asked: [ColonyService] = [app.domainService, .notifications]
        return await withTaskGroup(of: ServiceHoldings.self) { group in
            for service in asked {
                group.addTask {
                    guard let client = services[service] else {
                        return ServiceHoldings(service: service, holdings: nil, problem: "not in COLONY_CONSOLE_SERVICE_URLS")
                    }
                    do {
                        return ServiceHoldings(service: service, holdings: try await client.holdings(of: id, operatorEmail: actor.email).holdings, problem: nil)
                    } catch {
                        logger.warning("a service did not say what it holds of a user", metadata: ["service": "\(service.rawValue)", "error": "\(error)"])
                        return ServiceHoldings(service: service, holdings: nil, problem: "did not answer")
                    }
                }
            }
            var found: [ColonyService: ServiceHoldings] = [:]
            for await answer in group { found[answer.service] = answer }
            return asked.compactMap { found[$0] }
        }
    }

    /// Carries out `action` on a user of `app`; `argument` is the ban's duration or the factor's id.
    public func perform(_ action: Action, on id: UUID, app: App, argument: String?, by actor: SignedInOperator) async throws {
        let target = id.lowercased
        guard actor.rights.allows(action.right, on: app) else {
            try await operators.record(actor, action: action.rawValue, app: app, target: target, outcome: .refused, detail: "no right", ipAddress: nil)
            throw ConsoleRefusal(.forbidden, "Your role may not do this on \(app.rawValue).")
        }
        do {
            switch action {
            case .ban:
                guard let duration = argument, Self.banDurations.contains(where: { $0.value == duration }) else {
                    throw ConsoleRefusal(.badInput, "Pick how long the ban lasts.")
                }
                try await auth.ban(id, duration: duration, app: app, operatorEmail: actor.email)
            case .unban:
                try await auth.ban(id, duration: "none", app: app, operatorEmail: actor.email)
            case .signOut:
                try await auth.signOutEverywhere(id, app: app, operatorEmail: actor.email)
            case .sendRecovery:
                try await auth.sendRecovery(id, app: app, operatorEmail: actor.email)
            case .resendConfirmation:
                try await auth.resendConfirmation(id, app: app, operatorEmail: actor.email)
            case .removeFactor:
                guard let factor = argument.flatMap({ UUID(uuidString: $0) }) else { throw ConsoleRefusal(.badInput, "No such factor.") }
                try await auth.deleteFactor(id, factor: factor, app: app, operatorEmail: actor.email)
            case .delete:
                try await auth.delete(id, app: app, operatorEmail: actor.email)
            case .requestExport:
                try await auth.requestExport(id, app: app, operatorEmail: actor.email)
            }
        } catch let refusal as ConsoleRefusal {
            try await operators.record(actor, action: action.rawValue, app: app, target: target, outcome: .refused, detail: refusal.message, ipAddress: nil)
            throw refusal
        } catch let failure as ConsoleHTTP.Failure {
            try await operators.record(actor, action: action.rawValue, app: app, target: target, outcome: .failed, detail: failure.description, ipAddress: nil)
            if failure.status == 404 { throw ConsoleRefusal(.notFound, "\(app.rawValue) has no such user.") }
            if (400..<500).contains(failure.status) { throw ConsoleRefusal(.badInput, failure.message ?? "auth refused: \(failure.status)") }
            throw ConsoleRefusal(.unavailable, "auth could not do it now (\(failure.status)); nothing was changed by the console.")
        }
        try await operators.record(actor, action: action.rawValue, app: app, target: target, outcome: .ok, detail: argument, ipAddress: nil)
    }
}
