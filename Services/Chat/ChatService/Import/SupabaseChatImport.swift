import ColonyImport
import ColonyModels
import ColonyPlatform
import ColonyStorage
import Foundation
import PostgresNIO

/// Unify's Supabase tables (`unify.md`, section 1) into the chat schema, ids kept. Per table:
///
/// | Supabase (`public`) | Colony (`chat`) |
/// |---|---|
/// | `user` | `users` (display name, email; a name over 60 characters cut there, a blank one the sign-up name or the address's local part, reported); `avatar_url`'s file (else `profile-pictures/{id}`) copied to `profile-pictures` as `{user_id}`, the URL then versioned |
/// | `group` | `groups` (a name over 100 characters cut there, a blank one "Untitled group", reported); the file `group-pictures/{id}` copied when the project has one |
/// | `group_members` | `group_members` (role owner, admin, user); one owner per group, the group's `owner_id`: another `owner` row joins as admin, and the owner is made a member when the project lacked the row; a missing `last_read_at` is the join time |
/// | `message` | `messages` (content over 4,000 characters cut there, reported); a voice message's file (`voice_url`) is copied to the private `voice-messages` bucket as `{group_id}/{message_id}` and kept as its path (the URL is signed on the way out); a voice message whose file is missing is skipped |
/// | `event` | `events` (a title over 200 characters cut there, a blank one "Event", details over 4,000 cut, reported; `ends_at` before `starts_at` is skipped); personal ones keep `group_id` null |
///
/// Every membership is announced (`group_member_imported`) for realtime and notifications.
public enum SupabaseChatImport {
    public static func run(_ job: ServiceImport, from source: SourceDatabase, accounts: ImportedAccounts, settings: ChatSettings, storage: Storage) async throws {
        let media = ChatMedia(settings: settings, storage: storage)
        let logger = job.logger
        let users = UserStore(logger: logger)

        try await job.importRows("public.user", from: source.rows("public", "user", orderBy: "id"), id: { try $0.uuid("id").lowercased }) { row, writer in
            let userID = try row.uuid("id")
            try accounts.require(userID, "id")
            let account = accounts.byID[userID]
            let name = writer.fit(try row.optionalString("display_name"), "display_name", max: ChatRules.maxDisplayName,
                                  fallback: SignUpMetadata.displayName(account?.userMetadata ?? [:], maxLength: ChatRules.maxDisplayName) ?? UserStore.defaultName(email: account?.email))
                ?? UserStore.defaultName(email: nil)
            var avatar: StoredObject?
            if let url = try row.optionalString("avatar_url") {
                avatar = try await writer.copyFile(url, defaultBucket: media.profilePictures.name, into: media.profilePictures, key: ChatMedia.key(userID))
            } else {
                avatar = try await writer.copyFileIfPresent(bucket: media.profilePictures.name, name: ChatMedia.key(userID), into: media.profilePictures, key: ChatMedia.key(userID))
            }
            // auth_name: the name auth announces for the account (its import's user_registered)
            // counts as seen, so it does not replace the app's own name.
            try await writer.connection.query("""
                INSERT INTO users (id, display_name, auth_name, email, avatar_version, created_at, updated_at)
                SELECT \(userID), \(name), \(SignUpMetadata.displayName(accounts.byID[userID]?.userMetadata ?? [:], maxLength: 60)), \(try row.text("email") ?? accounts.byID[userID]?.email), \(avatar?.version),
                       \(try row.optionalDate("created_at") ?? job.now), \(job.now)
                WHERE NOT EXISTS (SELECT 1 FROM deleted_users WHERE user_id = \(userID))
                ON CONFLICT (id) DO UPDATE SET display_name = EXCLUDED.display_name, auth_name = EXCLUDED.auth_name, email = EXCLUDED.email, avatar_version = EXCLUDED.avatar_version,
                    created_at = EXCLUDED.created_at, updated_at = EXCLUDED.updated_at
                """, logger: logger)
            return .imported
        }
        try await job.once("users#ensured", keys: accounts.all.map(\.id.lowercased)) { key, writer in
            guard let account = UUID(uuidString: key).flatMap({ accounts.byID[$0] }) else { return }
            try await users.upsertIfMissing(account.id, displayName: SignUpMetadata.displayName(account.userMetadata, maxLength: 60), email: account.email, on: writer.connection)
        }

        try await job.importRows("public.group", from: source.rows("public", "group", orderBy: "id"), id: { try $0.uuid("id").lowercased }) { row, writer in
            let groupID = try row.uuid("id"), ownerID = try row.uuid("owner_id")
            try accounts.require(ownerID, "owner_id")
            let name = writer.fit(try row.optionalString("name"), "name", max: ChatRules.maxGroupName, fallback: "Untitled group") ?? "Untitled group"
            let picture = try await writer.copyFileIfPresent(bucket: media.groupPictures.name, name: ChatMedia.key(groupID), into: media.groupPictures, key: ChatMedia.key(groupID))
            let createdAt = try row.optionalDate("created_at") ?? job.now
            try await writer.connection.query("""
                INSERT INTO groups (id, name, owner_id, picture_version, created_at, updated_at)
                VALUES (\(groupID), \(name), \(ownerID), \(picture?.version), \(createdAt), \(try row.optionalDate("updated_at") ?? createdAt))
                """, logger: logger)
            return .imported
        }

        func announce(_ member: GroupMemberRow, on writer: RowWriter) async throws {
            let name = try await writer.connection.query("SELECT name FROM groups WHERE id = \(member.groupId)", logger: logger).firstValue(String.self) ?? ""
            try await writer.publish(EventEnvelope(app: .unify, aggregateId: member.groupId.lowercased, occurredAt: job.now,
                                                   payload: GroupMemberImported(member: member, groupName: name)))
        }

        try await job.importRows("public.group_members", from: source.rows("public", "group_members", orderBy: "joined_at NULLS LAST, group_id, user_id"),
                                 id: { "\(try $0.uuid("group_id").lowercased)|\(try $0.uuid("user_id").lowercased)" }) { row, writer in
            let groupID = try row.uuid("group_id"), userID = try row.uuid("user_id")
            try accounts.require(userID, "user_id")
            guard let ownerID = try await writer.connection.query("SELECT owner_id FROM groups WHERE id = \(groupID)", logger: logger).firstValue(UUID.self) else {
                throw RowProblem("group_id \(groupID.lowercased) is not an imported group")
            }
            // The group's owner_id is its owner; anyone else marked owner becomes an admin.
            var role = try row.enumeration("role", GroupRole.self, default: .user, aliases: ["member": .user])
            if userID == ownerID { role = .owner } else if role == .owner { role = .admin }
            let joinedAt = try row.optionalDate("joined_at") ?? job.now
            let member = GroupMemberRow(groupId: groupID, userId: userID, role: role, joinedAt: joinedAt, lastReadAt: try row.optionalDate("last_read_at") ?? joinedAt)
            try await writer.connection.query("""
                INSERT INTO group_members (group_id, user_id, role, joined_at, last_read_at)
                VALUES (\(groupID), \(userID), \(role.rawValue)::group_role, \(joinedAt), \(member.lastReadAt))
                """, logger: logger)
            try await announce(member, on: writer)
            return .imported
        }
        // The owner is a member of their group even when the project lacked the row.
        let groups = try await job.ledger("public.group").keys.sorted()
        try await job.once("groups#owner", keys: groups) { key, writer in
            guard let groupID = UUID(uuidString: key) else { return }
            let added = try await writer.connection.query("""
                INSERT INTO group_members (group_id, user_id, role, joined_at, last_read_at)
                SELECT id, owner_id, 'owner', created_at, created_at FROM groups WHERE id = \(groupID)
                ON CONFLICT (group_id, user_id) DO NOTHING
                RETURNING user_id, joined_at
                """, logger: logger).read { c in try (c.next(UUID.self), c.next(Date.self)) }
            for (userID, joinedAt) in added {
                try await announce(GroupMemberRow(groupId: groupID, userId: userID, role: .owner, joinedAt: joinedAt, lastReadAt: joinedAt), on: writer)
            }
        }

        try await job.importRows("public.message", from: source.rows("public", "message", orderBy: "sent_at, id"), id: { try $0.uuid("id").lowercased }) { row, writer in
            let id = try row.uuid("id"), groupID = try row.uuid("group_id"), senderID = try row.uuid("sent_by")
            try accounts.require(senderID, "sent_by")
            let type = try row.enumeration("message_type", MessageType.self, default: .text)
            var voicePath: String?
            var duration: Double?
            if type == .voice {
                guard let seconds = try row.optionalDouble("voice_duration"), seconds > 0 else { throw RowProblem("a voice message needs a voice_duration above 0") }
                duration = seconds
                let key = ChatMedia.voiceKey(groupID: groupID, messageID: id)
                guard try await writer.connection.query("SELECT 1 FROM groups WHERE id = \(groupID)", logger: logger).collect().count == 1 else {
                    throw RowProblem("group_id \(groupID.lowercased) is not an imported group")
                }
                guard try await writer.copyFile(try row.optionalString("voice_url"), defaultBucket: media.voiceMessages.name, into: media.voiceMessages, key: key) != nil else {
                    throw RowProblem("its voice file could not be copied (see files)")
                }
                voicePath = key
            }
            try await writer.connection.query("""
                INSERT INTO messages (id, group_id, content, sent_by, sent_at, is_edited, message_type, voice_duration, voice_path)
                VALUES (\(id), \(groupID), \(writer.fit(try row.optionalString("content"), "content", max: ChatRules.maxMessageLength, trim: false) ?? ""), \(senderID), \(try row.optionalDate("sent_at") ?? job.now),
                        \(try row.bool("is_edited", default: false)), \(type.rawValue)::message_type, \(duration), \(voicePath))
                """, logger: logger)
            return .imported
        }

        try await job.importRows("public.event", from: source.rows("public", "event", orderBy: "starts_at, id"), id: { try $0.uuid("id").lowercased }) { row, writer in
            let creator = try row.uuid("created_by")
            try accounts.require(creator, "created_by")
            let title = writer.fit(try row.optionalString("title"), "title", max: ChatRules.maxEventTitle, fallback: "Event") ?? "Event"
            let startsAt = try row.date("starts_at")
            let endsAt = try row.optionalDate("ends_at") ?? startsAt
            guard endsAt >= startsAt else { throw RowProblem("ends_at is before starts_at") }
            let createdAt = try row.optionalDate("created_at") ?? job.now
            try await writer.connection.query("""
                INSERT INTO events (id, title, details, starts_at, ends_at, group_id, created_by, created_at, updated_at)
                VALUES (\(try row.uuid("id")), \(title), \(writer.fit(try row.optionalString("details"), "details", max: ChatRules.maxEventDetails)), \(startsAt), \(endsAt), \(try row.optionalUUID("group_id")), \(creator),
                        \(createdAt), \(try row.optionalDate("updated_at") ?? createdAt))
                """, logger: logger)
            return .imported
        }
    }

    /// `message.message_type`.
    enum MessageType: String {
        case text, voice
    }
}

extension UserStore {
    /// The user row an account's sign-up event would make, unless there is one.
    func upsertIfMissing(_ userID: UUID, displayName: String?, email: String?, on connection: PostgresConnection) async throws {
        try await connection.query("""
            INSERT INTO users (id, display_name, email)
            SELECT \(userID), \(displayName ?? Self.defaultName(email: email)), \(email)
            WHERE NOT EXISTS (SELECT 1 FROM deleted_users WHERE user_id = \(userID))
            ON CONFLICT (id) DO NOTHING
            """, logger: logger)
    }
}
