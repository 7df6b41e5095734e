import ColonyClientTesting
import ColonyModels
import ColonyPlatform
import ColonyTesting
import Foundation
import Testing
@testable import NotificationsService

/// Notifications follow membership: a removed member's Live Activity and queued pushes go, the
/// send checks membership again, and an account can register only so many tokens.
@Suite("Notifications: membership and token caps")
struct MembershipPushTests {
    @Test("a removed member's Live Activity receives nothing more, and pushes queued for them (held by quiet hours) are dropped; the others still get theirs")
    func removedMember() async throws {
        try await withRunningNotifications { n in
            let owner = try await n.device(.mycirclee), member = try await n.device(.mycirclee), stays = try await n.device(.mycirclee)
            let circle = try await n.circle("Friends", owner: owner.id, members: [member.id, stays.id])
            let event = Rows.post(circle: circle, author: owner.id, type: .event, body: "Board games", startsAt: Date().addingTimeInterval(7200))
            try await n.publish(PostCreated(post: event, pollOptions: []), app: .mycirclee, aggregate: circle, actor: owner.id)
            try await n.waitForPushes([member.token, stays.token])
            let memberActivity = RunningNotifications.randomToken(), staysActivity = RunningNotifications.randomToken()
            for (user, token) in [(member.user, memberActivity), (stays.user, staysActivity)] {
                let registration = Schemas.LiveActivityRegistration(activityId: "act-\(token.prefix(6))", postId: event.id.lowercased, token: token)
                let registered = try await answer { try await n.api(user).registerLiveActivity(body: .json(registration)) }
                #expect(registered.status == 200, "\(registered.body)")
            }
            // The member's alerts are held by quiet hours (from an hour ago to two hours from now): a post now is queued for them.
            func clock(_ offset: TimeInterval) -> String {
                let parts = Calendar(identifier: .gregorian).dateComponents(in: TimeZone(identifier: "UTC")!, from: Date().addingTimeInterval(offset))
                return String(format: "%02d:%02d", parts.hour ?? 0, parts.minute ?? 0)
            }
            let quiet = try await answer {
                try await n.api(member.user).updatePreferences(body: .json(.init(quietHours: .init(start: clock(-3600), end: clock(7200), timezone: "UTC"))))
            }
            #expect(quiet.status == 200, "\(quiet.body)")
            try await n.publish(PostCreated(post: Rows.post(circle: circle, author: owner.id, body: "Held for later"), pollOptions: []), app: .mycirclee, aggregate: circle, actor: owner.id)
            try await n.waitForPushes([stays.token], count: 2)
            let held = try await n.deliveries(of: member.user)
            #expect(held.contains { $0.status == .pending }, "\(held)")

            // An RSVP updates both Live Activities.
            try await n.publish(EventRsvped(circleId: circle, postId: event.id, userId: stays.id, status: .going, authorId: owner.id,
                                            counts: RSVPCounts(going: 1, maybe: 0, declined: 0)), app: .mycirclee, aggregate: circle, actor: stays.id)
            try await n.waitForPushes([memberActivity, staysActivity])

            // The owner removes the member.
            try await n.publish(CircleMemberLeft(member: Rows.circleMember(circle, member.id), reason: .removed), app: .mycirclee, aggregate: circle, actor: owner.id)
            try await waitUntil { try await !n.devices(of: member.user).contains { $0.kind == .liveActivity } }
            let log = try await n.deliveries(of: member.user)
            #expect(!log.contains { $0.status == .pending }, "queued pushes dropped: \(log)")
            #expect(log.contains { $0.lastReason == "not_a_member" })

            // More RSVPs and the event's end: the member's Live Activity gets nothing more, the other one does.
            try await n.publish(EventRsvped(circleId: circle, postId: event.id, userId: owner.id, status: .maybe, authorId: owner.id,
                                            counts: RSVPCounts(going: 1, maybe: 1, declined: 0)), app: .mycirclee, aggregate: circle, actor: owner.id)
            try await n.publish(PostDeleted(post: event), app: .mycirclee, aggregate: circle, actor: owner.id)
            try await n.waitForPushes([staysActivity], count: 3)
            try await n.settle()
            #expect(n.pushes(to: memberActivity).count == 1, "the removed member's Live Activity got \(n.pushes(to: memberActivity).count) pushes")
            // Even the quiet hours' end sends them nothing.
            n.clock.advance(by: 86_400)
            try await n.settle()
            #expect(n.pushes(to: member.token).count == 1)
        }
    }

