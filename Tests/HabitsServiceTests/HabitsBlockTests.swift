import ColonyClientTesting
import ColonyModels
import ColonyPlatform
import ColonyTesting
import Foundation
import HabitsAPI
@testable import HabitsService
import Testing

/// Blocks in HabitHive (issue 39.2): personal, not a removal. A blocked user cannot invite the
/// blocker to a hive, their pending invitations and their own feed lines are hidden from the
/// blocker, and the hive's collective state stays the same for everyone.
@Suite("Habits: blocks")
struct HabitsBlockTests {
    var flows: HabitHiveFlowTests { HabitHiveFlowTests() }

    func feed(_ api: HabitsClient, hive: String, limit: Int = 100) async throws -> [Schemas.ActivityEvent] {
        try await api.listHiveActivity(path: .init(hiveId: hive), query: .init(limit: limit)).ok.body.json.events
    }

    /// The whole feed read a line a page: the hiding holds across cursors.
    func pagedFeed(_ api: HabitsClient, hive: String) async throws -> [Schemas.ActivityEvent] {
        var events: [Schemas.ActivityEvent] = []
        var before: String?
        repeat {
            let page = try await api.listHiveActivity(path: .init(hiveId: hive), query: .init(before: before, limit: 1)).ok.body.json
            events += page.events
            before = page.nextCursor
        } while before != nil && events.count < 100
        return events
    }

    @Test("block, list, unblock: 201 with the list (again changes nothing), own id 409, a malformed id to unblock 404, unblocking twice is fine")
    func blockListUnblock() async throws {
        try await withRunningHabits { habits in
            let ada = try await habits.user(), bob = try await habits.user(), cy = try await habits.user()
            let adas = habits.api(ada)
            #expect(try await adas.listBlocks().ok.body.json.isEmpty)
            let first = try await adas.blockUser(body: .json(.init(userId: bob.id.uuidString))).created.body.json
            #expect(first.map(\.userId) == [bob.id.lowercased])
            _ = try await adas.blockUser(body: .json(.init(userId: cy.id.uuidString))).created
            let again = try await adas.blockUser(body: .json(.init(userId: bob.id.uuidString))).created.body.json
            #expect(again.map(\.userId) == [cy.id.lowercased, bob.id.lowercased], "most recent first, Bob once")
            let own = try await answer { try await adas.blockUser(body: .json(.init(userId: ada.id.uuidString))) }
            #expect(own.status == 409 && own.code == "cannot_block_self", "\(own.body)")
            // Raw: the typed client cannot send a malformed id in the body.
            #expect(try await habits.request(.POST, "/blocks", as: ada, json: ["user_id": "nope"]).status == 422)
            let malformed = try await answer { try await adas.unblockUser(path: .init(userId: "nope")) }
            #expect(malformed.status == 404 && malformed.code == "user_not_found")
            // Blocks are the blocker's: Bob's list is empty.
            #expect(try await habits.api(bob).listBlocks().ok.body.json.isEmpty)
            #expect(try await answer { try await adas.unblockUser(path: .init(userId: bob.id.uuidString)) }.status == 204)
            #expect(try await answer { try await adas.unblockUser(path: .init(userId: bob.id.uuidString)) }.status == 204)
            #expect(try await adas.listBlocks().ok.body.json.map(\.userId) == [cy.id.lowercased])

            // At the limit (1000), a new block is 409 `block_limit` and nothing is written.
            try await habits.withDatabase { database in
                try await database.query("""
                    INSERT INTO user_blocks (blocker_id, blocked_id) SELECT \(ada.id), gen_random_uuid() FROM generate_series(1, \(BlockList.limit - 1))
                    """)
            }
            let over = try await answer { try await adas.blockUser(body: .json(.init(userId: bob.id.uuidString))) }
            #expect(over.status == 409 && over.code == "block_limit", "\(over.body)")
            #expect(try await adas.listBlocks().ok.body.json.count == BlockList.limit)
        }
    }

