import ColonyModels
import ColonyTesting
import Foundation
import Hummingbird
import PostgresNIO
import Testing

@testable import ColonyPlatform

/// The reports desk every domain service shares (`ReportDesk`, `ServiceDefinition.reports`), on a
/// tiny service whose users own `notes` shared with `readers`: who may report what, the
/// budget, the moderators' queue and decisions, and an account's reports erased with it.
@Suite("Reports desk")
struct ReportDeskTests {
    let consoleKey = InternalKey(PipelineAdminRoutesTests.randomKey())

    /// A note is visible to its owner and its readers; removing it deletes it.
    struct Notes: ReportableContent {
        var objectTypes: [String] { ["note"] }

        func visible(_ objectType: String, _ id: UUID, to viewer: UUID, on connection: PostgresConnection) async throws -> ReportedObject? {
            try await note(id, where: "AND (owner = $2 OR $2 = ANY(readers))", viewer: viewer, on: connection)
        }

        func current(_ objectType: String, _ id: UUID, on connection: PostgresConnection) async throws -> ReportedObject? {
            try await note(id, where: "", viewer: nil, on: connection)
        }

        func remove(_ objectType: String, _ id: UUID, on connection: PostgresConnection) async throws -> Bool {
            try await connection.query("DELETE FROM notes WHERE id = \(id) RETURNING id", logger: TestEnvironment.logger).collect().count == 1
        }

        func note(_ id: UUID, where condition: String, viewer: UUID?, on connection: PostgresConnection) async throws -> ReportedObject? {
            var binds = PostgresBindings()
            binds.append(id)
            if let viewer { binds.append(viewer) }
            for try await (owner, text) in try await connection.query(PostgresQuery(unsafeSQL: "SELECT owner, text FROM notes WHERE id = $1 \(condition)", binds: binds),
                                                                      logger: TestEnvironment.logger).decode((UUID, String).self) {
                return ReportedObject(ownerId: owner, content: text)
            }
            return nil
        }
    }

    func definition() -> ServiceDefinition {
        var definition = ServiceDefinition(
            migrations: [Migration(version: 1, name: "notes", sql: "CREATE TABLE notes (id uuid PRIMARY KEY, owner uuid NOT NULL, readers uuid[] NOT NULL, text text NOT NULL);")],
            consumes: [.auth],
            handleEvent: { _, _, _ in },
            addRoutes: { router, context in
                let desk = try context.requiredReports()
                router.group().add(middleware: context.tokenMiddleware).post("/habits/v1/reports") { request, requestContext -> Response in
                    struct Filing: Decodable { var objectType: String; var objectId: UUID; var category: ReportCategory; var words: String? }
                    let filing = try RouteSupport.decode(Filing.self, try await RouteSupport.collect(request, requestContext))
                    let caller = try requestContext.requireUser()
                    let report = try await context.database.transaction { connection in
                        try await desk.file(objectType: filing.objectType, objectId: filing.objectId, category: filing.category, words: filing.words, by: caller.id, on: connection)
                    }
                    return try RouteSupport.json(["id": report.id.lowercased, "status": report.status], status: .created)
                }
            }
        )
        definition.reports = { _ in Notes() }
        return definition
    }

    func note(_ service: RunningService, owner: UUID, readers: [UUID], text: String = "buy cheap pills") async throws -> UUID {
        let id = UUID()
        try await service.withDatabase { database in
            try await database.query("INSERT INTO notes (id, owner, readers, text) VALUES (\(id), \(owner), \(readers), \(text))")
        }
        return id
    }

    func report(_ service: RunningService, _ note: UUID, as user: RunningService.User, category: String = "spam", words: String? = nil) async throws -> RunningService.Reply {
        var body: [String: Any] = ["object_type": "note", "object_id": note.lowercased, "category": category]
        if let words { body["words"] = words }
        return try await service.request(.POST, "/reports", as: user, json: body)
    }

