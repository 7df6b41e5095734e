import ColonyModels
import ColonyPlatform
import Foundation
import Logging
import PostgresNIO

/// Circles and their membership: creation, renaming, invites (single use, 48 h), add requests,
/// leaving, removal, deletion. Every read and write is gated by membership: a non-member gets a
/// 404 for everything about a circle.
struct Circles: Sendable {
    let outbox: Outbox
    let media: PostMedia
    /// Add requests per member (the service's setting; the answering paths never need it).
    var addRequestQuota = Quota(20, perSeconds: 3600)
    let logger: Logger
    var store: CircleStore { CircleStore(logger: logger) }
    var profiles: Profiles { Profiles(logger: logger) }

    /// The circle and my role; 404 when I am not in it.
    func membership(_ circleID: UUID, userID: UUID, lock: Bool = false, on connection: PostgresConnection) async throws -> (CircleRow, CircleRole) {
        guard let membership = try await store.membership(circleID, userID: userID, lock: lock, on: connection) else { throw CirclesErrors.circleNotFound }
        return membership
    }

    func list(userID: UUID, on connection: PostgresConnection) async throws -> [CircleView] {
        _ = try await profiles.require(userID, on: connection)
        return try await store.mine(userID, on: connection)
    }

    func get(_ circleID: UUID, userID: UUID, on connection: PostgresConnection) async throws -> CircleView {
        _ = try await membership(circleID, userID: userID, on: connection)
        guard let view = try await store.mine(userID, on: connection).first(where: { $0.id == circleID.lowercased }) else { throw CirclesErrors.circleNotFound }
        return view
    }

    func create(name: String, userID: UUID, on connection: PostgresConnection) async throws -> CircleView {
        let name = try CirclesRules.circleName(name)
        _ = try await profiles.require(userID, on: connection)
        let (circle, owner) = try await store.create(name: name, ownerID: userID, on: connection)
        try await publish(CircleCreated(circle: circle, owner: owner), circle: circle.id, actor: userID, on: connection)
        return CircleView(id: circle.id.lowercased, name: circle.name, createdBy: circle.createdBy.lowercased, createdAt: circle.createdAt, role: .owner, memberCount: 1)
    }

    func rename(_ circleID: UUID, name: String, userID: UUID, on connection: PostgresConnection) async throws -> CircleView {
        let name = try CirclesRules.circleName(name)
        let (previous, role) = try await membership(circleID, userID: userID, lock: true, on: connection)
        guard role == .owner else { throw CirclesErrors.ownerOnly }
        if let renamed = try await store.rename(circleID, name: name, on: connection), renamed != previous {
            try await publish(CircleUpdated(circle: renamed, previous: previous, memberIds: try await store.memberIDs(circleID, on: connection)),
                              circle: circleID, actor: userID, on: connection)
        }
        return try await get(circleID, userID: userID, on: connection)
    }

    func members(_ circleID: UUID, userID: UUID, on connection: PostgresConnection) async throws -> [MemberView] {
        _ = try await membership(circleID, userID: userID, on: connection)
        return try await store.members(circleID, on: connection)
    }

    /// A fresh single-use code, valid 48 hours (any member may invite).
    func invite(_ circleID: UUID, userID: UUID, on connection: PostgresConnection) async throws -> InviteView {
        _ = try await membership(circleID, userID: userID, on: connection)
        var generator = SystemRandomNumberGenerator()
        // 10 characters of an unambiguous alphabet: about 50 bits, typed by hand if need be.
        let alphabet = Array("ABCDEFGHJKLMNPQRSTUVWXYZ23456789")
        let code = String((0..<10).map { _ in alphabet[Int.random(in: 0..<alphabet.count, using: &generator)] })
        return try await store.createInvite(circleID, code: code, by: userID, expiresAt: Date().addingTimeInterval(CirclesRules.inviteLifetime), on: connection)
    }

    /// Claims an invite code: atomic (of two concurrent claims one wins), single use, 48 h.
    func claim(code: String, userID: UUID, on connection: PostgresConnection) async throws -> CircleView {
        let code = code.trimmingCharacters(in: .whitespacesAndNewlines).uppercased()
        guard (1...64).contains(code.count) else { throw CirclesErrors.inviteInvalid }
        _ = try await profiles.require(userID, on: connection)
        switch try await store.claim(code, by: userID, on: connection) {
        case .invalid: throw CirclesErrors.inviteInvalid
        case .expired: throw CirclesErrors.inviteExpired
        case .used: throw CirclesErrors.inviteUsed
        case .claimed(let circleID):
            // Claiming a code for a circle I am already in would waste it: refuse (the claim rolls back).
            try await join(circleID, userID: userID, via: "invite", actor: userID, on: connection)
            return try await get(circleID, userID: userID, on: connection)
        }
    }

