import ColonyClientTesting
import ColonyModels
import ColonyPlatform
import ColonyTesting
import Foundation
import HabitsAPI
@testable import HabitsService
import NIOHTTP1
import Testing

/// The habits service from the outside: real Postgres, real broker, HTTP with habithive tokens.
@Suite("Habits service")
struct HabitsServiceTests {
    var today: LocalDate { UserClock.utc.localDay(at: Date()) }

    /// A habit named "Drink water" (💧, #34C8ED) unless `body` says otherwise.
    func createHabit(_ habits: RunningHabits, _ user: RunningHabits.User, _ body: Schemas.HabitCreate = .init(name: "Drink water", emoji: "💧", colorHex: "#34C8ED")) async throws -> String {
        try await habits.api(user).createHabit(body: .json(body)).created.body.json.id
    }

    @Test("the OpenAPI document lists exactly the routes the service registered, and each answers")
    func openAPIMatchesRoutes() async throws {
        try await withRunningHabits { running in
            let user = try await running.user()
            #expect(try await running.openAPIProblems(HabitsService.openAPIDocument, as: user, values: ["date": "2026-01-01"]) == [])
        }
    }

    @Test("tokens: none, another app's, or garbage get 401; a profile appears on first request")
    func authenticationAndProfile() async throws {
        try await withRunningHabits { habits in
            #expect(try await answer { try await habits.api(nil).getProfile() }.status == 401)
            let other = try await habits.user(app: .mycirclee)
            #expect(try await answer { try await habits.api(other).getProfile() }.status == 401)
            #expect(try await answer { try await habits.api(RunningHabits.User(id: UUID(), token: "garbage")).getProfile() }.status == 401)

            let user = try await habits.user()
            let api = habits.api(user)
            let profile = try await api.getProfile().ok.body.json
            #expect(UUID(uuidString: profile.id) == user.id)
            #expect(profile.timezone == "America/New_York" && profile.dayStartHour == 4 && profile.theme == .honey)
            #expect(profile.displayName.hasPrefix("Bee "))

            // Raw: "pink" is not one of the document's themes, which the typed client cannot send;
            // the document's decoding refuses it, naming the field.
            let pink = try await habits.request(.PATCH, "/profile", as: user, json: ["timezone": "Mars/Base", "theme": "pink"])
            #expect(pink.status == 422 && pink.code == "validation_failed")
            #expect(pink.body["message"]?.stringValue?.contains("theme") == true)
            // Values of the right type that the rules refuse are named all at once.
            let bad = try await answer { try await api.updateProfile(body: .json(.init(timezone: "Mars/Base", dayStartHour: 24))) }
            #expect(bad.status == 422 && bad.code == "validation_failed")
            #expect(bad.message?.contains("timezone") == true && bad.message?.contains("day_start_hour") == true)
            // Raw: a body that is not JSON.
            #expect(try await habits.request(.PATCH, "/profile", as: user, raw: "{nope").status == 400)
            let good = try await api.updateProfile(body: .json(.init(displayName: "Ada", timezone: "Europe/Berlin", dayStartHour: 5, theme: .night))).ok.body.json
            #expect(good.timezone == "Europe/Berlin" && good.displayName == "Ada")
        }
    }

    @Test("habits: CRUD, validation, archive, and another user's habit is not found")
    func habitCRUD() async throws {
        try await withRunningHabits { habits in
            let user = try await habits.user(timezone: "UTC", dayStartHour: 0)
            let stranger = try await habits.user()
            let api = habits.api(user), strangers = habits.api(stranger)
            let id = try await createHabit(habits, user, .init(name: "Drink water", emoji: "💧", colorHex: "#34C8ED", _type: .counter, targetPerDay: 8, scheduleDaily: false, scheduleWeekmask: 0b11111, reminderTimes: ["08:00", "20:30"]))
            let invalid = try await answer { try await api.createHabit(body: .json(.init(name: "x", colorHex: "red", _type: .checkbox, targetPerDay: 2))) }
            #expect(invalid.status == 422)
            // Raw: "sometimes" is not one of the document's habit types, which the typed client cannot send.
            #expect(try await habits.request(.POST, "/habits", as: user, json: ["name": "x", "type": "sometimes"]).status == 422)

            let fetched = try await api.getHabit(path: .init(habitId: id)).ok.body.json
            #expect(fetched.targetPerDay == 8 && fetched.reminderTimes.count == 2)
            #expect(try await answer { try await strangers.getHabit(path: .init(habitId: id)) }.status == 404)
            #expect(try await answer { try await strangers.listHabitLogs(path: .init(habitId: id)) }.status == 404)
            #expect(try await answer { try await strangers.getHabitInsights(path: .init(habitId: id)) }.status == 404)
            #expect(try await answer { try await strangers.logHabit(path: .init(habitId: id), body: .json(.init())) }.status == 404)
            #expect(try await answer { try await api.getHabit(path: .init(habitId: "not-a-uuid")) }.status == 404)

            let renamed = try await api.updateHabit(path: .init(habitId: id), body: .json(.init(name: "Water", colorHex: "#ff9f1c"))).ok.body.json
            #expect(renamed.name == "Water" && renamed.colorHex == "#FF9F1C")
            #expect(try await answer { try await api.updateHabit(path: .init(habitId: id), body: .json(.init(_type: .checkbox))) }.status == 409)

            #expect(try await api.archiveHabit(path: .init(habitId: id)).ok.body.json.isActive == false)
            #expect(try await api.listHabits().ok.body.json.isEmpty)
            #expect(try await api.listHabits(query: .init(includeArchived: true)).ok.body.json.count == 1)
            #expect(try await api.unarchiveHabit(path: .init(habitId: id)).ok.body.json.isActive == true)
            #expect(try await answer { try await strangers.deleteHabit(path: .init(habitId: id)) }.status == 404)
            #expect(try await answer { try await api.deleteHabit(path: .init(habitId: id)) }.status == 204)
            #expect(try await answer { try await api.getHabit(path: .init(habitId: id)) }.status == 404)
        }
    }

