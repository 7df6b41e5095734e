import ColonyModels
import ColonyPlatform
import Foundation
import Hummingbird
import OpenAPIRuntime
import PostgresNIO

/// The habits REST API under `/habits/v1`: the operations of `openapi.json`, as the generated
/// `APIProtocol` has them (hives and invitations in `HabitsAPI+Hives.swift`). Each reads the
/// caller and runs the domain on a pooled connection (reads) or in one transaction (writes, which
/// all take an `Idempotency-Key`: `IdempotentWrites`).
struct HabitsAPI: APIProtocol {
    let database: Database
    let habits: Habits
    let hives: Hives
    let profiles: Profiles
    let invitations: HiveInvitations
    let writes: IdempotentWrites
    /// Reports of hives and people (`HabitsReportables`).
    let reports: ReportDesk
    /// The document, served as itself.
    let document: Components.Schemas.OpenAPIDocument

    init(database: Database, habits: Habits, hives: Hives, profiles: Profiles, invitations: HiveInvitations, idempotency: IdempotencyStore, reports: ReportDesk) throws {
        self.database = database
        self.habits = habits
        self.hives = hives
        self.profiles = profiles
        self.invitations = invitations
        self.writes = IdempotentWrites(database: database, store: idempotency)
        self.reports = reports
        self.document = try JSONDecoder().decode(Components.Schemas.OpenAPIDocument.self, from: Data(PackageResources.openapi_json))
    }

    /// Serves the operations behind the token middleware (but the document); a write's
    /// `Idempotency-Key` is checked before its body is decoded. Logging a habit goes by its fast
    /// path (`HabitsAPI+LogFastPath.swift`) unless `COLONY_FAST_PATHS=off`.
    func register(on router: Router<ColonyRequestContext>, context: ServiceContext, contactsBodyLimit: Int) throws {
        let fastPaths = fastPaths(maxBodyBytes: context.configuration.maxBodyBytes)
        try registerHandlers(on: GeneratedRoutes.transport(router, behind: context.tokenMiddleware, publicPaths: ["/habits/v1/openapi.json"],
                                                           fastPaths: fastPaths, mode: context.configuration.fastPaths),
                             serverURL: GeneratedRoutes.serverURL, configuration: GeneratedRoutes.configuration,
                             middlewares: GeneratedRoutes.middlewares(maxBodyBytes: context.configuration.maxBodyBytes, largeJSON: ["uploadContacts": contactsBodyLimit]) + [IdempotencyKeyCheck()])
        try GeneratedFastPath.requireOperations(fastPaths, in: HabitsService.openAPIDocument)
    }

    func getOpenAPIDocument(_ input: Operations.GetOpenAPIDocument.Input) async throws -> Operations.GetOpenAPIDocument.Output {
        .ok(.init(body: .json(document)))
    }

    // MARK: profile

    func getProfile(_ input: Operations.GetProfile.Input) async throws -> Operations.GetProfile.Output {
        .ok(.init(body: .json(.init(try await database.callerRead { caller, connection in try await profiles.get(caller.id, on: connection) }))))
    }

    func updateProfile(_ input: Operations.UpdateProfile.Input) async throws -> Operations.UpdateProfile.Output {
        guard case .json(let patch) = input.body else { throw APIError.unprocessable("body: expected JSON") }
        // Absent leaves the avatar; `"avatar_url": null` clears it.
        let changes = ProfileStore.Changes(displayName: patch.displayName, avatarUrl: RequestBodyNulls.field(patch.avatarUrl, "avatar_url"), timezone: patch.timezone,
                                           dayStartHour: patch.dayStartHour, theme: patch.theme?.rawValue)
        let (profile, replayed) = try await writes.answer { caller, connection in
            Components.Schemas.Profile(try await profiles.update(caller.id, changes, on: connection))
        }
        return .ok(.init(headers: .init(idempotentReplayed: replayed), body: .json(profile)))
    }

    func getLocalDate(_ input: Operations.GetLocalDate.Input) async throws -> Operations.GetLocalDate.Output {
        .ok(.init(body: .json(try await database.callerRead { caller, connection in try await profiles.localDate(caller.id, at: input.query.at, on: connection) })))
    }

    // MARK: habits

    func listHabits(_ input: Operations.ListHabits.Input) async throws -> Operations.ListHabits.Output {
        .ok(.init(body: .json(try await database.callerRead { caller, connection in
            try await habits.store.list(userID: caller.id, includeArchived: input.query.includeArchived ?? false, on: connection).map(Components.Schemas.Habit.init)
        })))
    }