    func join(_ circleID: UUID, userID: UUID, via: String, actor: UUID, on connection: PostgresConnection) async throws {
        guard let circle = try await circleRow(circleID, on: connection) else { throw CirclesErrors.circleNotFound }
        guard let member = try await store.addMember(circleID, userID: userID, role: .member, on: connection) else { throw CirclesErrors.alreadyMember }
        try await publish(CircleMemberJoined(member: member, circleName: circle.name, via: via), circle: circleID, actor: actor, on: connection)
    }

    func circleRow(_ circleID: UUID, on connection: PostgresConnection) async throws -> CircleRow? {
        try await connection.query("SELECT \(unescaped: CircleStore.circleColumns) FROM circles c WHERE c.id = \(circleID)", logger: logger)
            .collect().first.map(CircleStore.circle)
    }

    // MARK: add requests

    /// A member asks to add someone (by handle), within the member's quota. Only the invitee can
    /// accept (joining takes their consent); the owner may approve it first, or veto it.
    func requestAdd(_ circleID: UUID, handle: String, userID: UUID, on connection: PostgresConnection) async throws -> AddRequestView {
        let handle = try CirclesRules.handle(handle)
        _ = try await membership(circleID, userID: userID, on: connection)
        try await Quotas(logger: logger).check("add_request|\(userID.lowercased)", addRequestQuota,
                                                message: "too many add requests, try again later", on: connection)
        guard let invitee = try await profiles.store.byHandle(handle, on: connection) else { throw CirclesErrors.handleNotFound }
        guard try await !store.isMember(circleID, userID: invitee, on: connection) else { throw CirclesErrors.alreadyMember }
        // Someone who blocked the caller cannot be asked for (403 `blocked`).
        try await BlockList(logger: logger).refuse(userID, reaching: invitee, on: connection)
        guard let request = try await store.createRequest(circleID, from: userID, to: invitee, on: connection) else { throw CirclesErrors.requestPending }
        return request
    }

    func pendingRequests(userID: UUID, on connection: PostgresConnection) async throws -> [AddRequestView] {
        _ = try await profiles.require(userID, on: connection)
        return try await store.pendingRequests(for: userID, on: connection)
    }

    /// What someone may do with an add request.
    enum Answer: String, Sendable {
        /// The invitee joins (only the invitee).
        case accept
        /// The invitee declines, or the owner vetoes.
        case decline
        /// The owner approves; the request still waits for the invitee.
        case approve
    }

    func answer(_ requestID: UUID, _ answer: Answer, userID: UUID, on connection: PostgresConnection) async throws -> AddRequestView {
        guard let request = try await store.request(requestID, lock: true, on: connection),
              let circleID = UUID(canonical: request.circleId), let inviteeID = UUID(canonical: request.toUserId) else { throw CirclesErrors.requestNotFound }
        let isOwner = try await store.membership(circleID, userID: userID, on: connection)?.1 == .owner
        let isInvitee = inviteeID == userID
        guard isOwner || isInvitee else {
            // Members who can see the circle learn why; everyone else learns nothing.
            if try await store.isMember(circleID, userID: userID, on: connection) { throw CirclesErrors.requestNotYours }
            throw CirclesErrors.requestNotFound
        }
        guard request.status == .pending else { throw CirclesErrors.requestDecided }
        switch answer {
        case .accept:
            guard isInvitee else { throw CirclesErrors.inviteeMustAccept }
            try await store.decide(requestID, status: "accepted", on: connection)
            if try await !store.isMember(circleID, userID: inviteeID, on: connection) {
                try await join(circleID, userID: inviteeID, via: "add_request", actor: userID, on: connection)
            }
        case .decline:
            try await store.decide(requestID, status: "declined", on: connection)
        case .approve:
            guard isOwner else { throw CirclesErrors.ownerOnly }
            try await store.approve(requestID, on: connection)
        }
        guard let answered = try await store.request(requestID, lock: false, on: connection) else { throw CirclesErrors.requestNotFound }
        return answered
    }

    // MARK: leaving and deleting

    /// Leaves the circle. An owner's circle passes to the longest-standing member, or is deleted
    /// when the owner was alone.
    func leave(_ circleID: UUID, userID: UUID, reason: CircleLeaveReason = .left, on connection: PostgresConnection) async throws {
        let (_, role) = try await membership(circleID, userID: userID, lock: true, on: connection)
        if role == .owner {
            guard let successor = try await store.successor(circleID, excluding: userID, on: connection) else {
                try await delete(circleID, actor: userID, on: connection)
                return
            }
            if let change = try await store.setRole(circleID, userID: successor, role: .owner, on: connection) {
                try await publish(CircleMemberUpdated(member: change.member, previous: change.previous), circle: circleID, actor: userID, on: connection)
            }
        }
        try await remove(circleID, userID: userID, reason: reason, actor: userID, on: connection)
    }

