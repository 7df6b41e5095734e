import ColonyImport
import ColonyModels
import ColonyPlatform
import ColonyStorage
import Foundation
import PostgresNIO

/// MyCirclee's Supabase tables (`mycirclee.md`) into the circles schema, ids kept. Per table:
///
/// | Supabase (`public`) | Colony (`circles`) |
/// |---|---|
/// | `profiles` | `profiles`, as is; a handle that is not 3–30 of a–z 0–9 _ . or is taken becomes the one a sign-up would suggest; a display name over 60 characters is cut there, a blank one becomes the sign-up name (or the address's local part); bio (300), full name and location (100), address (300), phone (32) cut to the service's limits; each change reported |
/// | `circles` | `circles` without `invite_code`: Colony's invites are single-use and expire after 48 h, so members make new ones; a name over 60 characters cut there, a blank one "Untitled circle" (reported) |
/// | `circle_members` | `circle_members`; role `owner` or `member` (`admin` reads as member); a second owner joins as member, and a circle left without an owner passes to its creator, else its longest-standing member |
/// | `posts` | `posts` (a body over 2,000 characters cut, a blank one "(no text)", reported); expired ones (`expires_at` past) are not imported, nor anything hanging off them; `photo_url`'s file is copied into `post-photos` as `{circle_id}/{post_id}`; an event's time from `starts_at` (or `event_at`) when the project has one |
/// | `poll_options` | `poll_options`, numbered in `created_at` order (a label over 100 characters cut, a blank one "Option", reported) |
/// | `poll_votes` | `poll_votes` with the option's poll; one vote per user and poll (a second is skipped) |
/// | `post_reactions`, `event_rsvps` (`not_going` reads as declined), `kept_posts` | as is |
/// | `dm_threads` | `dm_threads` with the two users ordered (`user_a` < `user_b`, notify flags swapped with them) |
/// | `dm_messages`, `dm_reactions` | as is (a body over 4,000 characters cut, a blank one "(no text)", reported); a reply to a message that is gone keeps no `reply_to_id` |
/// | `presence_states`, `add_requests` | as is |
/// | `push_tokens` | the notifications service's devices (`SupabaseNotificationsImport`) |
///
/// Every membership is announced (`circle_member_imported`) and every live event post
/// (`event_post_imported`), so realtime and notifications know them at once.
public enum SupabaseCirclesImport {
    static let noText = "(no text)"

