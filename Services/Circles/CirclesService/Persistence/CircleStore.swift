import ColonyModels
import ColonyPlatform
import Foundation
import Logging
import PostgresNIO

/// `circles`, `circle_members`, `circle_invites` and `add_requests`.
struct CircleStore: Sendable {
    let logger: Logger

    static let circleColumns = "c.id, c.name, c.created_by, c.created_at"
    static let memberColumns = "circle_id, user_id, role::text, joined_at"

    static func circle(_ row: PostgresRow) throws -> CircleRow {
        var cells = RowCells(row)
        return try circle(&cells)
    }

    /// The circle's columns (`circleColumns`), read in order from where `cells` stands.
    static func circle(_ cells: inout RowCells) throws -> CircleRow {
        try CircleRow(id: cells.next(UUID.self), name: cells.next(String.self), createdBy: cells.next(UUID.self), createdAt: cells.next(Date.self))
    }

    static func member(_ row: PostgresRow) throws -> CircleMemberRow {
        try row.read { c in
            try CircleMemberRow(circleId: c.next(UUID.self), userId: c.next(UUID.self), role: CircleRole(rawValue: c.next(String.self)) ?? .member,
                                joinedAt: c.next(Date.self))
        }
    }

    func create(name: String, ownerID: UUID, on connection: PostgresConnection) async throws -> (CircleRow, CircleMemberRow) {
        let id = UUID.timeOrdered()
        let circle = try await connection.query("""
            INSERT INTO circles AS c (id, name, created_by) VALUES (\(id), \(name), \(ownerID)) RETURNING \(unescaped: Self.circleColumns)
            """, logger: logger).collect().map(Self.circle)[0]
        let owner = try await addMember(id, userID: ownerID, role: .owner, on: connection)!
        return (circle, owner)
    }

    /// The circle and my role in it; nil when I am not a member. `lock` serialises membership
    /// changes of one circle.
    func membership(_ circleID: UUID, userID: UUID, lock: Bool = false, on connection: PostgresConnection) async throws -> (CircleRow, CircleRole)? {
        let rows = try await connection.query("""
            SELECT \(unescaped: Self.circleColumns), m.role::text FROM circles c JOIN circle_members m ON m.circle_id = c.id AND m.user_id = \(userID)
            WHERE c.id = \(circleID) \(unescaped: lock ? "FOR UPDATE OF c" : "")
            """, logger: logger).collect()
        guard let row = rows.first else { return nil }
        return try row.read { c in try (Self.circle(&c), CircleRole(rawValue: c.next(String.self)) ?? .member) }
    }

    func isMember(_ circleID: UUID, userID: UUID, on connection: PostgresConnection) async throws -> Bool {
        try await !connection.query("SELECT 1 FROM circle_members WHERE circle_id = \(circleID) AND user_id = \(userID)", logger: logger).collect().isEmpty
    }

    func mine(_ userID: UUID, on connection: PostgresConnection) async throws -> [CircleView] {
        try await connection.query("""
            SELECT \(unescaped: Self.circleColumns), m.role::text, (SELECT count(*)::int FROM circle_members x WHERE x.circle_id = c.id)
            FROM circle_members m JOIN circles c ON c.id = m.circle_id WHERE m.user_id = \(userID) ORDER BY m.joined_at, c.id
            """, logger: logger).read { c in
            try CircleView(id: c.next(UUID.self).lowercased, name: c.next(String.self), createdBy: c.next(UUID.self).lowercased, createdAt: c.next(Date.self),
                           role: Components.Schemas.CircleRole(rawValue: c.next(String.self)) ?? .member, memberCount: c.next(Int.self))
        }
    }

    func members(_ circleID: UUID, on connection: PostgresConnection) async throws -> [MemberView] {
        try await connection.query("""
            SELECT m.role::text, m.joined_at, \(unescaped: ProfileStore.columns.split(separator: ", ").map { "p.\($0)" }.joined(separator: ", "))
            FROM circle_members m JOIN profiles p ON p.user_id = m.user_id WHERE m.circle_id = \(circleID)
            ORDER BY m.role, m.joined_at, m.user_id
            """, logger: logger).read { c in
            let role = try c.next(String.self), joinedAt = try c.next(Date.self)
            // The profile's columns after `location` are not shown to other members.
            let profile = try PublicProfile(userId: c.next(UUID.self).lowercased, displayName: c.next(String.self), handle: c.next(String.self), bio: c.next(String?.self),
                                            dmPrivacy: Components.Schemas.DMPrivacy(rawValue: c.next(String.self)) ?? .anyone, isPro: c.next(Bool.self),
                                            fullName: c.next(String?.self), location: c.next(String?.self))
            return MemberView(circleId: circleID.lowercased, role: Components.Schemas.CircleRole(rawValue: role) ?? .member, joinedAt: joinedAt, profile: profile)
        }
    }

