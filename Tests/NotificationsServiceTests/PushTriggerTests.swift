import ColonyModels
import ColonyPlatform
import ColonyTesting
import Foundation
import Testing
@testable import NotificationsService

/// Each trigger's pushes reach the right tokens and none of the actor's or non-members'. The
/// domain events are published as their services publish them.
@Suite("Notifications: what each event pushes, to whom")
struct PushTriggerTests {
    /// Every request the stand-in got was one real APNs would take, over HTTP/2.
    func expectWellFormed(_ received: [APNsStandIn.Received]) {
        for push in received {
            #expect(push.problems.isEmpty, "\(push.kind ?? "?") push to \(push.token.prefix(8)): \(push.problems)")
            #expect(push.overHTTP2)
        }
    }

    func circle(_ n: RunningNotifications, name: String, owner: UUID, members: [UUID]) async throws -> UUID {
        let circle = UUID()
        try await n.publish(CircleCreated(circle: Rows.circle(circle, name: name, owner: owner), owner: Rows.circleMember(circle, owner, role: .owner)),
                            app: .mycirclee, aggregate: circle, actor: owner)
        for member in members {
            try await n.publish(CircleMemberJoined(member: Rows.circleMember(circle, member), circleName: name, via: "invite"), app: .mycirclee, aggregate: circle, actor: member)
        }
        return circle
    }