    /// The owner removes a member.
    func removeMember(_ circleID: UUID, member: UUID, userID: UUID, on connection: PostgresConnection) async throws {
        let (_, role) = try await membership(circleID, userID: userID, lock: true, on: connection)
        guard role == .owner else { throw CirclesErrors.ownerOnly }
        guard member != userID else { throw CirclesErrors.validation("to leave a circle, use leave") }
        try await remove(circleID, userID: member, reason: .removed, actor: userID, on: connection)
    }

    /// Ends a membership with what only made sense inside the circle: the member's status and
    /// DM threads there; for an erased account also its live posts and its marks on others'.
    /// The event names those rows, so subscribers see each go.
    func remove(_ circleID: UUID, userID: UUID, reason: CircleLeaveReason, actor: UUID, on connection: PostgresConnection) async throws {
        let dms = DMStore(logger: logger)
        let threads = try await dms.threads(inCircle: circleID, involving: userID, on: connection)
        var removed = CircleRemovedRows(threads: threads.map(\.row))
        if reason == .accountDeleted {
            let posts = PostStore(logger: logger)
            removed.posts = try await posts.live(inCircle: circleID, author: userID, on: connection).map(\.row)
            (removed.reactions, removed.votes, removed.rsvps) = try await posts.marks(by: userID, inCircle: circleID, on: connection)
        }
        guard let gone = try await store.removeMember(circleID, userID: userID, on: connection) else { throw CirclesErrors.memberNotFound }
        let member = gone.member
        removed.presence = gone.presence.map { [$0] } ?? []
        try await dms.deleteThreads(threads.map(\.id), on: connection)
        try await publish(CircleMemberLeft(member: member, reason: reason, removed: removed.isEmpty ? nil : removed), circle: circleID, actor: actor, on: connection)
    }

    /// Deletes the circle (owner only) with its posts, photos, DMs and presence.
    func delete(_ circleID: UUID, userID: UUID, on connection: PostgresConnection) async throws {
        let (_, role) = try await membership(circleID, userID: userID, lock: true, on: connection)
        guard role == .owner else { throw CirclesErrors.ownerOnly }
        try await delete(circleID, actor: userID, on: connection)
    }

    func delete(_ circleID: UUID, actor: UUID, on connection: PostgresConnection) async throws {
        guard let circle = try await circleRow(circleID, on: connection) else { throw CirclesErrors.circleNotFound }
        let members = try await store.memberRows(circleID, on: connection)
        let photos = try await PostStore(logger: logger).inCircle(circleID, on: connection).filter { $0.photoVersion != nil }.map(\.row.id)
        // What subscribers see go one by one: members, live posts (their marks go with them),
        // statuses and DM threads (their messages go with them).
        let removed = CircleRemovedRows(members: members, posts: try await PostStore(logger: logger).live(inCircle: circleID, on: connection).map(\.row),
                                        presence: try await PresenceStore(logger: logger).all(inCircle: circleID, on: connection),
                                        threads: try await DMStore(logger: logger).threads(inCircle: circleID, on: connection).map(\.row))
        try await store.delete(circleID, on: connection)
        try await publish(CircleDeleted(circle: circle, memberIds: members.map(\.userId).sorted { $0.uuidString < $1.uuidString }, removed: removed),
                          circle: circleID, actor: actor, on: connection)
        for post in photos { try await media.remove(circleID: circleID, postID: post) }
    }

    /// `withheldFrom`: those of the circle who blocked the actor, for an event that shows the
    /// actor's content or activity (`blockersOfActor`); realtime and pushes skip them.
    func publish<Payload: EventPayload>(_ payload: Payload, circle: UUID, actor: UUID?, withheldFrom: [UUID]? = nil, on connection: PostgresConnection) async throws {
        try await outbox.publish(EventEnvelope(app: .mycirclee, aggregateId: circle.uuidString.lowercased(), actor: actor, withheldFrom: withheldFrom, payload: payload),
                                 on: connection, logger: logger)
    }

    /// The circle's members who blocked `actor`: the `withheldFrom` of an event showing what the
    /// actor wrote or did there, read in the write's own transaction.
    func blockersOfActor(_ actor: UUID, inCircle circleID: UUID, on connection: PostgresConnection) async throws -> [UUID] {
        try await BlockList(logger: logger).blockers(of: actor, amongMembers: "SELECT user_id FROM circle_members WHERE circle_id = \(circleID)", on: connection)
    }

    /// Publishes an event showing `actor`'s content or activity in the circle, withheld from the
    /// members who blocked them.
    func publishActivity<Payload: EventPayload>(_ payload: Payload, circle: UUID, actor: UUID, on connection: PostgresConnection) async throws {
        try await publish(payload, circle: circle, actor: actor, withheldFrom: try await blockersOfActor(actor, inCircle: circle, on: connection), on: connection)
    }
}
