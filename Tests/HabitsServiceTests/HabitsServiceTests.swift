import ColonyModels
import ColonyPlatform
import ColonyTesting
import Foundation
@testable import HabitsService
import NIOHTTP1
import Testing

/// The habits service from the outside: real Postgres, real broker, HTTP with habithive tokens.
@Suite("Habits service")
struct HabitsServiceTests {
    var today: LocalDate { UserClock.utc.localDay(at: Date()) }

    func createHabit(_ habits: RunningHabits, _ user: RunningHabits.User, _ fields: [String: Any] = [:]) async throws -> String {
        var body: [String: Any] = ["name": "Drink water", "emoji": "💧", "color_hex": "#34C8ED"]
        body.merge(fields) { $1 }
        let reply = try await habits.request(.POST, "/habits", as: user, json: body)
        #expect(reply.status == 201, "\(reply.body)")
        return try #require(reply.body["id"]?.stringValue)
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
            #expect(try await habits.request(.GET, "/profile", as: nil).status == 401)
            let other = try await habits.user(app: .mycirclee)
            #expect(try await habits.request(.GET, "/profile", as: other).status == 401)
            #expect(try await habits.request(.GET, "/profile", as: .init(id: UUID(), token: "garbage")).status == 401)

            let user = try await habits.user()
            let profile = try await habits.request(.GET, "/profile", as: user)
            #expect(profile.status == 200)
            #expect(profile.body["id"]?.stringValue.flatMap(UUID.init(uuidString:)) == user.id)
            #expect(profile.body["timezone"]?.stringValue == "America/New_York" && profile.body["day_start_hour"]?.intValue == 4 && profile.body["theme"]?.stringValue == "honey")
            #expect(profile.body["display_name"]?.stringValue?.hasPrefix("Bee ") == true)

            let bad = try await habits.request(.PATCH, "/profile", as: user, json: ["timezone": "Mars/Base", "day_start_hour": 24, "theme": "pink"])
            #expect(bad.status == 422 && bad.code == "validation_failed")
            #expect(bad.body["message"]?.stringValue?.contains("timezone") == true)
            #expect(try await habits.request(.PATCH, "/profile", as: user, raw: "{nope").status == 400)
            let good = try await habits.request(.PATCH, "/profile", as: user, json: ["timezone": "Europe/Berlin", "day_start_hour": 5, "theme": "night", "display_name": "Ada"])
            #expect(good.status == 200 && good.body["timezone"]?.stringValue == "Europe/Berlin" && good.body["display_name"]?.stringValue == "Ada")
        }
    }

    @Test("habits: CRUD, validation, archive, and another user's habit is not found")
    func habitCRUD() async throws {
        try await withRunningHabits { habits in
            let user = try await habits.user(timezone: "UTC", dayStartHour: 0)
            let stranger = try await habits.user()
            let id = try await createHabit(habits, user, ["type": "counter", "target_per_day": 8, "schedule_daily": false, "schedule_weekmask": 0b11111, "reminder_times": ["08:00", "20:30"]])
            let invalid = try await habits.request(.POST, "/habits", as: user, json: ["name": "x", "color_hex": "red", "type": "checkbox", "target_per_day": 2])
            #expect(invalid.status == 422)
            #expect(try await habits.request(.POST, "/habits", as: user, json: ["name": "x", "type": "sometimes"]).status == 422)

            let fetched = try await habits.request(.GET, "/habits/\(id)", as: user)
            #expect(fetched.body["target_per_day"]?.intValue == 8 && fetched.body["reminder_times"]?.arrayValue?.count == 2)
            for path in ["/habits/\(id)", "/habits/\(id)/logs", "/habits/\(id)/insights"] {
                #expect(try await habits.request(.GET, path, as: stranger).status == 404)
            }
            #expect(try await habits.request(.POST, "/habits/\(id)/logs", as: stranger, json: [:]).status == 404)
            #expect(try await habits.request(.GET, "/habits/not-a-uuid", as: user).status == 404)

            let renamed = try await habits.request(.PATCH, "/habits/\(id)", as: user, json: ["name": "Water", "color_hex": "#ff9f1c"])
            #expect(renamed.status == 200 && renamed.body["name"]?.stringValue == "Water" && renamed.body["color_hex"]?.stringValue == "#FF9F1C")
            #expect(try await habits.request(.PATCH, "/habits/\(id)", as: user, json: ["type": "checkbox"]).status == 409)

            #expect(try await habits.request(.POST, "/habits/\(id)/archive", as: user).body["is_active"]?.boolValue == false)
            #expect(try await habits.request(.GET, "/habits", as: user).array.isEmpty)
            #expect(try await habits.request(.GET, "/habits?include_archived=true", as: user).array.count == 1)
            #expect(try await habits.request(.POST, "/habits/\(id)/unarchive", as: user).body["is_active"]?.boolValue == true)
            #expect(try await habits.request(.DELETE, "/habits/\(id)", as: stranger).status == 404)
            #expect(try await habits.request(.DELETE, "/habits/\(id)", as: user).status == 204)
            #expect(try await habits.request(.GET, "/habits/\(id)", as: user).status == 404)
        }
    }

    @Test("logging: one log per day, counters capped, replays change nothing, idempotency keys replay the answer")
    func logging() async throws {
        try await withRunningHabits { habits in
            let user = try await habits.user(timezone: "UTC", dayStartHour: 0)
            let counter = try await createHabit(habits, user, ["type": "counter", "target_per_day": 3])
            let first = try await habits.request(.POST, "/habits/\(counter)/logs", as: user, json: ["value": 10])
            #expect(first.status == 200 && first.body["value"]?.intValue == 3 && first.body["log_date"]?.stringValue == today.description)
            // The same request again (an offline queue replaying): same row, no new event.
            let again = try await habits.request(.POST, "/habits/\(counter)/logs", as: user, json: ["value": 3])
            #expect(again.body["id"] == first.body["id"])
            let lower = try await habits.request(.POST, "/habits/\(counter)/logs", as: user, json: ["value": 2])
            #expect(lower.body["id"] == first.body["id"] && lower.body["value"]?.intValue == 2)
            #expect(try await habits.request(.POST, "/habits/\(counter)/logs", as: user, json: ["value": 0]).status == 422)

            // An offline tap from yesterday, sent today with its time, lands on yesterday.
            let yesterdayAt = ISO8601.format(Date().addingTimeInterval(-86400))
            let offline = try await habits.request(.POST, "/habits/\(counter)/logs", as: user, json: ["value": 1, "at": yesterdayAt])
            #expect(offline.body["log_date"]?.stringValue == today.adding(days: -1).description)
            // Past days from the month view; never the future.
            #expect(try await habits.request(.POST, "/habits/\(counter)/logs", as: user, json: ["date": today.adding(days: -5).description, "value": 3]).status == 200)
            #expect(try await habits.request(.POST, "/habits/\(counter)/logs", as: user, json: ["date": today.adding(days: 1).description]).status == 422)
            #expect(try await habits.request(.POST, "/habits/\(counter)/logs", as: user, json: ["date": "2026-02-30"]).status == 422)

            let logs = try await habits.request(.GET, "/habits/\(counter)/logs?from=\(today.adding(days: -7))&to=\(today)", as: user)
            #expect(logs.array.count == 3)

            // Idempotency-Key: the second send gets the stored answer and changes nothing.
            let checkbox = try await createHabit(habits, user)
            let key = [("Idempotency-Key", "tap-\(UUID())")]
            let keyed = try await habits.request(.POST, "/habits/\(checkbox)/logs", as: user, json: [:], headers: key)
            let replayed = try await habits.request(.POST, "/habits/\(checkbox)/logs", as: user, json: [:], headers: key)
            #expect(keyed.status == 200 && replayed.status == 200 && replayed.body == keyed.body, "\(keyed.status) \(keyed.body) / \(replayed.status) \(replayed.body)")
            #expect(replayed.headers.first(name: "Idempotent-Replayed") == "true")
            let misuse = try await habits.request(.POST, "/habits/\(checkbox)/logs", as: user, json: ["value": 1, "date": today.adding(days: -1).description], headers: key)
            #expect(misuse.status == 422 && misuse.code == "idempotency_key_reused")

            #expect(try await habits.request(.DELETE, "/habits/\(checkbox)/logs/\(today)", as: user).status == 204)
            #expect(try await habits.request(.DELETE, "/habits/\(checkbox)/logs/\(today)", as: user).code == "log_not_found")

            // Events: inserts and real changes only (counter: insert, 3→2, yesterday, day -5; checkbox: insert, delete).
            let logged = try await habits.events(count: .habitLogged, atLeast: 6)
            #expect(logged.count == 6)
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
            let id = try await createHabit(habits, user)
            for offset in [1, 2, 3, 5, 6] {
                #expect(try await habits.request(.POST, "/habits/\(id)/logs", as: user, json: ["date": today.adding(days: -offset).description]).status == 200)
            }
            let insights = try await habits.request(.GET, "/habits/\(id)/insights", as: user)
            #expect(insights.status == 200)
            #expect(insights.body["current_streak"]?.intValue == 3)
            #expect(insights.body["longest_streak"]?.intValue == 3)
            #expect(insights.body["completion"]?["week"]?["done"]?.intValue == 5)
            #expect(insights.body["heatmap"]?.arrayValue?.count ?? 0 >= 365)
            let overall = try await habits.request(.GET, "/insights", as: user)
            #expect(overall.body["habits"]?.arrayValue?.count == 1 && overall.body["completion"]?["week"]?["done"]?.intValue == 5)
            #expect(try await habits.request(.GET, "/habits/\(id)/insights?year=abc", as: user).status == 422)
        }
    }
}
