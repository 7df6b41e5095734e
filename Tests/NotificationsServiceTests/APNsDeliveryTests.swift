import CirclesService
import ColonyClientTesting
import ColonyModels
import ColonyPlatform
import ColonyStorage
import ColonyTesting
import Foundation
import Testing
@testable import NotificationsService

@Suite("Notifications: delivery to APNs")
struct APNsDeliveryTests {
    func groupWithMessage(_ n: RunningNotifications, sender: RunningNotifications.Device, to members: [RunningNotifications.Device], id: UUID = .timeOrdered()) async throws -> UUID {
        let group = UUID()
        try await n.publish(GroupCreated(group: Rows.group(group, name: "Team", owner: sender.id),
                                         members: [Rows.groupMember(group, sender.id, role: .owner)] + members.map { Rows.groupMember(group, $0.id) }),
                            app: .unify, aggregate: group, actor: sender.id)
        try await n.publish(MessageSent(message: Rows.message(group: group, sender: sender.id), senderDisplayName: "Sam"), app: .unify, aggregate: group, actor: sender.id, id: id)
        return group
    }

    func log(_ n: RunningNotifications, _ user: RunningService.User) async throws -> [Schemas.Delivery] {
        try await n.deliveries(of: user)
    }

    @Test("410 Unregistered removes the token (and later events skip it); a 500 is retried once and delivered once; a 429 is retried")
    func deadTokensAndRetries() async throws {
        try await withRunningNotifications { n in
            let sender = try await n.device(.unify), gone = try await n.device(.unify), flaky = try await n.device(.unify), busy = try await n.device(.unify)
            n.apns.script(token: gone.token, [(410, "Unregistered")])
            n.apns.script(token: flaky.token, [(500, "InternalServerError")])
            n.apns.script(token: busy.token, [(429, "TooManyRequests")])
            let group = try await groupWithMessage(n, sender: sender, to: [gone, flaky, busy])
            try await n.waitForPushes([gone.token])
            try await n.waitForPushes([flaky.token, busy.token], count: 2)
            try await n.settle()
            // The dead token: one try, then it is gone.
            #expect(n.pushes(to: gone.token).map(\.status) == [410])
            try await waitUntil { try await n.devices(of: gone.user).isEmpty }
            try await waitUntil { try await log(n, gone.user).first?.status == .failed }
            #expect(try await log(n, gone.user).first?.lastReason == "Unregistered")
            // The 500: tried twice with the same apns-id, accepted once, never a third time.
            let flakyPushes = n.pushes(to: flaky.token)
            #expect(flakyPushes.map(\.status) == [500, 200])
            #expect(flakyPushes[0].apnsID != nil && flakyPushes[0].apnsID == flakyPushes[1].apnsID)
            try await waitUntil { try await log(n, flaky.user).first?.status == .sent }
            let flakyLog = try await log(n, flaky.user)
            #expect(flakyLog.count == 1 && flakyLog.first?.attempts == 2)
            #expect(flakyLog.first?.id.lowercased() == flakyPushes[0].apnsID?.lowercased())
            #expect(n.pushes(to: busy.token).map(\.status) == [429, 200])
            // The next message skips the removed token.
            try await n.publish(MessageSent(message: Rows.message(group: group, sender: sender.id, text: "again"), senderDisplayName: "Sam"), app: .unify, aggregate: group, actor: sender.id)
            try await n.waitForPushes([flaky.token], count: 3)
            try await n.settle()
            #expect(n.pushes(to: gone.token).count == 1)
            for push in n.apns.received {
                #expect(push.problems.isEmpty && push.overHTTP2, "\(push.problems)")
            }
            // The outcomes are on /metrics (raw: not an operation of the document).
            let metrics = String(buffer: try await n.service.request(.GET, "\(n.service.base)/metrics", as: nil).bytes)
            #expect(metrics.contains(#"colony_pushes_total{app="unify",outcome="sent"}"#) && metrics.contains(#"outcome="failed"}"#))
            #expect(metrics.contains("colony_apns_request_duration_seconds"))
        }
    }