    @Test("pushes queued before a removal the service has not heard of yet are checked at send time: a push about a scope the recipient left is dropped")
    func sendTimeCheck() async throws {
        try await withRunningNotifications { n in
            let owner = try await n.device(.unify), member = try await n.device(.unify)
            let group = UUID()
            try await n.publish(GroupCreated(group: Rows.group(group, name: "Band", owner: owner.id), members: [Rows.groupMember(group, owner.id, role: .owner), Rows.groupMember(group, member.id)]),
                                app: .unify, aggregate: group, actor: owner.id)
            // A push queued for later (a retry or quiet hours), then the member leaves the projection
            // without the removal handler having seen the queue (as a replica racing it would).
            try await n.publish(MessageSent(message: Rows.message(group: group, sender: owner.id), senderDisplayName: "Owner"), app: .unify, aggregate: group, actor: owner.id)
            try await n.waitForPushes([member.token])
            try await n.service.withDatabase { database in
                try await database.query("""
                    INSERT INTO deliveries (id, event_id, device_id, user_id, app, kind, push_type, expires_at, payload, token_suffix, not_before, created_at, scope, scope_id)
                    SELECT \(UUID()), \(UUID()), id, user_id, app, 'group_message', 'alert', now() + interval '1 hour', '{"aps":{"alert":"late"}}', right(token, 8), now() + interval '2 seconds', now(), 'group', \(group)
                    FROM devices WHERE user_id = \(member.id) AND kind = 'device'
                    """).collect()
                try await database.query("DELETE FROM memberships WHERE scope = 'group' AND scope_id = \(group) AND user_id = \(member.id)").collect()
            }
            try await Task.sleep(for: .seconds(4))
            #expect(n.pushes(to: member.token).count == 1)
            let log = try await n.deliveries(of: member.user)
            #expect(log.contains { $0.lastReason == "not_a_member" }, "\(log)")
        }
    }

    @Test("an account keeps at most its newest tokens: registering more drops the oldest (and what was queued for them)")
    func deviceCap() async throws {
        try await withRunningNotifications { n in
            let user = try await n.user(.socialspot)
            var tokens: [String] = []
            for _ in 0..<13 {
                let token = RunningNotifications.randomToken()
                tokens.append(token)
                #expect(try await answer { try await n.api(user).registerDevice(body: .json(.init(token: token, environment: .production))) }.status == 200)
            }
            let devices = try await n.devices(of: user)
            #expect(devices.count == 10)
            #expect(Set(devices.map(\.token)) == Set(tokens.suffix(10)), "the ten newest stay")
        }
    }
}

/// Issue 39: an operator's suspension stops the account's pushes for its time.
@Suite("Notifications: suspended accounts")
struct SuspendedAccountPushTests {
    @Test("a suspended account gets no pushes until it is reinstated; the others still get theirs")
    func suspendedAccount() async throws {
        try await withRunningNotifications { n in
            let owner = try await n.device(.mycirclee), member = try await n.device(.mycirclee), stays = try await n.device(.mycirclee)
            let circle = try await n.circle("Friends", owner: owner.id, members: [member.id, stays.id])
            try await n.publish(PostCreated(post: Rows.post(circle: circle, author: owner.id, body: "Before"), pollOptions: []), app: .mycirclee, aggregate: circle, actor: owner.id)
            try await n.waitForPushes([member.token, stays.token])

            try await n.publish(UserSuspended(userId: member.id, app: .mycirclee, until: Date().addingTimeInterval(3600), suspendedAt: Date()),
                                app: .mycirclee, aggregate: member.id, actor: nil)
            try await n.publish(PostCreated(post: Rows.post(circle: circle, author: owner.id, body: "During"), pollOptions: []), app: .mycirclee, aggregate: circle, actor: owner.id)
            try await n.waitForPushes([stays.token], count: 2)
            try await n.settle()
            #expect(n.pushes(to: member.token).count == 1, "the suspended member got \(n.pushes(to: member.token).count) pushes")

            try await n.publish(UserReinstated(userId: member.id, app: .mycirclee, reinstatedAt: Date()), app: .mycirclee, aggregate: member.id, actor: nil)
            try await n.publish(PostCreated(post: Rows.post(circle: circle, author: owner.id, body: "After"), pollOptions: []), app: .mycirclee, aggregate: circle, actor: owner.id)
            try await n.waitForPushes([member.token], count: 2)
            try await n.waitForPushes([stays.token], count: 3)
        }
    }
}

extension RunningNotifications {
    /// A MyCirclee circle as circles' events announce it: created by `owner`, joined by `members`.
    func circle(_ name: String, owner: UUID, members: [UUID]) async throws -> UUID {
        let circle = UUID()
        try await publish(CircleCreated(circle: Rows.circle(circle, name: name, owner: owner), owner: Rows.circleMember(circle, owner, role: .owner)),
                          app: .mycirclee, aggregate: circle, actor: owner)
        for user in members {
            try await publish(CircleMemberJoined(member: Rows.circleMember(circle, user), circleName: name, via: "invite"), app: .mycirclee, aggregate: circle, actor: user)
        }
        return circle
    }
}