    func createHabit(_ input: Operations.CreateHabit.Input) async throws -> Operations.CreateHabit.Output {
        guard case .json(let body) = input.body else { throw APIError.unprocessable("body: expected JSON") }
        let draft = HabitDraft(name: body.name, emoji: body.emoji, colorHex: body.colorHex ?? "#FF9F1C", type: body._type.map(HabitType.init) ?? .checkbox,
                               targetPerDay: body.targetPerDay ?? 1, scheduleDaily: body.scheduleDaily ?? true, scheduleWeekmask: body.scheduleWeekmask ?? 127,
                               reminderTimes: body.reminderTimes ?? [])
        let (habit, replayed) = try await writes.answer(status: 201) { caller, connection in
            Components.Schemas.Habit(try await habits.create(draft, userID: caller.id, on: connection))
        }
        return .created(.init(headers: .init(idempotentReplayed: replayed), body: .json(habit)))
    }

    func getHabit(_ input: Operations.GetHabit.Input) async throws -> Operations.GetHabit.Output {
        let id = try Self.id(input.path.habitId, HabitsErrors.habitNotFound)
        return .ok(.init(body: .json(.init(try await database.callerRead { caller, connection in try await habits.get(id, userID: caller.id, on: connection) }))))
    }

    func updateHabit(_ input: Operations.UpdateHabit.Input) async throws -> Operations.UpdateHabit.Output {
        let id = try Self.id(input.path.habitId, HabitsErrors.habitNotFound)
        guard case .json(let patch) = input.body else { throw APIError.unprocessable("body: expected JSON") }
        let (habit, replayed) = try await writes.answer { caller, connection in
            Components.Schemas.Habit(try await habits.update(id, userID: caller.id, change: { draft in
                // Absent (or null) leaves a setting as it is.
                if let name = patch.name { draft.name = name }
                if let emoji = patch.emoji { draft.emoji = emoji }
                if let colorHex = patch.colorHex { draft.colorHex = colorHex }
                if let type = patch._type { draft.type = HabitType(type) }
                if let target = patch.targetPerDay { draft.targetPerDay = target }
                if let daily = patch.scheduleDaily { draft.scheduleDaily = daily }
                if let mask = patch.scheduleWeekmask { draft.scheduleWeekmask = mask }
                if let times = patch.reminderTimes { draft.reminderTimes = times }
            }, on: connection))
        }
        return .ok(.init(headers: .init(idempotentReplayed: replayed), body: .json(habit)))
    }

    func deleteHabit(_ input: Operations.DeleteHabit.Input) async throws -> Operations.DeleteHabit.Output {
        let id = try Self.id(input.path.habitId, HabitsErrors.habitNotFound)
        let replayed = try await writes.noContent { caller, connection in try await habits.delete(id, userID: caller.id, on: connection) }
        return .noContent(.init(headers: .init(idempotentReplayed: replayed)))
    }

    func archiveHabit(_ input: Operations.ArchiveHabit.Input) async throws -> Operations.ArchiveHabit.Output {
        let (habit, replayed) = try await setActive(input.path.habitId, false)
        return .ok(.init(headers: .init(idempotentReplayed: replayed), body: .json(habit)))
    }

    func unarchiveHabit(_ input: Operations.UnarchiveHabit.Input) async throws -> Operations.UnarchiveHabit.Output {
        let (habit, replayed) = try await setActive(input.path.habitId, true)
        return .ok(.init(headers: .init(idempotentReplayed: replayed), body: .json(habit)))
    }

    private func setActive(_ habitID: String, _ active: Bool) async throws -> (Components.Schemas.Habit, IdempotentWrites.Replayed?) {
        let id = try Self.id(habitID, HabitsErrors.habitNotFound)
        return try await writes.answer { caller, connection in
            Components.Schemas.Habit(try await habits.setActive(id, userID: caller.id, active: active, on: connection))
        }
    }

    // MARK: logs and insights

    /// The hot write: one habit's log for a day.
    func logHabit(_ input: Operations.LogHabit.Input) async throws -> Operations.LogHabit.Output {
        let id = try Self.id(input.path.habitId, HabitsErrors.habitNotFound)
        // No body logs 1 for today.
        let body: Components.Schemas.HabitLogRequest? = if case .json(let body) = input.body { body } else { nil }
        let date = try body?.date.map { try Self.localDate($0, "date") }
        let request = Habits.LogRequest(value: body?.value ?? 1, at: body?.at, date: date)
        let (log, replayed) = try await writes.answer { caller, connection in
            Components.Schemas.HabitLog(try await habits.log(id, userID: caller.id, request, on: connection))
        }
        return .ok(.init(headers: .init(idempotentReplayed: replayed), body: .json(log)))
    }

