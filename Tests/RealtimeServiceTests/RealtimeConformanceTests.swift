import ColonyModels
import ColonyPlatform
import ColonyTesting
import Foundation
import Testing

/// Each app's realtime conformance: the official Python `realtime` client subscribes as the
/// seed's app does (topics, tables, filters), the script performs the seed's actions through the
/// app's REST API, and every change the app listens to is checked for its event type and its row
/// (Tests/RealtimeClientTests/conformance_*.py; the checks in conformance.py).
@Suite("Realtime conformance, per app, through the official Python client", .serialized)
struct RealtimeConformanceTests {
    @Test("MyCirclee: posts, reactions, votes, RSVPs, DMs, read receipts, DM reactions, presence, renaming, an erased member, ownership passing on, a deleted circle")
    func myCirclee() async throws {
        try await withRealtimeAndCircles { realtime, circles in
            try await runConformance("conformance_mycirclee.py", realtime: realtime, service: circles, users: 3)
        }
    }

    @Test("Unify: group_chat_ and unread_ channels as the seed subscribes; edits, calendar events, renaming, ownership transfer, an erased member, a deleted group")
    func unify() async throws {
        try await withRealtimeAndChat { realtime, chat in
            try await runConformance("conformance_unify.py", realtime: realtime, service: chat, users: 3)
        }
    }

    @Test("HabitHive: a hive and its days, the feed, a contact invitation, habit logs, a personal milestone, editing, an erased member, a deleted hive")
    func habitHive() async throws {
        try await withRealtimeAndHabits { realtime, habits in
            // The friend signed up with this number: auth announces its hash (with the pepper
            // habits shares), and the owner's upload of the number matches it.
            let phone = "+1555\(Int.random(in: 1_000_000...9_999_999))"
            let hash = PhoneHash.of(e164: phone, pepper: "rt-tests-pepper")
            try await runConformance("conformance_habithive.py", realtime: realtime, service: habits, users: 2, environment: ["COLONY_FRIEND_PHONE": phone]) { users in
                try await habits.publishAuthEvent(UserRegistered(userId: users[1].id, app: .habithive, email: nil, phone: phone, phoneHash: hash,
                                                                 userMetadata: ["display_name": .string("Friend")], createdAt: Date()), user: users[1].id)
                try await waitUntil(timeout: .seconds(120)) { try await habits.habitsAPI(as: users[1]).getProfile().ok.body.json.displayName == "Friend" }
            }
        }
    }

    @Test("I Believe In You subscribes to nothing (the seed refreshes on pull): its socket works, and none of its rows, anonymous support included, is ever sent")
    func iBelieveInYou() async throws {
        try await withRealtimeAndProjects { realtime, projects in
            try await runConformance("conformance_ibelieveinyou.py", realtime: realtime, service: projects, users: 2)
        }
    }
}
