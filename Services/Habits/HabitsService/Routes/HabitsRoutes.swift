import ColonyModels
import ColonyPlatform
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import PostgresNIO

/// The habits REST API under `/habits/v1` (described by `HabitsOpenAPI`). Handlers decode, call
/// the domain in one transaction, and encode. Every write accepts an `Idempotency-Key`.
struct HabitsRoutes: Sendable {
    let database: Database
    let habits: Habits
    let hives: Hives
    let profiles: Profiles
    let idempotency: IdempotencyStore
    let invitations: HiveInvitations

    static let prefix = "/habits/v1"
    static let idempotencyKey = HTTPField.Name("Idempotency-Key")!
    static let replayed = HTTPField.Name("Idempotent-Replayed")!

    func add(to router: Router<ColonyRequestContext>, tokenMiddleware: TokenMiddleware, catalog: RouteCatalog) {
        let document = OpenAPIDocument(bytes: PackageResources.openapi_json)
        document.serve(at: "\(Self.prefix)/openapi.json", on: router)
        catalog.record(RouteKey(method: "GET", path: "\(Self.prefix)/openapi.json"))
        let routes = DocumentedRoutes(group: router.group(RouterPath(Self.prefix)).add(middleware: tokenMiddleware), prefix: Self.prefix, catalog: catalog)

        routes.on(.get, "profile") { _, context in try await read(context) { user, connection in try await profiles.get(user, on: connection) } }
        routes.on(.patch, "profile") { request, context in
            try await write(request, context) { body, user, connection in
                let patch = try decode(ProfilePatch.self, body)
                return try await profiles.update(user, .init(displayName: patch.displayName, avatarUrl: patch.avatarUrl, timezone: patch.timezone, dayStartHour: patch.dayStartHour, theme: patch.theme), on: connection)
            }
        }

        routes.on(.get, "local-date") { request, context in
            let at = try RouteSupport.query(request, "at", "at must be an ISO 8601 time") { ISO8601.parse($0) }
            return try await read(context) { user, connection in try await profiles.localDate(user, at: at, on: connection) }
        }

        routes.on(.get, "habits") { request, context in
            let archived = try RouteSupport.query(request, "include_archived", "include_archived must be true or false") { ["true": true, "false": false][$0] } ?? false
            return try await read(context) { user, connection in try await habits.store.list(userID: user, includeArchived: archived, on: connection) }
        }
        routes.on(.post, "habits") { request, context in
            try await write(request, context, status: .created) { body, user, connection in
                try await habits.create(try decode(HabitBody.self, body).draft, userID: user, on: connection)
            }
        }
        routes.on(.get, "habits/{habit_id}") { _, context in
            let id = try uuid(context, "habit_id", HabitsErrors.habitNotFound)
            return try await read(context) { user, connection in try await habits.get(id, userID: user, on: connection) }
        }
        routes.on(.patch, "habits/{habit_id}") { request, context in
            let id = try uuid(context, "habit_id", HabitsErrors.habitNotFound)
            return try await write(request, context) { body, user, connection in
                let patch = try decode(HabitPatch.self, body)
                return try await habits.update(id, userID: user, change: patch.apply, on: connection)
            }
        }
        routes.on(.delete, "habits/{habit_id}") { request, context in
            let id = try uuid(context, "habit_id", HabitsErrors.habitNotFound)
            return try await write(request, context, status: .noContent) { _, user, connection -> Empty in
                try await habits.delete(id, userID: user, on: connection)
                return Empty()
            }
        }
        for (path, active) in [("habits/{habit_id}/archive", false), ("habits/{habit_id}/unarchive", true)] {
            routes.on(.post, path) { request, context in
                let id = try uuid(context, "habit_id", HabitsErrors.habitNotFound)
                return try await write(request, context) { _, user, connection in try await habits.setActive(id, userID: user, active: active, on: connection) }
            }
        }
        routes.on(.post, "habits/{habit_id}/logs") { request, context in
            let id = try uuid(context, "habit_id", HabitsErrors.habitNotFound)
            return try await write(request, context) { body, user, connection in
                let log = try decode(LogBody.self, body, emptyAs: LogBody())
                return try await habits.log(id, userID: user, .init(value: log.value ?? 1, at: log.at, date: log.date), on: connection)
            }
        }
        routes.on(.get, "habits/{habit_id}/logs") { request, context in
            let id = try uuid(context, "habit_id", HabitsErrors.habitNotFound)
            let from = try date(request, "from"), to = try date(request, "to")
            return try await read(context) { user, connection in try await habits.logs(id, userID: user, from: from, to: to, on: connection) }
        }
        routes.on(.delete, "habits/{habit_id}/logs/{date}") { request, context in
            let id = try uuid(context, "habit_id", HabitsErrors.habitNotFound)
            guard let day = context.parameters.get("date").flatMap(LocalDate.init) else { throw HabitsErrors.validation("date must be YYYY-MM-DD") }
            return try await write(request, context, status: .noContent) { _, user, connection -> Empty in
                try await habits.deleteLog(id, userID: user, day: day, on: connection)
                return Empty()
            }
        }
        routes.on(.get, "habits/{habit_id}/insights") { request, context in
            let id = try uuid(context, "habit_id", HabitsErrors.habitNotFound)
            let year = try request.uri.queryParameters["year"].map { text in
                guard let year = Int(text) else { throw HabitsErrors.validation("year must be a number") }
                return year
            }
            return try await read(context) { user, connection in try await habits.insights(id, userID: user, year: year, on: connection) }
        }
        routes.on(.post, "habits/{habit_id}/hive") { request, context in
            let id = try uuid(context, "habit_id", HabitsErrors.habitNotFound)
            return try await write(request, context, status: .created) { body, user, connection in
                let convert = try decode(ConvertBody.self, body, emptyAs: ConvertBody())
                return try await hives.convert(habitID: id, name: convert.name, backfillDays: convert.backfillDays ?? 30, userID: user, on: connection)
            }
        }
        routes.on(.get, "insights") { _, context in
            try await read(context) { user, connection in try await habits.overallInsights(userID: user, on: connection) }
        }

        routes.on(.get, "hives") { _, context in
            try await read(context) { user, connection in try await hives.list(userID: user, on: connection) }
        }
        routes.on(.post, "hives") { request, context in
            try await write(request, context, status: .created) { body, user, connection in
                let hive = try decode(HabitBody.self, body)
                return try await hives.create(name: hive.name, draft: hive.draft, userID: user, on: connection)
            }
        }
        routes.on(.post, "hives/join") { request, context in
            try await write(request, context) { body, user, connection in
                try await hives.join(code: try decode(JoinBody.self, body).code, userID: user, on: connection)
            }
        }
        routes.on(.get, "hives/{hive_id}") { _, context in
            let id = try uuid(context, "hive_id", HabitsErrors.hiveNotFound)
            return try await read(context) { user, connection in try await hives.detail(id, userID: user, on: connection) }
        }
        routes.on(.patch, "hives/{hive_id}") { request, context in
            let id = try uuid(context, "hive_id", HabitsErrors.hiveNotFound)
            return try await write(request, context) { body, user, connection in
                try await hives.update(id, try decode(Hives.Patch.self, body), userID: user, on: connection)
            }
        }
        routes.on(.post, "hives/{hive_id}/invitations") { request, context in
            let id = try uuid(context, "hive_id", HabitsErrors.hiveNotFound)
            return try await write(request, context, status: .created) { body, user, connection in
                try await invitations.invite(id, invitee: try decode(InvitationBody.self, body).userId, userID: user, on: connection)
            }
        }
        routes.on(.get, "invitations") { _, context in
            try await read(context) { user, connection in try await invitations.pending(userID: user, on: connection) }
        }
        routes.on(.post, "invitations/{invitation_id}/accept") { request, context in
            let id = try uuid(context, "invitation_id", HabitsErrors.invitationNotFound)
            return try await write(request, context) { _, user, connection in try await invitations.accept(id, userID: user, on: connection) }
        }
        routes.on(.post, "invitations/{invitation_id}/decline") { request, context in
            let id = try uuid(context, "invitation_id", HabitsErrors.invitationNotFound)
            return try await write(request, context) { _, user, connection in try await invitations.decline(id, userID: user, on: connection) }
        }
        routes.on(.delete, "hives/{hive_id}") { request, context in
            let id = try uuid(context, "hive_id", HabitsErrors.hiveNotFound)
            return try await write(request, context, status: .noContent) { _, user, connection -> Empty in
                try await hives.delete(id, userID: user, on: connection)
                return Empty()
            }
        }
        routes.on(.post, "hives/{hive_id}/logs") { request, context in
            let id = try uuid(context, "hive_id", HabitsErrors.hiveNotFound)
            return try await write(request, context) { body, user, connection in
                let log = try decode(LogBody.self, body, emptyAs: LogBody())
                guard log.date == nil else { throw HabitsErrors.validation("a hive is logged for today (or `at`), not for a chosen date") }
                return try await hives.logToday(id, userID: user, value: log.value ?? 1, at: log.at, on: connection)
            }
        }
        routes.on(.get, "hives/{hive_id}/days") { request, context in
            let id = try uuid(context, "hive_id", HabitsErrors.hiveNotFound)
            guard let from = try date(request, "from"), let to = try date(request, "to") else { throw HabitsErrors.validation("from and to are required (YYYY-MM-DD)") }
            return try await read(context) { user, connection in try await hives.days(id, userID: user, from: from, to: to, on: connection) }
        }
        routes.on(.post, "hives/{hive_id}/advance") { request, context in
            let id = try uuid(context, "hive_id", HabitsErrors.hiveNotFound)
            return try await write(request, context) { body, user, connection in
                try await hives.advanceNow(id, userID: user, day: try decode(AdvanceBody.self, body, emptyAs: AdvanceBody()).day, on: connection)
            }
        }
        routes.on(.post, "hives/{hive_id}/leave") { request, context in
            let id = try uuid(context, "hive_id", HabitsErrors.hiveNotFound)
            return try await write(request, context, status: .noContent) { _, user, connection -> Empty in
                try await hives.leave(id, userID: user, on: connection)
                return Empty()
            }
        }
        routes.on(.delete, "hives/{hive_id}/members/{user_id}") { request, context in
            let id = try uuid(context, "hive_id", HabitsErrors.hiveNotFound)
            let member = try uuid(context, "user_id", HabitsErrors.memberNotFound)
            return try await write(request, context, status: .noContent) { _, user, connection -> Empty in
                try await hives.remove(id, member: member, userID: user, on: connection)
                return Empty()
            }
        }
        routes.on(.get, "hives/{hive_id}/invites") { _, context in
            let id = try uuid(context, "hive_id", HabitsErrors.hiveNotFound)
            return try await read(context) { user, connection in try await hives.invites(id, userID: user, on: connection) }
        }
        routes.on(.post, "hives/{hive_id}/invites") { request, context in
            let id = try uuid(context, "hive_id", HabitsErrors.hiveNotFound)
            return try await write(request, context, status: .created) { body, user, connection in
                let invite = try decode(InviteBody.self, body, emptyAs: InviteBody())
                return try await hives.createInvite(id, userID: user, ttlMinutes: invite.ttlMinutes, maxUses: invite.maxUses, on: connection)
            }
        }
        routes.on(.get, "hives/{hive_id}/activity") { request, context in
            let id = try uuid(context, "hive_id", HabitsErrors.hiveNotFound)
            let limit = try request.uri.queryParameters["limit"].map { text in
                guard let limit = Int(text), (1...100).contains(limit) else { throw HabitsErrors.validation("limit must be between 1 and 100") }
                return limit
            } ?? 20
            let before = request.uri.queryParameters["before"].map(String.init)
            return try await read(context) { user, connection in try await hives.feed(id, userID: user, before: before, limit: limit, on: connection) }
        }

        routes.on(.post, "contacts") { request, context in
            try await write(request, context) { body, user, connection in
                let upload = try decode(ContactsBody.self, body)
                return ContactsResponse(matches: try await profiles.uploadContacts(upload.contacts.map { .init(phone: $0.phone, displayName: $0.displayName) }, userID: user, on: connection))
            }
        }
        routes.on(.get, "contacts/matches") { _, context in
            try await read(context) { user, connection in ContactsResponse(matches: try await profiles.matches(userID: user, on: connection)) }
        }
        routes.on(.delete, "contacts") { request, context in
            try await write(request, context, status: .noContent) { _, user, connection -> Empty in
                try await profiles.deleteContacts(userID: user, on: connection)
                return Empty()
            }
        }
    }