    func listHabitLogs(_ input: Operations.ListHabitLogs.Input) async throws -> Operations.ListHabitLogs.Output {
        let id = try Self.id(input.path.habitId, HabitsErrors.habitNotFound)
        let from = try input.query.from.map { try Self.localDate($0, "from") }, to = try input.query.to.map { try Self.localDate($0, "to") }
        return .ok(.init(body: .json(try await database.callerRead { caller, connection in
            try await habits.logs(id, userID: caller.id, from: from, to: to, on: connection).map(Components.Schemas.HabitLog.init)
        })))
    }

    func deleteHabitLog(_ input: Operations.DeleteHabitLog.Input) async throws -> Operations.DeleteHabitLog.Output {
        let id = try Self.id(input.path.habitId, HabitsErrors.habitNotFound)
        let day = try Self.localDate(input.path.date, "date")
        let replayed = try await writes.noContent { caller, connection in try await habits.deleteLog(id, userID: caller.id, day: day, on: connection) }
        return .noContent(.init(headers: .init(idempotentReplayed: replayed)))
    }

    func getHabitInsights(_ input: Operations.GetHabitInsights.Input) async throws -> Operations.GetHabitInsights.Output {
        let id = try Self.id(input.path.habitId, HabitsErrors.habitNotFound)
        return .ok(.init(body: .json(try await database.callerRead { caller, connection in
            try await habits.insights(id, userID: caller.id, year: input.query.year, on: connection)
        })))
    }

    func getOverallInsights(_ input: Operations.GetOverallInsights.Input) async throws -> Operations.GetOverallInsights.Output {
        .ok(.init(body: .json(try await database.callerRead { caller, connection in try await habits.overallInsights(userID: caller.id, on: connection) })))
    }

    func convertHabitToHive(_ input: Operations.ConvertHabitToHive.Input) async throws -> Operations.ConvertHabitToHive.Output {
        let id = try Self.id(input.path.habitId, HabitsErrors.habitNotFound)
        let body: Components.Schemas.HiveConvert? = if case .json(let body) = input.body { body } else { nil }
        let (detail, replayed) = try await writes.answer(status: 201) { caller, connection in
            try await hives.convert(habitID: id, name: body?.name, backfillDays: body?.backfillDays ?? 30, userID: caller.id, on: connection)
        }
        return .created(.init(headers: .init(idempotentReplayed: replayed), body: .json(detail)))
    }

    // MARK: contacts

    func uploadContacts(_ input: Operations.UploadContacts.Input) async throws -> Operations.UploadContacts.Output {
        guard case .json(let upload) = input.body else { throw APIError.unprocessable("body: expected JSON") }
        let numbers = upload.contacts.map { ContactMatching.Number(phone: $0.phone, displayName: $0.displayName) }
        let (matches, replayed) = try await writes.answer { caller, connection in
            Components.Schemas.ContactMatches(matches: try await profiles.uploadContacts(numbers, userID: caller.id, on: connection).map(Components.Schemas.ContactMatch.init))
        }
        return .ok(.init(headers: .init(idempotentReplayed: replayed), body: .json(matches)))
    }

    func listContactMatches(_ input: Operations.ListContactMatches.Input) async throws -> Operations.ListContactMatches.Output {
        .ok(.init(body: .json(.init(matches: try await database.callerRead { caller, connection in
            try await profiles.matches(userID: caller.id, on: connection).map(Components.Schemas.ContactMatch.init)
        }))))
    }

    func deleteContacts(_ input: Operations.DeleteContacts.Input) async throws -> Operations.DeleteContacts.Output {
        let replayed = try await writes.noContent { caller, connection in try await profiles.deleteContacts(userID: caller.id, on: connection) }
        return .noContent(.init(headers: .init(idempotentReplayed: replayed)))
    }

    // MARK: parameters

    /// A path id: anything that is not a UUID cannot name a record of the caller's (its 404).
    static func id(_ text: String, _ notFound: APIError) throws -> UUID {
        guard let id = UUID(canonical: text) else { throw notFound }
        return id
    }

    /// A YYYY-MM-DD day named `name` (422 otherwise).
    static func localDate(_ text: String, _ name: String) throws -> LocalDate {
        guard let date = LocalDate(text) else { throw HabitsErrors.validation("\(name) must be YYYY-MM-DD") }
        return date
    }
}