    @Test("a reader reports once; a stranger, an unknown id and the owner cannot; the queue, the review and a removal; twice is 404")
    func reportAndRemove() async throws {
        try await withRunningService(.habits, app: .habithive, apiPrefix: "/habits/v1", configure: { $0.consoleKey = consoleKey }, definition: { _ in definition() }) { service in
            let owner = try await service.user(), reader = try await service.user(), other = try await service.user(), stranger = try await service.user()
            let spam = try await note(service, owner: owner.id, readers: [reader.id, other.id])
            let fine = try await note(service, owner: owner.id, readers: [reader.id], text: "see you at nine")

            let filed = try await report(service, spam, as: reader, words: "  selling pills  ")
            #expect(filed.status == 201, "\(filed.body)")
            #expect(try await report(service, spam, as: reader).code == "already_reported")
            #expect(try await report(service, spam, as: other, category: "illegal").status == 201)
            #expect(try await report(service, fine, as: reader, category: "harassment").status == 201)
            // A stranger's report of a note they cannot see is the same answer as for no note at all.
            let hidden = try await report(service, spam, as: stranger)
            let missing = try await report(service, UUID(), as: stranger)
            #expect(hidden.status == 404 && missing.status == 404 && hidden.code == missing.code, "\(hidden.body) \(missing.body)")
            let own = try await report(service, spam, as: owner)
            #expect(own.status == 403 && own.code == "own_content", "\(own.body)")
            #expect(try await report(service, spam, as: stranger, category: "rude").status == 422)
            #expect(try await report(service, fine, as: other, words: String(repeating: "x", count: 1001)).status == 422)

            let moderation = ModerationCalls(service: service, key: consoleKey)
            let queue = try await moderation.queue()
            #expect(queue.map(\.objectId) == [spam, fine], "the oldest report first")
            #expect(queue.first?.openReports == 2)
            #expect(queue.first?.categories.map(\.category).sorted { $0.rawValue < $1.rawValue } == [.illegal, .spam])
            let review = try #require(try await moderation.review("note", spam))
            #expect(review.content == "buy cheap pills" && review.reportedUserId == owner.id)
            #expect(review.reports.first { $0.reporterId == reader.id }?.words == "selling pills", "words are trimmed")

            let removed = try await moderation.resolve("note", spam, .remove)
            #expect(removed.removed && Set(removed.reporterIds) == [reader.id, other.id] && removed.reportedUserId == owner.id)
            #expect(try await moderation.review("note", spam)?.content == nil, "gone for moderators too")
            #expect(try await moderation.review("note", spam)?.history.reports["removed"] == 2)
            await #expect(throws: ModerationCalls.Failure.self) { try await moderation.resolve("note", spam, .dismiss) }
            let dismissed = try await moderation.resolve("note", fine, .dismiss)
            #expect(!dismissed.removed && dismissed.reporterIds == [reader.id])
            #expect(try await service.withDatabase { try await $0.query("SELECT count(*)::int FROM notes").collect()[0].decode(Int.self) } == 1, "a dismissed note stays")
            #expect(try await moderation.queue().isEmpty)
            // Once closed, the reader may report it again.
            #expect(try await report(service, fine, as: reader, category: "other").status == 201)

            // Without the console's credential, nothing.
            let anonymous = try await service.request(.GET, "\(service.base)\(ModerationAdminRoutes.reportsPath)", as: reader)
            #expect(anonymous.status == 401)
        }
    }

    @Test("past the budget a reporter is refused with 429 report_quota and nothing is stored")
    func budget() async throws {
        try await withRunningService(.habits, app: .habithive, apiPrefix: "/habits/v1",
                                     configure: { $0.consoleKey = consoleKey; $0.reportQuota = Quota(2, perSeconds: 3600) }, definition: { _ in definition() }) { service in
            let owner = try await service.user(), reader = try await service.user()
            var notes: [UUID] = []
            for index in 0..<3 { notes.append(try await note(service, owner: owner.id, readers: [reader.id], text: "note \(index)")) }
            #expect(try await report(service, notes[0], as: reader).status == 201)
            #expect(try await report(service, notes[1], as: reader).status == 201)
            let third = try await report(service, notes[2], as: reader)
            #expect(third.status == 429 && third.code == "report_quota" && third.headers.first(name: "Retry-After") != nil, "\(third.body)")
            #expect(try await ModerationCalls(service: service, key: consoleKey).queue().count == 2)
        }
    }

    @Test("user_deleted erases the reports the account filed and those of its content")
    func erasedWithTheAccount() async throws {
        try await withRunningService(.habits, app: .habithive, apiPrefix: "/habits/v1", configure: { $0.consoleKey = consoleKey }, definition: { _ in definition() }) { service in
            let owner = try await service.user(), reader = try await service.user(), other = try await service.user()
            let owners = try await note(service, owner: owner.id, readers: [reader.id])
            let readers = try await note(service, owner: reader.id, readers: [other.id])
            let others = try await note(service, owner: other.id, readers: [owner.id])
            #expect(try await report(service, owners, as: reader).status == 201)
            #expect(try await report(service, readers, as: other).status == 201)
            #expect(try await report(service, others, as: owner).status == 201)
            try await service.publishAuthEvent(UserDeleted(userId: reader.id, app: .habithive, deletedAt: Date()), user: reader.id)
            let moderation = ModerationCalls(service: service, key: consoleKey)
            try await waitUntil(timeout: .seconds(60)) { (try? await moderation.queue().count) == 1 }
            #expect(try await moderation.queue().map(\.objectId) == [others], "the reader's report and the report of the reader's note are gone")
        }
    }
}
