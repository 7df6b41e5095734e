import ColonyModels
import ColonyStorage

/// What circles writes of a user into their data export (`user_export_requested`): their profile,
/// circles and roles, what they wrote, marked and answered, their DM threads with every message of
/// both sides, and their post photos. Others appear by id only; usable invite codes never.
enum CirclesExport {
    static func plan(photos: StorageBucket) -> ExportPlan {
        ExportPlan(
            service: .circles,
            about: "MyCirclee: your circles, the posts you wrote (they expire after 24 hours), your reactions, votes and RSVPs, your direct messages and your presence.",
            tables: [
                ExportTable("profile", about: "Your profile.", sources: ["profiles"], sql: """
                    SELECT user_id, display_name, handle, bio, dm_privacy, is_pro, full_name, location, address, email, phone, birthday,
                           auth_name, created_at, updated_at
                    FROM profiles WHERE user_id = $1
                    """, fields: [
                        "user_id": "Your account's id.",
                        "display_name": "The name your circles see.",
                        "handle": "Your handle, by which members can ask to add you to a circle.",
                        "bio": "Your bio.",
                        "dm_privacy": "Who may message you: anyone, reciprocal (people who accept messages too) or nobody.",
                        "is_pro": "Whether you have MyCirclee Pro.",
                        "full_name": "Your full name, if you gave it.",
                        "location": "Your location as you wrote it, if you gave it.",
                        "address": "Your address, if you gave it.",
                        "email": "Your email address.",
                        "phone": "Your phone number, if any.",
                        "birthday": "Your birthday, if you gave it.",
                        "auth_name": "The name your account last brought from sign-up or an account change.",
                        "created_at": "When the profile was made.",
                        "updated_at": "When the profile last changed.",
                    ]),
                // A circle the user belongs to, or made and has since left (its name is theirs too).
                ExportTable("circles", about: "The circles you belong to or made.", sources: ["circles", "circle_members"], sql: """
                    SELECT c.id, c.name, c.created_at, c.created_by = $1 AS made_by_you, m.role, m.joined_at
                    FROM circles c LEFT JOIN circle_members m ON m.circle_id = c.id AND m.user_id = $1
                    WHERE m.user_id IS NOT NULL OR c.created_by = $1
                    ORDER BY c.created_at, c.id
                    """, fields: [
                        "id": "The circle's id.",
                        "name": "The circle's name.",
                        "created_at": "When the circle was made.",
                        "made_by_you": "Whether you made the circle.",
                        "role": "Your role in it (owner or member); empty if you are no longer a member.",
                        "joined_at": "When you joined it; empty if you are no longer a member.",
                    ]),
                // A code nobody has claimed and not yet expired would still let someone in: it stays out.
                ExportTable("invites", about: "Invite codes you made, and the ones you joined a circle with.", sources: ["circle_invites"], sql: """
                    SELECT CASE WHEN claimed_at IS NOT NULL OR expires_at <= now() THEN code END AS code,
                           circle_id, created_by, created_at, expires_at, claimed_by, claimed_at
                    FROM circle_invites WHERE created_by = $1 OR claimed_by = $1
                    ORDER BY created_at
                    """, fields: [
                        "code": "The invite code, shown only once it can no longer be used (claimed or expired).",
                        "circle_id": "The circle it invited to.",
                        "created_by": "The id of the member who made the invite.",
                        "created_at": "When the invite was made.",
                        "expires_at": "When the invite expires.",
                        "claimed_by": "The id of the person who joined with it, if anyone did.",
                        "claimed_at": "When it was claimed.",
                    ]),
                ExportTable("add_requests", about: "Requests to add someone to a circle that you made or that were made for you.", sql: """
                    SELECT id, circle_id, from_user_id, to_user_id, status, created_at, owner_approved_at, decided_at
                    FROM add_requests WHERE from_user_id = $1 OR to_user_id = $1
                    ORDER BY created_at, id
                    """, fields: [
                        "id": "The request's id.",
                        "circle_id": "The circle.",
                        "from_user_id": "The id of the member who asked.",
                        "to_user_id": "The id of the person to be added.",
                        "status": "pending, accepted or declined.",
                        "created_at": "When it was asked.",
                        "owner_approved_at": "When the circle's owner approved it, if they did.",
                        "decided_at": "When it was accepted or declined.",
                    ]),
                ExportTable("posts", about: "The posts you wrote that have not expired or been deleted yet.", sql: """
                    SELECT id, circle_id, type, body, mood, category, urgency, location, latitude, longitude, starts_at,
                           CASE WHEN photo_version IS NOT NULL THEN circle_id::text || '/' || id::text END AS photo,
                           expires_at, created_at, updated_at
                    FROM posts WHERE author_id = $1
                    ORDER BY created_at, id
                    """, fields: [
                        "id": "The post's id.",
                        "circle_id": "The circle it was posted in.",
                        "type": "note, event, ask or poll.",
                        "body": "What you wrote.",
                        "mood": "The mood you chose, if any.",
                        "category": "The category you chose, if any.",
                        "urgency": "An ask's urgency: low, medium, high or urgent.",
                        "location": "The place you gave, if any.",
                        "latitude": "The place's latitude, if you gave one.",
                        "longitude": "The place's longitude, if you gave one.",
                        "starts_at": "When an event starts.",
                        "photo": "The post's photo, if any: the file files/post-photos/{photo} in this export.",
                        "expires_at": "When the post expires.",
                        "created_at": "When you posted it.",
                        "updated_at": "When you last edited it.",
                    ]),
                ExportTable("poll_options", about: "The options of the polls you posted.", sql: """
                    SELECT o.id, o.post_id, o.label, o.position, o.created_at
                    FROM poll_options o JOIN posts p ON p.id = o.post_id
                    WHERE p.author_id = $1
                    ORDER BY o.post_id, o.position
                    """, fields: [
                        "id": "The option's id.",
                        "post_id": "Your poll.",
                        "label": "The option's text.",
                        "position": "Its place among the poll's options, from 0.",
                        "created_at": "When it was made.",
                    ]),
                ExportTable("post_reactions", about: "Your reactions to posts.", sql: """
                    SELECT post_id, emoji, created_at FROM post_reactions WHERE user_id = $1 ORDER BY created_at
                    """, fields: [
                        "post_id": "The post you reacted to.",
                        "emoji": "Your reaction.",
                        "created_at": "When you reacted.",
                    ]),
                ExportTable("poll_votes", about: "Your votes in polls.", sources: ["poll_votes", "poll_options"], sql: """
                    SELECT v.post_id, v.option_id, o.label AS option_label, v.created_at
                    FROM poll_votes v JOIN poll_options o ON o.id = v.option_id
                    WHERE v.user_id = $1 ORDER BY v.created_at
                    """, fields: [
                        "post_id": "The poll.",
                        "option_id": "The option you voted for.",
                        "option_label": "That option's text.",
                        "created_at": "When you voted.",
                    ]),
                ExportTable("event_rsvps", about: "Your answers to events.", sql: """
                    SELECT post_id, status, created_at FROM event_rsvps WHERE user_id = $1 ORDER BY created_at
                    """, fields: [
                        "post_id": "The event post.",
                        "status": "going, maybe or declined.",
                        "created_at": "When you answered.",
                    ]),
                ExportTable("kept_posts", about: "Posts you kept.", sql: """
                    SELECT post_id, kept_at FROM kept_posts WHERE user_id = $1 ORDER BY kept_at
                    """, fields: [
                        "post_id": "The post you kept.",
                        "kept_at": "When you kept it.",
                    ]),
                // The other side's notification switch is theirs: only the user's own goes out.
                ExportTable("dm_threads", about: "Your direct-message conversations.", sql: """
                    SELECT id, circle_id, CASE WHEN user_a = $1 THEN user_b ELSE user_a END AS other_user_id,
                           CASE WHEN user_a = $1 THEN notify_a ELSE notify_b END AS notify,
                           last_message_at, created_at
                    FROM dm_threads WHERE user_a = $1 OR user_b = $1
                    ORDER BY created_at, id
                    """, fields: [
                        "id": "The conversation's id.",
                        "circle_id": "The circle it belongs to.",
                        "other_user_id": "The id of the person you talk with.",
                        "notify": "Whether you get notifications for it.",
                        "last_message_at": "When the last message was sent.",
                        "created_at": "When the conversation began.",
                    ]),
                ExportTable("dm_messages", about: "Every message of your conversations, yours and the other person's.", sources: ["dm_messages", "dm_threads"], sql: """
                    SELECT m.id, m.thread_id, m.sender_id, m.body, m.reply_to_id, m.created_at, m.read_at
                    FROM dm_messages m JOIN dm_threads t ON t.id = m.thread_id
                    WHERE t.user_a = $1 OR t.user_b = $1
                    ORDER BY m.thread_id, m.created_at, m.id
                    """, fields: [
                        "id": "The message's id.",
                        "thread_id": "The conversation.",
                        "sender_id": "The id of who sent it (yours or the other person's).",
                        "body": "The message.",
                        "reply_to_id": "The message it replies to, if any.",
                        "created_at": "When it was sent.",
                        "read_at": "When its recipient read it.",
                    ]),
                ExportTable("dm_reactions", about: "Your reactions to messages.", sql: """
                    SELECT message_id, emoji, created_at FROM dm_reactions WHERE user_id = $1 ORDER BY created_at
                    """, fields: [
                        "message_id": "The message you reacted to.",
                        "emoji": "Your reaction.",
                        "created_at": "When you reacted.",
                    ]),
                ExportTable("presence", about: "Your status in each circle.", sources: ["presence_states"], sql: """
                    SELECT circle_id, status, updated_at FROM presence_states WHERE user_id = $1 ORDER BY circle_id
                    """, fields: [
                        "circle_id": "The circle.",
                        "status": "free, deep_work, out, still_up or asleep.",
                        "updated_at": "When you set it.",
                    ]),
                .blocks,
                .reportsFiled,
            ],
            files: [
                ExportFiles(photos, about: "the photos of your posts, as {circle_id}/{post_id}.", sql: """
                    SELECT circle_id::text || '/' || id::text FROM posts WHERE author_id = $1 AND photo_version IS NOT NULL ORDER BY created_at
                    """),
            ],
            notExported: [
                "deleted_users": "ids of erased accounts only",
            ]
        )
    }
}
