import ColonyStorage

/// What chat exports of a user (`user_export_requested`): their profile, the groups they belong
/// to, their own messages and the calendar events they made, with the files they uploaded. Other
/// members' messages and profiles stay out: the issue's rule for group chats.
enum ChatExport {
    static func plan(media: ChatMedia) -> ExportPlan {
        ExportPlan(
            service: .chat,
            about: "Unify's chat: your profile, the groups you belong to, the messages you sent (text and voice) and the calendar events you created.",
            tables: [
                ExportTable("users", about: "Your profile.", sql: """
                    SELECT id, display_name, email, avatar_version::text AS avatar_version, auth_name, created_at, updated_at FROM users WHERE id = $1
                    """, fields: [
                        "id": "Your user id.",
                        "display_name": "The name other members see.",
                        "email": "Your email address, as your account gave it.",
                        "avatar_version": "The version of your profile picture, part of its file's name under files/profile-pictures/; empty when you have none.",
                        "auth_name": "The name your account last gave at sign-up or in its settings.",
                        "created_at": "When your profile was made.",
                        "updated_at": "When your profile last changed.",
                    ]),
                ExportTable("group_memberships", about: "The groups you belong to and your place in each.", sources: ["group_members", "groups"], sql: """
                    SELECT g.id AS group_id, g.name AS group_name, m.role::text AS role, m.joined_at, m.last_read_at, g.created_at AS group_created_at
                    FROM group_members m JOIN groups g ON g.id = m.group_id WHERE m.user_id = $1 ORDER BY m.joined_at, g.id
                    """, fields: [
                        "group_id": "The group's id.",
                        "group_name": "The group's name.",
                        "role": "Your role in the group: owner, admin or user.",
                        "joined_at": "When you joined the group.",
                        "last_read_at": "Up to when you had read the group's messages.",
                        "group_created_at": "When the group was created.",
                    ]),
                ExportTable("messages", about: "The messages you sent in groups (other members' messages are theirs).", sql: """
                    SELECT id, group_id, content, sent_at, is_edited, message_type::text AS message_type, voice_duration, voice_path
                    FROM messages WHERE sent_by = $1 ORDER BY sent_at, id
                    """, fields: [
                        "id": "The message's id.",
                        "group_id": "The group you sent it in.",
                        "content": "The text of the message (empty for a voice message).",
                        "sent_at": "When you sent it.",
                        "is_edited": "Whether you edited it after sending.",
                        "message_type": "text or voice.",
                        "voice_duration": "A voice message's length in seconds.",
                        "voice_path": "Where a voice message's recording is in this export, under files/voice-messages/.",
                    ]),
                ExportTable("events", about: "The calendar events you created, personal or in a group.", sql: """
                    SELECT id, title, details, starts_at, ends_at, group_id, created_at, updated_at
                    FROM events WHERE created_by = $1 ORDER BY starts_at, id
                    """, fields: [
                        "id": "The event's id.",
                        "title": "The event's title.",
                        "details": "The event's notes.",
                        "starts_at": "When the event starts.",
                        "ends_at": "When the event ends.",
                        "group_id": "The group the event belongs to; empty for a personal event.",
                        "created_at": "When you created the event.",
                        "updated_at": "When the event last changed.",
                    ]),
                .blocks,
                .reportsFiled,
            ],
            files: [
                ExportFiles(media.profilePictures, about: "your profile picture", sql: """
                    SELECT \(PictureKey.sql(owner: "id", version: "avatar_version")) FROM users WHERE id = $1 AND avatar_version IS NOT NULL
                    """),
                // Who uploaded a group's picture is not kept: the groups the user owns stand for those they made.
                ExportFiles(media.groupPictures, about: "the pictures of the groups you own", sql: """
                    SELECT \(PictureKey.sql(owner: "id", version: "picture_version")) FROM groups WHERE owner_id = $1 AND picture_version IS NOT NULL
                    """),
                ExportFiles(media.voiceMessages, about: "the voice messages you sent, as `{group_id}/{message_id}`", sql: """
                    SELECT voice_path FROM messages WHERE sent_by = $1 AND voice_path IS NOT NULL
                    """),
            ],
            // The platform's tables (outbox, inbox, quota_hits...) are `ExportPlan.platformTables`.
            notExported: ["deleted_users": "ids of erased accounts only"]
        )
    }
}