    @Test("MyCirclee: posts to the circle's other members; DMs by the notify flag; RSVPs to the event's author; presence silently; Live Activities updated and ended")
    func myCirclee() async throws {
        try await withRunningNotifications { n in
            let owner = try await n.device(.mycirclee), member = try await n.device(.mycirclee), second = try await n.device(.mycirclee)
            let outsider = try await n.device(.mycirclee)
            let circle = try await circle(n, name: "Friends", owner: owner.id, members: [member.id, second.id])
            _ = try await self.circle(n, name: "Elsewhere", owner: outsider.id, members: [])

            // A post: to the two other members, not the author, not the outsider.
            try await n.publish(PostCreated(post: Rows.post(circle: circle, author: owner.id), pollOptions: []), app: .mycirclee, aggregate: circle, actor: owner.id)
            try await n.waitForPushes([member.token, second.token])
            try await n.settle()
            #expect(n.pushes(to: owner.token).isEmpty && n.pushes(to: outsider.token).isEmpty)
            let post = n.pushes(to: member.token)[0]
            #expect(post.kind == "circle_post" && post.alertTitle == "Friends" && post.alertBody == "Dinner at mine?")
            #expect(post.topic == "com.example.mycirclee" && post.pushType == "alert" && post.priority == "10")
            // It is in the member's in-app list, unread.
            let list = try await n.service.request(.GET, "/notifications", as: member.user)
            #expect(list.body["unread_count"]?.intValue == 1)
            #expect(list.body["notifications"]?.arrayValue?.first?["data"]?["circle_id"]?.stringValue == circle.uuidString.lowercased())
            #expect(try await n.service.request(.GET, "/notifications", as: outsider.user).body["notifications"]?.arrayValue?.isEmpty == true)

            // DMs: the recipient only, and only with notify on.
            let thread = UUID()
            func dm(_ text: String, notify: Bool) -> DMSent {
                DMSent(circleId: circle, message: DMMessageRow(id: UUID(), threadId: thread, senderId: owner.id, body: text, replyToId: nil, createdAt: Date(), readAt: nil),
                       participantIds: [owner.id, member.id], recipientId: member.id, notifyRecipient: notify)
            }
            try await n.publish(dm("muted", notify: false), app: .mycirclee, aggregate: circle, actor: owner.id)
            try await n.publish(dm("are you coming?", notify: true), app: .mycirclee, aggregate: circle, actor: owner.id)
            try await n.waitForPushes([member.token], count: 2)
            try await n.settle()
            #expect(n.pushes(to: member.token).filter { $0.kind == "dm" }.map(\.alertBody) == ["are you coming?"])
            #expect(n.pushes(to: member.token).last?.payload["aps"].flatMap { ($0 as? [String: Any])?["thread-id"] as? String } == "dm-\(thread.uuidString.lowercased())")
            #expect(n.pushes(to: owner.token).isEmpty && n.pushes(to: second.token).count == 1)

            // An event post; the second member follows it with a Live Activity (an outsider may not).
            let event = Rows.post(circle: circle, author: owner.id, type: .event, body: "Board games", startsAt: Date().addingTimeInterval(7200))
            try await n.publish(PostCreated(post: event, pollOptions: []), app: .mycirclee, aggregate: circle, actor: owner.id)
            try await n.waitForPushes([member.token], count: 3)
            let activityToken = RunningNotifications.randomToken()
            let activity: [String: Any] = ["activity_id": "act-1", "post_id": event.id.uuidString, "token": activityToken]
            #expect(try await n.service.request(.POST, "/live-activities", as: outsider.user, json: activity).code == "event_not_found")
            #expect(try await n.service.request(.POST, "/live-activities", as: second.user, json: activity).status == 200)

            // The member RSVPs: the author is told; the Live Activity gets the new count; the member gets nothing.
            try await n.publish(EventRsvped(circleId: circle, postId: event.id, userId: member.id, status: .going, authorId: owner.id,
                                            counts: RSVPCounts(going: 1, maybe: 0, declined: 0)), app: .mycirclee, aggregate: circle, actor: member.id)
            try await n.waitForPushes([owner.token, activityToken])
            let rsvp = n.pushes(to: owner.token)[0]
            #expect(rsvp.kind == "event_rsvp" && rsvp.alertTitle == "📅 Board games" && rsvp.collapseID == "rsvp-\(event.id.uuidString.lowercased())")
            let update = n.pushes(to: activityToken)[0]
            #expect(update.pushType == "liveactivity" && update.topic == "com.example.mycirclee.push-type.liveactivity")
            #expect(update.aps["event"] as? String == "update")
            #expect((update.aps["content-state"] as? [String: Any])?["going"] as? Int == 1)
            #expect((update.aps["content-state"] as? [String: Any])?["title"] as? String == "Board games")

            // A status change: silent pushes to the others, so widgets reload.
            try await n.publish(PresenceChanged(presence: PresenceRow(userId: member.id, circleId: circle, status: .deepWork, updatedAt: Date())),
                                app: .mycirclee, aggregate: circle, actor: member.id)
            try await n.waitForPushes([owner.token], count: 2)
            let presence = n.pushes(to: owner.token)[1]
            #expect(presence.pushType == "background" && presence.priority == "5" && presence.aps["content-available"] as? Int == 1 && presence.alertTitle == nil)

            // The event is deleted: the Live Activity ends.
            try await n.publish(PostDeleted(post: event), app: .mycirclee, aggregate: circle, actor: owner.id)
            try await n.waitForPushes([activityToken], count: 2)
            #expect(n.pushes(to: activityToken)[1].aps["event"] as? String == "end")
            try await n.settle()
            expectWellFormed(n.apns.received)
            #expect(n.pushes(to: outsider.token).isEmpty)
        }
    }