    @Test("someone who blocked the owner cannot be invited to a hive (403 blocked, nothing sent); after the unblock they can")
    func invitationRefused() async throws {
        try await withRunningHabits { habits in
            let owner = try await habits.user(timezone: "UTC", dayStartHour: 0), friend = try await habits.user(timezone: "UTC", dayStartHour: 0)
            let hive = try await flows.makeHive(habits, owner)
            try await flows.match(habits, owner: owner, contacts: [friend])
            let owners = habits.api(owner), friends = habits.api(friend)
            func invite() async throws -> Answer<HabitsOperations.InviteContactToHive.Output> {
                try await answer { try await owners.inviteContactToHive(path: .init(hiveId: hive), body: .json(.init(userId: friend.id.uuidString))) }
            }
            _ = try await friends.blockUser(body: .json(.init(userId: owner.id.uuidString))).created
            let refused = try await invite()
            #expect(refused.status == 403 && refused.code == "blocked", "\(refused.body)")
            #expect(try await friends.listMyInvitations().ok.body.json.isEmpty)
            let stored = try await habits.withDatabase { database in
                try await database.query("SELECT count(*)::int FROM hive_invitations WHERE user_id = \(friend.id)").collect()[0].decode(Int.self)
            }
            #expect(stored == 0)
            // Only the invitee's block refuses: the owner's own block of the friend does not.
            _ = try await friends.unblockUser(path: .init(userId: owner.id.uuidString)).noContent
            _ = try await owners.blockUser(body: .json(.init(userId: friend.id.uuidString))).created
            let invited = try await invite()
            #expect(invited.status == 201, "\(invited.body)")
            let sent = try await habits.events(count: .hiveInvited, atLeast: 1)
            let invitee = try sent.first?.decode(HiveInvited.self).payload.invitation.userId
            #expect(sent.count == 1 && invitee == friend.id)
        }
    }

    @Test("an invitation from someone the invitee blocked is hidden and answered as unknown (404); the unblock shows it again and it can be accepted")
    func pendingInvitationHidden() async throws {
        try await withRunningHabits { habits in
            let owner = try await habits.user(timezone: "UTC", dayStartHour: 0), friend = try await habits.user(timezone: "UTC", dayStartHour: 0)
            let hive = try await flows.makeHive(habits, owner)
            try await flows.match(habits, owner: owner, contacts: [friend])
            let owners = habits.api(owner), friends = habits.api(friend)
            let invitation = try await owners.inviteContactToHive(path: .init(hiveId: hive), body: .json(.init(userId: friend.id.uuidString))).created.body.json.id
            #expect(try await friends.listMyInvitations().ok.body.json.count == 1)

            _ = try await friends.blockUser(body: .json(.init(userId: owner.id.uuidString))).created
            #expect(try await friends.listMyInvitations().ok.body.json.isEmpty)
            let accept = try await answer { try await friends.acceptHiveInvitation(path: .init(invitationId: invitation)) }
            #expect(accept.status == 404 && accept.code == "invitation_not_found", "\(accept.body)")
            let decline = try await answer { try await friends.declineHiveInvitation(path: .init(invitationId: invitation)) }
            #expect(decline.status == 404 && decline.code == "invitation_not_found", "\(decline.body)")
            #expect(try await answer { try await friends.getHive(path: .init(hiveId: hive)) }.status == 404, "not joined")

            _ = try await friends.unblockUser(path: .init(userId: owner.id.uuidString)).noContent
            #expect(try await friends.listMyInvitations().ok.body.json.map(\.invitation.id) == [invitation])
            let accepted = try await friends.acceptHiveInvitation(path: .init(invitationId: invitation)).ok.body.json
            #expect(accepted.members.count == 2)
        }
    }