    @Test("quiet hours hold alerts until they end, in the user's zone; the in-app list has them at once; silent pushes are not held")
    func quietHours() async throws {
        try await withRunningNotifications { n in
            // 23:30 in Berlin.
            n.clock.set(ISO8601.parse("2026-11-24T22:30:00Z")!)
            let sender = try await n.device(.unify), sleeper = try await n.device(.unify), awake = try await n.device(.unify)
            _ = try await n.api(sleeper.user).updatePreferences(body: .json(.init(quietHours: .init(start: "22:00", end: "07:00", timezone: "Europe/Berlin")))).ok
            _ = try await groupWithMessage(n, sender: sender, to: [sleeper, awake])
            try await n.waitForPushes([awake.token])
            try await n.settle()
            #expect(n.pushes(to: sleeper.token).isEmpty)
            let held = try await log(n, sleeper.user)
            #expect(held.first?.status == .pending && held.first?.heldUntil.map(ISO8601.format) == "2026-11-25T06:00:00.000Z")
            #expect(try await n.notifications(of: sleeper.user).unreadCount == 1)
            // 07:00 in Berlin: out it goes.
            n.clock.set(ISO8601.parse("2026-11-25T06:00:01Z")!)
            try await n.waitForPushes([sleeper.token])
            // The outcome is recorded once APNs (the stand-in) has answered.
            try await waitUntil { try await log(n, sleeper.user).first?.status == .sent }
        }
    }

    @Test("a Live Activity's countdown: an update when the event begins, the end an hour later, then the token is forgotten")
    func liveActivityCountdown() async throws {
        try await withRunningNotifications { n in
            let host = try await n.user(.mycirclee), guest = try await n.user(.mycirclee)
            let circle = UUID()
            try await n.publish(CircleCreated(circle: Rows.circle(circle, name: "Book club", owner: host.id), owner: Rows.circleMember(circle, host.id, role: .owner)),
                                app: .mycirclee, aggregate: circle, actor: host.id)
            try await n.publish(CircleMemberJoined(member: Rows.circleMember(circle, guest.id), circleName: "Book club", via: "invite"), app: .mycirclee, aggregate: circle, actor: guest.id)
            let event = Rows.post(circle: circle, author: host.id, type: .event, body: "Chapter 3", startsAt: Date().addingTimeInterval(600))
            try await n.publish(PostCreated(post: event, pollOptions: []), app: .mycirclee, aggregate: circle, actor: host.id)
            let token = RunningNotifications.randomToken()
            try await waitUntil {
                try await answer {
                    try await n.api(guest).registerLiveActivity(body: .json(.init(activityId: "a1", postId: event.id.lowercased, token: token, environment: .sandbox)))
                }.status == 200
            }
            #expect(n.pushes(to: token).isEmpty)
            n.clock.advance(by: 660)  // it has begun
            try await n.waitForPushes([token])
            let started = n.pushes(to: token)[0]
            #expect(started.aps["event"] as? String == "update" && (started.aps["content-state"] as? [String: Any])?["started"] as? Bool == true)
            n.clock.advance(by: 3600)  // an hour later
            try await n.waitForPushes([token], count: 2)
            #expect(n.pushes(to: token)[1].aps["event"] as? String == "end" && n.pushes(to: token)[1].aps["dismissal-date"] != nil)
            try await waitUntil { try await n.devices(of: guest).isEmpty }
            try await n.settle()
            #expect(n.pushes(to: token).count == 2)
        }
    }