    public static func run(_ job: ServiceImport, from source: SourceDatabase, accounts: ImportedAccounts, settings: CirclesSettings, storage: Storage) async throws {
        let media = PostMedia(settings: settings, storage: storage)
        let logger = job.logger
        let profileStore = ProfileStore(logger: logger)

        try await job.importRows("public.profiles", from: source.rows("public", "profiles", orderBy: "user_id"), id: { try $0.uuid("user_id").lowercased }) { row, writer in
            let userID = try row.uuid("user_id")
            try accounts.require(userID, "user_id")
            let account = accounts.byID[userID]
            let signUpName = SignUpMetadata.displayName(account?.userMetadata ?? [:], maxLength: 60)
            let name = writer.fit(try row.optionalString("display_name"), "display_name", max: 60,
                                  fallback: signUpName ?? account?.email?.split(separator: "@").first.map(String.init)) ?? "New member"
            // A handle Colony refuses, or one another account has, becomes the one a sign-up suggests.
            var handle = (try? CirclesRules.handle(try row.optionalString("handle") ?? "")) ?? ""
            var taken = handle.isEmpty
            if !taken { taken = try await profileStore.handleTaken(handle, by: userID, on: writer.connection) }
            if taken {
                handle = CirclesRules.suggestedHandle(from: name, userID: userID)
                writer.adjusted("handle not 3–30 of a–z 0–9 _ . or taken in Colony: a new one suggested")
            }
            let privacy = try row.enumeration("dm_privacy", DMPrivacy.self, default: .anyone)
            // The profile user_registered may have made already is replaced by the imported one.
            // The name auth announces for the account (its import's user_registered) counts as seen: it
            // must not replace the name the app's own profile row has.
            let authName = SignUpMetadata.displayName(accounts.byID[userID]?.userMetadata ?? [:], maxLength: 60)
            try await writer.connection.query("""
                INSERT INTO profiles (user_id, display_name, auth_name, handle, bio, dm_privacy, is_pro, full_name, location, address, email, phone, birthday, created_at, updated_at)
                SELECT \(userID), \(name), \(authName), \(handle), \(writer.fit(try row.optionalString("bio"), "bio", max: 300)), \(privacy.rawValue)::dm_privacy,
                       \(try row.bool("is_pro", default: false)), \(writer.fit(try row.optionalString("full_name"), "full_name", max: 100)),
                       \(writer.fit(try row.optionalString("location"), "location", max: 100)), \(writer.fit(try row.optionalString("address"), "address", max: 300)),
                       \(try row.text("email")), \(writer.fit(try row.optionalString("phone"), "phone", max: 32)),
                       \(try row.optionalLocalDate("birthday")), \(try row.optionalDate("created_at") ?? job.now), \(try row.optionalDate("updated_at") ?? job.now)
                WHERE NOT EXISTS (SELECT 1 FROM deleted_users WHERE user_id = \(userID))
                ON CONFLICT (user_id) DO UPDATE SET display_name = EXCLUDED.display_name, auth_name = EXCLUDED.auth_name, handle = EXCLUDED.handle, bio = EXCLUDED.bio,
                    dm_privacy = EXCLUDED.dm_privacy, is_pro = EXCLUDED.is_pro, full_name = EXCLUDED.full_name, location = EXCLUDED.location,
                    address = EXCLUDED.address, email = EXCLUDED.email, phone = EXCLUDED.phone, birthday = EXCLUDED.birthday,
                    created_at = EXCLUDED.created_at, updated_at = EXCLUDED.updated_at
                """, logger: logger)
            return .imported
        }
        // Everyone else gets the profile their sign-up event would have made, so their rows
        // below have a profile to belong to.
        try await job.once("profiles#ensured", keys: accounts.all.map(\.id.lowercased)) { key, writer in
            guard let account = UUID(uuidString: key).flatMap({ accounts.byID[$0] }) else { return }
            try await profileStore.upsertFromAuth(account.id, name: SignUpMetadata.displayName(account.userMetadata, maxLength: 60),
                                                  email: account.email, phone: account.phone, on: writer.connection)
        }

        try await job.importRows("public.circles", from: source.rows("public", "circles", orderBy: "created_at, id"), id: { try $0.uuid("id").lowercased }) { row, writer in
            let name = writer.fit(try row.optionalString("name"), "name", max: 60, fallback: "Untitled circle") ?? "Untitled circle"
            try await writer.connection.query("""
                INSERT INTO circles (id, name, created_by, created_at)
                VALUES (\(try row.uuid("id")), \(name), \(try row.uuid("created_by")), \(try row.optionalDate("created_at") ?? job.now))
                """, logger: logger)
            return .imported
        }

        try await job.importRows("public.circle_members", from: source.rows("public", "circle_members", orderBy: "joined_at, circle_id, user_id"),
                                 id: { "\(try $0.uuid("circle_id").lowercased)|\(try $0.uuid("user_id").lowercased)" }) { row, writer in
            let circleID = try row.uuid("circle_id"), userID = try row.uuid("user_id")
            try accounts.require(userID, "user_id")
            guard let circleName = try await writer.connection.query("SELECT name FROM circles WHERE id = \(circleID)", logger: logger).firstValue(String.self) else {
                throw RowProblem("circle_id \(circleID.lowercased) is not an imported circle")
            }
            var role = try row.enumeration("role", CircleRole.self, default: .member, aliases: ["admin": .member])
            if role == .owner, try await !writer.connection.query("SELECT 1 FROM circle_members WHERE circle_id = \(circleID) AND role = 'owner'", logger: logger).collect().isEmpty {
                role = .member  // one owner per circle
            }
            let joinedAt = try row.optionalDate("joined_at") ?? job.now
            try await writer.connection.query("""
                INSERT INTO circle_members (circle_id, user_id, role, joined_at) VALUES (\(circleID), \(userID), \(role.rawValue)::circle_role, \(joinedAt))
                """, logger: logger)
            let member = CircleMemberRow(circleId: circleID, userId: userID, role: role, joinedAt: joinedAt)
            try await writer.publish(EventEnvelope(app: .mycirclee, aggregateId: circleID.lowercased, occurredAt: job.now,
                                                   payload: CircleMemberImported(member: member, circleName: circleName)))
            return .imported
        }
        // A circle whose owner is not among its members passes on, as when an owner leaves.
        let circles = try await job.ledger("public.circles").keys.sorted()
        try await job.once("circles#owner", keys: circles) { key, writer in
            guard let circleID = UUID(uuidString: key) else { return }
            try await writer.connection.query("""
                UPDATE circle_members SET role = 'owner'
                WHERE circle_id = \(circleID) AND NOT EXISTS (SELECT 1 FROM circle_members WHERE circle_id = \(circleID) AND role = 'owner')
                  AND user_id = (SELECT m.user_id FROM circle_members m JOIN circles c ON c.id = m.circle_id WHERE m.circle_id = \(circleID)
                                 ORDER BY (m.user_id = c.created_by) DESC, m.joined_at, m.user_id LIMIT 1)
                """, logger: logger)
        }

        // Posts past their expiry are gone in MyCirclee: neither they nor what hangs off them come over.
        var expired = Set<UUID>()
        try await job.importRows("public.posts", from: source.rows("public", "posts", orderBy: "created_at, id"), id: { try $0.uuid("id").lowercased }) { row, writer in
            let id = try row.uuid("id"), circleID = try row.uuid("circle_id"), authorID = try row.uuid("author_id")
            let createdAt = try row.optionalDate("created_at") ?? job.now
            let expiresAt = try row.optionalDate("expires_at") ?? createdAt.addingTimeInterval(CirclesRules.postLifetime)
            if expiresAt <= job.now {
                expired.insert(id)
                return .notImported("expired")
            }
            try accounts.require(authorID, "author_id")
            let type = try row.enumeration("type", PostType.self)
            let body = writer.fit(try row.optionalString("body"), "body", max: CirclesRules.maxBody, fallback: Self.noText) ?? Self.noText
            let urgency = try row.optionalEnumeration("urgency", AskUrgency.self) ?? (type == .ask ? .medium : nil)
            let startsAt = try row.optionalDate("starts_at") ?? row.optionalDate("event_at")
            var post = PostRow(id: id, circleId: circleID, authorId: authorID, type: type, body: body, mood: try row.text("mood"), category: try row.text("category"),
                               urgency: type == .ask ? urgency : nil, location: try row.text("location"), latitude: try row.optionalDouble("latitude"),
                               longitude: try row.optionalDouble("longitude"), startsAt: type == .event ? startsAt : nil, photoUrl: nil,
                               expiresAt: expiresAt, createdAt: createdAt, updatedAt: try row.optionalDate("updated_at") ?? createdAt)
            if (post.latitude == nil) != (post.longitude == nil) { post.latitude = nil; post.longitude = nil }
            try await writer.connection.query("""
                INSERT INTO posts (id, circle_id, author_id, type, body, mood, category, urgency, location, latitude, longitude, starts_at, expires_at, created_at, updated_at)
                VALUES (\(post.id), \(post.circleId), \(post.authorId), \(post.type.rawValue)::post_type, \(post.body), \(post.mood), \(post.category),
                        \(post.urgency?.rawValue)::ask_urgency, \(post.location), \(post.latitude), \(post.longitude), \(post.startsAt), \(post.expiresAt),
                        \(post.createdAt), \(post.updatedAt))
                """, logger: logger)
            if let photo = try await writer.copyFile(try row.optionalString("photo_url"), defaultBucket: media.photos.name, into: media.photos,
                                                     key: PostMedia.key(circleID: circleID, postID: id)) {
                try await writer.connection.query("UPDATE posts SET photo_version = \(photo.version) WHERE id = \(id)", logger: logger)
            }
            if post.type == .event {
                try await writer.publish(EventEnvelope(app: .mycirclee, aggregateId: circleID.lowercased, occurredAt: job.now, payload: EventPostImported(post: post)))
            }
            return .imported
        }
        /// Rows that belong to a post: left out with an expired one, dangling without one.
        func requirePost(_ postID: UUID) throws(RowProblem) -> RowResult? {
            expired.contains(postID) ? .notImported("post expired") : nil
        }

        var expiredOptions = Set<UUID>()
        try await job.importRows("public.poll_options", from: source.rows("public", "poll_options", orderBy: "post_id, created_at, id"), id: { try $0.uuid("id").lowercased }) { row, writer in
            let id = try row.uuid("id"), postID = try row.uuid("post_id")
            if let skip = try requirePost(postID) { expiredOptions.insert(id); return skip }
            let label = writer.fit(try row.optionalString("label"), "label", max: 100, fallback: "Option") ?? "Option"
            try await writer.connection.query("""
                INSERT INTO poll_options (id, post_id, label, position, created_at)
                SELECT \(id), \(postID), \(label), coalesce(max(position) + 1, 0), \(try row.optionalDate("created_at") ?? job.now) FROM poll_options WHERE post_id = \(postID)
                """, logger: logger)
            return .imported
        }

        try await job.importRows("public.post_reactions", from: source.rows("public", "post_reactions", orderBy: "created_at, post_id, user_id"),
                                 id: { "\(try $0.uuid("post_id").lowercased)|\(try $0.uuid("user_id").lowercased)|\(try $0.string("emoji"))" }) { row, writer in
            let postID = try row.uuid("post_id"), userID = try row.uuid("user_id")
            if let skip = try requirePost(postID) { return skip }
            try accounts.require(userID, "user_id")
            let emoji: String
            do { emoji = try CirclesRules.emoji(try row.string("emoji")) } catch { throw RowProblem("emoji is not an emoji") }
            try await writer.connection.query("""
                INSERT INTO post_reactions (post_id, user_id, emoji, created_at) VALUES (\(postID), \(userID), \(emoji), \(try row.optionalDate("created_at") ?? job.now))
                """, logger: logger)
            return .imported
        }

        try await job.importRows("public.poll_votes", from: source.rows("public", "poll_votes", orderBy: "created_at, option_id, user_id"),
                                 id: { "\(try $0.uuid("option_id").lowercased)|\(try $0.uuid("user_id").lowercased)" }) { row, writer in
            let optionID = try row.uuid("option_id"), userID = try row.uuid("user_id")
            if expiredOptions.contains(optionID) { return .notImported("post expired") }
            try accounts.require(userID, "user_id")
            guard let postID = try await writer.connection.query("SELECT post_id FROM poll_options WHERE id = \(optionID)", logger: logger).firstValue(UUID.self) else {
                throw RowProblem("option_id \(optionID.lowercased) is not an imported poll option")
            }
            let inserted = try await writer.connection.query("""
                INSERT INTO poll_votes (option_id, user_id, post_id, created_at) VALUES (\(optionID), \(userID), \(postID), \(try row.optionalDate("created_at") ?? job.now))
                ON CONFLICT (post_id, user_id) DO NOTHING RETURNING 1
                """, logger: logger).collect()
            if inserted.isEmpty { throw RowProblem("a second vote by the same user in one poll (Colony keeps one per poll: the earliest)") }
            return .imported
        }

        try await job.importRows("public.event_rsvps", from: source.rows("public", "event_rsvps", orderBy: "created_at, post_id, user_id"),
                                 id: { "\(try $0.uuid("post_id").lowercased)|\(try $0.uuid("user_id").lowercased)" }) { row, writer in
            let postID = try row.uuid("post_id"), userID = try row.uuid("user_id")
            if let skip = try requirePost(postID) { return skip }
            try accounts.require(userID, "user_id")
            let status = try row.enumeration("status", RSVPStatus.self, aliases: ["not_going": .declined, "no": .declined, "yes": .going])
            try await writer.connection.query("""
                INSERT INTO event_rsvps (post_id, user_id, status, created_at)
                VALUES (\(postID), \(userID), \(status.rawValue)::rsvp_status, \(try row.optionalDate("created_at") ?? job.now))
                """, logger: logger)
            return .imported
        }

        try await job.importRows("public.kept_posts", from: source.rows("public", "kept_posts", orderBy: "kept_at, user_id, post_id"),
                                 id: { "\(try $0.uuid("user_id").lowercased)|\(try $0.uuid("post_id").lowercased)" }) { row, writer in
            let postID = try row.uuid("post_id"), userID = try row.uuid("user_id")
            if let skip = try requirePost(postID) { return skip }
            try accounts.require(userID, "user_id")
            try await writer.connection.query("""
                INSERT INTO kept_posts (user_id, post_id, kept_at) VALUES (\(userID), \(postID), \(try row.optionalDate("kept_at") ?? job.now))
                """, logger: logger)
            return .imported
        }

        try await job.importRows("public.dm_threads", from: source.rows("public", "dm_threads", orderBy: "id"), id: { try $0.uuid("id").lowercased }) { row, writer in
            var (a, b) = (try row.uuid("user_a"), try row.uuid("user_b"))
            var (notifyA, notifyB) = (try row.bool("notify_a", default: true), try row.bool("notify_b", default: true))
            try accounts.require(a, "user_a")
            try accounts.require(b, "user_b")
            guard a != b else { throw RowProblem("user_a and user_b are the same person") }
            // Colony orders the pair (one thread per pair and circle); the flags move with their users.
            if b.uuidString.lowercased() < a.uuidString.lowercased() { swap(&a, &b); swap(&notifyA, &notifyB) }
            let lastMessage = try row.optionalDate("last_message_at")
            try await writer.connection.query("""
                INSERT INTO dm_threads (id, circle_id, user_a, user_b, last_message_at, notify_a, notify_b, created_at)
                VALUES (\(try row.uuid("id")), \(try row.uuid("circle_id")), \(a), \(b), \(lastMessage), \(notifyA), \(notifyB),
                        \(try row.optionalDate("created_at") ?? lastMessage ?? job.now))
                """, logger: logger)
            return .imported
        }

        try await job.importRows("public.dm_messages", from: source.rows("public", "dm_messages", orderBy: "created_at, id"), id: { try $0.uuid("id").lowercased }) { row, writer in
            let senderID = try row.uuid("sender_id")
            try accounts.require(senderID, "sender_id")
            // Kept as written when it fits, as the service keeps a DM.
            let body = writer.fit(try row.optionalString("body"), "body", max: CirclesRules.maxDM, fallback: Self.noText, trim: false) ?? Self.noText
            try await writer.connection.query("""
                INSERT INTO dm_messages (id, thread_id, sender_id, body, reply_to_id, created_at, read_at)
                VALUES (\(try row.uuid("id")), \(try row.uuid("thread_id")), \(senderID), \(body),
                        (SELECT id FROM dm_messages WHERE id = \(try row.optionalUUID("reply_to_id"))), \(try row.optionalDate("created_at") ?? job.now), \(try row.optionalDate("read_at")))
                """, logger: logger)
            return .imported
        }

        try await job.importRows("public.dm_reactions", from: source.rows("public", "dm_reactions", orderBy: "created_at, message_id, user_id"),
                                 id: { "\(try $0.uuid("message_id").lowercased)|\(try $0.uuid("user_id").lowercased)|\(try $0.string("emoji"))" }) { row, writer in
            let userID = try row.uuid("user_id")
            try accounts.require(userID, "user_id")
            let emoji: String
            do { emoji = try CirclesRules.emoji(try row.string("emoji")) } catch { throw RowProblem("emoji is not an emoji") }
            try await writer.connection.query("""
                INSERT INTO dm_reactions (message_id, user_id, emoji, created_at)
                VALUES (\(try row.uuid("message_id")), \(userID), \(emoji), \(try row.optionalDate("created_at") ?? job.now))
                """, logger: logger)
            return .imported
        }

        try await job.importRows("public.presence_states", from: source.rows("public", "presence_states", orderBy: "user_id, circle_id"),
                                 id: { "\(try $0.uuid("user_id").lowercased)|\(try $0.uuid("circle_id").lowercased)" }) { row, writer in
            let userID = try row.uuid("user_id")
            try accounts.require(userID, "user_id")
            let status = try row.enumeration("status", PresenceStatus.self, aliases: ["deepwork": .deepWork, "deep work": .deepWork, "stillup": .stillUp, "still up": .stillUp])
            try await writer.connection.query("""
                INSERT INTO presence_states (user_id, circle_id, status, updated_at)
                VALUES (\(userID), \(try row.uuid("circle_id")), \(status.rawValue)::presence_status, \(try row.optionalDate("updated_at") ?? job.now))
                """, logger: logger)
            return .imported
        }

        try await job.importRows("public.add_requests", from: source.rows("public", "add_requests", orderBy: "created_at, id"), id: { try $0.uuid("id").lowercased }) { row, writer in
            let from = try row.uuid("from_user_id"), to = try row.uuid("to_user_id")
            try accounts.require(from, "from_user_id")
            try accounts.require(to, "to_user_id")
            let status = try row.enumeration("status", RequestStatus.self, default: .pending)
            let createdAt = try row.optionalDate("created_at") ?? job.now
            try await writer.connection.query("""
                INSERT INTO add_requests (id, circle_id, from_user_id, to_user_id, status, created_at, decided_at)
                VALUES (\(try row.uuid("id")), \(try row.uuid("circle_id")), \(from), \(to), \(status.rawValue)::add_request_status, \(createdAt),
                        \(status == .pending ? nil : (try row.optionalDate("decided_at") ?? createdAt)))
                """, logger: logger)
            return .imported
        }
    }

    /// `add_requests.status`.
    enum RequestStatus: String {
        case pending, accepted, declined
    }
}
