import ColonyModels
import ColonyPlatform
import Foundation
import Logging
import PostgresNIO

/// `groups` and `group_members`.
struct GroupStore: Sendable {
    let logger: Logger

    /// A group seen by one of its members, with that member's row.
    struct Membership: Sendable {
        var group: StoredGroup
        var member: GroupMemberRow
    }

    /// One of my groups in the list: my role, unread count and the latest message.
    struct Summary: Sendable {
        var group: StoredGroup
        var member: GroupMemberRow
        var unreadCount: Int
        var lastMessageAt: Date?
    }

    /// A member with the public part of their profile.
    struct MemberProfile: Sendable {
        var member: GroupMemberRow
        var displayName: String
        var avatarVersion: Int64?
    }

    func create(id: UUID, name: String, ownerID: UUID, on connection: PostgresConnection) async throws -> StoredGroup {
        let group = try await connection.query("""
            INSERT INTO groups (id, name, owner_id) VALUES (\(id), \(name), \(ownerID))
            RETURNING \(unescaped: StoredGroup.columns)
            """, logger: logger).collect().first.map(StoredGroup.init(row:))
        return group!
    }

    /// The group and my membership, or nil when I am not a member (or it does not exist).
    /// `lock` takes the group row's lock, serialising changes to one group's membership.
    func membership(_ groupID: UUID, userID: UUID, lock: Bool = false, on connection: PostgresConnection) async throws -> Membership? {
        let rows = try await connection.query("""
            SELECT \(unescaped: StoredGroup.columns("g")), m.group_id, m.user_id, m.role::text, m.joined_at, m.last_read_at
            FROM groups g JOIN group_members m ON m.group_id = g.id AND m.user_id = \(userID)
            WHERE g.id = \(groupID)
            \(unescaped: lock ? "FOR UPDATE OF g" : "")
            """, logger: logger).collect()
        guard let row = rows.first else { return nil }
        return try row.read { c in try Membership(group: StoredGroup(&c), member: GroupMemberRow(&c)) }
    }

    /// My groups, most recently active first, each with my unread count (messages after my
    /// `last_read_at` that I did not send) and the time of its latest message; messages of those
    /// I blocked count for neither (`hiddenSender`).
    func summaries(userID: UUID, on connection: PostgresConnection) async throws -> [Summary] {
        var summaries: [Summary] = []
        for try await row in try await connection.query("""
            SELECT \(unescaped: StoredGroup.columns("g")), m.group_id, m.user_id, m.role::text, m.joined_at, m.last_read_at,
                   (SELECT count(*) FROM messages x WHERE x.group_id = g.id AND x.sent_at > m.last_read_at AND x.sent_by <> m.user_id
                    AND NOT \(unescaped: Self.hiddenSender))::int,
                   (SELECT max(x.sent_at) FROM messages x WHERE x.group_id = g.id AND NOT \(unescaped: Self.hiddenSender))
            FROM group_members m JOIN groups g ON g.id = m.group_id
            WHERE m.user_id = \(userID)
            ORDER BY coalesce((SELECT max(x.sent_at) FROM messages x WHERE x.group_id = g.id AND NOT \(unescaped: Self.hiddenSender)), g.created_at) DESC, g.id
            """, logger: logger) {
            summaries.append(try row.read { c in
                try Summary(group: StoredGroup(&c), member: GroupMemberRow(&c), unreadCount: c.next(Int.self), lastMessageAt: c.next(Date?.self))
            })
        }
        return summaries
    }

    /// Unread counts for all my groups, by group id (as `summaries` counts them).
    func unreadCounts(userID: UUID, on connection: PostgresConnection) async throws -> [(UUID, Int)] {
        try await connection.query("""
            SELECT m.group_id,
                   (SELECT count(*) FROM messages x WHERE x.group_id = m.group_id AND x.sent_at > m.last_read_at AND x.sent_by <> m.user_id
                    AND NOT \(unescaped: Self.hiddenSender))::int
            FROM group_members m WHERE m.user_id = \(userID) ORDER BY m.group_id
            """, logger: logger).read { c in try (c.next(UUID.self), c.next(Int.self)) }
    }

    /// True when the member `m` blocked the sender of message `x`: the counts leave it out.
    static let hiddenSender = BlockList.hiddenByBlock(viewer: "m.user_id", author: "x.sent_by")

    /// Those of the group's members who blocked `author`: the `withheldFrom` of an event that
    /// shows the author's message or calendar event to the group.
    func blockers(of author: UUID, amongMembersOf groupID: UUID, on connection: PostgresConnection) async throws -> [UUID] {
        try await BlockList(logger: logger).blockers(of: author, amongMembers: "SELECT user_id FROM group_members WHERE group_id = \(groupID)", on: connection)
    }

    func members(_ groupID: UUID, on connection: PostgresConnection) async throws -> [MemberProfile] {
        var members: [MemberProfile] = []
        for try await row in try await connection.query("""
            SELECT m.group_id, m.user_id, m.role::text, m.joined_at, m.last_read_at, u.display_name, u.avatar_version
            FROM group_members m JOIN users u ON u.id = m.user_id
            WHERE m.group_id = \(groupID)
            ORDER BY CASE m.role WHEN 'owner' THEN 0 WHEN 'admin' THEN 1 ELSE 2 END, m.joined_at, m.user_id
            """, logger: logger) {
            members.append(try row.read { c in
                try MemberProfile(member: GroupMemberRow(&c), displayName: c.next(String.self), avatarVersion: c.next(Int64?.self))
            })
        }
        return members
    }