    @Test("Unify: a message reaches the group's other members; a removed member no longer")
    func unify() async throws {
        try await withRunningNotifications { n in
            let owner = try await n.device(.unify), anna = try await n.device(.unify), ben = try await n.device(.unify), outsider = try await n.device(.unify)
            let group = UUID()
            try await n.publish(GroupCreated(group: Rows.group(group, name: "Lerngruppe", owner: owner.id),
                                             members: [Rows.groupMember(group, owner.id, role: .owner), Rows.groupMember(group, anna.id), Rows.groupMember(group, ben.id)]),
                                app: .unify, aggregate: group, actor: owner.id)
            try await n.publish(MessageSent(message: Rows.message(group: group, sender: owner.id), senderDisplayName: "Olga"), app: .unify, aggregate: group, actor: owner.id)
            try await n.waitForPushes([anna.token, ben.token])
            let push = n.pushes(to: anna.token)[0]
            #expect(push.kind == "group_message" && push.alertTitle == "Lerngruppe" && push.alertBody == "Olga: Hallo zusammen" && push.topic == "com.example.unify")
            try await n.publish(GroupMemberRemoved(member: Rows.groupMember(group, ben.id), reason: .removed), app: .unify, aggregate: group, actor: owner.id)
            try await n.publish(MessageSent(message: Rows.message(group: group, sender: anna.id, text: "Ben ist raus"), senderDisplayName: "Anna"), app: .unify, aggregate: group, actor: anna.id)
            try await n.waitForPushes([owner.token])
            try await n.settle()
            #expect(n.pushes(to: ben.token).count == 1 && n.pushes(to: anna.token).count == 1 && n.pushes(to: outsider.token).isEmpty)
            expectWellFormed(n.apns.received)
        }
    }

    @Test("history replayed to a new deployment builds the projections and pushes nothing old")
    func replayedHistory() async throws {
        try await withRunningNotifications { n in
            let owner = try await n.device(.unify), member = try await n.device(.unify)
            let group = UUID(), twoDaysAgo = Date().addingTimeInterval(-2 * 86_400)
            try await n.publish(GroupCreated(group: Rows.group(group, name: "Old friends", owner: owner.id),
                                             members: [Rows.groupMember(group, owner.id, role: .owner), Rows.groupMember(group, member.id)]),
                                app: .unify, aggregate: group, actor: owner.id, at: twoDaysAgo)
            try await n.publish(MessageSent(message: Rows.message(group: group, sender: owner.id, text: "long ago"), senderDisplayName: "Olga"),
                                app: .unify, aggregate: group, actor: owner.id, at: twoDaysAgo)
            try await n.publish(MessageSent(message: Rows.message(group: group, sender: owner.id, text: "today"), senderDisplayName: "Olga"),
                                app: .unify, aggregate: group, actor: owner.id)
            try await n.waitForPushes([member.token])
            try await n.settle()
            #expect(n.pushes(to: member.token).map(\.alertBody) == ["Olga: today"])
            #expect(n.pushes(to: member.token).first?.alertTitle == "Old friends")
            #expect(try await n.service.request(.GET, "/notifications", as: member.user).body["notifications"]?.arrayValue?.count == 1)
        }
    }

