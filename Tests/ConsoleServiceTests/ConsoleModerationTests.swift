import ColonyModels
import ColonyPlatform
import ColonyTesting
import ConsoleService
import Foundation
import PostgresNIO
import Testing

/// The console's moderation pages and decisions, with a service that takes reports running beside
/// auth and the console: HabitHive's `notes` here, a tiny service whose users' notes are reported
/// (the services' own reportables are tested in their suites, the whole path in the browser suite).
@Suite("Console: moderation")
struct ConsoleModerationTests {
    /// A note; `anonymous` ones hide their owner from roles that do not reveal anonymous authors.
    struct Notes: ReportableContent {
        var objectTypes: [String] { ["note"] }

        func visible(_ objectType: String, _ id: UUID, to viewer: UUID, on connection: PostgresConnection) async throws -> ReportedObject? {
            try await current(objectType, id, on: connection)
        }

        func current(_ objectType: String, _ id: UUID, on connection: PostgresConnection) async throws -> ReportedObject? {
            for try await (owner, text, anonymous) in try await connection.query("SELECT owner, text, anonymous FROM notes WHERE id = \(id)", logger: TestEnvironment.logger)
                .decode((UUID, String, Bool).self) {
                return ReportedObject(ownerId: owner, content: text, anonymous: anonymous)
            }
            return nil
        }

        func remove(_ objectType: String, _ id: UUID, on connection: PostgresConnection) async throws -> Bool {
            try await connection.query("DELETE FROM notes WHERE id = \(id) RETURNING id", logger: TestEnvironment.logger).collect().count == 1
        }
    }

    func withNotesAndConsole(_ body: @Sendable (RunningService, RunningConsole) async throws -> Void) async throws {
        try await withRunningService(.habits, app: .habithive, apiPrefix: "/habits/v1", configure: { $0.consoleKey = consoleTestKey }, definition: { _ in
            var definition = ServiceDefinition(
                migrations: [Migration(version: 1, name: "notes", sql: "CREATE TABLE notes (id uuid PRIMARY KEY, owner uuid NOT NULL, text text NOT NULL, anonymous boolean NOT NULL DEFAULT false);")],
                addRoutes: { _, _ in }
            )
            definition.reports = { _ in Notes() }
            return definition
        }) { notes in
            try await withRunningConsole(configure: { $0.serviceURLs = [.habits: notes.base] }) { console in
                try await body(notes, console)
            }
        }
    }

    /// A note of `owner`'s, reported by `reporters` (as the service's desk files them).
    func reportedNote(_ notes: RunningService, owner: UUID, reporters: [UUID], text: String, anonymous: Bool = false) async throws -> UUID {
        let id = UUID()
        try await notes.withDatabase { database in
            try await database.query("INSERT INTO notes (id, owner, text, anonymous) VALUES (\(id), \(owner), \(text), \(anonymous))")
            try await database.transaction { connection in
                let desk = ReportDesk(app: .habithive, content: Notes(), quota: Quota(100, perSeconds: 60), logger: TestEnvironment.logger)
                for reporter in reporters {
                    _ = try await desk.file(objectType: "note", objectId: id, category: .harassment, words: "mean to me", by: reporter, on: connection)
                }
            }
        }
        return id
    }

    func consoleEvents(_ console: RunningConsole) async throws -> [String] {
        try await console.withConsoleDatabase { database in
            try await database.query("SELECT event_type FROM outbox ORDER BY position").collect().map { try $0.decode(String.self) }
        }
    }