    func member(_ groupID: UUID, userID: UUID, on connection: PostgresConnection) async throws -> GroupMemberRow? {
        try await connection.query("SELECT \(unescaped: GroupMemberRow.columns) FROM group_members WHERE group_id = \(groupID) AND user_id = \(userID)", logger: logger)
            .collect().first.map(GroupMemberRow.init(row:))
    }

    func memberIDs(_ groupID: UUID, on connection: PostgresConnection) async throws -> [UUID] {
        try await connection.query("SELECT user_id FROM group_members WHERE group_id = \(groupID) ORDER BY user_id", logger: logger)
            .values(UUID.self)
    }

    /// Adds members who are not in yet; returns the rows it inserted.
    func addMembers(_ groupID: UUID, userIDs: [UUID], role: GroupRole, on connection: PostgresConnection) async throws -> [GroupMemberRow] {
        try await connection.query("""
            INSERT INTO group_members (group_id, user_id, role)
            SELECT \(groupID), u, \(role.rawValue)::group_role FROM unnest(\(userIDs)::uuid[]) AS u
            ON CONFLICT DO NOTHING
            RETURNING \(unescaped: GroupMemberRow.columns)
            """, logger: logger).collect().map(GroupMemberRow.init(row:))
    }

    func removeMember(_ groupID: UUID, userID: UUID, on connection: PostgresConnection) async throws -> GroupMemberRow? {
        try await connection.query("""
            DELETE FROM group_members WHERE group_id = \(groupID) AND user_id = \(userID)
            RETURNING \(unescaped: GroupMemberRow.columns)
            """, logger: logger).collect().first.map(GroupMemberRow.init(row:))
    }

    func setRole(_ groupID: UUID, userID: UUID, role: GroupRole, on connection: PostgresConnection) async throws -> GroupMemberRow? {
        try await connection.query("""
            UPDATE group_members SET role = \(role.rawValue)::group_role WHERE group_id = \(groupID) AND user_id = \(userID)
            RETURNING \(unescaped: GroupMemberRow.columns)
            """, logger: logger).collect().first.map(GroupMemberRow.init(row:))
    }

    func markRead(_ groupID: UUID, userID: UUID, at time: Date?, on connection: PostgresConnection) async throws -> GroupMemberRow? {
        // Never moves backwards: a stale mark-read from another device keeps the later time.
        try await connection.query("""
            UPDATE group_members SET last_read_at = greatest(last_read_at, coalesce(\(time), now()))
            WHERE group_id = \(groupID) AND user_id = \(userID)
            RETURNING \(unescaped: GroupMemberRow.columns)
            """, logger: logger).collect().first.map(GroupMemberRow.init(row:))
    }

    /// `lock` takes the group row's lock, as `membership(lock:)` does.
    func find(_ groupID: UUID, lock: Bool = false, on connection: PostgresConnection) async throws -> StoredGroup? {
        try await connection.query("""
            SELECT \(unescaped: StoredGroup.columns) FROM groups WHERE id = \(groupID) \(unescaped: lock ? "FOR UPDATE" : "")
            """, logger: logger).collect().first.map(StoredGroup.init(row:))
    }

    func update(_ groupID: UUID, name: String? = nil, ownerID: UUID? = nil, pictureVersion: Int64?? = nil, on connection: PostgresConnection) async throws -> StoredGroup? {
        let setPicture = pictureVersion != nil
        let version: Int64? = pictureVersion ?? nil
        return try await connection.query("""
            UPDATE groups SET
                name = coalesce(\(name), name),
                owner_id = coalesce(\(ownerID), owner_id),
                picture_version = CASE WHEN \(setPicture) THEN \(version) ELSE picture_version END,
                updated_at = now()
            WHERE id = \(groupID)
            RETURNING \(unescaped: StoredGroup.columns)
            """, logger: logger).collect().first.map(StoredGroup.init(row:))
    }

    /// Deletes the group (members, messages and events cascade); returns its voice files' keys.
    func delete(_ groupID: UUID, on connection: PostgresConnection) async throws -> [String] {
        let paths = try await connection.query("SELECT voice_path FROM messages WHERE group_id = \(groupID) AND voice_path IS NOT NULL", logger: logger)
            .values(String.self)
        try await connection.query("DELETE FROM groups WHERE id = \(groupID)", logger: logger)
        return paths
    }

    func owned(by userID: UUID, on connection: PostgresConnection) async throws -> [UUID] {
        try await connection.query("SELECT id FROM groups WHERE owner_id = \(userID) ORDER BY id", logger: logger).values(UUID.self)
    }

    func joined(by userID: UUID, on connection: PostgresConnection) async throws -> [UUID] {
        try await connection.query("SELECT group_id FROM group_members WHERE user_id = \(userID) AND role <> 'owner' ORDER BY group_id", logger: logger)
            .values(UUID.self)
    }

    /// Who takes over when an owner's account goes: the longest-standing admin, else member.
    func successor(_ groupID: UUID, excluding userID: UUID, on connection: PostgresConnection) async throws -> UUID? {
        try await connection.query("""
            SELECT user_id FROM group_members WHERE group_id = \(groupID) AND user_id <> \(userID)
            ORDER BY CASE role WHEN 'admin' THEN 0 ELSE 1 END, joined_at, user_id LIMIT 1
            """, logger: logger).firstValue(UUID.self)
    }
}