    func memberIDs(_ circleID: UUID, on connection: PostgresConnection) async throws -> [UUID] {
        try await connection.query("SELECT user_id FROM circle_members WHERE circle_id = \(circleID) ORDER BY user_id", logger: logger)
            .values(UUID.self)
    }

    /// Adds a member; nil when they already are one.
    func addMember(_ circleID: UUID, userID: UUID, role: CircleRole, on connection: PostgresConnection) async throws -> CircleMemberRow? {
        try await connection.query("""
            INSERT INTO circle_members (circle_id, user_id, role) VALUES (\(circleID), \(userID), \(role.rawValue)::circle_role)
            ON CONFLICT DO NOTHING RETURNING \(unescaped: Self.memberColumns)
            """, logger: logger).collect().first.map(Self.member)
    }

    /// Removes a member with what only made sense inside the circle: their presence there (the
    /// removed status is returned) and their kept marks on its posts.
    func removeMember(_ circleID: UUID, userID: UUID, on connection: PostgresConnection) async throws -> (member: CircleMemberRow, presence: PresenceRow?)? {
        guard let removed = try await connection.query("""
            DELETE FROM circle_members WHERE circle_id = \(circleID) AND user_id = \(userID) RETURNING \(unescaped: Self.memberColumns)
            """, logger: logger).collect().first.map(Self.member) else { return nil }
        let presence = try await connection.query("""
            DELETE FROM presence_states WHERE circle_id = \(circleID) AND user_id = \(userID) RETURNING user_id, circle_id, status::text, updated_at
            """, logger: logger).collect().first.map(PresenceStore.row)
        try await connection.query("DELETE FROM kept_posts k USING posts p WHERE k.post_id = p.id AND p.circle_id = \(circleID) AND k.user_id = \(userID)", logger: logger)
        return (removed, presence)
    }

    /// Every member's row (what goes when the circle is deleted).
    func memberRows(_ circleID: UUID, on connection: PostgresConnection) async throws -> [CircleMemberRow] {
        try await connection.query("SELECT \(unescaped: Self.memberColumns) FROM circle_members WHERE circle_id = \(circleID) ORDER BY joined_at, user_id", logger: logger)
            .collect().map(Self.member)
    }

    /// The next owner when the owner goes: the longest-standing member.
    func successor(_ circleID: UUID, excluding userID: UUID, on connection: PostgresConnection) async throws -> UUID? {
        try await connection.query("""
            SELECT user_id FROM circle_members WHERE circle_id = \(circleID) AND user_id <> \(userID) ORDER BY joined_at, user_id LIMIT 1
            """, logger: logger).firstValue(UUID.self)
    }

    /// Changes a member's role; their row before and after (nil when not a member).
    func setRole(_ circleID: UUID, userID: UUID, role: CircleRole, on connection: PostgresConnection) async throws -> (previous: CircleMemberRow, member: CircleMemberRow)? {
        guard let previous = try await connection.query("""
            SELECT \(unescaped: Self.memberColumns) FROM circle_members WHERE circle_id = \(circleID) AND user_id = \(userID) FOR UPDATE
            """, logger: logger).collect().first.map(Self.member) else { return nil }
        let member = try await connection.query("""
            UPDATE circle_members SET role = \(role.rawValue)::circle_role WHERE circle_id = \(circleID) AND user_id = \(userID) RETURNING \(unescaped: Self.memberColumns)
            """, logger: logger).collect().map(Self.member)[0]
        return (previous, member)
    }

    func rename(_ circleID: UUID, name: String, on connection: PostgresConnection) async throws -> CircleRow? {
        try await connection.query("UPDATE circles c SET name = \(name) WHERE id = \(circleID) RETURNING \(unescaped: Self.circleColumns)", logger: logger)
            .collect().first.map(Self.circle)
    }

    func delete(_ circleID: UUID, on connection: PostgresConnection) async throws {
        try await connection.query("DELETE FROM circles WHERE id = \(circleID)", logger: logger)
    }

    func owned(by userID: UUID, on connection: PostgresConnection) async throws -> [UUID] {
        try await connection.query("SELECT circle_id FROM circle_members WHERE user_id = \(userID) AND role = 'owner' ORDER BY circle_id", logger: logger)
            .values(UUID.self)
    }

    func joined(by userID: UUID, on connection: PostgresConnection) async throws -> [UUID] {
        try await connection.query("SELECT circle_id FROM circle_members WHERE user_id = \(userID) AND role <> 'owner' ORDER BY circle_id", logger: logger)
            .values(UUID.self)
    }

    // MARK: invites