    // MARK: bodies

    struct ProfilePatch: Decodable {
        var displayName: String?
        var avatarUrl: String??
        var timezone: String?
        var dayStartHour: Int?
        var theme: String?

        enum CodingKeys: String, CodingKey { case displayName, avatarUrl, timezone, dayStartHour, theme }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            displayName = try container.decodeIfPresent(String.self, forKey: .displayName)
            // Present and null clears the avatar; absent leaves it.
            avatarUrl = container.contains(.avatarUrl) ? .some(try container.decodeIfPresent(String.self, forKey: .avatarUrl)) : nil
            timezone = try container.decodeIfPresent(String.self, forKey: .timezone)
            dayStartHour = try container.decodeIfPresent(Int.self, forKey: .dayStartHour)
            theme = try container.decodeIfPresent(String.self, forKey: .theme)
        }
    }

    struct HabitBody: Decodable {
        var name: String
        var emoji: String?
        var colorHex: String?
        var type: HabitType?
        var targetPerDay: Int?
        var scheduleDaily: Bool?
        var scheduleWeekmask: Int?
        var reminderTimes: [String]?

        var draft: HabitDraft {
            HabitDraft(name: name, emoji: emoji, colorHex: colorHex ?? "#FF9F1C", type: type ?? .checkbox, targetPerDay: targetPerDay ?? 1,
                       scheduleDaily: scheduleDaily ?? true, scheduleWeekmask: scheduleWeekmask ?? 127, reminderTimes: reminderTimes ?? [])
        }
    }

    struct HabitPatch: Decodable {
        var name: String?
        var emoji: String?
        var colorHex: String?
        var type: HabitType?
        var targetPerDay: Int?
        var scheduleDaily: Bool?
        var scheduleWeekmask: Int?
        var reminderTimes: [String]?

        func apply(to draft: inout HabitDraft) {
            if let name { draft.name = name }
            if let emoji { draft.emoji = emoji }
            if let colorHex { draft.colorHex = colorHex }
            if let type { draft.type = type }
            if let targetPerDay { draft.targetPerDay = targetPerDay }
            if let scheduleDaily { draft.scheduleDaily = scheduleDaily }
            if let scheduleWeekmask { draft.scheduleWeekmask = scheduleWeekmask }
            if let reminderTimes { draft.reminderTimes = reminderTimes }
        }
    }

    struct LogBody: Decodable {
        var value: Int?
        var at: Date?
        var date: LocalDate?
    }

    struct ConvertBody: Decodable {
        var name: String?
        var backfillDays: Int?
    }

    struct JoinBody: Decodable { var code: String }
    struct InvitationBody: Decodable { var userId: UUID }
    struct AdvanceBody: Decodable { var day: LocalDate? }

    struct InviteBody: Decodable {
        var ttlMinutes: Int?
        var maxUses: Int?
    }

    struct ContactsBody: Decodable {
        struct Contact: Decodable {
            var phone: String
            var displayName: String?
        }
        var contacts: [Contact]
    }

    struct ContactsResponse: Codable, Sendable {
        var matches: [ContactStore.Match]
    }

    typealias Empty = RouteSupport.Empty

    // MARK: plumbing

    /// A read: the caller's id and a pooled connection.
    func read<Output: Encodable & Sendable>(_ context: ColonyRequestContext, _ body: @Sendable (UUID, PostgresConnection) async throws -> Output) async throws -> Response {
        try await RouteSupport(database: database).read(context, body)
    }

    /// A write in one transaction. With an `Idempotency-Key`, the answer is stored in the same
    /// commit and a replay of the same request gets it back without running again; the same
    /// key with a different request is refused.
    func write<Output: Encodable & Sendable>(_ request: Request, _ context: ColonyRequestContext, status: HTTPResponse.Status = .ok,
                                             _ body: @Sendable (ByteBuffer, UUID, PostgresConnection) async throws -> Output) async throws -> Response {
        let user = try context.requireUser().id
        let bytes = try await RouteSupport.collect(request, context)
        let key = request.headers[Self.idempotencyKey]
        if let key, key.isEmpty || key.count > 255 || !key.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value < 0x7f }) {
            throw HabitsErrors.idempotencyKeyInvalid
        }
        let requestHash = key.map { _ in IdempotencyStore.hash(method: request.method.rawValue, path: request.uri.description, body: bytes) }
        return try await database.transaction { connection in
            if let key, let requestHash, let stored = try await idempotency.lookup(userID: user, key: key, on: connection) {
                guard stored.requestHash == requestHash else { throw HabitsErrors.idempotencyKeyReused }
                var response = Self.response(stored.body, status: HTTPResponse.Status(code: stored.status))
                response.headers[Self.replayed] = "true"
                return response
            }
            let output = try await body(bytes, user, connection)
            let encoded = status == .noContent ? ByteBuffer() : ByteBuffer(bytes: try ColonyJSON.encode(output))
            if let key, let requestHash {
                try await idempotency.store(userID: user, key: key, requestHash: requestHash, status: Int(status.code), body: encoded, on: connection)
            }
            return Self.response(encoded, status: status)
        }
    }

    static func response(_ body: ByteBuffer, status: HTTPResponse.Status) -> Response { RouteSupport.response(body, status: status) }
    func json(_ value: some Encodable, status: HTTPResponse.Status) throws -> Response { try RouteSupport.json(value, status: status) }
    func decode<T: Decodable>(_ type: T.Type, _ body: ByteBuffer, emptyAs empty: T? = nil) throws -> T { try RouteSupport.decode(type, body, emptyAs: empty) }
    func uuid(_ context: ColonyRequestContext, _ name: String, _ notFound: APIError) throws -> UUID { try RouteSupport.uuid(context, name, notFound) }

    func date(_ request: Request, _ name: String) throws -> LocalDate? {
        guard let text = request.uri.queryParameters[Substring(name)] else { return nil }
        guard let date = LocalDate(text) else { throw HabitsErrors.validation("\(name) must be YYYY-MM-DD") }
        return date
    }
}