    @Test("the blocked member's feed lines are hidden from the blocker on every page; the hive's state and its advance stay; the blocked member sees all; unblock restores")
    func feedHidden() async throws {
        try await withRunningHabits { habits in
            let owner = try await habits.user(timezone: "UTC", dayStartHour: 0), member = try await habits.user(timezone: "UTC", dayStartHour: 0)
            let owners = habits.api(owner), members = habits.api(member)
            let hive = try await flows.makeHive(habits, owner)
            // Blocked before joining: a block is personal, the blocked user can still join by code.
            _ = try await owners.blockUser(body: .json(.init(userId: member.id.uuidString))).created
            try await flows.join(habits, owner, member, hive: hive)
            _ = try await owners.logHiveToday(path: .init(hiveId: hive), body: .json(.init())).ok
            // The member's log completes the day: `hive_advanced` names them.
            let logged = try await members.logHiveToday(path: .init(hiveId: hive), body: .json(.init())).ok.body.json
            #expect(logged.hiveDay?.advanced == true)

            let everything = try await feed(members, hive: hive)
            #expect(Set(everything.map(\._type)) == [.hiveJoined, .habitCompleted, .hiveAdvanced], "\(everything.map(\._type))")
            #expect(everything.filter { $0.actorId == member.id.lowercased }.count == 3, "joined, completed, advanced")

            let seen = try await feed(owners, hive: hive)
            let memberID = member.id.lowercased
            #expect(seen.filter { $0.actorId == memberID }.map(\._type) == [.hiveAdvanced], "only the hive's own line names the blocked member: \(seen.map(\._type))")
            #expect(seen.contains { $0._type == .habitCompleted && $0.actorId == owner.id.lowercased })
            #expect(try await pagedFeed(owners, hive: hive).map(\.id) == seen.map(\.id))
            #expect(try await pagedFeed(members, hive: hive).map(\.id) == everything.map(\.id))

            // Collective state is the same for the blocker: members, who is done, the day's tally and member days.
            let detail = try await owners.getHive(path: .init(hiveId: hive)).ok.body.json
            #expect(detail.members.count == 2 && detail.members.first { $0.userId == memberID }?.doneToday == true)
            #expect(detail.today.done == 2 && detail.hive.currentLength == 1)
            let today = UserClock.utc.localDay(at: Date()).description
            let days = try await owners.listHiveDays(path: .init(hiveId: hive), query: .init(from: today, to: today)).ok.body.json
            #expect(days.memberDays.count == 2 && days.hiveDays.first?.advanced == true)

            _ = try await owners.unblockUser(path: .init(userId: member.id.uuidString)).noContent
            #expect(try await feed(owners, hive: hive).map(\.id) == everything.map(\.id))
        }
    }

    @Test("the blocked member's hive_day_logged and hive_joined are withheld from the blocker (realtime keeps back only their feed line, RealtimeProtocolTests)")
    func eventsWithholdOnlyTheFeedLine() async throws {
        try await withRunningHabits { habits in
            let owner = try await habits.user(timezone: "UTC", dayStartHour: 0), member = try await habits.user(timezone: "UTC", dayStartHour: 0)
            let hive = try await flows.makeHive(habits, owner)
            _ = try await habits.api(owner).blockUser(body: .json(.init(userId: member.id.uuidString))).created
            try await flows.join(habits, owner, member, hive: hive)
            _ = try await habits.api(member).logHiveToday(path: .init(hiveId: hive), body: .json(.init())).ok
            let events = try await habits.events { events in events.contains { $0.type == .hiveDayLogged } && events.contains { $0.type == .hiveJoined } }
            let logged = try #require(try events.first { $0.type == .hiveDayLogged }?.decode(HiveDayLogged.self))
            #expect(logged.actor == member.id && logged.payload.day.userId == member.id && logged.payload.activity?.actorId == member.id)
            #expect(logged.withheldFrom == [owner.id])
            let joined = try #require(try events.first { $0.type == .hiveJoined }?.decode(HiveJoined.self))
            #expect(joined.actor == member.id && joined.withheldFrom == [owner.id])
            // The owner's own log is withheld from nobody: the member did not block them.
            _ = try await habits.api(owner).logHiveToday(path: .init(hiveId: hive), body: .json(.init())).ok
            let owners = try await habits.events { events in events.contains { $0.type == .hiveDayLogged && $0.header.actor == owner.id } }
            #expect(owners.first { $0.type == .hiveDayLogged && $0.header.actor == owner.id }?.header.withheldFrom == nil)
        }
    }
}