    @Test("logging: one log per day, counters capped, replays change nothing, idempotency keys replay the answer")
    func logging() async throws {
        try await withRunningHabits { habits in
            let user = try await habits.user(timezone: "UTC", dayStartHour: 0)
            let api = habits.api(user)
            let counter = try await createHabit(habits, user, .init(name: "Drink water", emoji: "💧", colorHex: "#34C8ED", _type: .counter, targetPerDay: 3))
            func log(_ habit: String, _ body: Schemas.HabitLogRequest, key: String? = nil) async throws -> Answer<HabitsOperations.LogHabit.Output> {
                try await answer { try await api.logHabit(path: .init(habitId: habit), headers: .init(idempotencyKey: key), body: .json(body)) }
            }
            let first = try await log(counter, .init(value: 10)).output.ok.body.json
            #expect(first.value == 3 && first.logDate == today.description)
            // The same request again (an offline queue replaying): same row, no new event.
            let again = try await log(counter, .init(value: 3)).output.ok.body.json
            #expect(again.id == first.id)
            let lower = try await log(counter, .init(value: 2)).output.ok.body.json
            #expect(lower.id == first.id && lower.value == 2)
            #expect(try await log(counter, .init(value: 0)).status == 422)
            // No body at all (a bare POST, no Content-Type) logs 1 for today, as the typed client's no body does.
            let bare = try await habits.request(.POST, "/habits/\(counter)/logs", as: user)
            #expect(bare.status == 200 && bare.body["value"]?.intValue == 1)
            #expect(try await api.logHabit(path: .init(habitId: counter)).ok.body.json.value == 1)

            // An offline tap from yesterday, sent today with its time, lands on yesterday.
            let offline = try await log(counter, .init(value: 1, at: Date().addingTimeInterval(-86400))).output.ok.body.json
            #expect(offline.logDate == today.adding(days: -1).description)
            // Past days from the month view; never the future.
            #expect(try await log(counter, .init(value: 3, date: today.adding(days: -5).description)).status == 200)
            #expect(try await log(counter, .init(date: today.adding(days: 1).description)).status == 422)
            #expect(try await log(counter, .init(date: "2026-02-30")).status == 422)

            let logs = try await api.listHabitLogs(path: .init(habitId: counter), query: .init(from: today.adding(days: -7).description, to: today.description)).ok.body.json
            #expect(logs.count == 3)

            // Idempotency-Key: the second send gets the stored answer and changes nothing.
            let checkbox = try await createHabit(habits, user)
            let key = "tap-\(UUID())"
            let keyed = try await log(checkbox, .init(), key: key)
            let replayed = try await log(checkbox, .init(), key: key)
            #expect(keyed.status == 200 && replayed.status == 200 && replayed.body == keyed.body, "\(keyed.status) \(keyed.body) / \(replayed.status) \(replayed.body)")
            #expect(try replayed.output.ok.headers.idempotentReplayed == ._true)
            let misuse = try await log(checkbox, .init(value: 1, date: today.adding(days: -1).description), key: key)
            #expect(misuse.status == 422 && misuse.code == "idempotency_key_reused")

            #expect(try await answer { try await api.deleteHabitLog(path: .init(habitId: checkbox, date: today.description)) }.status == 204)
            #expect(try await answer { try await api.deleteHabitLog(path: .init(habitId: checkbox, date: today.description)) }.code == "log_not_found")

            // Events: inserts and real changes only (counter: insert, 3→2, 2→1 by the bare POST, yesterday, day -5; checkbox: insert, delete).
            let logged = try await habits.events(count: .habitLogged, atLeast: 7)
            #expect(logged.count == 7)
            let operations = try logged.map { try $0.decode(HabitLogged.self).payload.operation }
            #expect(operations.filter { $0 == .delete }.count == 1)
            let completed = try await habits.withDatabase { database in
                try await database.query("SELECT count(*) FROM activity_events WHERE type = 'habit_completed'").collect().first!.decode(Int.self)
            }
            #expect(completed == 3)  // counter today (once, despite 3→2→…), day -5, checkbox today; not the partial yesterday
        }
    }

    @Test("insights: streaks over scheduled days, completion and the year heatmap")
    func insights() async throws {
        try await withRunningHabits { habits in
            let user = try await habits.user(timezone: "UTC", dayStartHour: 0)
            let api = habits.api(user)
            let id = try await createHabit(habits, user)
            for offset in [1, 2, 3, 5, 6] {
                _ = try await api.logHabit(path: .init(habitId: id), body: .json(.init(date: today.adding(days: -offset).description))).ok
            }
            let insights = try await api.getHabitInsights(path: .init(habitId: id)).ok.body.json
            #expect(insights.currentStreak == 3)
            #expect(insights.longestStreak == 3)
            #expect(insights.completion.week.done == 5)
            #expect(insights.heatmap.count >= 365)
            let overall = try await api.getOverallInsights().ok.body.json
            #expect(overall.habits.count == 1 && overall.completion.week.done == 5)
            // Raw: a year that is not a number, which the typed client cannot send.
            #expect(try await habits.request(.GET, "/habits/\(id)/insights?year=abc", as: user).status == 422)
        }
    }
}