    @Test("a moderator sees the queue, the object and its reports (never the reporters), removes one, warns on another, suspends a third owner; each is audited and published")
    func decisions() async throws {
        try await withNotesAndConsole { notes, console in
            let owner = try await console.user("owner-of-notes@example.com", app: .habithive)
            let reporter = UUID(), second = UUID()
            let nasty = try await reportedNote(notes, owner: owner, reporters: [reporter, second], text: "you are all idiots")
            let borderline = try await reportedNote(notes, owner: owner, reporters: [reporter], text: "meh")
            let worst = try await reportedNote(notes, owner: owner, reporters: [second], text: "threats")

            let (moderator, _) = try await console.operatorSignedIn("moderator@colony.test", role: .moderator)
            let queue = try await moderator.get("/console/moderation")
            #expect(queue.status == 200 && queue.body.contains("/console/moderation/habithive/note/\(nasty.lowercased)"), "\(queue)")
            #expect(queue.body.contains("harassment ×2"), "\(queue.body)")
            let page = try await moderator.get("/console/moderation/habithive/note/\(nasty.lowercased)")
            #expect(page.status == 200 && page.body.contains("you are all idiots") && page.body.contains("mean to me"), "\(page)")
            #expect(!page.body.contains(reporter.lowercased) && !page.body.contains(second.lowercased), "reporters are never shown")

            let removed = try await moderator.submit("/console/moderation/habithive/note/\(nasty.lowercased)/remove", from: page)
            #expect(removed.status == 303 && removed.location == "/console/moderation?done=remove", "\(removed)")
            #expect(try await notes.withDatabase { try await $0.query("SELECT count(*)::int FROM notes WHERE id = \(nasty)").collect()[0].decode(Int.self) } == 0)
            let gone = try await moderator.get("/console/moderation/habithive/note/\(nasty.lowercased)")
            #expect(gone.body.contains("Gone:") && !gone.body.contains("id=\"moderation-actions\""), "decided and gone: \(gone.body)")

            let warnPage = try await moderator.get("/console/moderation/habithive/note/\(borderline.lowercased)")
            #expect(try await moderator.submit("/console/moderation/habithive/note/\(borderline.lowercased)/warn", from: warnPage).status == 303)
            let suspendPage = try await moderator.get("/console/moderation/habithive/note/\(worst.lowercased)")
            let suspended = try await moderator.submit("/console/moderation/habithive/note/\(worst.lowercased)/suspend", from: suspendPage, ["duration": "168h"])
            #expect(suspended.status == 303, "\(suspended)")
            let signIn = try await console.userSignIn("owner-of-notes@example.com", app: .habithive)
            #expect(signIn.status == 400 && (signIn.json["code"] as? String) == "user_banned", "the owner is suspended: \(signIn)")
            #expect(try await moderator.get("/console/moderation").body.contains("queue-empty"))

            let events = try await consoleEvents(console)
            #expect(events.filter { $0 == "content_removed" }.count == 1 && events.filter { $0 == "user_warned" }.count == 1, "\(events)")
            #expect(events.filter { $0 == "report_resolved" }.count == 4, "one per reporter and object: \(events)")
            let audit = try await moderator.get("/console/audit")
            for (action, target) in [("moderate_remove", nasty), ("moderate_warn", borderline), ("moderate_suspend", worst), ("ban_user", owner)] {
                #expect(audit.body.contains(action) && audit.body.contains(target.lowercased), "\(action) \(target) in the audit log")
            }
        }
    }

    @Test("viewers and support cannot moderate; a moderator of another app sees none of it and is refused (audited); a form without the session's token is refused; an anonymous author is shown to owners only")
    func refusals() async throws {
        try await withNotesAndConsole { notes, console in
            let owner = UUID()
            let note = try await reportedNote(notes, owner: owner, reporters: [UUID()], text: "anonymous abuse", anonymous: true)
            let path = "/console/moderation/habithive/note/\(note.lowercased)"

            for role in [OperatorRole.viewer, .support] {
                let (browser, _) = try await console.operatorSignedIn("\(role.rawValue)@colony.test", role: role)
                #expect(try await browser.get("/console/moderation").status == 403, "\(role)")
                #expect(try await browser.get(path).status == 403, "\(role)")
                let page = try await browser.get("/console/users")
                #expect(try await browser.submit("\(path)/remove", from: page).status == 403, "\(role)")
                #expect(!page.body.contains("/console/moderation"), "no Moderation link for \(role)")
            }
            let (elsewhere, _) = try await console.operatorSignedIn("circles-moderator@colony.test", role: .moderator, apps: [.mycirclee])
            let queue = try await elsewhere.get("/console/moderation")
            #expect(queue.status == 200 && !queue.body.contains(note.lowercased), "another app's reports are not listed")
            #expect(try await elsewhere.get(path).status == 403)
            #expect(try await elsewhere.submit("\(path)/remove", from: queue).status == 403)

            let (moderator, _) = try await console.operatorSignedIn("moderator@colony.test", role: .moderator)
            let page = try await moderator.get(path)
            #expect(page.body.contains("anonymous abuse") && !page.body.contains(owner.lowercased) && page.body.contains("your role does not reveal"), "\(page.body)")
            #expect(try await moderator.post("\(path)/remove", [:]).status == 403, "no CSRF token")
            #expect(try await moderator.post("\(path)/remove", ["csrf": "forged"]).status == 403, "a wrong CSRF token")
            #expect(try await notes.withDatabase { try await $0.query("SELECT count(*)::int FROM notes").collect()[0].decode(Int.self) } == 1, "nothing was removed")

            let (owns, _) = try await console.operatorSignedIn("owner@colony.test", role: .owner)
            #expect(try await owns.get(path).body.contains(owner.lowercased), "owners may see who sent it")

            let audit = try await owns.get("/console/audit?action=moderate_remove")
            #expect(audit.body.contains("circles-moderator@colony.test") && audit.body.contains("refused"), "the refused attempt is audited: \(audit.body)")
        }
    }
}