    @Test("an event delivered twice pushes once; a switched-off kind pushes nothing; user_deleted erases tokens, notifications and the log, and the words the account left in others' lists")
    func dedupePreferencesAndErasure() async throws {
        try await withRunningNotifications { n in
            let sender = try await n.device(.unify), reader = try await n.device(.unify), muted = try await n.device(.unify)
            _ = try await n.api(muted.user).updatePreferences(body: .json(.init(kinds: .init(additionalProperties: ["group_message": false])))).ok
            let messageEvent = UUID.timeOrdered()
            let group = try await groupWithMessage(n, sender: sender, to: [reader, muted], id: messageEvent)
            try await n.waitForPushes([reader.token])
            // The same event again (a redelivery after a crash).
            try await n.publish(MessageSent(message: Rows.message(group: group, sender: sender.id), senderDisplayName: "Sam"), app: .unify, aggregate: group, actor: sender.id, id: messageEvent)
            try await n.publish(MessageSent(message: Rows.message(group: group, sender: sender.id, text: "second"), senderDisplayName: "Sam"), app: .unify, aggregate: group, actor: sender.id)
            try await n.waitForPushes([reader.token], count: 2)
            try await n.settle()
            #expect(n.pushes(to: reader.token).count == 2)
            #expect(n.pushes(to: muted.token).isEmpty)
            #expect(try await n.notifications(of: muted.user).notifications.isEmpty)
            // Reading the list.
            let list = try await n.notifications(of: reader.user, limit: 1)
            #expect(list.notifications.count == 1 && list.unreadCount == 2)
            let next = try await n.notifications(of: reader.user, limit: 1, cursor: try #require(list.nextCursor))
            #expect(next.notifications.count == 1 && next.nextCursor == nil)
            let first = try #require(list.notifications.first).id
            let readers = n.api(reader.user)
            #expect(try await readers.markNotificationRead(path: .init(notificationId: first)).ok.body.json.unreadCount == 1)
            #expect(try await answer { try await n.api(sender.user).markNotificationRead(path: .init(notificationId: first)) }.code == "notification_not_found")
            #expect(try await readers.markAllNotificationsRead().ok.body.json.unreadCount == 0)
            // The sender deletes their account: what they wrote leaves the reader's list.
            try await n.service.publishAuthEvent(UserDeleted(userId: sender.id, app: .unify, deletedAt: Date()), user: sender.id, app: .unify)
            try await waitUntil { try await n.notifications(of: reader.user).notifications.isEmpty }
            try await n.service.withDatabase { database in
                let texts = try await database.query("SELECT payload FROM deliveries WHERE user_id = \(reader.id)").collect().map { try $0.decode(String.self) }
                #expect(texts.count == 2 && texts.allSatisfy(\.isEmpty))
            }
            // The reader deletes theirs.
            try await n.service.publishAuthEvent(UserDeleted(userId: reader.id, app: .unify, deletedAt: Date()), user: reader.id, app: .unify)
            try await waitUntil { try await n.devices(of: reader.user).isEmpty }
            #expect(try await n.notifications(of: reader.user).notifications.isEmpty)
            #expect(try await log(n, reader.user).isEmpty)
        }
    }

    @Test("end to end: a post made through the circles service reaches the other member's phone")
    func withCirclesService() async throws {
        let prefix = TestKafka.topicPrefix()
        let tokens = TestTokens()
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("colony-push-circles-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        try await withRunningNotifications(topicPrefix: prefix, tokens: tokens) { n in
            try await withRunningService(.circles, app: .mycirclee, apiPrefix: "/circles/v1", topicPrefix: prefix, tokens: tokens, definition: { base in
                let storage = Storage(backend: FileSystemStorageBackend(root: root), publicBaseURL: base, signingKey: Array("push-tests-signing-key-0123456789abcdef".utf8))
                return CirclesService.definition(settings: CirclesSettings(), storage: storage)
            }) { circles in
                let owner = try await n.device(.mycirclee), friend = try await n.device(.mycirclee)
                let owners = circles.circlesClient(as: owner.user)
                let circleID = try await owners.createCircle(body: .json(.init(name: "Climbing"))).created.body.json.id
                let code = try await owners.createInvite(path: .init(circleId: circleID)).created.body.json.code
                _ = try await circles.circlesClient(as: friend.user).claimInvite(body: .json(.init(code: code))).ok
                _ = try await owners.createPost(path: .init(circleId: circleID), body: .json(.init(_type: .note, body: "Bouldering at 6?"))).created
                try await n.waitForPushes([friend.token])
                try await n.settle()
                #expect(n.pushes(to: friend.token).first?.alertTitle == "Climbing" && n.pushes(to: friend.token).first?.alertBody == "Bouldering at 6?")
                #expect(n.pushes(to: owner.token).isEmpty)
            }
        }
    }
}