    func createInvite(_ circleID: UUID, code: String, by userID: UUID, expiresAt: Date, on connection: PostgresConnection) async throws -> InviteView {
        try await connection.query("""
            INSERT INTO circle_invites (code, circle_id, created_by, expires_at) VALUES (\(code), \(circleID), \(userID), \(expiresAt))
            """, logger: logger)
        return InviteView(code: code, circleId: circleID.lowercased, expiresAt: expiresAt)
    }

    enum Claim: Sendable {
        case claimed(UUID)
        case invalid
        case expired
        case used
    }

    /// Claims a code in one statement: of two concurrent claims exactly one sees its row
    /// updated (the other waits on the row lock, then finds it claimed).
    func claim(_ code: String, by userID: UUID, on connection: PostgresConnection) async throws -> Claim {
        if let circle = try await connection.query("""
            UPDATE circle_invites SET claimed_by = \(userID), claimed_at = now()
            WHERE code = \(code) AND claimed_at IS NULL AND expires_at > now()
            RETURNING circle_id
            """, logger: logger).firstValue(UUID.self) {
            return .claimed(circle)
        }
        guard let (claimed, expired) = try await connection.query("SELECT claimed_at IS NOT NULL, expires_at <= now() FROM circle_invites WHERE code = \(code)", logger: logger)
            .read({ c in try (c.next(Bool.self), c.next(Bool.self)) }).first else { return .invalid }
        return claimed ? .used : (expired ? .expired : .invalid)
    }

    // MARK: add requests

    static let requestColumns = "r.id, r.circle_id, c.name, r.from_user_id, r.to_user_id, p.handle, r.status::text, r.owner_approved_at IS NOT NULL, r.created_at"

    static func request(_ row: PostgresRow) throws -> AddRequestView {
        try row.read { c in
            try AddRequestView(id: c.next(UUID.self).lowercased, circleId: c.next(UUID.self).lowercased, circleName: c.next(String.self),
                               fromUserId: c.next(UUID.self).lowercased, toUserId: c.next(UUID.self).lowercased, toHandle: c.next(String.self),
                               status: AddRequestView.StatusPayload(rawValue: c.next(String.self)) ?? .pending, ownerApproved: c.next(Bool.self),
                               createdAt: c.next(Date.self))
        }
    }

    func createRequest(_ circleID: UUID, from: UUID, to: UUID, on connection: PostgresConnection) async throws -> AddRequestView? {
        let id = UUID.timeOrdered()
        let inserted = try await connection.query("""
            INSERT INTO add_requests (id, circle_id, from_user_id, to_user_id) VALUES (\(id), \(circleID), \(from), \(to))
            ON CONFLICT DO NOTHING RETURNING id
            """, logger: logger).collect()
        guard !inserted.isEmpty else { return nil }
        return try await request(id, lock: false, on: connection)
    }

    func request(_ id: UUID, lock: Bool, on connection: PostgresConnection) async throws -> AddRequestView? {
        try await connection.query("""
            SELECT \(unescaped: Self.requestColumns) FROM add_requests r JOIN circles c ON c.id = r.circle_id JOIN profiles p ON p.user_id = r.to_user_id
            WHERE r.id = \(id) \(unescaped: lock ? "FOR UPDATE OF r" : "")
            """, logger: logger).collect().first.map(Self.request)
    }

    /// Pending requests I may answer: those inviting me (but from someone I blocked), and those
    /// for circles I own (an owner's veto is about the circle, not about the asker).
    func pendingRequests(for userID: UUID, on connection: PostgresConnection) async throws -> [AddRequestView] {
        try await connection.query("""
            SELECT \(unescaped: Self.requestColumns) FROM add_requests r JOIN circles c ON c.id = r.circle_id JOIN profiles p ON p.user_id = r.to_user_id
            WHERE r.status = 'pending' AND ((r.to_user_id = \(userID)
                    AND NOT EXISTS (SELECT 1 FROM user_blocks b WHERE b.blocker_id = \(userID) AND b.blocked_id = r.from_user_id))
                OR EXISTS (SELECT 1 FROM circle_members m WHERE m.circle_id = r.circle_id AND m.user_id = \(userID) AND m.role = 'owner'))
            ORDER BY r.created_at DESC, r.id
            """, logger: logger).collect().map(Self.request)
    }

    func approve(_ id: UUID, on connection: PostgresConnection) async throws {
        try await connection.query("UPDATE add_requests SET owner_approved_at = coalesce(owner_approved_at, now()) WHERE id = \(id)", logger: logger)
    }

    func decide(_ id: UUID, status: String, on connection: PostgresConnection) async throws {
        try await connection.query("UPDATE add_requests SET status = \(status)::add_request_status, decided_at = now() WHERE id = \(id)", logger: logger)
    }
}
