import ColonyModels
import ColonyPlatform
import Foundation

/// The `colony-admin import supabase` runs of the apps an operator works on, as auth records
/// them (`GET /auth/v1/admin/imports`): an operator sees what came over from Supabase, what was
/// skipped and why, without a terminal.
public struct ImportHistory: Sendable {
    let auth: AuthAdminClient

    public init(auth: AuthAdminClient) {
        self.auth = auth
    }

    /// How many runs per app the page lists.
    public static let runsPerApp = 20

    /// Each visible app's runs, newest first, in the catalogue's order of apps.
    public func runs(by actor: SignedInOperator) async throws -> [(app: App, runs: [ImportRun])] {
        guard actor.rights.allows(.viewPipeline) else { throw ConsoleRefusal(.forbidden, "Your role does not show imports.") }
        let apps = actor.rights.visibleApps
        return try await withThrowingTaskGroup(of: (App, [ImportRun]).self) { group in
            for app in apps {
                group.addTask { (app, try await auth.imports(app: app, limit: Self.runsPerApp, operatorEmail: actor.email)) }
            }
            var found: [App: [ImportRun]] = [:]
            for try await (app, runs) in group { found[app] = runs }
            return apps.map { ($0, found[$0] ?? []) }
        }
    }
}
