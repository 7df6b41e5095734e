import ColonyModels
import ColonyPlatform
import ColonyStorage
import ColonyTesting
import Foundation
import HabitsAPI
@testable import HabitsService
import NIOCore
import Testing

/// Logging a habit's fast path (`POST /habits/v1/habits/{habit_id}/logs`, `HabitsAPI.fastPaths`)
/// against the generated route it stands in for: the same requests, good and bad, to the service
/// and to a twin with fast paths off, on the same data, answer the same status, `Content-Type` and
/// bytes (a log's id and time compared by shape); with an `Idempotency-Key` the generated route
/// answers and keeps the answer, as before.
@Suite("Habits: the fast path of logging a habit")
struct HabitsFastPathTests {
    @Test("POST /habits/v1/habits/{habit_id}/logs answers as the generated route, good and bad bodies, callers, ids and headers alike")
    func loggingMatchesGeneratedRoute() async throws {
        let settings = HabitsSettings(phonePepper: "test-pepper")
        try await withRunningHabits(settings: settings) { habits in
            let owner = try await habits.user(timezone: "UTC", dayStartHour: 0), stranger = try await habits.user()
            let api = habits.api(owner)
            let checkbox = try await api.createHabit(body: .json(.init(name: "Stretch"))).created.body.json.id
            let counter = try await api.createHabit(body: .json(.init(name: "Water", emoji: "💧", _type: .counter, targetPerDay: 5))).created.body.json.id
            let archived = try await api.createHabit(body: .json(.init(name: "Old"))).created.body.json.id
            _ = try await api.archiveHabit(path: .init(habitId: archived)).ok
            let today = UserClock.utc.localDay(at: Date())
            let past = today.adding(days: -5).description, earlier = today.adding(days: -40).description
            let (future, tooOld) = (today.adding(days: 3).description, today.adding(days: -400).description)
            let hourAgo = ISO8601.format(Date().addingTimeInterval(-3600)), tomorrow = ISO8601.format(Date().addingTimeInterval(86_400))
            let good = #"{"date":"\#(past)","value":1}"#
            let bodies = [
                good, #"{"value":3}"#, #"{"value":9}"#, #"{"date":"\#(earlier)"}"#, #"{"date":"\#(past)","value":2,"unknown":{"x":[1,"é"]},"note":"🚀 \" \\"}"#,
                #"{"at":"\#(hourAgo)"}"#, #"{"at":"\#(hourAgo)","date":"\#(past)","value":4}"#, #"{"value":9223372036854775807}"#, "{}", #"{"value":1e0}"#,
                // Refused by the document's types or the rules.
                #"{"date":"\#(future)"}"#, #"{"date":"\#(tooOld)"}"#, #"{"date":"2026-02-30"}"#, #"{"date":"2026-1-5"}"#, #"{"date":"20260105"}"#,
                #"{"date":"\#(past)T00:00:00Z"}"#, #"{"date":5}"#, #"{"date":["\#(past)"]}"#, #"{"value":0}"#, #"{"value":-1}"#, #"{"value":1.5}"#,
                #"{"value":"1"}"#, #"{"value":true}"#, #"{"value":9223372036854775808}"#, #"{"value":null}"#, #"{"date":null,"value":1}"#,
                #"{"at":"tomorrow"}"#, #"{"at":"\#(tomorrow)"}"#, #"{"at":5}"#, #"{"date":"\#(past)\u0000"}"#, #"{"date":"null"}"#,
            ] + FastPathBodies.hostile(around: good, limit: ColonyRequestContext.defaultBodyLimit)
            let other = try await habits.user(app: .mycirclee)
            let callers: [(RunningService.User?, String)] = [
                (owner, "/habits/\(checkbox)/logs"), (owner, "/habits/\(counter)/logs"), (stranger, "/habits/\(counter)/logs"), (nil, "/habits/\(counter)/logs"),
                (owner, "/habits/\(UUID().uuidString.lowercased())/logs"), (owner, "/habits/not-a-uuid/logs"),
            ]
            let varying: Set<String> = ["id", "created_at"]
            // The twin handles no export requests: its storage is never written.
            let exports = FileSystemStorageBackend(root: FileManager.default.temporaryDirectory.appendingPathComponent("colony-habits-twin-\(UUID().uuidString)").path)
            try await withRunningTwin(of: habits, .habits, configure: { $0.allowUploads(upTo: settings.contactsBodyLimit); $0.fastPaths = .off }, definition: { _ in
                HabitsService.definition(settings: settings, exports: exports)
            }) { generated in
                var compared = 0
                for body in bodies {
                    for (user, path) in callers {
                        let difference = try await habits.differenceFromGenerated(.POST, path, as: user, body: body, generated: generated, varying: varying)
                        #expect(difference == nil, "\(difference ?? "")")
                        compared += 1
                    }
                }
                #expect(compared == callers.count * bodies.count)
                // Other ids and callers with a good body.
                for (user, path) in [(owner, "/habits/\(counter.uppercased())/logs"), (owner, "/habits/\(archived)/logs"), (other, "/habits/\(counter)/logs"),
                                     (owner, "/habits/\(counter.dropLast())%\(String(format: "%02X", counter.utf8.last ?? 0))/logs"),
                                     (owner, "/habits/%20/logs")] as [(RunningService.User?, String)] {
                    let difference = try await habits.differenceFromGenerated(.POST, path, as: user, body: good, generated: generated, varying: varying)
                    #expect(difference == nil, "\(difference ?? "")")
                }
                // Header variants, and an `Idempotency-Key` the generated route checks (a bad one is 400 on both).
                let logs = "/habits/\(counter)/logs"
                let variants: [(String?, [(String, String)], String)] = [
                    ("application/json; charset=utf-8", [], ""), ("application/json;charset=utf-8", [], ""), ("application/JSON", [], ""),
                    ("application/json; charset=latin1", [], ""), ("text/plain", [], ""), ("application/x-www-form-urlencoded", [], ""), (nil, [], ""),
                    ("application/json", [("Accept", "application/json")], ""), ("application/json", [("Accept", "*/*")], ""),
                    ("application/json", [("Accept", "text/html")], ""), ("application/json", [("Accept", "application/json, text/plain;q=0.5")], ""),
                    ("application/json", [], "?x=1"), ("application/json", [], "?"), ("application/json", [("Content-Type", "application/json")], ""),
                    ("application/json", [("Idempotency-Key", "")], ""), ("application/json", [("Idempotency-Key", String(repeating: "k", count: 256))], ""),
                ]
                for (contentType, headers, query) in variants {
                    let difference = try await habits.differenceFromGenerated(.POST, logs + query, as: owner, body: good, contentType: contentType, headers: headers,
                                                                              generated: generated, varying: varying)
                    #expect(difference == nil, "\(contentType ?? "no type") \(headers) \(query): \(difference ?? "")")
                }
                // A good key: each instance answers and keeps its answer (a key of its own each, so the
                // twin's is not a replay of the service's); the same request again is replayed.
                for service in [habits, generated] {
                    let key = [("Idempotency-Key", "log-\(UUID())")]
                    let first = try await service.request(.POST, logs, as: owner, raw: good, headers: key)
                    let again = try await service.request(.POST, logs, as: owner, raw: good, headers: key)
                    #expect(first.status == 200 && first.headers["Idempotent-Replayed"].isEmpty, "\(first.status) \(first.body)")
                    #expect(again.status == 200 && again.headers["Idempotent-Replayed"] == ["true"] && again.bytes == first.bytes, "\(again.status) \(again.body)")
                    let reused = try await service.request(.POST, logs, as: owner, raw: #"{"value":2}"#, headers: key)
                    #expect(reused.status == 422 && reused.code == "idempotency_key_reused", "\(reused.status) \(reused.body)")
                }
            }
            // Both instances logged each good body: the days are there, with the last value sent.
            let listed = try await habits.request(.GET, "/habits/\(counter)/logs?from=\(earlier)&to=\(today)", as: owner)
            #expect(listed.status == 200 && Set(listed.array.compactMap { $0["log_date"]?.stringValue }).isSuperset(of: [past, earlier, today.description]), "\(listed.array)")
        }
    }
}
