import ColonyPlatform
import ColonyTesting
import Foundation
import HabitsAPI
import HabitsService
import Testing

/// Every documented write of habits, sent JSON nested 100,000 deep and numbers no field holds
/// (1e300, 2^63, 1.5) in each body property, on the caller's own habit and hive: a 4xx JSON
/// error, never a 5xx or a trap (issue 33).
@Suite("Habits: no trap on hostile bodies")
struct HabitsTrapTests {
    @Test("hostile bodies on every documented write, and hostile values of every documented query parameter, are 4xx JSON errors")
    func hostileBodies() async throws {
        try await withRunningHabits { running in
            let user = try await running.user(timezone: "Europe/Berlin")
            let api = running.api(user)
            let habit = try await api.createHabit(body: .json(.init(name: "Walk", _type: .counter, targetPerDay: 2))).created.body.json.id
            let hive = try await api.createHive(body: .json(.init(name: "Stretch"))).created.body.json.hive.id
            let result = try await running.hostileBodyProblems(HabitsService.openAPIDocument, as: user, values: ["habit_id": habit.lowercased(), "hive_id": hive.lowercased()])
            #expect(result.problems == [])
            let query = try await running.hostileQueryProblems(HabitsService.openAPIDocument, as: user, values: ["habit_id": habit.lowercased(), "hive_id": hive.lowercased(), "date": "2026-01-01"])
            #expect(query.problems == [])
            #expect(query.requests > 10)
            #expect(result.requests > 100)
        }
    }
}