    @Test("HabitHive: joins to the hive's others; advanced and milestones to all but the one who completed the day; at risk to the missing only")
    func habitHive() async throws {
        try await withRunningNotifications { n in
            let alice = try await n.device(.habithive), bob = try await n.device(.habithive), cleo = try await n.device(.habithive), outsider = try await n.device(.habithive)
            let hive = UUID()
            try await n.publish(HiveCreated(hive: Rows.hive(hive, owner: alice.id), owner: Rows.hiveMember(hive, alice.id, role: "owner")), app: .habithive, aggregate: hive, actor: alice.id)
            try await n.publish(HiveJoined(member: Rows.hiveMember(hive, bob.id), hiveName: "Morning run", memberIds: [alice.id, bob.id],
                                           activity: Rows.activity(hive: hive, actor: bob.id, type: .hiveJoined)), app: .habithive, aggregate: hive, actor: bob.id)
            try await n.waitForPushes([alice.token])
            try await n.publish(HiveJoined(member: Rows.hiveMember(hive, cleo.id), hiveName: "Morning run", memberIds: [alice.id, bob.id, cleo.id],
                                           activity: Rows.activity(hive: hive, actor: cleo.id, type: .hiveJoined)), app: .habithive, aggregate: hive, actor: cleo.id)
            try await n.waitForPushes([alice.token], count: 2)
            try await n.waitForPushes([bob.token], count: 1)
            #expect(n.pushes(to: alice.token).allSatisfy { $0.kind == "hive_joined" } && n.pushes(to: cleo.token).isEmpty)

            // Cleo logs last: the streak advances; she is not told, the others are.
            let day = HiveDayRow(hiveId: hive, dayDate: Rows.today, completeCount: 3, requiredCount: 3, advanced: true)
            try await n.publish(HiveAdvanced(hive: Rows.hive(hive, owner: alice.id, length: 7), day: day, memberIds: [alice.id, bob.id, cleo.id],
                                             activity: Rows.activity(hive: hive, actor: cleo.id, type: .hiveAdvanced)), app: .habithive, aggregate: hive, actor: cleo.id)
            try await n.publish(StreakMilestone(hiveId: hive, hiveName: "Morning run", length: 7, dayDate: Rows.today, memberIds: [alice.id, bob.id, cleo.id],
                                                activity: Rows.activity(hive: hive, actor: cleo.id, type: .streakMilestone)), app: .habithive, aggregate: hive, actor: cleo.id)
            try await n.waitForPushes([alice.token], count: 4)
            try await n.waitForPushes([bob.token], count: 3)
            #expect(n.pushes(to: cleo.token).isEmpty)
            #expect(Set(n.pushes(to: bob.token).compactMap(\.kind)) == ["hive_joined", "hive_advanced", "streak_milestone"])
            #expect(n.pushes(to: bob.token).first { $0.kind == "hive_advanced" }?.alertBody == "Everyone's done today: the streak is 7 days!")

            // The evening check: Bob has not logged.
            try await n.publish(HiveAtRisk(hiveId: hive, hiveName: "Morning run", dayDate: Rows.today, missingUserIds: [bob.id], doneUserIds: [alice.id, cleo.id]),
                                app: .habithive, aggregate: hive, actor: nil)
            try await n.waitForPushes([bob.token], count: 4)
            try await n.settle()
            #expect(n.pushes(to: bob.token).last?.kind == "hive_at_risk" && n.pushes(to: alice.token).count == 4 && n.pushes(to: cleo.token).isEmpty)
            #expect(n.pushes(to: outsider.token).isEmpty)

            // The next day the job's event names Bob as the one who completed it (no actor): not him.
            let next = HiveDayRow(hiveId: hive, dayDate: Rows.today.adding(days: 1), completeCount: 3, requiredCount: 3, advanced: true)
            try await n.publish(HiveAdvanced(hive: Rows.hive(hive, owner: alice.id, length: 8), day: next, memberIds: [alice.id, bob.id, cleo.id],
                                             activity: Rows.activity(hive: hive, actor: bob.id, type: .hiveAdvanced), completedBy: bob.id),
                                app: .habithive, aggregate: hive, actor: nil)
            try await n.waitForPushes([alice.token], count: 5)
            try await n.waitForPushes([cleo.token], count: 1)
            // An invitation reaches the invitee only; a personal milestone its owner only.
            let invitation = HiveInvitationRow(id: UUID(), hiveId: hive, userId: outsider.id, invitedBy: alice.id, status: .pending, createdAt: Date(), decidedAt: nil)
            try await n.publish(HiveInvited(invitation: invitation, hiveName: "Morning run", invitedByName: "Alice"), app: .habithive, aggregate: hive, actor: alice.id)
            try await n.publish(HabitStreakMilestone(userId: cleo.id, habitId: UUID(), habitName: "Floss", emoji: "🦷", length: 30, dayDate: Rows.today,
                                                     activity: Rows.activity(hive: hive, actor: cleo.id, type: .streakMilestone)), app: .habithive, aggregate: cleo.id, actor: nil)
            try await n.waitForPushes([outsider.token], count: 1)
            try await n.waitForPushes([cleo.token], count: 2)
            try await n.settle()
            #expect(n.pushes(to: bob.token).count == 4 && n.pushes(to: alice.token).count == 5)
            #expect(n.pushes(to: outsider.token).first?.kind == "hive_invitation" && n.pushes(to: outsider.token).first?.alertBody == "Alice invited you to their hive.")
            #expect(n.pushes(to: cleo.token).last?.kind == "streak_milestone" && n.pushes(to: cleo.token).last?.alertBody == "30-day streak! Keep it going.")
            expectWellFormed(n.apns.received)
        }
    }

