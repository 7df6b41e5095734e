@testable import AuthService
import ColonyModels
import ColonyPlatform
import ColonyTesting
import Foundation
import Testing

/// Accounts kept no longer than they should be (issue 40.2), with the clock the test sets:
/// unconfirmed sign-ups erased after the app's days, unused accounts warned and then erased
/// where the app asks for it, and a sign-in in between keeps the account.
@Suite("Auth retention", .serialized)
struct AuthRetentionTests {
    let password = "correct-horse-1"

    func createUser(_ auth: RunningAuth, app: App = .mycirclee, confirmed: Bool) async throws -> (id: UUID, email: String) {
        let email = "\(uniqueName("keep"))@example.com"
        let created = try await auth.request(.POST, "/admin/users", app: app, bearer: auth.serviceKeys[app], apiKey: auth.serviceKeys[app],
                                             json: ["email": email, "password": password, "email_confirm": confirmed])
        #expect(created.status == 200, "\(created.json)")
        return (try #require(UUID(uuidString: created.json["id"] as? String ?? "")), email)
    }

    func exists(_ auth: RunningAuth, _ id: UUID) async throws -> Bool {
        try await auth.withDatabase { database in
            try await database.withConnection { connection in
                try await connection.query("SELECT count(*)::int FROM users WHERE id = \(id)", logger: TestEnvironment.logger).firstValue(Int.self) == 1
            }
        }
    }

    @Test("an unconfirmed sign-up that never signed in goes after the app's 30 days, with user_deleted; confirmed and younger ones stay")
    func unconfirmedSignUps() async throws {
        try await withRunningAuth { auth in
            let stale = try await createUser(auth, confirmed: false)
            let confirmed = try await createUser(auth, confirmed: true)
            try await auth.withDatabase { (database: Database) async throws in
                let accounts = auth.accounts(database)
                #expect(try await accounts.applyRetention(now: Date().addingTimeInterval(29 * 86_400)).unconfirmed == 0)
                let outcome = try await accounts.applyRetention(now: Date().addingTimeInterval(31 * 86_400))
                #expect(outcome.unconfirmed >= 1)
            }
            #expect(try await exists(auth, stale.id) == false)
            #expect(try await exists(auth, confirmed.id))
            let environment = try TestEnvironment.current()
            let events = try await authEvents(brokers: environment.kafkaBrokers, prefix: auth.topicPrefix) { events in
                events.contains { $0.type == .userDeleted }
            }
            let erased = try events.filter { $0.type == .userDeleted }.map { try $0.decode(UserDeleted.self).payload.userId }
            #expect(erased.contains(stale.id) && !erased.contains(confirmed.id))
        }
    }

    @Test("an unused account is warned (mail) when its warning days begin, erased only once they are up; a sign-in after the warning keeps it")
    func inactiveAccounts() async throws {
        let configure: @Sendable (inout AuthSettings) -> Void = { settings in
            settings.apps[.socialspot]?.inactiveAccountDays = 60
            settings.apps[.socialspot]?.inactiveWarningDays = 14
        }
        try await withRunningAuth { auth in
            let idle = try await createUser(auth, app: .socialspot, confirmed: true)
            let returning = try await createUser(auth, app: .socialspot, confirmed: true)
            // Another app without the rule: never warned.
            let elsewhere = try await createUser(auth, app: .ibelieveinyou, confirmed: true)
            let start = Date()
            try await auth.withDatabase { (database: Database) async throws in
                let accounts = auth.accounts(database, configure: configure)
                #expect(try await accounts.applyRetention(now: start.addingTimeInterval(45 * 86_400)).warned == 0)
                let warned = try await accounts.applyRetention(now: start.addingTimeInterval(47 * 86_400))
                #expect(warned.warned == 2 && warned.inactive == 0, "\(warned)")
                // Warned once, not again.
                #expect(try await accounts.applyRetention(now: start.addingTimeInterval(48 * 86_400)).warned == 0)
                // The second one signs in after the warning.
                try await database.withConnection { connection in
                    try await connection.query("UPDATE users SET last_sign_in_at = \(start.addingTimeInterval(50 * 86_400)) WHERE id = \(returning.id)", logger: TestEnvironment.logger)
                }
                // Past 60 days unused, but the warning is not 14 days old yet.
                #expect(try await accounts.applyRetention(now: start.addingTimeInterval(60.5 * 86_400)).inactive == 0)
                let erased = try await accounts.applyRetention(now: start.addingTimeInterval(61.5 * 86_400))
                #expect(erased.inactive == 1, "\(erased)")
            }
            let mail = try #require(try auth.messages(to: idle.email).first { $0.kind == "inactive_account" })
            #expect(mail.channel == .email && mail.text.contains("SocialSpot"))
            #expect(try auth.messages(to: elsewhere.email).allSatisfy { $0.kind != "inactive_account" })
            #expect(try await exists(auth, idle.id) == false)
            #expect(try await exists(auth, returning.id))
            #expect(try await exists(auth, elsewhere.id))
        }
    }

    @Test("the apps file's retention fields are checked at start")
    func appsFileChecks() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent(uniqueName("apps") + ".json")
        defer { try? FileManager.default.removeItem(at: file) }
        for bad in [#"{"unify": {"unconfirmed_signup_days": 0}}"#, #"{"unify": {"inactive_account_days": 10}}"#,
                    #"{"unify": {"inactive_account_days": 60, "inactive_warning_days": 60}}"#, #"{"unify": {"audit_retention_days": -1}}"#] {
            try Data(bad.utf8).write(to: file)
            #expect(throws: ConfigurationError.self, "\(bad)") { try AuthSettings.loadApps(AppsFile.parse(Data(contentsOf: file))) }
        }
        try Data(#"{"unify": {"inactive_account_days": 365, "inactive_warning_days": 30, "unconfirmed_signup_days": null, "audit_retention_days": 400}}"#.utf8).write(to: file)
        let apps = try AuthSettings.loadApps(AppsFile.parse(Data(contentsOf: file)))
        #expect(apps[.unify]?.inactiveAccountDays == 365 && apps[.unify]?.unconfirmedSignupDays == nil && apps[.unify]?.auditRetentionDays == 400)
        #expect(apps[.mycirclee]?.unconfirmedSignupDays == 30 && apps[.mycirclee]?.inactiveAccountDays == nil)
    }

    @Test("one apps file for every service: auth's fields are exactly AppAuthSettings', it takes them beside the others' fields, and refuses an unknown one or a retired variable at start")
    func oneAppsFile() throws {
        // The catalogue (and so docs/configuration.md) cannot drift from the type auth decodes.
        let properties = Mirror(reflecting: AppAuthSettings.defaults(for: .unify)).children.compactMap(\.label).map { label in
            label.reduce(into: "") { name, character in name += character.isUppercase ? "_" + character.lowercased() : String(character) }
        }
        #expect(Set(properties) == Set(AppsFile.fields.filter { $0.readBy == .auth }.map(\.name)))

        func environment(_ changes: [String: String]) -> EnvironmentReader {
            let pepper = Data((0..<32).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
            return EnvironmentReader(["COLONY_AUTH_PHONE_PEPPER": pepper, "COLONY_AUTH_MAIL_DIR": FileManager.default.temporaryDirectory.path].merging(changes) { $1 })
        }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent(uniqueName("apps") + ".json")
        defer { try? FileManager.default.removeItem(at: file) }
        try Data(#"{"unify": {"display_name": "Unify", "require_aal2": true, "push_log_retention_days": 14}}"#.utf8).write(to: file)
        let settings = try AuthSettings.load(environment: environment(["COLONY_APPS_FILE": file.path]), port: 9999, issuer: "colony-auth")
        #expect(settings.apps[.unify]?.displayName == "Unify")
        try Data(#"{"unify": {"display_nam": "Unify"}}"#.utf8).write(to: file)
        #expect(throws: ConfigurationError.self) { try AuthSettings.load(environment: environment(["COLONY_APPS_FILE": file.path]), port: 9999, issuer: "colony-auth") }
        #expect(throws: ConfigurationError.self) { try AuthSettings.load(environment: environment(["COLONY_AUTH_APPS_FILE": file.path]), port: 9999, issuer: "colony-auth") }
    }
}
