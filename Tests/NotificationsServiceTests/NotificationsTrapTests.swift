import ColonyModels
import ColonyPlatform
import ColonyTesting
import Foundation
import Testing
@testable import NotificationsService

/// Values other services (events) and APNs (answers) hand notifications that used to reach a
/// trap (issue 33): `Int(_:)` of a voice message's length, a Postgres bind of APNs' timestamp.
@Suite("Notifications: no trap on extreme event or APNs values")
struct NotificationsTrapTests {
    @Test("a voice message event with a length of 1e300 s or -5 s is pushed without a length; 65 s reads 1:05")
    func voiceDuration() async throws {
        try await withRunningNotifications { n in
            let owner = try await n.device(.unify), member = try await n.device(.unify)
            let group = UUID()
            try await n.publish(GroupCreated(group: Rows.group(group, name: "Lerngruppe", owner: owner.id),
                                             members: [Rows.groupMember(group, owner.id, role: .owner), Rows.groupMember(group, member.id)]),
                                app: .unify, aggregate: group, actor: owner.id)
            func voice(_ seconds: Double) -> MessageSent {
                MessageSent(message: MessageRow(id: UUID(), groupId: group, content: "", sentBy: owner.id, sentAt: Date(), isEdited: false, messageType: .voice,
                                                voiceDuration: seconds, voiceUrl: nil), senderDisplayName: "Olga")
            }
            for seconds in [1e300, -5, 65] {
                try await n.publish(voice(seconds), app: .unify, aggregate: group, actor: owner.id)
            }
            _ = try await n.waitForPushes([member.token], count: 3)
            // Pushes go out concurrently: their order at APNs is not the events' order.
            #expect(n.pushes(to: member.token).compactMap(\.alertBody).sorted() == ["Olga: 🎤 Voice message", "Olga: 🎤 Voice message", "Olga: 🎤 Voice message (1:05)"])
        }
    }

    @Test("hostile bodies on every documented write, and hostile values of every documented query parameter, are 4xx JSON errors")
    func hostileBodies() async throws {
        try await withRunningNotifications { n in
            let user = try await n.user(.mycirclee)
            let result = try await n.service.hostileBodyProblems(NotificationsService.openAPIDocument, as: user)
            #expect(result.problems == [])
            let query = try await n.service.hostileQueryProblems(NotificationsService.openAPIDocument, as: user)
            #expect(query.problems == [])
            #expect(query.requests > 10)
            #expect(result.requests > 30)
        }
    }

    @Test("the push text's length is nil outside 0 s to a day, NaN included")
    func durationText() {
        #expect(Triggers.duration(1e300) == nil && Triggers.duration(-1) == nil && Triggers.duration(.nan) == nil && Triggers.duration(.infinity) == nil)
        #expect(Triggers.duration(0) == "0:00" && Triggers.duration(125.4) == "2:05")
    }

    @Test("an APNs 410 whose timestamp is 1e300, negative or NaN drops the token without a date; a real one keeps it")
    func apnsTimestamp() {
        for timestamp in [1e300, -1, Double.nan, Double.infinity, 253_402_300_800_000] {
            guard case .deadToken(_, _, let since) = APNsClient.outcome(status: 410, reason: "Unregistered", timestamp: timestamp) else {
                Issue.record("\(timestamp) is not a dead token")
                continue
            }
            #expect(since == nil, "\(timestamp)")
        }
        guard case .deadToken(_, _, let since) = APNsClient.outcome(status: 410, reason: "Unregistered", timestamp: 1_790_000_000_000) else {
            Issue.record("not a dead token")
            return
        }
        #expect(since == Date(timeIntervalSince1970: 1_790_000_000))
    }
}