    @Test("I Believe In You: support messages and new followers to the project's owner; an anonymous sender is never revealed")
    func iBelieveInYou() async throws {
        try await withRunningNotifications { n in
            let owner = try await n.device(.ibelieveinyou), fan = try await n.device(.ibelieveinyou), other = try await n.device(.ibelieveinyou)
            let project = UUID()
            try await n.publish(ProjectCreated(project: Rows.project(project, title: "Solar Kiln", builder: UUID()), ownerId: owner.id), app: .ibelieveinyou, aggregate: project, actor: owner.id)
            try await n.publish(ProjectFollowed(follow: FollowRow(id: UUID(), userId: fan.id, projectId: project, createdAt: Date()), followerCount: 1, ownerId: owner.id),
                                app: .ibelieveinyou, aggregate: project, actor: fan.id)
            try await n.waitForPushes([owner.token])
            #expect(n.pushes(to: owner.token)[0].kind == "new_follower" && n.pushes(to: owner.token)[0].alertBody?.contains("Solar Kiln") == true)
            // The same fan unfollows and follows again within a day: not news (counted below: three pushes in all).
            try await n.publish(ProjectFollowed(follow: FollowRow(id: UUID(), userId: fan.id, projectId: project, createdAt: Date()), followerCount: 1, ownerId: owner.id,
                                                notifyOwner: false), app: .ibelieveinyou, aggregate: project, actor: fan.id)
            let anonymous = SupportMessageRow(id: UUID(), projectId: project, senderId: nil, message: "Keep going!", isAnonymous: true, createdAt: Date())
            try await n.publish(SupportSent(message: anonymous, senderName: "Fanny Fan", ownerId: owner.id), app: .ibelieveinyou, aggregate: project, actor: nil)
            let named = SupportMessageRow(id: UUID(), projectId: project, senderId: fan.id, message: "Love it", isAnonymous: false, createdAt: Date())
            try await n.publish(SupportSent(message: named, senderName: "Fanny Fan", ownerId: owner.id), app: .ibelieveinyou, aggregate: project, actor: fan.id)
            try await n.waitForPushes([owner.token], count: 3)
            try await n.settle()
            let pushes = n.pushes(to: owner.token)
            let anonymousPush = pushes.first { $0.alertBody == "Keep going!" }
            #expect(anonymousPush?.alertTitle == "💚 Someone believes in Solar Kiln")
            #expect(anonymousPush.map { !$0.payloadText.contains("Fanny") && !$0.payloadText.contains(fan.id.uuidString.lowercased()) } == true)
            #expect(pushes.first { $0.alertBody == "Love it" }?.alertTitle == "💚 Fanny Fan believes in Solar Kiln")
            #expect(n.pushes(to: fan.token).isEmpty && n.pushes(to: other.token).isEmpty)
            // Nor is the sender in the owner's in-app list.
            let list = try await n.service.request(.GET, "/notifications", as: owner.user)
            #expect(list.body["notifications"]?.arrayValue?.count == 3)
            #expect(!String(buffer: list.bytes).contains(fan.id.uuidString.lowercased()))
            let anonymousEntry = list.body["notifications"]?.arrayValue?.first { $0["body"]?.stringValue == "Keep going!" }
            #expect(anonymousEntry?["title"]?.stringValue == "💚 Someone believes in Solar Kiln")
            expectWellFormed(n.apns.received)
        }
    }
}
